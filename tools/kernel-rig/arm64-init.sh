#!/bin/sh
# /init of the arm64 guest's initramfs (boot-arm64.sh puts it there with busybox-static and the
# kernel's netfs, 9pnet, 9pnet_virtio, 9p and overlay modules). Mounts the guest root (9p tag
# fgroot, read-only) under a tmpfs overlay and the control share (fgctl) at /fg-ctl, then
# switches to the root and runs the control share's run.sh (arm64-guest-init.sh with the
# command) as PID 1.
/bin/busybox --install -s /bin
export PATH=/bin
fail() { echo "arm64-init: $*"; echo o >/proc/sysrq-trigger; sleep 5; exit 1; }
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in netfs 9pnet 9pnet_virtio 9p overlay; do
    insmod /modules/$m.ko || fail "insmod $m failed"
done
o9p=trans=virtio,version=9p2000.L,msize=262144
mount -t 9p -o $o9p fgctl /ctl || fail "cannot mount the control share"
mount -t 9p -o $o9p,ro,cache=loose fgroot /lower || fail "cannot mount the guest root"
mount -t tmpfs -o mode=0755 tmpfs /upper
mkdir -p /upper/data /upper/work
mount -t overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work overlay /newroot \
    || fail "cannot mount the overlay root"
mkdir -p /newroot/fg-ctl
mount --move /ctl /newroot/fg-ctl
umount /proc /sys /dev 2>/dev/null
exec switch_root /newroot /bin/bash /fg-ctl/run.sh

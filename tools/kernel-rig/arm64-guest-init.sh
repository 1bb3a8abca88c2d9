#!/bin/bash
# arm64-guest-init.sh MODDIR KREL CWD COMMAND... : PID 1 of the arm64 guest, after arm64-init.sh
# switched to the guest root (boot-arm64.sh). Mounts what a booted system has and the shared
# folders, links the
# kernel's modules tree from the rig's cache as /lib/modules/KREL, runs COMMAND with the serial
# console as its stdout and stderr, writes its exit status to /fg-ctl/status and powers off.
moddir=$1 krel=$2 cwd=$3
shift 3
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/tmp
# the shares boot-arm64.sh lists ("TAG PATH ro|rw"), at their host paths, after the tmpfs
# mounts above (a share under /tmp stays visible)
o9p=trans=virtio,version=9p2000.L,msize=262144
while read -r tag path mode; do
    [[ -n $tag ]] || continue
    mkdir -p "$path"
    if [[ $mode == ro ]]; then opts=$o9p,ro,cache=loose; else opts=$o9p; fi
    mount -t 9p -o "$opts" "$tag" "$path" || echo "arm64-guest-init: cannot mount $tag at $path" >&2
done </fg-ctl/mounts
mkdir -p "/lib/modules/$krel"
mount --bind "$moddir" "/lib/modules/$krel"
hostname fg-arm64
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 TERM=dumb
cd "$cwd" 2>/dev/null || cd /
"$@" </dev/null
status=$?
echo "$status" >/fg-ctl/status
sync
echo o >/proc/sysrq-trigger
sleep 30

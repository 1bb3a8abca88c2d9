#!/usr/bin/env bash
# boot-arm64.sh <version> [-- COMMAND...] : run-guest.sh for an arm64 kernel (run-guest.sh
# hands an arm64 kernel to it; same arguments, variables and exit statuses). virtme-ng shares
# the host's root, which is no use to an aarch64 guest, so this boots the kernel itself:
#
#   qemu-system-aarch64 -M virt -cpu max (TCG, no KVM), the kernel Image from the .deb, and a
#   small initramfs (busybox-static from the guest root, the kernel's own netfs/9p/overlay
#   modules, arm64-init.sh as /init) that mounts the arm64 guest root (arm64-roots.sh) from
#   9p read-only under a tmpfs overlay, mounts the repository and the rig's cache read-only
#   and FG_RIG_OUT read-write over 9p at their host paths, and switches to it;
#   arm64-guest-init.sh (PID 1 there) mounts /proc, /sys, /dev, /tmp..., links the kernel's
#   modules tree as /lib/modules/<krel>, runs guest-setup.sh -- COMMAND with the serial
#   console as its output, writes COMMAND's status into the control share and powers off.
#
# The guest's output (serial console, carriage returns removed) goes to stdout.
# Environment as run-guest.sh (FG_RIG_SENSORS, FG_RIG_MPU_IRQ, FG_RIG_ADXL_IRQ,
# FG_RIG_GPIO_LINES, FG_RIG_OUT, FALLGUARD_BIN (an aarch64 fallguard), FG_RIG_CPUS (2),
# FG_RIG_MEMORY (1G), FG_RIG_TIMEOUT (300), FG_RIG_QUIET, FG_RIG_VERBOSE=1: the kernel's
# console messages too), and FG_RIG_QEMU_CPU (max,pauth-impdef=on: pointer authentication
# with QEMU's cheap algorithm instead of QARMA, which costs a lot under TCG).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 && $1 != -h && $1 != --help ]] || { sed -n '2,21p' "$0"; exit 2; }
VERSION=$1; shift
if [[ $# -gt 0 ]]; then
    [[ $1 == -- ]] || die "expected -- before the command, got '$1'"
    shift
fi
[[ $# -gt 0 ]] || set -- true

need_root
load_env "$VERSION"
[[ ${ARCH:-amd64} == arm64 ]] || die "$KREL is not an arm64 kernel (use run-guest.sh)"
command -v qemu-system-aarch64 >/dev/null || die "qemu-system-aarch64 not found: apt-get install qemu-system-arm (fetch.sh $SERIES does)"
command -v cpio >/dev/null || die "cpio not found"
CACHE=$(cd "$FG_KERNEL_CACHE" && pwd -P)
GROOT=$CACHE/arm64-root
[[ -x $GROOT/usr/bin/python3 && -x $GROOT/usr/bin/busybox ]] || die "no arm64 guest root in $GROOT: run tools/kernel-rig/fetch.sh $SERIES"
BUILD=$KDIR/build/modules
[[ -f $BUILD/fg_i2c_devices.ko ]] || die "modules not built for $KREL: run tools/kernel-rig/build-modules.sh $VERSION"
if [[ ${FG_RIG_GPIO_LINES:-32} != 0 && ! -f $BUILD/gpio_sim.ko ]]; then
    die "gpio_sim.ko not built for $KREL (run build-modules.sh $VERSION, or FG_RIG_GPIO_LINES=0)"
fi
REPO=$(cd "$RIG_DIR/../.." && pwd -P)

# ---- the initramfs (made again when one of its inputs changes) -------------------------
INITRD=$KDIR/initramfs.cpio
sum=$(cat "$RIG_DIR/arm64-init.sh" "$GROOT/usr/bin/busybox" "$KDIR"/initramfs-modules/*.ko | sha256sum | cut -d' ' -f1)
if [[ ! -f $INITRD || $(cat "$INITRD.sum" 2>/dev/null) != "$sum" ]]; then
    tmp=$(mktemp -d "$KDIR/initramfs.XXXXXX")
    mkdir -p "$tmp/bin" "$tmp/modules" "$tmp/proc" "$tmp/sys" "$tmp/dev" "$tmp/lower" "$tmp/upper" "$tmp/newroot" "$tmp/ctl"
    cp "$GROOT/usr/bin/busybox" "$tmp/bin/busybox"
    ln -s busybox "$tmp/bin/sh"
    cp "$RIG_DIR/arm64-init.sh" "$tmp/init"
    chmod 755 "$tmp/init"
    cp "$KDIR"/initramfs-modules/*.ko "$tmp/modules/"
    (cd "$tmp" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) >"$INITRD.tmp"
    mv "$INITRD.tmp" "$INITRD"
    echo "$sum" >"$INITRD.sum"
    rm -rf "$tmp"
    log "initramfs for $KREL: $(du -k "$INITRD" | cut -f1) KiB"
fi

# ---- the control share: mounts, the command, its status ----------------------------------
CTL=$(mktemp -d /tmp/fg-rig-arm64.XXXXXX)
errlog=$CTL.console
trap 'rm -rf "$CTL" "$errlog"' EXIT
qemu_fs=()
n=0
share() { # share HOSTDIR ro|rw: the guest mounts it at the same path
    local dir mode=$2 tag
    dir=$(cd "$1" && pwd -P)
    n=$((n + 1)); tag=fg$n
    local ro=""
    [[ $mode == rw ]] || ro=,readonly=on
    qemu_fs+=(-fsdev "local,id=$tag,path=$dir,security_model=none,multidevs=remap$ro"
              -device "virtio-9p-pci,fsdev=$tag,mount_tag=$tag")
    echo "$tag $dir $mode" >>"$CTL/mounts"
}
: >"$CTL/mounts"
share "$REPO" ro
share "$CACHE" ro
if [[ -n ${FG_RIG_OUT:-} ]]; then
    mkdir -p "$FG_RIG_OUT"
    share "$FG_RIG_OUT" rw
fi
if [[ -n ${FALLGUARD_BIN:-} ]]; then
    bin=$(readlink -f "$FALLGUARD_BIN")
    [[ -x $bin ]] || die "FALLGUARD_BIN $FALLGUARD_BIN is not a program"
    file -b "$bin" | grep -q 'ARM aarch64' || die "FALLGUARD_BIN $bin is not an aarch64 program ($(file -b "$bin" | cut -d, -f1-2))"
    [[ $bin == "$REPO"/* ]] || share "$(dirname "$bin")" ro
    FALLGUARD_BIN=$bin
fi

genv=(FG_RIG_BUILD="$BUILD")
for v in FG_RIG_OUT FALLGUARD_BIN FG_RIG_MPU_SAMPLES FG_RIG_LIBS FG_RIG_ONLY FG_RIG_SENSORS FG_RIG_MPU_IRQ FG_RIG_ADXL_IRQ FG_RIG_GPIO_LINES FG_RIG_QUIET; do
    [[ -n ${!v:-} ]] && genv+=("$v=${!v}")
done
{
    echo "#!/bin/bash"
    # the host's working directory goes too: when it is shared (the repository), relative
    # paths work as with vng
    printf 'exec /bin/bash /fg-ctl/guest-init.sh %q %q %q ' "$MODDIR" "$KREL" "$PWD"
    printf '%q ' env "${genv[@]}" "$RIG_DIR/guest-setup.sh" -- "$@"
    echo
} >"$CTL/run.sh"
# a copy: the repository is one of the shares guest-init.sh mounts
cp "$RIG_DIR/arm64-guest-init.sh" "$CTL/guest-init.sh"

append="console=ttyAMA0 panic=-1 rdinit=/init"
[[ ${FG_RIG_VERBOSE:-0} == 1 ]] || append+=" quiet loglevel=1"
qemu=(qemu-system-aarch64 -M virt -accel tcg -cpu "${FG_RIG_QEMU_CPU:-max,pauth-impdef=on}"
      -smp "${FG_RIG_CPUS:-2}" -m "${FG_RIG_MEMORY:-1G}" -display none -monitor none -serial stdio
      -no-reboot -kernel "$KIMG" -initrd "$INITRD" -append "$append"
      -fsdev "local,id=fgctl,path=$CTL,security_model=none,multidevs=remap" -device "virtio-9p-pci,fsdev=fgctl,mount_tag=fgctl"
      -fsdev "local,id=fgroot,path=$GROOT,security_model=none,multidevs=remap,readonly=on" -device "virtio-9p-pci,fsdev=fgroot,mount_tag=fgroot"
      "${qemu_fs[@]}")

log "booting $KREL ($PKGVER) with qemu-system-aarch64 -M virt -cpu ${FG_RIG_QEMU_CPU:-max,pauth-impdef=on} (TCG), $n shares"
t0=$(date +%s.%N)
set +e
# QEMU in a process group of its own, so that a timeout ends it whatever it is doing
setsid "${qemu[@]}" </dev/null > >(tr -d '\r' | tee "$errlog") 2>&1 &
qpid=$!
limit=$(( $(date +%s) + ${FG_RIG_TIMEOUT:-300} ))
while kill -0 "$qpid" 2>/dev/null && (( $(date +%s) < limit )); do sleep 0.5; done
if kill -0 "$qpid" 2>/dev/null; then
    kill -TERM -- "-$qpid" 2>/dev/null
    sleep 3
    kill -KILL -- "-$qpid" 2>/dev/null
    wait "$qpid" 2>/dev/null
    timed_out=1
else
    wait "$qpid"
    timed_out=0
fi
set -e
t1=$(date +%s.%N)
sleep 0.3   # let tee write the last lines
status=$(cat "$CTL/status" 2>/dev/null || true)
total=$(awk "BEGIN{printf \"%.1f\", $t1-$t0}")
guest=$(sed -n 's/.*guest-side total \([0-9.]*\) s.*/\1/p' "$errlog" | tail -n1)
kup=$(sed -n 's/.*kernel uptime at setup \([0-9.]*\) s.*/\1/p' "$errlog" | tail -n1)
if [[ -n $status && -n $guest ]]; then
    boot=$(awk "BEGIN{printf \"%.1f\", $total-$guest}")
    log "$KREL: wall ${total} s = boot+shutdown ${boot} s (kernel start to rig setup ${kup} s) + rig setup and command ${guest} s; exit $status"
    exit "$status"
elif [[ -n $status ]]; then
    log "$KREL: wall ${total} s; exit $status"
    exit "$status"
fi
[[ $timed_out == 1 ]] && log "timed out after ${FG_RIG_TIMEOUT:-300} s"
log "$KREL: wall ${total} s, the command did not finish"
if ! grep -q '^guest: ' "$errlog"; then
    log "$KREL: the guest did not boot (last console lines: $(tail -n 5 "$errlog" | tr '\n' ' '))"
    exit 90
fi
exit "${status:-124}"

#!/usr/bin/env bash
# build-modules.sh <version> : build the rig's out-of-tree modules against the headers
# fetch.sh extracted, into $FG_KERNEL_CACHE/<krel>/build/modules/ (the repository stays
# clean: the sources are copied there first).
#   fg_i2c_devices.ko  from tools/kernel-rig/modules/fg_i2c_devices.c
#   gpio_sim.ko        drivers/gpio/gpio-sim.c of that kernel's linux-source, with
#                      kernel/irq/irq_sim.c compiled into the same module
#   i2c-stub.ko        drivers/i2c/i2c-stub.c of that kernel, only when the kernel does not
#                      ship it (Debian's arm64 kernel)
#   test_power.ko      drivers/power/supply/test_power.c of that kernel (Debian builds its
#                      kernels without CONFIG_TEST_POWER): the simulated battery and mains
#                      the power watch is tested against (issue 36)
# An arm64 kernel (fetch.sh 6.12-arm64) is built for in the trixie amd64 chroot arm64-roots.sh
# made (the kernel's gcc-14-aarch64-linux-gnu; trixie's kbuild tools need glibc 2.38).
# Rebuilds only when an input changed (FG_RIG_REBUILD=1 forces it).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -eq 1 && $1 != -h && $1 != --help ]] || { sed -n '2,9p' "$0"; exit 2; }
load_env "$1"
ARCH=${ARCH:-amd64}
KBUILD_ROOT=$FG_KERNEL_CACHE/trixie-amd64-kbuild
if [[ $ARCH == arm64 ]]; then
    [[ -x $KBUILD_ROOT/usr/bin/make ]] || die "no kbuild chroot in $KBUILD_ROOT: run fetch.sh $SERIES"
else
    for t in make gcc flex bison bc; do command -v "$t" >/dev/null || die "$t missing: run fetch.sh (it installs the build tools)"; done
fi
[[ -f $KHEADERS/Makefile ]] || die "no headers in $KHEADERS: run fetch.sh ${SERIES}"
for f in drivers/gpio/gpio-sim.c kernel/irq/irq_sim.c; do
    [[ -f $KSRC/$f ]] || die "$KSRC/$f missing: run fetch.sh ${SERIES} again (rm $KDIR/kernel.env to re-extract)"
done

# test_power.c: taken out of the cached linux-source package when an older fetch did not
if [[ ! -f $KSRC/drivers/power/supply/test_power.c ]]; then
    srcdeb=$(ls "$KDIR"/debs/linux-source-*.deb 2>/dev/null | head -n1)
    [[ -n $srcdeb ]] || die "$KSRC/drivers/power/supply/test_power.c missing and no linux-source package in $KDIR/debs: run fetch.sh $SERIES again"
    log "taking test_power.c out of $(basename "$srcdeb")"
    tmp=$(mktemp -d "$KDIR/srcdeb.XXXXXX")
    dpkg-deb --fsys-tarfile "$srcdeb" | tar -C "$tmp" -x --wildcards './usr/src/linux-source-*.tar.xz'
    tarball=$(ls "$tmp"/usr/src/linux-source-*.tar.xz)
    tar -C "$KSRC" --strip-components=1 -xJf "$tarball" "$(basename "$tarball" .tar.xz)/drivers/power/supply/test_power.c"
    rm -rf "$tmp"
fi

OUT=$KDIR/build/modules
# i2c-stub: built here when the kernel has no module of it (CONFIG_I2C_STUB off on arm64)
STUB=0
grep -q '/i2c-stub\.ko' "$MODDIR/modules.dep" || STUB=1
[[ $STUB == 0 || -f $KSRC/drivers/i2c/i2c-stub.c ]] || die "$KREL has no i2c-stub module and $KSRC/drivers/i2c/i2c-stub.c is missing: run fetch.sh $SERIES again"
inputs() {
    cat "$RIG_DIR/modules/fg_i2c_devices.c" "$RIG_DIR/modules/Makefile" \
        "$KSRC/drivers/gpio/gpio-sim.c" "$KSRC/kernel/irq/irq_sim.c" "$RIG_DIR/build-modules.sh" \
        "$KSRC/drivers/power/supply/test_power.c"
    [[ -f $KSRC/drivers/gpio/gpiolib.h ]] && cat "$KSRC/drivers/gpio/gpiolib.h"
    [[ $STUB == 1 ]] && cat "$KSRC/drivers/i2c/i2c-stub.c"
    echo "$KREL $PKGVER $ARCH"
}
sum=$(inputs | sha256sum | cut -d' ' -f1)
if [[ ${FG_RIG_REBUILD:-0} != 1 && -f $OUT/.inputs && $(cat "$OUT/.inputs") == "$sum" \
      && -f $OUT/fg_i2c_devices.ko && -f $OUT/gpio_sim.ko && -f $OUT/test_power.ko && ( $STUB == 0 || -f $OUT/i2c-stub.ko ) ]]; then
    log "modules for $KREL are up to date in $OUT"
    exit 0
fi

rm -rf "$OUT"; mkdir -p "$OUT"
cp "$RIG_DIR/modules/fg_i2c_devices.c" "$RIG_DIR/modules/Makefile" "$OUT/"
cp "$KSRC/drivers/gpio/gpio-sim.c" "$OUT/gpio-sim-main.c"
cp "$KSRC/kernel/irq/irq_sim.c" "$OUT/irq_sim.c"
# irq_sim.c calls handle_simple_irq(irq_to_desc(irq)); irq_to_desc is not exported to
# modules. Its irqs are set up with handle_simple_irq, so generic_handle_irq(irq) (exported,
# called here from the same hard-irq irq_work) does the same.
sed -i 's/handle_simple_irq(irq_to_desc(\([a-z_]*\)));/generic_handle_irq(\1);/' "$OUT/irq_sim.c"
! grep -n 'irq_to_desc' "$OUT/irq_sim.c" || die "irq_sim.c of $KREL still calls irq_to_desc (not exported): extend the patch above"
[[ -f $KSRC/drivers/gpio/gpiolib.h ]] && cp "$KSRC/drivers/gpio/gpiolib.h" "$OUT/"
[[ $STUB == 1 ]] && cp "$KSRC/drivers/i2c/i2c-stub.c" "$OUT/"
cp "$KSRC/drivers/power/supply/test_power.c" "$OUT/"

# The compiler the kernel was built with (Debian 12's gcc-12 for both series).
cc=$(sed -n 's/^CONFIG_CC_VERSION_TEXT="\([^ ]*\) .*/\1/p' "$KHEADERS/.config" | head -n1)
cc=${cc:-gcc}
mods=(fg_i2c_devices gpio_sim test_power)
[[ $STUB == 1 ]] && mods+=(i2c-stub)
log "building ${mods[*]} for $KREL with $cc"
t0=$(date +%s.%N)
if [[ $ARCH == arm64 ]]; then
    # in the kbuild chroot, the cache mounted at the same path (headers, sources, output)
    cache=$(cd "$FG_KERNEL_CACHE" && pwd -P)
    mkdir -p "$KBUILD_ROOT$cache"
    build() {
        unshare --mount --propagation private -- sh -c 'mount --bind "$1" "$2$1" && mount -t proc proc "$2/proc" && shift 2 && exec chroot "$@"' \
            sh "$cache" "$KBUILD_ROOT" "$KBUILD_ROOT" make -C "$KHEADERS" M="$OUT" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- CC="$cc" -j"$(nproc)" modules
    }
else
    command -v "$cc" >/dev/null || cc=gcc
    build() { make -C "$KHEADERS" M="$OUT" CC="$cc" -j"$(nproc)" modules; }
fi
build >"$OUT/build.log" 2>&1 \
    || { tail -n 40 "$OUT/build.log" >&2; die "module build failed for $KREL (full log: $OUT/build.log)"; }
t1=$(date +%s.%N)
grep -E 'warning|error' "$OUT/build.log" >&2 || true
for m in "${mods[@]}"; do
    [[ -f $OUT/$m.ko ]] || die "$m.ko was not produced (see $OUT/build.log)"
    v=$(modinfo -F vermagic "$OUT/$m.ko")
    [[ $v == "$KREL "* ]] || die "$m.ko has vermagic '$v', expected $KREL"
done
echo "$sum" >"$OUT/.inputs"
log "built in $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s: $(cd "$OUT" && du -k ./*.ko | awk '{printf "%s %s KiB  ", $2, $1}')"

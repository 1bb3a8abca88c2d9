#!/usr/bin/env bash
# run-guest.sh <version> [-- COMMAND...] : boot a kernel fetched by fetch.sh with
# virtme-ng (software emulation, `vng --disable-kvm`), the host's root shared read-only
# (virtme's overlays make /tmp, /etc, /var ... writable inside the guest only), set up
# i2c-stub + fg_i2c_devices + adxl345_i2c + inv-mpu6050-i2c + gpio-sim (guest-setup.sh),
# run COMMAND inside and exit with its status. Prints how long the boot took.
#
# <version>: 6.1, 6.12, 6.12-arm64 or a kernel release in the cache. COMMAND defaults to `true`.
# An arm64 kernel is booted by boot-arm64.sh instead (same arguments and exit statuses).
# Exit status: COMMAND's; 125 when the rig could not be set up in the guest; 90 when the
# guest did not boot at all (never reached guest-setup.sh).
# Inside COMMAND, /tmp/fg-rig.env holds FG_I2C_BUS, FG_IIO_ADXL345, FG_IIO_MPU6050,
# FG_RIG_SYSFS, FG_GPIOCHIP, FG_GPIOSIM_SYSFS (also exported).
#
# Environment: FG_RIG_SENSORS (adxl345,mpu6050 | adxl345 | mpu6050 | none),
#   FG_RIG_MPU_IRQ (1), FG_RIG_ADXL_IRQ (0), FG_RIG_GPIO_LINES (32, 0 = no gpio-sim),
#   FG_RIG_OUT (a host folder shared read-write, passed on to the guest),
#   FALLGUARD_BIN (passed on), FG_RIG_CPUS (2), FG_RIG_MEMORY (1G), FG_RIG_TIMEOUT seconds (300),
#   FG_RIG_KVM=1 to allow KVM where /dev/kvm works (default: --disable-kvm),
#   FG_RIG_VERBOSE=1 to show the guest's boot console, FG_RIG_QUIET=1,
#   FG_RIG_VNG_OPTS="..." extra vng options, FG_RIG_BLACKLIST (modules udev must not
#   load at boot; empty to allow all).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

[[ $# -ge 1 && $1 != -h && $1 != --help ]] || { sed -n '2,17p' "$0"; exit 2; }
VERSION=$1; shift
if [[ $# -gt 0 ]]; then
    [[ $1 == -- ]] || die "expected -- before the command, got '$1'"
    shift
fi
[[ $# -gt 0 ]] || set -- true

need_root
load_env "$VERSION"
# an arm64 kernel (fetch.sh 6.12-arm64): its own boot, an arm64 root instead of the host's
[[ ${ARCH:-amd64} == arm64 ]] && exec "$RIG_DIR/boot-arm64.sh" "$VERSION" -- "$@"
command -v vng >/dev/null || die "vng not found: run tools/kernel-rig/fetch.sh (pip install virtme-ng)"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found: apt-get install qemu-system-x86"
BUILD=$KDIR/build/modules
[[ -f $BUILD/fg_i2c_devices.ko ]] || die "modules not built for $KREL: run tools/kernel-rig/build-modules.sh $VERSION"
if [[ ${FG_RIG_GPIO_LINES:-32} != 0 && ! -f $BUILD/gpio_sim.ko ]]; then
    die "gpio_sim.ko not built for $KREL (run build-modules.sh $VERSION, or FG_RIG_GPIO_LINES=0)"
fi

# virtme-ng-init mounts a tmpfs over the guest's /var/cache, which hides the cache (and
# the modules tree virtme links as /lib/modules/<krel>); share it again, read-only.
vng_args=(--run "$KIMG" --cpus "${FG_RIG_CPUS:-2}" --memory "${FG_RIG_MEMORY:-1G}"
          --rodir "$(cd "$FG_KERNEL_CACHE" && pwd -P)")
# the unpacked libgpiod 2.x (tools/setup-debian) sits under the same hidden /var/cache
FG_LIBGPIOD2_DIR=${FALLGUARD_LIBGPIOD2_DIR:-/var/cache/fallguard/libgpiod2}
[[ -d $FG_LIBGPIOD2_DIR ]] && vng_args+=(--rodir "$(cd "$FG_LIBGPIOD2_DIR" && pwd -P)")
# FG_RIG_OUT: a host folder the guest may write (results, logs); the rest of the root is
# read-only in the guest or an overlay that goes away with it.
if [[ -n ${FG_RIG_OUT:-} ]]; then
    mkdir -p "$FG_RIG_OUT"
    vng_args+=(--rwdir "$(cd "$FG_RIG_OUT" && pwd -P)")
fi
# bookworm's qemu ships the old C virtiofsd, which rejects virtme's options: vng waits
# about 3 s for it before falling back to 9p. Go to 9p at once.
vng_args+=(--force-9p)
# virtme-ng-init runs udev coldplug, which loads every module the emulated q35 machine and
# `-cpu max` advertise (kvm_amd, crypto, ahci, watchdogs...): under TCG that took 4 to 20 s
# of each boot. None of them is needed; libkmod applies modprobe.blacklist to udev's loads.
FG_RIG_BLACKLIST=${FG_RIG_BLACKLIST-kvm_amd,kvm_intel,kvm,ccp,irqbypass,aesni_intel,crypto_simd,cryptd,ghash_clmulni_intel,gf128mul,sha1_ssse3,sha256_ssse3,sha512_ssse3,crc32_pclmul,crc32c_intel,crct10dif_pclmul,polyval_clmulni,ahci,libahci,libata,sr_mod,cdrom,sg,i6300esb,iTCO_wdt,iTCO_vendor_support,intel_pmc_bxt,lpc_ich,i2c_i801,pcspkr,psmouse,serio_raw,evdev,button,joydev,floppy,ata_piix,ata_generic,e1000e,intel_rapl_msr,intel_rapl_common,rapl,powernow_k8,acpi_cpufreq}
[[ -n $FG_RIG_BLACKLIST ]] && vng_args+=(--append "modprobe.blacklist=$FG_RIG_BLACKLIST")
# shellcheck disable=SC2206
[[ -n ${FG_RIG_VNG_OPTS:-} ]] && vng_args+=($FG_RIG_VNG_OPTS)
[[ ${FG_RIG_KVM:-0} == 1 && -w /dev/kvm ]] || vng_args+=(--disable-kvm)
[[ ${FG_RIG_VERBOSE:-0} == 1 ]] && vng_args+=(--verbose)

genv=(FG_RIG_BUILD="$BUILD")
for v in FG_RIG_OUT FALLGUARD_BIN FG_RIG_MPU_SAMPLES FG_RIG_LIBS FG_RIG_ONLY FG_RIG_SENSORS FG_RIG_MPU_IRQ FG_RIG_ADXL_IRQ FG_RIG_GPIO_LINES FG_RIG_QUIET; do
    [[ -n ${!v:-} ]] && genv+=("$v=${!v}")
done
guest_cmd=$(printf '%q ' env "${genv[@]}" "$RIG_DIR/guest-setup.sh" -- "$@")

log "booting $KREL ($PKGVER) with vng ${vng_args[*]}"
errlog=$(mktemp /tmp/fg-rig-stderr.XXXXXX)
trap 'rm -f "$errlog"' EXIT
t0=$(date +%s.%N)
set +e
# vng in a process group of its own, so that a timeout ends QEMU too (`timeout --foreground`
# signalled vng alone and left qemu-system-x86_64 running)
setsid vng "${vng_args[@]}" --exec "$guest_cmd" 2> >(tee "$errlog" >&2) &
vng_pid=$!
limit=$(( $(date +%s) + ${FG_RIG_TIMEOUT:-300} ))
while kill -0 "$vng_pid" 2>/dev/null && (( $(date +%s) < limit )); do sleep 0.5; done
if kill -0 "$vng_pid" 2>/dev/null; then
    kill -TERM -- "-$vng_pid" 2>/dev/null
    sleep 5
    kill -KILL -- "-$vng_pid" 2>/dev/null
    wait "$vng_pid" 2>/dev/null
    status=124
else
    wait "$vng_pid"
    status=$?
fi
set -e
t1=$(date +%s.%N)
sleep 0.3   # let tee write the last lines into $errlog
total=$(awk "BEGIN{printf \"%.1f\", $t1-$t0}")
guest=$(sed -n 's/.*guest-side total \([0-9.]*\) s.*/\1/p' "$errlog" | tail -n1)
kup=$(sed -n 's/.*kernel uptime at setup \([0-9.]*\) s.*/\1/p' "$errlog" | tail -n1)
if [[ -n $guest ]]; then
    boot=$(awk "BEGIN{printf \"%.1f\", $total-$guest}")
    log "$KREL: wall ${total} s = boot+shutdown ${boot} s (kernel start to rig setup ${kup} s) + rig setup and command ${guest} s; exit $status"
else
    [[ $status == 124 ]] && log "timed out after ${FG_RIG_TIMEOUT:-300} s"
    log "$KREL: wall ${total} s, the command did not finish (exit $status)"
    if ! grep -q '^guest: ' "$errlog"; then
        # not even guest-setup.sh ran: the machine cannot boot this kernel (no QEMU that works
        # here, virtme-ng failing...): exit 90 so that a CI suite can tell it from a failure
        log "$KREL: the guest did not boot"
        exit 90
    fi
fi
exit "$status"

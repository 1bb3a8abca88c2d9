#!/usr/bin/env bash
# Bar (issue 27 item 3): the kernel rig on arm64. Debian 13 (trixie)'s arm64 6.12 kernel under
# qemu-system-aarch64 (machine virt, TCG, no KVM) with the real adxl345_i2c, inv-mpu6050-i2c
# and gpio-sim, the same guest checks as on x86 (tools/kernel-rig/guest-tests.py) run with the
# aarch64 fallguard, and the project's emulators held to the arm64 drivers' dumps as to the x86
# ones. Bar: every guest check passes; the emulators' dumps match the arm64 drivers.
#
#   bench/kernel-rig-arm64.sh          KEEP=DIR keeps the results there
#
# Steps, each timed: the aarch64 program (FALLGUARD_BIN_ARM64, else .build-arm64's release build
# if present, else `tools/arm64-sdk build fallguard`: 20+ min on 2 busy cores), fetch.sh
# 6.12-arm64 (kernel, headers, kbuild, source; the arm64 guest root and the kbuild chroot the
# first time), build-modules.sh 6.12-arm64, then bench/kernel-rig.sh 6.12-arm64 (.ci/kernel-rig:
# one boot running every check, the emulators' dumps, diff-dumps.py, report.py). Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root
make_tmp
now() { date +%s; }
t0=$(now)
bin=${FALLGUARD_BIN_ARM64:-$PWD/.build-arm64/aarch64-unknown-linux-gnu/release/fallguard}
s=$(now)
if [[ -z ${FALLGUARD_BIN_ARM64:-} && ! -x $bin ]]; then
    bin=$(tools/arm64-sdk build fallguard 2>"$OUT/arm64-build.log") || { tail -n 20 "$OUT/arm64-build.log"; exit 1; }
fi
[[ -x $bin ]] || { echo "no aarch64 fallguard at $bin"; exit 1; }
export FALLGUARD_BIN_ARM64=$bin
echo "== arm64 program: $bin ($(file -b "$bin" | cut -d, -f1-2)), $(( $(now) - s )) s"
s=$(now)
tools/kernel-rig/fetch.sh 6.12-arm64 >"$OUT/fetch.log" 2>&1 || { tail -n 20 "$OUT/fetch.log"; exit 1; }
echo "== fetch.sh 6.12-arm64: $(( $(now) - s )) s: $(tail -n 1 "$OUT/fetch.log")"
grep -E 'made in|downloaded .* in|extracted .* in' "$OUT/fetch.log" | sed 's/^/  /' || true
s=$(now)
tools/kernel-rig/build-modules.sh 6.12-arm64 >"$OUT/build-modules.log" 2>&1 || { tail -n 20 "$OUT/build-modules.log"; exit 1; }
echo "== build-modules.sh 6.12-arm64: $(( $(now) - s )) s: $(tail -n 1 "$OUT/build-modules.log")"
s=$(now)
rc=0
KEEP=$OUT/rig bench/kernel-rig.sh 6.12-arm64 || rc=$?
echo "== boot and checks: $(( $(now) - s )) s"
echo "whole arm64 rig: $(( $(now) - t0 )) s"
exit "$rc"

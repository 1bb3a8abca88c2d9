#!/usr/bin/env bash
# Bars (issue 20), against the real Linux drivers in Debian's 6.12 and 6.1 kernels under QEMU
# (tools/kernel-rig, docs/kernel-rig.md):
#   - adxl345 (polled): `fallguard record` of a fed recording within 1 LSB after alignment,
#     at the rate the driver reports; every raw poll of `watch --polled` a fed sample;
#   - inv_mpu6050 (buffered, one fired interrupt per sample): 0 lost over 2,000 samples;
#   - `fallguard gpio` on gpio-sim, libgpiod 1.6 and 2.x, both kernels: the buzzer pattern in
#     `value`, a press seen with its edge, lines released on exit;
#   - `fallguard run`: a real fall sounds the buzzer, counts down, a press aborts it; unbinding
#     and binding the sensor's driver is a sensor fault, then recovered;
#   - the IIO and GPIO emulators against the drivers' dumps: no difference that matters.
# Runs .ci/kernel-rig with its results kept, then prints every figure and the time taken.
# Uses .build/debug/fallguard (swift build) or $FALLGUARD_BIN. Needs root.
# Usage: bench/kernel-rig.sh [6.12] [6.1]      KEEP=DIR keeps the results there
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root
make_tmp
export FALLGUARD_BIN=${FALLGUARD_BIN:-$PWD/.build/debug/fallguard}
t0=$(date +%s)
rc=0
FG_RIG_OUT=$OUT FG_RIG_KERNELS="${*:-6.12 6.1}" .ci/kernel-rig >"$OUT/ci.log" 2>&1 || rc=$?
grep -E '^kernel-rig: (skipped|FAILED)' "$OUT/ci.log" || true
if grep -q '^kernel-rig: skipped' "$OUT/ci.log"; then exit 77; fi
echo "== timings"
grep -h 'kernel-rig: .*: wall' "$OUT"/guest-*.log | sed 's/^kernel-rig: /  /'
for f in "$OUT"/guest-*.log; do
    echo "  $(basename "$f" .log): $(grep -h '^--- ' "$f" | sed 's/^--- //' | paste -sd, - | sed 's/,/, /g')"
done
for f in "$OUT"/guest-*.log; do grep -h '^feeder:' "$f" | sed "s/^/  $(basename "$f" .log) /"; done
echo "  whole suite: $(( $(date +%s) - t0 )) s (fetch and module builds cached: see tools/kernel-rig/README.md for a fresh fetch)"
echo "== bars"
python3 tools/kernel-rig/report.py "$OUT" || rc=1
grep -h '^DIFF' "$OUT"/diff-*.txt 2>/dev/null || true
echo "bars: $([ "$rc" = 0 ] && echo MET || echo "NOT MET (see $OUT/ci.log)")"
exit "$rc"

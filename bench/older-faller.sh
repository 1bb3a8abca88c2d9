#!/usr/bin/env bash
# Issue 35, item 5: the simulated older faller judged by the Swift detector itself, and what three
# rules add and cost: the slow turn after a calm start (`calm-slow-posture-change`, 55°), the
# moving rule's turn after the impact (`moving-rotation-after`, 60°) and the long look's turn
# after the impact after a walk (`look-rotation-after`, 40°: a faint while walking).
# tools/detector-research/older_faller.py writes the 600 young SisFall falls from and out of a
# chair or fainting (F06, F07, F10-F15) with the impact softened to U(1.45, 1.9) g and the 1.5 s
# before it played 1, 1.5 and 2 times slower (the emulation's "older faller", as recordings). Each
# speed is judged accelerometer only (an ADXL345) and with the gyroscope (an MPU6050), before
# (`calm-slow-posture-change=65`: the slow turn wants 65° whatever the start;
# `moving-rotation-after=0`: the moving rule wants the turn around the impact;
# `look-rotation-after=0`: the long look opens only on the turn around the impact) and now; then every
# dev folder is judged both ways and every trial whose outcome changed is listed (the rules' cost
# and gain; a trial listed with the same counts changed only its reason: the rule that found it).
# Output (debug build, ~4 min): tools/detector-research/older_faller_output.txt.
# Usage: bench/older-faller.sh [DATASETS_DIR]   (FALLGUARD_BIN=path skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
D=$(cd "${1:-../shared/datasets}" && pwd)
build_release
make_tmp
BEFORE="--set calm-slow-posture-change=65 --set moving-rotation-after=0 --set look-rotation-after=0"
(cd tools/detector-research && DATASETS=$D python3 older_faller.py "$OUT/older" >/dev/null)
sens() { awk '/^Sensitivity/{print $2 " % (" $4 "/" $6 ")"}'; }
echo "== the simulated older faller (600 falls per speed): before -> now"
for k in x1 x1.5 x2; do
    for run in "--accelerometer-only" ""; do
        # shellcheck disable=SC2086
        b=$("$B" evaluate "$OUT/older/$k" $run $BEFORE | sens)
        # shellcheck disable=SC2086
        n=$("$B" evaluate "$OUT/older/$k" $run | sens)
        printf '%-5s %-22s %s -> %s\n' "$k" "${run:-with the gyroscope}" "$b" "$n"
    done
done
echo "== the dev folders: before -> now, and every trial whose outcome changed"
for data in sisfall-40hz-dev fallalld-waist-40hz-dev hapt-dev-50hz sisfall-6axis-40hz-dev fallalld-waist-6axis-40hz-dev hapt-6axis-dev-50hz; do
    # shellcheck disable=SC2086
    "$B" evaluate "$D/$data" --json --trials $BEFORE > "$OUT/before.json"
    "$B" evaluate "$D/$data" --json --trials > "$OUT/now.json"
    python3 bench/trial_diff.py "$OUT/before.json" "$OUT/now.json" "$data" "before" "now"
done

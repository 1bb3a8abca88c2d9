#!/usr/bin/env bash
# Issue 35, the wall slide ported to the Swift detector (`wall-slide`, 0.6 m): what it adds.
# Every dev folder is judged with the rule off (`wall-slide=0`, as before the port) and on (the
# default), the six-axis folders also `--accelerometer-only`; the script prints each folder's
# figures both ways and every trial whose outcome changed (with the drop the detection carries),
# then the trials the Python emulation (tools/detector-research/wallslide.py `port`, X 0.6-1.2 m
# added to the shipped six-axis rules) says it adds, with its drops, to compare.
# Without a gyroscope (the three-axis folders and --accelerometer-only) the rule measures the drop
# from |a| - g (HipDrop.measure(count:accelerometer:)) between still seconds of the acceleration
# vector; its emulation is WALLSLIDE_ACC=1 WALLSLIDE_ACC_VSTD=0.02. Output
# (debug build, ~8 min): tools/detector-research/wallslide_port_output.txt.
# Usage: bench/wallslide-port.sh [DATASETS_DIR]   (FALLGUARD_BIN=path skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
D=$(cd "${1:-../shared/datasets}" && pwd)
build_release
make_tmp
for data in fallalld-waist-6axis-40hz-dev sisfall-6axis-40hz-dev hapt-6axis-dev-50hz fallalld-waist-40hz-dev sisfall-40hz-dev hapt-dev-50hz; do
    runs=("" "--accelerometer-only")
    case $data in *6axis*) ;; *) runs=("") ;; esac
    for run in "${runs[@]}"; do
        # shellcheck disable=SC2086
        "$B" evaluate "$D/$data" --json --trials --set wall-slide=0 $run > "$OUT/off.json"
        # shellcheck disable=SC2086
        "$B" evaluate "$D/$data" --json --trials $run > "$OUT/on.json"
        python3 bench/trial_diff.py "$OUT/off.json" "$OUT/on.json" "$data ${run:-(default)}" "off" "on"
    done
done
echo "== the Python emulation (wallslide.py port: X 0.6-1.2 m on the shipped six-axis rules, trials it adds)"
(cd tools/detector-research && DATASETS=$D python3 wallslide.py port)
echo "== the same without a gyroscope (WALLSLIDE_ACC=1 WALLSLIDE_ACC_VSTD=0.02: |a| - g between still seconds of the vector; compare the three-axis and --accelerometer-only rows)"
(cd tools/detector-research && DATASETS=$D WALLSLIDE_ACC=1 WALLSLIDE_ACC_VSTD=0.02 python3 wallslide.py port)

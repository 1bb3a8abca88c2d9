#!/usr/bin/env bash
# Issue 35: what the gyroscope adds. The six-axis dev folders judged by `multiphase
# --accelerometer-only` (the gyroscope dropped: an ADXL345), by `multiphase` (the default: the
# gyroscope beside the accelerometer), by `sixaxis` (the gyroscope alone opens the look) and by
# `sixaxis --accelerometer-only` (it must equal the first).
#   SisFall and FallAllD (trial level, sensitivity / specificity), HAPT (false alarms per hour;
#   bar <= 0.1 with six axes, <= 0.3 accelerometer only).
# Usage: bench/sixaxis.sh [DATASETS_DIR]   (FALLGUARD_BIN=path skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
D=${1:-../shared/datasets}
build_release
out=$(mktemp -d)
for data in sisfall-6axis-40hz-dev fallalld-waist-6axis-40hz-dev hapt-6axis-dev-50hz; do
    for run in "multiphase --accelerometer-only" "multiphase" "sixaxis" "sixaxis --accelerometer-only"; do
        # shellcheck disable=SC2086
        $B evaluate "$D/$data" --detector $run --json > "$out/r.json"
        python3 - "$out/r.json" "$data" "$run" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
e = r.get("events") or {}
if r.get("falls", 0) + r.get("adls", 0) == 0:
    print("%-32s %-32s %d false alarms in %.2f h (%.2f per hour)" % (sys.argv[2], sys.argv[3], e["false_alarms"], e["worn_hours"], e["false_alarms_per_hour"]))
else:
    print("%-32s %-32s sensitivity %.2f %% (%d/%d), specificity %.2f %% (%d/%d), too short %d" % (
        sys.argv[2], sys.argv[3], r["sensitivity"], r["detected_falls"], r["falls"], r.get("specificity", 100.0), r["adls"] - r["alarmed_adls"], r["adls"], r["too_short"]))
PY
    done
done
rm -rf "$out"

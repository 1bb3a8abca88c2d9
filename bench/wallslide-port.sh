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
        python3 - "$OUT/off.json" "$OUT/on.json" "$data ${run:-(default)}" <<'PY'
import json, re, sys
off, on, label = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
def line(r):
    e = r.get("events") or {}
    if r.get("falls", 0) + r.get("adls", 0) == 0:
        return "%d false alarms in %.2f h, %d recovered-fall reports" % (e["false_alarms"], e["worn_hours"], e.get("recovered_reports", 0))
    return "falls %d/%d (%d recovered), ADLs without an alarm %d/%d (%d recovered), too short %d" % (
        r["detected_falls"], r["falls"], r["recovered_falls"], r["adls"] - r["alarmed_adls"], r["adls"], r["recovered_adls"], r["too_short"])
print("%-48s off: %s" % (label, line(off)))
print("%-48s on:  %s" % ("", line(on)))
before = {t["path"]: t for t in off.get("trials", [])}
for t in on.get("trials", []):
    b = before.get(t["path"])
    if b is None or (b["detections"], b["recovered"], b.get("reason")) == (t["detections"], t["recovered"], t.get("reason")):
        continue
    drop = re.search(r"drop=([0-9.]+) m", t.get("reason") or "")
    print("   changed %-22s %s: detections %d -> %d, recovered %d -> %d%s" % (
        t["path"].split("/")[-1], t["kind"], b["detections"], t["detections"], b["recovered"], t["recovered"],
        ", drop %s m" % drop.group(1) if drop else ""))
PY
    done
done
echo "== the Python emulation (wallslide.py port: X 0.6-1.2 m on the shipped six-axis rules, trials it adds)"
(cd tools/detector-research && DATASETS=$D python3 wallslide.py port)
echo "== the same without a gyroscope (WALLSLIDE_ACC=1 WALLSLIDE_ACC_VSTD=0.02: |a| - g between still seconds of the vector; compare the three-axis and --accelerometer-only rows)"
(cd tools/detector-research && DATASETS=$D WALLSLIDE_ACC=1 WALLSLIDE_ACC_VSTD=0.02 python3 wallslide.py port)

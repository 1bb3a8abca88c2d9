#!/usr/bin/env bash
# Issue 35 items 4 and 5: falls the wearer gets up from, and slow falls, on the dev folders.
# Each folder is judged with the shipped detector and with the detector before issue 35's rules
# (moving-impact=16: no moving rule; slow-rotation=180: no slow turn). A detection whose wearer
# is up again within the 30 s countdown is a recovered fall: on a fall trial it counts as
# detected, on an ADL trial it is reported apart from the alarms.
#   FallAllD: falls (recovered), its falls with recovery (F02 F04 ... F28), ADL alarms (+ reports)
#   SisFall: the same; HAPT (and its six-axis twin with `sixaxis`): alarms and reports per hour.
# Usage: bench/recovered-falls.sh [DATASETS_DIR]   (FALLGUARD_BIN=path skips the release build)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
D=${1:-../shared/datasets}
build_release
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
judge() {   # folder label detector settings...
    local data=$1 label=$2 detector=$3; shift 3
    local set=()
    for s in "$@"; do set+=(--set "$s"); done
    "$B" evaluate "$D/$data" --detector "$detector" "${set[@]}" --json > "$out/r.json"
    python3 - "$out/r.json" "$data" "$label" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); data, label = sys.argv[2], sys.argv[3]
e = r.get("events") or {}
if r.get("falls", 0) + r.get("adls", 0) == 0:
    print("%-30s %-22s %d alarms in %.2f h (%.2f per hour), %d recovered-fall reports" % (
        data, label, e["false_alarms"], e["worn_hours"], e["false_alarms_per_hour"], e.get("recovered_reports", 0)))
    sys.exit()
rec = {"F02", "F04", "F06", "F08", "F10", "F16", "F18", "F20", "F22", "F24", "F26", "F28"} if "fallalld" in data else set()
rows = [c for c in r["by_code"] if c["code"] in rec]
extra = ""
if rows:
    extra = ", with recovery %d/%d (%d recovered)" % (sum(c["alarms"] for c in rows), sum(c["trials"] for c in rows), sum(c["recovered"] for c in rows))
print("%-30s %-22s falls %.2f %% (%d/%d, %d recovered)%s; ADLs without an alarm %.2f %% (%d/%d), %d recovered-fall reports; too short %d" % (
    data, label, r["sensitivity"], r["detected_falls"], r["falls"], r["recovered_falls"], extra,
    r.get("specificity", 100.0), r["adls"] - r["alarmed_adls"], r["adls"], r["recovered_adls"], r["too_short"]))
PY
}
for data in fallalld-waist-40hz-dev sisfall-40hz-dev hapt-dev-50hz; do
    judge "$data" "before issue 35" multiphase moving-impact=16 slow-rotation=180
    judge "$data" "shipped" multiphase
done
for data in fallalld-waist-6axis-40hz-dev sisfall-6axis-40hz-dev hapt-6axis-dev-50hz; do
    judge "$data" "sixaxis" sixaxis
done

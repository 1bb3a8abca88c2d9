#!/usr/bin/env bash
# Issue 35 (throughput): a change to the detectors' internals must not change one decision.
# Runs `fallguard evaluate --json --trials` with OLD and NEW for both detectors (multiphase,
# sixaxis) on the four dev folders (SisFall and FallAllD, three and six axes) and diffs the
# outputs: every trial's detection count, first decision and impact times, rule and features
# (`reason`), and the summary figures. Exits 1 when any output differs (diffs in OUT/diff-*.txt).
# Usage: bench/detector-equivalence.sh OLD NEW [OUT]
#   OLD, NEW: fallguard programs (a debug build is fine: about a minute per run when idle).
#   OUT: a folder to keep the outputs in (default: a temporary one, removed at the end); OLD's
#   outputs found there are reused.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
[ $# -ge 2 ] || { echo "usage: $0 OLD NEW [OUT] (each a fallguard program)"; exit 64; }
KEEP=${3:-} make_tmp   # an empty KEEP: a temporary folder
OLD=$(realpath "$1"); NEW=$(realpath "$2")
DATA=../shared/datasets
status=0
for folder in sisfall-40hz-dev sisfall-6axis-40hz-dev fallalld-waist-40hz-dev fallalld-waist-6axis-40hz-dev; do
    for detector in multiphase sixaxis; do
        name=$folder-$detector
        # OLD's outputs are kept in OUT and reused by a later run into the same OUT (the base
        # does not change while a change is checked: pass the same OLD).
        [ -s "$OUT/old-$name.json" ] || "$OLD" evaluate "$DATA/$folder" --detector "$detector" --json --trials > "$OUT/old-$name.json"
        "$NEW" evaluate "$DATA/$folder" --detector "$detector" --json --trials > "$OUT/new-$name.json"
        trials=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["trials"]), sum(t["detections"] for t in d["trials"]))' "$OUT/new-$name.json")
        if diff "$OUT/old-$name.json" "$OUT/new-$name.json" > "$OUT/diff-$name.txt"; then
            echo "$name: identical ($trials: trials, detections)"
        else
            echo "$name: DIFFERENT ($(grep -c '^[<>]' "$OUT/diff-$name.txt") lines, $OUT/diff-$name.txt)"
            status=1
        fi
    done
done
exit $status

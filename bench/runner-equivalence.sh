#!/usr/bin/env bash
# Bar (issue 38, item 1): one offline runner (FallGuardCore's DetectorRunner) gives the same
# detections as the three loops it replaced. Runs the same commands with two fallguard programs
# and diffs what they print: `evaluate --json --trials` on both dev folders (multiphase and
# sum-abs), `evaluate --json` by events on hapt-dev-50hz (50 Hz, resampled) and on a recording
# with a gap (the detector reset), `cross-validate` on a small grid on both folders, `replay` of
# the bundled demo, a fall, a 50 Hz session, a gap and a recording that ends with a decision
# due, `report` on the test fixtures and on one recording, and `evaluate` of an incident
# archive. Exits 1 when any output differs (the diffs are in OUT/diff-*.txt).
# Usage: bench/runner-equivalence.sh OLD NEW [OUT]
#   OLD, NEW: a fallguard program, or a git revision (built in a temporary worktree with
#   tools/build-release: a full build, 15-30 min each on the shared machine).
#   OUT: a folder to keep the outputs in (default: a temporary one, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
[ $# -ge 2 ] || { echo "usage: $0 OLD NEW [OUT] (each a fallguard program or a git revision)"; exit 64; }
if [ -n "${3:-}" ]; then KEEP=$3; fi
make_tmp
DATA=../shared/datasets
SIS=$DATA/sisfall-40hz-dev
ALLD=$DATA/fallalld-waist-40hz-dev
HAPT=$DATA/hapt-dev-50hz
FIX=Tests/FallGuardFieldTestTests/Fixtures

program() {   # program OLD|NEW SPEC: the path of a fallguard program for SPEC
    if [ -x "$2" ] && [ -f "$2" ]; then realpath "$2"; return; fi
    local src="$OUT/src-$1"
    git worktree add --detach "$src" "$2" >/dev/null 2>&1
    (cd "$src" && tools/build-release fallguard >/dev/null && realpath .build/release/fallguard)
}
OLD=$(program old "$1")
NEW=$(program new "$2")

# Inputs made here: a fall with a 2 s hole in it (the detector starts afresh after it), and a
# fall cut 1.5 s after its impact (the decision still due when it ends).
mkdir -p "$OUT/in/gap" "$OUT/in/archive"
python3 - "$FIX/sisfall" "$OUT/in" <<'PY'
import json, os, sys
fix, out = sys.argv[1], sys.argv[2]
def rows(name): return [l for l in open(f"{fix}/{name}").read().split("\n")[1:] if l.strip()]
def peak(vals): return max(range(len(vals)), key=lambda i: sum(float(v) ** 2 for v in vals[i].split(",")))
fall, adl = rows("F01_SA02_R01.csv"), rows("D11_SA10_R02.csv")
# A continuous recording: the ADL, 2 s without samples, the fall, 0.3 s without samples, the fall again.
t, lines = 0.0, []
for part, hole in ((adl, 2.0), (fall, 0.3), (fall, 0)):
    for i, v in enumerate(part): lines.append(f"{t + i / 40:.4f},{v}")
    t += (len(part) - 1) / 40 + hole
open(f"{out}/gap/joined.csv", "w").write("t_s,x_g,y_g,z_g\n" + "\n".join(lines) + "\n")
open(f"{out}/gap/joined.labels.csv", "w").write("t_s,label\n")
p = peak(fall)
open(f"{out}/cut.csv", "w").write("x_g,y_g,z_g\n" + "\n".join(fall[:p + 60]) + "\n")
# An incident archive: the fall and the ADL as suspected falls, labelled.
for id, name, label in (("FG-1", "F01_SA02_R01.csv", "fall"), ("FG-2", "D11_SA10_R02.csv", "no-fall"), ("FG-3", "F05_SA03_R02.csv", "unsure")):
    vals = rows(name)
    os.makedirs(f"{out}/archive/{id}")
    open(f"{out}/archive/{id}/signal.csv", "w").write("t_s,x_g,y_g,z_g\n" + "".join(f"{i / 40:.4f},{v}\n" for i, v in enumerate(vals)))
    json.dump({"format": 1, "id": id, "kind": "fall-suspected", "event_t_s": peak(vals) / 40, "event_time": "2026-11-24T00:00:00Z",
               "before": 60, "after": 60, "detector": {"name": "multiphase", "settings": {}, "software": "bench"},
               "timeline": [], "outcome": "false-alarm", "labels": [{"label": label, "by": "bench", "at": "2026-11-25T00:00:00Z"}]},
              open(f"{out}/archive/{id}/incident.json", "w"))
PY

run_all() {   # run_all PROGRAM FOLDER: every output into FOLDER
    local b=$1 o=$2
    mkdir -p "$o"
    "$b" evaluate "$SIS" --json --trials > "$o/evaluate-sisfall.json"
    "$b" evaluate "$SIS" --json --trials --detector sum-abs > "$o/evaluate-sisfall-sum-abs.json"
    "$b" evaluate "$ALLD" --json --trials > "$o/evaluate-fallalld.json"
    "$b" evaluate "$ALLD" --json --trials --detector sum-abs > "$o/evaluate-fallalld-sum-abs.json"
    "$b" evaluate "$HAPT" --json > "$o/evaluate-hapt.json"
    "$b" evaluate "$OUT/in/gap" --json > "$o/evaluate-gap.json"
    "$b" evaluate "$OUT/in/archive" --json > "$o/evaluate-archive.json"
    "$b" cross-validate "$SIS" --json --grid look-rotation=0,55 --grid strong-free-fall=0.85,1.5 \
        --population 'young=SA*,SE15' --population 'older=SE*' --focus F10,F13 > "$o/cross-validate-sisfall.json"
    "$b" cross-validate "$SIS" --detector sum-abs --grid threshold=3,4,5 > "$o/cross-validate-sisfall-sum-abs.txt"
    "$b" cross-validate "$ALLD" --json --grid look-rotation=0,55 --grid strong-free-fall=0.85,1.5 > "$o/cross-validate-fallalld.json"
    "$b" replay > "$o/replay-demo.txt"
    for f in "$FIX/sisfall/F01_SA02_R01.csv" "$FIX/soft/F13_SA05_R01.csv" "$HAPT/U06-exp2.csv.gz" "$OUT/in/gap/joined.csv" "$OUT/in/cut.csv"; do
        "$b" replay "$f" | sed "s|$OUT|OUT|g" > "$o/replay-$(basename "$f" | sed 's/\..*//').txt"
    done
    "$b" report "$FIX/sisfall" --out "$o/report-sisfall.html" > /dev/null
    "$b" report "$FIX/daily" --out "$o/report-daily.html" > /dev/null
    "$b" report "$FIX/sisfall/F01_SA02_R01.csv" --out "$o/report-F01.html" > /dev/null
}
run_all "$OLD" "$OUT/old"
run_all "$NEW" "$OUT/new"

differ=0 files=0
for f in "$OUT"/old/*; do
    n=$(basename "$f"); files=$((files + 1))
    if ! diff "$f" "$OUT/new/$n" > "$OUT/diff-$n.txt"; then differ=$((differ + 1)); echo "DIFFERS: $n ($(wc -l < "$OUT/diff-$n.txt") diff lines)"; fi
done
python3 - "$OUT/new" <<'PY'
import json, sys
o = sys.argv[1]
for name in ("evaluate-sisfall", "evaluate-sisfall-sum-abs", "evaluate-fallalld", "evaluate-fallalld-sum-abs"):
    d = json.load(open(f"{o}/{name}.json"))
    n = sum(t["detections"] for t in d["trials"])
    print(f"{name}: {len(d['trials'])} trials, {n} detections, {d['detected_falls']}/{d['falls']} falls, {d['false_alarms']} false alarms")
for name in ("evaluate-hapt", "evaluate-gap"):
    e = json.load(open(f"{o}/{name}.json"))["events"]
    print(f"{name}: {e['recordings']} recordings, {sum(len(r['detection_impacts_s']) for r in e['per_recording'])} detections")
for name in ("cross-validate-sisfall", "cross-validate-fallalld"):
    c = json.load(open(f"{o}/{name}.json"))
    print(f"{name}: held out {c['detected_falls']}/{c['falls']} falls, {c['alarmed_adls']}/{c['adls']} ADLs alarmed, {c['too_short']} too short")
PY
echo "$files outputs compared, $differ differ"
echo "same output: $([ $differ = 0 ] && echo MET || echo NOT MET)"
[ $differ = 0 ]

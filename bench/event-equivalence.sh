#!/usr/bin/env bash
# Bar (issue 17, part 3): event-level scoring of continuous recordings finds the same detections
# as trial-level scoring. The dataset's trials are joined into one continuous recording per
# subject (t_s running on, GAP seconds without samples between trials, as a device that was
# off for a moment), with a labels sidecar: `fall` at each fall trial's largest acceleration
# (the trial-level reference impact). Both scorings run through `fallguard evaluate`; every
# trial's detections must be the detections event scoring finds in its stretch, at the same
# impact times, and the event figures must equal the trial figures.
# Usage: bench/event-equivalence.sh [DATASET=../shared/datasets/sisfall-40hz-dev] [GAP=5]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release; make_tmp
DATASET=${1:-../shared/datasets/sisfall-40hz-dev}
GAP=${2:-5}
"$B" evaluate "$DATASET" --json --trials > "$OUT/trials.json"
python3 - "$DATASET" "$OUT" "$GAP" <<'PY'
import glob, json, math, os, sys, gzip
dataset, out, gap = sys.argv[1], sys.argv[2], float(sys.argv[3])
trials = json.load(open(f"{out}/trials.json"))["trials"]
os.makedirs(f"{out}/continuous", exist_ok=True)
by_subject = {}
for t in trials: by_subject.setdefault(t["subject"], []).append(t)
segments = []   # (subject file, start, end, trial)
for subject, ts in sorted(by_subject.items()):
    t0, rows, labels = 0.0, [], []
    for t in sorted(ts, key=lambda t: t["path"]):
        vals = [l for l in open(t["path"]).read().split("\n")[1:] if l.strip()]
        start = t0
        for i, v in enumerate(vals): rows.append(f"{t0 + i / 40:.4f},{v}")
        end = t0 + (len(vals) - 1) / 40
        if t["kind"] == "fall": labels.append(f"{start + t['reference_impact_s']:.4f},fall,{os.path.basename(t['path'])}")
        segments.append((subject, start, end, t))
        t0 = end + gap
    with gzip.open(f"{out}/continuous/{subject}.csv.gz", "wt") as f: f.write("t_s,x_g,y_g,z_g\n" + "\n".join(rows) + "\n")
    open(f"{out}/continuous/{subject}.labels.csv", "w").write("t_s,label,note\n" + "\n".join(labels) + "\n")
json.dump([(s, a, b, t["path"]) for s, a, b, t in segments], open(f"{out}/segments.json", "w"))
PY
"$B" evaluate "$OUT/continuous" --json > "$OUT/events.json"
python3 - "$OUT" <<'PY'
import json, sys, os
out = sys.argv[1]
trials = {t["path"]: t for t in json.load(open(f"{out}/trials.json"))["trials"]}
tsum = json.load(open(f"{out}/trials.json"))
ev = json.load(open(f"{out}/events.json"))["events"]
impacts = {os.path.basename(r["path"]).split(".")[0]: r["detection_impacts_s"] for r in ev["per_recording"]}
differ = []
for subject, a, b, path in json.load(open(f"{out}/segments.json")):
    t = trials[path]
    found = [x - a for x in impacts.get(subject, []) if a - 1e-6 <= x <= b + 1e-6]
    want = t["detections"]
    first = t.get("first_impact_s")
    if len(found) != want or (first is not None and abs(found[0] - first) > 1e-3):
        differ.append((path, want, first, found))
n_trials = len(trials)
det_trial = sum(t["detections"] for t in trials.values())
det_event = sum(len(v) for v in impacts.values())
ok = not differ and det_trial == det_event
print(f"{n_trials} trials joined into {ev['recordings']} continuous recordings ({ev['worn_hours']:.2f} h worn): "
      f"trial-level {det_trial} detections, event-level {det_event}; trials whose detections differ: {len(differ)}")
for d in differ[:10]: print("   ", d)
print(f"trial level: {tsum['detected_falls']} of {tsum['falls']} falls detected ({tsum['too_short_falls']} too short), "
      f"{tsum['false_alarms']} false alarms in ADL trials; event level: {ev['detected_falls']} of {ev['falls']} labelled falls, "
      f"{ev['false_alarms']} false alarms, {ev['false_alarms_per_hour']:.2f} per hour of wear, delay median {ev['delay_s']['median']:.2f} s")
print("same detections:", "MET" if ok else "NOT MET")
sys.exit(0 if ok else 1)
PY

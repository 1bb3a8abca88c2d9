"""Two `fallguard evaluate --json --trials` runs of one folder, side by side: each run's figures
in a line, then every trial whose outcome changed (detections, recovered, too short, the
detection's reason or the time of its first decision), with the drop a wall-slide detection carries
and how much sooner or later the first decision came.
usage: python3 bench/trial_diff.py BEFORE.json AFTER.json LABEL [BEFORE_NAME AFTER_NAME]"""
import json, re, sys

off, on, label = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
names = sys.argv[4:6] if len(sys.argv) > 5 else ("before", "after")


def line(r):
    e = r.get("events") or {}
    if r.get("falls", 0) + r.get("adls", 0) == 0:
        return "%d false alarms in %.2f h, %d recovered-fall reports" % (e["false_alarms"], e["worn_hours"], e.get("recovered_reports", 0))
    return "falls %d/%d (%d recovered), ADLs without an alarm %d/%d (%d recovered), too short %d" % (
        r["detected_falls"], r["falls"], r["recovered_falls"], r["adls"] - r["alarmed_adls"], r["adls"], r["recovered_adls"], r["too_short"])


width = max(len(n) for n in names) + 1
print("%-48s %-*s %s" % (label, width, names[0] + ":", line(off)))
print("%-48s %-*s %s" % ("", width, names[1] + ":", line(on)))
before = {t["path"]: t for t in off.get("trials", [])}
key = lambda t: (t["detections"], t["recovered"], t["too_short"], t.get("reason"), t.get("first_decision_s"))
for t in on.get("trials", []):
    b = before.get(t["path"])
    if b is None or key(b) == key(t):
        continue
    drop = re.search(r"drop=([0-9.]+) m", t.get("reason") or "")
    d0, d1 = b.get("first_decision_s"), t.get("first_decision_s")
    print("   changed %-22s %s: detections %d -> %d, recovered %d -> %d, too short %s -> %s%s%s" % (
        t["path"].split("/")[-1], t["kind"], b["detections"], t["detections"], b["recovered"], t["recovered"],
        b["too_short"], t["too_short"], ", drop %s m" % drop.group(1) if drop else "",
        ", decided %+.2f s" % (d1 - d0) if d0 is not None and d1 is not None and d1 != d0 else ""))

#!/usr/bin/env bash
# Bars (issue 17, part 1): the bridge records while it protects.
#  (a) one hour of real recordings (SisFall dev ADLs with a real fall at about 30 min) streamed at
#      60x real time through the emulated MPU6050 while `fallguard run` monitors with recording on:
#      the recording holds every sample the driver delivered, value for value to 1 mg (0 lost), and the
#      fall's incident has its +-60 s signal;
#  (b) `kill -9` at random moments (real time, a replayed fall): at most 10 s of recording lost,
#      the incident (record and lead-up) never;
#  (c) cost at 40 Hz in real time: CPU of the recorder thread, resident memory with recording on
#      against off (limits: 0.05 % of one core, 2 MB);
#  (d) a day's size (limit 30 MB): 16 h of (c)'s constant activity and 8 h lying still (the emulated
#      MPU6050's noise); 24 h of constant activity is printed too.
# Usage: bench/field-recording.sh            (root: the IIO emulator's namespace; about 11 minutes)
#        FALLGUARD_BIN=.build/debug/fallguard bench/field-recording.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root; build_release; make_tmp
ROOT=$PWD
DATA=../shared/datasets/sisfall-40hz-dev
FALL=$ROOT/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv
KILLS=${KILLS:-5}

config() {  # folder sensor-lines recording(true|false)
    mkdir -p "$1/state"
    printf '#!/bin/sh\ncat >> %s/alerts.jsonl; echo >> %s/alerts.jsonl\n' "$1" "$1" > "$1/pager"; chmod 755 "$1/pager"
    cat > "$1/config.yaml" <<YAML
$2
gpio: {enabled: false}
alarm: {countdown: 5, final-phase: 2}
state: {directory: "$1/state"}
metrics: {enabled: false}
log: {level: notice}
wearer: {name: Bench Wearer, location: the bench}
recording: {enabled: $3, flush-interval: 5}
channels:
  pager: {type: exec, command: ["$1/pager"], timeout: 3}
policy:
  fall: {primary: [], others: [], broadcast: [pager]}
  help-requested: {primary: [], others: [], broadcast: [pager]}
  resolved: {primary: [], others: [], broadcast: [pager]}
  device-problem: {primary: [], others: [], broadcast: [pager]}
  heartbeat: {primary: [], others: [], broadcast: [pager]}
YAML
}

# (a) The hour: ADL trials one after another, the fall trial F01_SA01_R01 at the half hour.
python3 - "$DATA" "$OUT/hour.csv" <<'PY'
import glob, sys
data, out = sys.argv[1], sys.argv[2]
adl = sorted(glob.glob(f"{data}/S*/D*_R01.csv"))
fall = f"{data}/SA01/F01_SA01_R01.csv"
rows, fall_at = [], None
for f in adl:
    if fall_at is None and len(rows) >= 1800 * 40:
        fall_at = len(rows)
        rows += open(fall).read().split("\n")[1:]
        rows = [r for r in rows if r]
    rows += [r for r in open(f).read().split("\n")[1:] if r]
    if len(rows) >= 3600 * 40: break
open(out, "w").write("x_g,y_g,z_g\n" + "\n".join(rows[:3600 * 40]) + "\n")
print(f"hour: {min(len(rows), 144000)} samples, the fall trial from {fall_at / 40:.0f} s")
PY
A=$OUT/a; config "$A" 'sensor: {uri: "local:", mode: buffered}' true
tools/iio-emulator/iio-emu --model mpu6050 --recording "$OUT/hour.csv" --speed 60 --stop-at-end --start-delay 2 \
    --write-log "$A/written.csv" -- "$B" run --config "$A/config.yaml" --duration 68 > "$A/log" 2>&1 || true

# (b) kill -9 at random moments of a real-time replay of a fall (detected about 8.2 s in).
for k in $(seq "$KILLS"); do
    K=$OUT/kill$k; config "$K" "sensor: {replay: \"$FALL\"}" true
    "$B" run --config "$K/config.yaml" > "$K/log" 2>&1 &
    pid=$!
    wait_s=$(python3 -c "import random; print(round(random.uniform(10, 25), 1))")
    sleep "$wait_s"
    python3 -c "import time; print(f'{time.time():.3f}')" > "$K/killed_at"
    kill -9 $pid; wait $pid 2>/dev/null || true
done

# (c), (d) Cost and size in real time: the hour's first activities through the emulated MPU6050
# (buffered, kernel-style timestamps) for COST_S seconds with recording on, then off.
COST_S=${COST_S:-180}
for mode in on off; do
    C=$OUT/cost-$mode; config "$C" 'sensor: {uri: "local:", mode: buffered}' $([ $mode = on ] && echo true || echo false)
    tools/iio-emulator/iio-emu --model mpu6050 --recording "$OUT/hour.csv" -- sh -c '
        "$1" run --config "$2/config.yaml" > "$2/log" 2>&1 &
        pid=$!
        sleep "$3"
        for t in /proc/$pid/task/*; do echo "$(cat $t/comm) $(cut -d" " -f1 $t/schedstat)"; done > "$2/threads"
        grep VmRSS /proc/$pid/status | awk "{print \$2}" > "$2/rss_kib"
        kill -TERM $pid; wait $pid' sh "$B" "$C" "$COST_S" || true
done

# (d) Rest: the wearer lying still for REST_S seconds (gravity only, with the noise of an
# MPU6050 at +-16 g: 4 counts, about 2 mg), recording on.
REST_S=${REST_S:-120}
python3 -c "import sys; open(sys.argv[1], 'w').write('x_g,y_g,z_g\n' + '0.05,-0.99,0.08\n' * (40 * (int(sys.argv[2]) + 30)))" "$OUT/still.csv" "$REST_S"
R=$OUT/rest; config "$R" 'sensor: {uri: "local:", mode: buffered}' true
tools/iio-emulator/iio-emu --model mpu6050 --recording "$OUT/still.csv" --noise-counts 4 -- "$B" run --config "$R/config.yaml" --duration "$REST_S" > "$R/log" 2>&1 || true

python3 - "$OUT" "$KILLS" <<'PY'
import glob, gzip, json, os, re, sys, zlib
sys.path.insert(0, "tools/iio-emulator")
out, kills = sys.argv[1], int(sys.argv[2])
G = 9.80665; K = 0.004785 / G   # the bridge's +-16 g range: g per count
ok = True

def rows(path):
    data = open(path, "rb").read()
    text, d = b"", zlib.decompressobj(31)
    try: text = d.decompress(data)
    except zlib.error: pass
    lines = text.decode().split("\n")
    anchor = next((l for l in lines if l.startswith("# wall-clock")), None)
    vals = []
    for l in lines[1:]:
        if not l or l.startswith("#"): continue
        f = l.split(",")
        if len(f) == 4:
            try: vals.append(tuple(float(v) for v in f))
            except ValueError: pass
    return vals, anchor

def wall(anchor):
    m = re.match(r"# wall-clock (\S+) at t_s (\S+)", anchor)
    import datetime
    w = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc).timestamp()
    return w, float(m.group(2))

# (a)
a = f"{out}/a"
written = [l.split(",", 9) for l in open(f"{a}/written.csv") if l.startswith("sample,")]
written = [(int(f[5]), int(f[6]), int(f[7])) for f in written if f[4] == "buffer"]
files = sorted(glob.glob(f"{a}/state/recordings/*.csv.gz"))
recorded = [r for f in files for r in rows(f)[0]]
n = min(len(recorded), len(written))
# The recording keeps 1 mg (half a milli-g of rounding); one count of the driver is 0.49 mg.
bad = sum(1 for i in range(n) if any(abs(recorded[i][1 + c] - written[i][c] * K) > 0.0005 + 1e-9 for c in range(3)))
lost = len(written) - len(recorded)
status = json.load(open(f"{a}/state/status.json"))
dropped = status.get("recording", {}).get("dropped")
incidents = sorted(glob.glob(f"{a}/state/incidents/*/incident.json"))
falls = [json.load(open(p)) for p in incidents]
falls = [r for r in falls if r["kind"] == "fall-suspected"]
signal_ok = False
for r in falls:
    sig, _ = rows(os.path.join(os.path.dirname(incidents[0]), "..", r["id"], "signal.csv")) if False else (None, None)
    path = f"{a}/state/incidents/{r['id']}/signal.csv"
    lines = [l for l in open(path).read().split("\n")[1:] if l and not l.startswith("#")]
    ts = [float(l.split(",")[0]) for l in lines]
    at = sum(1 for t in ts if t < r["event_t_s"] - 1e-4)
    signal_ok |= len(ts) == 4801 and at == 2400
size = sum(os.path.getsize(f) for f in files)
good_a = bad == 0 and lost == 0 and dropped == 0 and len(recorded) >= 3600 * 40 and signal_ok
ok &= good_a
print(f"(a) 1 h at 60x through the emulated MPU6050 while run monitors: the driver delivered {len(written)} samples, "
      f"the recording holds {len(recorded)} in {len(files)} file(s) ({len(recorded) / 144000:.3f} h), equal value for value to 1 mg: "
      f"{bad == 0} ({bad} differ), lost {lost}, dropped by the recorder {dropped}; falls archived {len(falls)}, "
      f"one with its +-60 s signal (2400 + 1 + 2400 samples, centred): {signal_ok}: {'MET' if good_a else 'NOT MET'}")
# (d) In real time (the 60x stream's time column carries 60 times finer steps than a real one).
cost_s = float(os.environ.get("COST_S", "180"))
real = sum(os.path.getsize(f) for f in glob.glob(f"{out}/cost-on/state/recordings/*.csv.gz"))
active = real * 86400 / cost_s / 1e6
rest_s = float(os.environ.get("REST_S", "120"))
rest = sum(os.path.getsize(f) for f in glob.glob(f"{out}/rest/state/recordings/*.csv.gz")) * 86400 / rest_s / 1e6
day = active * 16 / 24 + rest * 8 / 24
ok &= day <= 30
print(f"(d) size: {real / 1e3:.0f} kB for {cost_s:.0f} s of constant activity in real time through the emulated MPU6050: "
      f"{active:.1f} MB a day of it; lying still with the sensor's noise: {rest:.1f} MB a day of it; a day of 16 h of "
      f"constant activity and 8 h of rest: {day:.1f} MB (limit 30): {'MET' if day <= 30 else 'NOT MET'}; the 60x hour of (a) took "
      f"{size / 1e6:.2f} MB ({size * 24 / 1e6:.1f} MB a day with its compressed time steps)")
# (b)
worst, kept = 0.0, 0
for k in range(1, kills + 1):
    d = f"{out}/kill{k}"
    killed = float(open(f"{d}/killed_at").read())
    files = sorted(glob.glob(f"{d}/state/recordings/*.csv.gz"))
    vals, anchor = rows(files[-1]) if files else ([], None)
    if vals and anchor:
        w, t = wall(anchor)
        last = w + (vals[-1][0] - t)
        loss = killed - last
    else:
        loss = float("inf")
    worst = max(worst, loss)
    rec = f"{d}/state/incidents/FG-1"
    has = os.path.exists(f"{rec}/incident.json") and os.path.exists(f"{rec}/signal.csv") and \
          len([l for l in open(f"{rec}/signal.csv") if l[0].isdigit()]) >= 8 * 40
    kept += has
    print(f"    kill {k}: {loss:.2f} s of recording lost, incident FG-1 with its lead-up kept: {has}")
good_b = worst <= 10 and kept == kills
ok &= good_b
print(f"(b) kill -9 at random moments: at most {worst:.2f} s lost (limit 10), incident kept {kept} of {kills}: "
      f"{'MET' if good_b else 'NOT MET'}")
# (c)
def threads(mode):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(f"{out}/cost-{mode}/threads") if l.strip()}
on = threads("on")
rec_ns = sum(v for k, v in on.items() if k == "fg-recorder")
share = rec_ns / 1e9 / cost_s * 100
rss_on = int(open(f"{out}/cost-on/rss_kib").read()); rss_off = int(open(f"{out}/cost-off/rss_kib").read())
extra = (rss_on - rss_off) / 1024
good_c = share <= 0.05 and extra <= 2
ok &= good_c
print(f"(c) cost at 40 Hz: the recorder thread ran {rec_ns / 1e6:.1f} ms in {cost_s:.0f} s = {share:.4f} % of one core (limit 0.05); "
      f"resident {rss_on} KiB with recording, {rss_off} KiB without: {extra:+.2f} MB (limit 2): {'MET' if good_c else 'NOT MET'}")
sys.exit(0 if ok else 1)
PY

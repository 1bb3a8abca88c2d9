#!/usr/bin/env bash
# Bar (issue 3): zero lost samples in buffered mode, through the real libiio:
#   (a) one hour of recording streamed at 60x real time (emulated MPU6050 at 40 Hz, 60 s of wall time);
#   (b) an 800 Hz device rate for 60 s in real time (emulated ADXL345 with its FIFO, `watch --rate 800`).
# Counts every sample the emulated driver put in the buffer (its write log) against every raw
# sample that reached the bridge's pipeline (`fallguard watch` summary), and ring overruns.
# Usage: bench/iio-zero-loss.sh [WALL_SECONDS=60]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root; build_release; make_tmp
SECS=${1:-60}
run() {  # name model speed rate
    tools/iio-emulator/iio-emu --model "$2" --recording "$WALK" --loop --speed "$3" \
        --write-log "$OUT/$1.csv" -- "$B" watch --json --duration "$SECS" --rate "$4" \
        > "$OUT/$1.jsonl" 2>"$OUT/$1.err"
}
run hour60x mpu6050 60 40 &
run rate800 adxl345-buffered 1 800 &
wait
python3 - "$OUT" "$SECS" <<'PY'
import json, sys, os
out, secs = sys.argv[1], float(sys.argv[2])
ok = True
for name, label, need in (("hour60x", "(a) 40 Hz at 60x real time", lambda n: n / 40 / 3600 >= 0.95 * secs / 60),
                          ("rate800", "(b) 800 Hz in real time", lambda n: n >= 0.95 * 800 * secs)):
    written = sum(1 for l in open(os.path.join(out, name + ".csv")) if ",buffer," in l)
    events = [json.loads(l) for l in open(os.path.join(out, name + ".jsonl")) if l.startswith("{")]
    s = [e for e in events if e.get("event") == "summary"][-1]
    faults = [e for e in events if e.get("event") == "fault"]
    lost = written - s["raw_samples"]
    good = lost == 0 and s["overruns"] == 0 and need(written) and not faults
    ok &= good
    print(f"{label}: written by the driver {written} samples ({written / 40 / 3600:.3f} h at 40 Hz), "
          f"reached the pipeline {s['raw_samples']}, lost {lost}, overruns {s['overruns']}, "
          f"sensor faults {len(faults)}, CPU {s['cpu_s']:.2f} s in {s['wall_s']:.1f} s: {'MET' if good else 'NOT MET'}")
sys.exit(0 if ok else 1)
PY

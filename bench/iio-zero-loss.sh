#!/usr/bin/env bash
# Bar (issue 3): zero lost samples, buffered mode, through the real libiio:
#   (a) one hour of recording streamed at 60x real time (MPU6050, 40 Hz, 60 s of wall time);
#   (b) an 800 Hz device rate for 60 s in real time is left to a later change (the emulated
#       MPU6050 reads back the rate the bridge asks for: 40 Hz).
# Counts every sample the emulated driver put in the buffer (its write log) against every raw
# sample that reached the bridge's pipeline (`fallguard watch` summary), and overruns.
# Needs root (the emulator's mount namespace).
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product fallguard >/dev/null
B=$PWD/.build/release/fallguard
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
REC=../shared/datasets/sisfall-40hz-dev/SA01/D01_SA01_R01.csv   # 100 s of walking, looped
tools/iio-emulator/iio-emu --model mpu6050 --recording "$REC" --loop --speed 60 \
    --write-log "$OUT/written.csv" -- "$B" watch --json --duration 60 > "$OUT/watch.jsonl" 2>"$OUT/stderr.txt"
written=$(grep -c ',buffer,' "$OUT/written.csv" || true)
python3 - "$OUT/watch.jsonl" "$written" <<'PY'
import json, sys
events = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
summary = [e for e in events if e.get("event") == "summary"][-1]
written = int(sys.argv[2])
got, over = summary["raw_samples"], summary["overruns"]
hours = written / 40 / 3600
print(f"written by the driver: {written} samples ({hours:.2f} h of recording at 40 Hz)")
print(f"reached the pipeline:  {got} samples, overruns {over}")
faults = [e for e in events if e.get("event") == "fault"]
print(f"sensor faults reported: {len(faults)}")
lost = written - got
print(f"lost: {lost}")
ok = lost == 0 and over == 0 and hours >= 0.95
print("bar: zero lost samples over one hour at 60x: " + ("MET" if ok else "NOT MET"))
sys.exit(0 if ok else 1)
PY

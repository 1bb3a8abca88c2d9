#!/usr/bin/env bash
# Bar (issue 3): latency from a sample written to the emulated device to the detector seeing it,
# p99 <= 30 ms in buffered mode.
# The emulated MPU6050 logs the CLOCK_MONOTONIC time at which it put each sample in the buffer
# (`written_ns` in its write log); `fallguard watch --arrival-log` logs the CLOCK_MONOTONIC time at
# which the pipeline consumed each sample, just before the resampler and detector. With no loss and
# no reordering the n-th sample written is the n-th consumed, so the pairs give the latency.
# Usage: bench/iio-latency.sh [SECONDS=120]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root; build_release; make_tmp
SECS=${1:-120}
tools/iio-emulator/iio-emu --model mpu6050 --recording "$WALK" --loop --write-log "$OUT/written.csv" \
    -- "$B" watch --json --duration "$SECS" --arrival-log "$OUT/arrivals.txt" > "$OUT/watch.jsonl" 2>"$OUT/err.txt"
python3 - "$OUT" <<'PY'
import sys, os, statistics
out = sys.argv[1]
written = [int(l.split(",")[3]) for l in open(os.path.join(out, "written.csv")) if ",buffer," in l]
arrived = [int(l.split(",")[0]) for l in open(os.path.join(out, "arrivals.txt")) if l.strip()]
n = min(len(written), len(arrived))
if n == 0 or abs(len(written) - len(arrived)) > 1:   # the last sample may be cut by the stop
    print(f"cannot pair: {len(written)} written, {len(arrived)} consumed"); sys.exit(1)
lat = sorted((a - w) / 1e6 for w, a in zip(written[:n], arrived[:n]))
if lat[0] < 0:
    print(f"negative latency {lat[0]:.3f} ms: samples out of order or clocks differ"); sys.exit(1)
q = lambda p: lat[min(n - 1, int(p * n))]
print(f"buffered MPU6050 at 40 Hz, {n} samples: latency ms min {lat[0]:.2f}, median {q(0.5):.2f}, "
      f"p90 {q(0.9):.2f}, p99 {q(0.99):.2f}, p99.9 {q(0.999):.2f}, max {lat[-1]:.2f}")
ok = q(0.99) <= 30
print("bar: p99 <= 30 ms: " + ("MET" if ok else "NOT MET"))
sys.exit(0 if ok else 1)
PY

#!/usr/bin/env bash
# Bars (issue 5): an alert is committed to the outbox within 5 ms of countdown expiry, and its
# first delivery attempt reaches the receiver within 100 ms.
#  1. 1,000 fall alerts enqueued one after another into a real outbox file (WAL,
#     synchronous=FULL, /var/tmp on disk), each with its 5 deliveries (SMS + call to the
#     primary, SMS to two others, a webhook): commit latency p50/p99/max.
#  2. 100 alerts, 100 ms apart (10 alerts, 50 messages a second: far more than a bridge
#     ever sends), with the delivery worker running and the loopback receiver up: time from
#     the start of enqueue to the receiver getting each delivery's first request, p50/p99/max.
# Usage: bench/notify-latency.sh [ALERTS]   (CONFIGURATION=debug to skip the release build)
set -euo pipefail
source "$(dirname "$0")/notify/common.sh"
N=${1:-1000}

start_receiver 0
python3 bench/notify/settings.py "$PORT" 60 > "$WORK/settings.json"

line=$($B outbox-run --settings-json "$WORK/settings.json" --state-dir "$WORK/enqueue" --enqueue "$N" --latency --no-delivery 2>/dev/null | grep enqueue-latency)
echo "$line (outbox file on $(df -T /var/tmp | awk 'NR==2 {print $2}'), synchronous=FULL)"
# The floor under it: one 4 KiB write + fsync on the same disk, as many times.
python3 -c "
import os, time
fd = os.open('$WORK/fsync-probe', os.O_WRONLY | os.O_CREAT)
ts = []
for _ in range($N):
    os.write(fd, b'x' * 4096); t = time.perf_counter(); os.fsync(fd); ts.append((time.perf_counter() - t) * 1000)
ts.sort(); print('disk floor: fsync-ms p50=%.3f p99=%.3f max=%.3f' % (ts[len(ts) // 2], ts[int(len(ts) * 0.99) - 1], ts[-1]))
"
p99=$(echo "$line" | sed -E 's/.*p99=([0-9.]+).*/\1/')
max=$(echo "$line" | sed -E 's/.*max=([0-9.]+).*/\1/')

$B outbox-run --settings-json "$WORK/settings.json" --state-dir "$WORK/deliver" --enqueue 100 --interval-ms 100 \
    --enqueue-log "$WORK/keys.txt" > "$WORK/run.txt" 2>/dev/null
grep "^outbox:" "$WORK/run.txt"
first=$(python3 bench/notify/analyse.py latency "$WORK/keys.txt" "$WORK/requests.jsonl")
echo "$first"
fmax=$(echo "$first" | sed -E 's/.*max=([0-9.]+).*/\1/')

status=0
if (( $(echo "$p99 <= 5" | bc -l) )); then echo "bar: commit p99 <= 5 ms: MET (max $max ms)"; else echo "bar: commit p99 <= 5 ms: NOT MET"; status=1; fi
if (( $(echo "$fmax <= 100" | bc -l) )); then echo "bar: first attempt <= 100 ms for every delivery: MET"; else echo "bar: first attempt <= 100 ms: NOT MET"; status=1; fi
exit $status

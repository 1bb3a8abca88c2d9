#!/usr/bin/env bash
# Bars (issue 5): an alert is committed to the outbox within 5 ms of countdown expiry, and its
# first delivery attempt reaches the receiver within 100 ms.
#
# The alarm arms the outbox when a countdown begins: the fall alert and its deliveries are
# committed then (WAL, synchronous=FULL), held, and released at expiry; if the process dies
# during the countdown they go out by themselves. So at expiry the alert is already durable.
#  1. 1,000 countdowns of 100 ms one after another (5 deliveries each: SMS + call to the
#     primary, SMS to two others, a webhook) into a real outbox file on disk: the arm commit
#     (at the countdown's start), the time from expiry until the alert is durable (0 when the
#     arm commit finished before expiry), and the release at expiry, p50/p99/max.
#  2. The same 1,000 alerts enqueued without a countdown (a held-button help request takes
#     this path): one commit each, p50/p99/max, with this disk's bare fsync beside it.
#  3. 100 countdowns, 100 ms apart, with the delivery worker running and the loopback
#     receiver up: time from expiry to the receiver getting each delivery's first request.
# Usage: bench/notify-latency.sh [ALERTS]   (CONFIGURATION=debug to skip the release build)
set -euo pipefail
source "$(dirname "$0")/notify/common.sh"
N=${1:-1000}

start_receiver 0
python3 bench/notify/settings.py "$PORT" 60 > "$WORK/settings.json"

fs=$(df -T /var/tmp | awk 'NR==2 {print $2}')
countdown=$($B outbox-run --settings-json "$WORK/settings.json" --state-dir "$WORK/countdown" --enqueue "$N" --countdown-ms 100 \
    --latency --no-delivery 2>/dev/null | grep -E "^(arm-commit|expiry-to-durable|release)")
echo "countdowns (outbox file on $fs, synchronous=FULL):"
echo "$countdown" | sed 's/^/  /'
durable=$(echo "$countdown" | grep expiry-to-durable)
line=$($B outbox-run --settings-json "$WORK/settings.json" --state-dir "$WORK/enqueue" --enqueue "$N" --latency --no-delivery 2>/dev/null | grep enqueue-latency)
echo "no countdown (help request): $line"
# The floor under it: one 4 KiB write + fsync on the same disk, as many times.
python3 -c "
import os, time
fd = os.open('$WORK/fsync-probe', os.O_WRONLY | os.O_CREAT)
ts = []
for _ in range($N):
    os.write(fd, b'x' * 4096); t = time.perf_counter(); os.fsync(fd); ts.append((time.perf_counter() - t) * 1000)
ts.sort(); print('disk floor: fsync-ms p50=%.3f p99=%.3f max=%.3f' % (ts[len(ts) // 2], ts[int(len(ts) * 0.99) - 1], ts[-1]))
"
p99=$(echo "$durable" | sed -E 's/.*p99=([0-9.]+).*/\1/')
max=$(echo "$durable" | sed -E 's/.*max=([0-9.]+).*/\1/')

$B outbox-run --settings-json "$WORK/settings.json" --state-dir "$WORK/deliver" --enqueue 100 --interval-ms 100 --countdown-ms 100 \
    --enqueue-log "$WORK/keys.txt" > "$WORK/run.txt" 2>/dev/null
grep "^outbox:" "$WORK/run.txt"
first=$(python3 bench/notify/analyse.py latency "$WORK/keys.txt" "$WORK/requests.jsonl")
echo "$first"
fmax=$(echo "$first" | sed -E 's/.*max=([0-9.]+).*/\1/')

status=0
if (( $(echo "$p99 <= 5" | bc -l) )); then echo "bar: durable within 5 ms of expiry (p99): MET (p99 $p99 ms, max $max ms)"; else echo "bar: durable within 5 ms of expiry: NOT MET (p99 $p99 ms)"; status=1; fi
if (( $(echo "$fmax <= 100" | bc -l) )); then echo "bar: first attempt <= 100 ms for every delivery: MET"; else echo "bar: first attempt <= 100 ms: NOT MET"; status=1; fi
exit $status

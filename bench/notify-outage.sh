#!/usr/bin/env bash
# Bar (issue 5): the receiver is down for 10 minutes and the bridge is killed twice (kill -9):
# 100 % of 1,000 alerts delivered after recovery, zero duplicates after idempotency.
#  The bridge enqueues 1,000 fall alerts (5 deliveries each, 5,000 keys) while the receiver on
#  127.0.0.1 refuses connections; it is killed with SIGKILL at 1/3 and 2/3 of the outage and
#  started again each time; the receiver comes back at the end of the outage and the third
#  bridge process runs until nothing is pending. Every key must have reached the receiver
#  (escalations, which the outage causes, come on top); repeats of a key are what the receiver
#  drops by its idempotency key.
# Usage: bench/notify-outage.sh [OUTAGE_SECONDS=600] [ALERTS=1000]
#        bench/notify-outage.sh --short   (30 s outage, for CI)
set -euo pipefail
OUTAGE=${1:-600}
[ "$OUTAGE" = "--short" ] && OUTAGE=30
N=${2:-1000}
source "$(dirname "$0")/notify/common.sh"

start_receiver 0          # only to find a free port
stop_receiver
python3 bench/notify/settings.py "$PORT" 30 > "$WORK/settings.json"
run_bridge() {
    $B outbox-run --settings-json "$WORK/settings.json" --state-dir "$WORK/state" "$@" >> "$WORK/bridge.txt" 2>&1 &
    BRIDGE_PID=$!
}
third=$(echo "$OUTAGE / 3" | bc -l)
start=$(date +%s.%N)
run_bridge --enqueue "$N" --enqueue-log "$WORK/keys.txt"
sleep "$third"
# The first kill comes once every alert is committed (it takes seconds, the outage minutes).
until [ "$(wc -l < "$WORK/keys.txt" 2>/dev/null || echo 0)" -ge $((N * 5)) ]; do sleep 0.2; done
kill -9 "$BRIDGE_PID"; wait "$BRIDGE_PID" 2>/dev/null || true
echo "killed the bridge (kill -9) at $(printf '%.0f' "$(echo "$(date +%s.%N) - $start" | bc -l)") s; $(wc -l < "$WORK/keys.txt") deliveries were committed"
run_bridge
sleep "$third"
kill -9 "$BRIDGE_PID"; wait "$BRIDGE_PID" 2>/dev/null || true
echo "killed the bridge (kill -9) again at $(printf '%.0f' "$(echo "$(date +%s.%N) - $start" | bc -l)") s"
run_bridge
sleep "$third"
start_receiver "$PORT"
back=$(date +%s.%N)
echo "receiver back on 127.0.0.1:$PORT after $(printf '%.0f' "$(echo "$back - $start" | bc -l)") s down"
for _ in $(seq 600); do kill -0 "$BRIDGE_PID" 2>/dev/null || break; sleep 1; done
if kill -0 "$BRIDGE_PID" 2>/dev/null; then echo "the bridge did not drain the outbox within 600 s of recovery"; exit 1; fi
wait "$BRIDGE_PID"; BRIDGE_PID=""
printf 'drained %.1f s after recovery; %s\n' "$(echo "$(date +%s.%N) - $back" | bc -l)" "$(tail -1 "$WORK/bridge.txt")"
python3 bench/notify/analyse.py delivery "$WORK/keys.txt" "$WORK/requests.jsonl" && ok=1 || ok=0
grep -q "pending 0, sent [0-9]*, failed 0" "$WORK/bridge.txt" || ok=0
if [ "$ok" = 1 ]; then echo "bar: 100 % of $N alerts delivered, 0 duplicates after idempotency: MET"; else echo "bar: NOT MET"; exit 1; fi

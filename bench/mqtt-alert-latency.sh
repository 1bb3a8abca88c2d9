#!/usr/bin/env bash
# Figure for the MQTT channel: time from publishing an alert at QoS 1 to the broker's PUBACK
# (what `send` waits for), 1000 alerts one after the other against a real mosquitto on
# loopback. Bar: p99 <= 50 ms, so the channel adds little to the outbox's delivery time.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
tools/build-release fallguard-mqtt-probe >/dev/null
DIR=$(mktemp -d)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\n' "$PORT" > "$DIR/mosquitto.conf"
mosquitto -c "$DIR/mosquitto.conf" 2>/dev/null &
BROKER=$!
trap 'kill $BROKER 2>/dev/null; rm -rf "$DIR"' EXIT
sleep 0.5
OUT=$(.build/release/fallguard-mqtt-probe --host 127.0.0.1 --port "$PORT" --device bench --bench "$N" 2>/dev/null)
echo "$OUT"
P99=$(echo "$OUT" | sed -n 's/.*p99_ms=\([0-9.]*\).*/\1/p')
if (( $(echo "$P99 <= 50" | bc) )); then echo "PASS: p99 $P99 ms <= 50 ms"; else echo "FAIL: p99 $P99 ms > 50 ms"; exit 1; fi

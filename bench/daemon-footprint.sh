#!/usr/bin/env bash
# Bars (issue 6): start-up to monitoring <= 1 s; the running daemon at 40 Hz uses <= 30 MB resident
# memory and <= 1 % of one core.
# `fallguard run` (release build) with a configuration for real hardware: the emulated MPU6050
# (buffered, 40 Hz) through the real libiio, buzzer / button / LED through the real libgpiod in the
# GPIO emulator, the outbox in SQLite, MQTT to a real mosquitto on loopback, metrics on loopback.
# The daemon reports how long after exec it was monitoring (`ready_ms` in its status file), and at
# exit its CPU time and peak RSS (getrusage). Usage: bench/daemon-footprint.sh [SECONDS=300]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root; build_release; make_tmp
SECS=${1:-300}
PORT=$((20000 + RANDOM % 20000))
mkdir -p "$OUT/broker"
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$PORT" > "$OUT/broker/mosquitto.conf"
mosquitto -c "$OUT/broker/mosquitto.conf" >"$OUT/broker/log.txt" 2>&1 &
BROKER=$!
trap 'kill $BROKER 2>/dev/null; rm -rf "$OUT"' EXIT
sed -e "s|@STATE@|$OUT/state|" -e "s|@MQTT_PORT@|$PORT|" -e "s|@METRICS_PORT@|$((PORT + 1))|" \
    bench/configs/emulated-pi.yaml > "$OUT/config.yaml"
tools/gpio-emulator/gpio-emu --log "$OUT/gpio.jsonl" -- \
    tools/iio-emulator/iio-emu --model mpu6050 --recording "$WALK" --loop -- \
    "$B" run --config "$OUT/config.yaml" --duration "$SECS" > "$OUT/out.txt" 2> "$OUT/log.txt" || {
        echo "fallguard run failed:"; tail -20 "$OUT/log.txt"; exit 1; }
python3 - "$OUT/log.txt" "$SECS" "$OUT/state/status.json" <<'PY'
import json, re, sys
log = open(sys.argv[1]).read()
ready = json.load(open(sys.argv[3])).get("ready_ms")
stop = re.search(r"stopped after ([\d.]+) s: CPU ([\d.]+) s \(([\d.]+) % of one core\)", log)
rss = re.search(r"max RSS (\d+) KiB", log)
if ready is None or not stop or not rss:
    print("no ready_ms in the status file or no exit line in the log:\n" + log[-3000:]); sys.exit(1)
ms, pct, mb = int(ready), float(stop.group(3)), int(rss.group(1)) / 1024
faults = len(re.findall(r"ERROR fallguard.sensor", log))
print(f"start-up to monitoring: {ms} ms after exec (bar 1000 ms): {'MET' if ms <= 1000 else 'NOT MET'}")
print(f"running {float(stop.group(1)):.0f} s at 40 Hz: CPU {stop.group(2)} s = {pct:.3f} % of one core (bar 1 %): {'MET' if pct <= 1 else 'NOT MET'}")
print(f"peak resident memory: {mb:.1f} MB (bar 30 MB): {'MET' if mb <= 30 else 'NOT MET'}")
print(f"sensor errors logged: {faults}")
sys.exit(0 if ms <= 1000 and pct <= 1 and mb <= 30 and faults == 0 else 1)
PY

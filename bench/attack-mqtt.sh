#!/usr/bin/env bash
# Bar (issue 40, item 1, attacks 1 and 2): one oversized MQTT message never stops monitoring.
# A real mosquitto with its default limit (256 MB per message: a broker nobody configured), a
# bridge (`fallguard run`, MQTT channel, a recorded fall as its sensor, a 5 s countdown) in a
# 512 MB memory cgroup where the machine has cgroup v2, and a staff station (`fallguard station`).
#   1. SIZE MB retained on the bridge's ack topic and on homeassistant/status before it starts,
#      SIZE MB live on the ack topic while it runs: the bridge keeps running, the fall alert is
#      published, its peak RSS (VmHWM) < 100 MB, and the broker says it dropped the messages.
#   2. a bridge's topics with SIZE/5 MB retained `state` and SIZE MB `alert`: the station's peak
#      RSS < 100 MB, /site.json stays small, station.sqlite stays small.
# FALLGUARD_BIN=.build/debug/fallguard skips the release build.
# Usage: bench/attack-mqtt.sh [SIZE_MB=250]
set -uo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/lib-attack.sh
command -v mosquitto_pub >/dev/null && [ -x /usr/sbin/mosquitto ] || { echo "needs mosquitto and mosquitto-clients"; exit 77; }
build_release; make_tmp; attack_init
SIZE=${1:-250}
ROOT=$PWD
FALL=$ROOT/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv
MPORT=$(free_port); SPORT=$(free_port)

printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nlog_type all\nlog_dest file %s\nuser root\n' \
    "$MPORT" "$OUT/broker.log" > "$OUT/mosquitto.conf"
/usr/sbin/mosquitto -c "$OUT/mosquitto.conf" >/dev/null 2>&1 &
track $!
sleep 1
head -c "$((SIZE * 1000 * 1000))" /dev/zero | tr '\0' 'x' > "$OUT/big"
head -c "$((SIZE * 200 * 1000))" /dev/zero | tr '\0' 'y' > "$OUT/fifth"
pub() { mosquitto_pub -h 127.0.0.1 -p "$MPORT" -q 1 "$@"; }

# The bridge in a 512 MB cgroup (cgroup v2), as the attacker ran it.
CG=""
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers; then
    CG=/sys/fs/cgroup/fallguard-attack-$$
    echo +memory > /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null
    mkdir -p "$CG" && echo 512M > "$CG/memory.max" && echo 0 > "$CG/memory.swap.max" 2>/dev/null || CG=""
elif [ -w /sys/fs/cgroup/memory ]; then   # cgroup v1
    CG=/sys/fs/cgroup/memory/fallguard-attack-$$
    mkdir -p "$CG" && echo 512M > "$CG/memory.limit_in_bytes" || CG=""
fi
peak() { awk '/VmHWM/ { print int($2 / 1024) }' "/proc/$1/status" 2>/dev/null || echo -1; }

# Attack 1.
pub -r -t fallguard/attack/ack -f "$OUT/big"
pub -r -t homeassistant/status -f "$OUT/big"
mkdir -p "$OUT/bridge"
cat > "$OUT/bridge/config.yaml" <<EOF
device: attack
sensor: {replay: "$FALL"}
gpio: {enabled: false}
alarm: {countdown: 5, final-phase: 2}
state: {directory: "$OUT/bridge/state"}
metrics: {enabled: false}
wearer: {name: Attack Wearer, location: the lab}
channels:
  mq: {type: mqtt, host: 127.0.0.1, port: $MPORT}
policy:
  fall: {primary: [], others: [], broadcast: [mq]}
  help-requested: {primary: [], others: [], broadcast: [mq]}
  resolved: {primary: [], others: [], broadcast: [mq]}
  device-problem: {primary: [], others: [], broadcast: [mq]}
  heartbeat: {primary: [], others: [], broadcast: [mq]}
EOF
timeout 90 mosquitto_sub -h 127.0.0.1 -p "$MPORT" -t fallguard/attack/alert -C 1 -W 80 > "$OUT/alert.txt" 2>/dev/null &
SUB=$!
if [ -n "$CG" ]; then
    sh -c "echo \$\$ > $CG/cgroup.procs; exec \"$B\" run --config \"$OUT/bridge/config.yaml\"" > "$OUT/bridge.log" 2>&1 &
else
    "$B" run --config "$OUT/bridge/config.yaml" > "$OUT/bridge.log" 2>&1 &
fi
BRIDGE=$!; track $BRIDGE
sleep 3
pub -t fallguard/attack/ack -f "$OUT/big"
wait $SUB
alive=no; kill -0 "$BRIDGE" 2>/dev/null && alive=yes
hwm=$(peak "$BRIDGE")
dropped=$(grep -c "Dropping too large outgoing PUBLISH for fallguard-attack" "$OUT/broker.log")
echo "bridge: alive $alive, alert published: $([ -s "$OUT/alert.txt" ] && echo yes || echo no), peak RSS $hwm MB, broker dropped $dropped messages for it, cgroup ${CG:-none}"
if [ "$alive" = yes ] && [ -s "$OUT/alert.txt" ] && [ "$hwm" -ge 0 ] && [ "$hwm" -lt 100 ] && [ "$dropped" -ge 3 ]; then
    result 1 refused "$SIZE MB on the ack and status topics: monitoring went on, the alert went out, peak $hwm MB"
else
    result 1 GOT-IN "alive $alive, peak $hwm MB, dropped $dropped; log tail: $(tail -3 "$OUT/bridge.log" | tr '\n' ' ')"
fi
kill -TERM "$BRIDGE" 2>/dev/null; wait "$BRIDGE" 2>/dev/null

# Attack 2.
mkdir -p "$OUT/station"
cat > "$OUT/station/station.yaml" <<EOF
station:
  broker: {host: 127.0.0.1, port: $MPORT}
  listen: 127.0.0.1:$SPORT
  acknowledge-secret: "attack-station-secret-0123456789"
  staff:
    - {user: anna, name: Anna Smith, password: "correct horse battery"}
  residents:
    room-1: {wearer: Margaret, location: "Room 1"}
  state-directory: $OUT/station/state
EOF
start_daemon station "$SPORT" station --config "$OUT/station/station.yaml"
STATION=${PIDS[-1]}
pub -r -t fallguard/room-1/state -f "$OUT/fifth"
pub -t fallguard/room-1/alert -f "$OUT/big"
pub -r -t fallguard/room-1/state -m countdown
sleep 2
site=$(curl -s -u "anna:correct horse battery" "http://127.0.0.1:$SPORT/site.json" | wc -c)
hwm=$(peak "$STATION")
db=$(du -sk "$OUT/station/state" 2>/dev/null | cut -f1)
echo "station: peak RSS $hwm MB, /site.json $site bytes, state directory $db KB"
if [ "$hwm" -ge 0 ] && [ "$hwm" -lt 100 ] && [ "${db:-0}" -lt 10240 ]; then
    result 2 refused "$((SIZE / 5)) MB state and $SIZE MB alert: station peak $hwm MB, state $db KB"
else
    result 2 GOT-IN "station peak $hwm MB, state $db KB"
fi
[ -n "$CG" ] && { stop_started; rmdir "$CG" 2>/dev/null; }
attack_summary

# shellcheck shell=bash
# What bench/modem.sh (python-dbusmock's ModemManager) and tools/kernel-rig/modem-real-checks.sh
# (the real one, in the kernel rig's guest) share: the receiver, the configuration, the
# countdown's end, each contact's SMS exactly once. Sourced, not run. Needs REPO, WORK, FALL
# (absolute), ANNA, BEN, CARA, PIDS; RING_TIMEOUT (seconds, default 20).

start_receiver() {   # the receiver; sets PORT ($1: a port, default 0: a free one) and RECEIVER
    rm -f "$WORK/port"
    python3 "$REPO/tools/notify-receiver/receiver.py" --port "${1:-0}" --port-file "$WORK/port" --log "$WORK/requests.jsonl" \
        --twilio-sid AC0123456789abcdef0123456789abcdef --twilio-token test-token >/dev/null 2>&1 &
    RECEIVER=$!
    PIDS+=($RECEIVER)
    for _ in $(seq 200); do [ -s "$WORK/port" ] && break; sleep 0.05; done
    PORT=$(cat "$WORK/port")
}
config() {   # $1: state folder, $2: receiver port
    local account="account-sid: AC0123456789abcdef0123456789abcdef, auth-token: test-token, from: \"+15005550006\", base-url: \"http://127.0.0.1:$2\""
    cat > "$1.yaml" <<EOF
sensor: {replay: "$FALL"}
gpio: {enabled: false}
alarm: {countdown: 5, final-phase: 2}
state: {directory: "$1"}
metrics: {enabled: false}
wearer: {name: Test Wearer, location: the lab}
contacts:
  - {name: Anna, phone: "$ANNA"}
  - {name: Ben, phone: "$BEN"}
  - {name: Cara, phone: "$CARA"}
channels:
  sms: {type: twilio-sms, $account, read-replies: false, fallback: modem, fallback-after: 30}
  call: {type: twilio-call, $account, follow-calls: false, fallback: modem-call, fallback-after: 30}
  modem: {type: modem, poll-interval: 2}
  modem-call: {type: modem, mode: call, poll-interval: 2, ring-timeout: ${RING_TIMEOUT:-20}}
EOF
}
expired_at() {   # unix time of the first countdown-expired in $1/incidents.jsonl
    python3 - "$1/incidents.jsonl" <<'PY'
import json, sys, datetime
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "countdown-expired":
        t = e.get("wall-time")
        if isinstance(t, (int, float)) and t > 1e9: print(t)
        else: print(datetime.datetime.fromisoformat(str(t).replace("Z", "+00:00")).timestamp())
        break
PY
}
sms_once_each() {   # $1: a file of "sms NUMBER UNIXTIME" lines; each of ANNA, BEN, CARA in it exactly once
    local who c ok=0
    for who in $ANNA $BEN $CARA; do
        c=$(awk -v n="$who" '$1 == "sms" && $2 == n' "$1" | wc -l)
        echo "SMS by the modem to $who: $c"
        [ "$c" = 1 ] || { echo "FAIL: $c SMS to $who, not 1"; ok=1; }
    done
    return $ok
}
wait_for() {   # seconds, command…
    local end=$((SECONDS + $1)); shift
    until "$@"; do [ $SECONDS -ge $end ] && return 1; sleep 0.5; done
}

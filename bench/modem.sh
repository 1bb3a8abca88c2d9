#!/usr/bin/env bash
# Bars (issue 36, the modem): `fallguard run` (a replayed real fall, countdown 5 s) with
# `sms`/`call` on a Twilio-compatible receiver (tools/notify-receiver) and `fallback: modem`,
# the modem being python-dbusmock's ModemManager (tools/modem-mock/modemmanager.py, with
# Messaging and Voice) on a private D-Bus, driven by the real `mmcli`:
#  (a) receiver stopped: the fall reaches the modem's sent SMS within 60 s of the countdown's
#      end (measured: countdown-expired in incidents.jsonl → the mock's Sms.Send), each
#      contact once; a reply "OK" from the primary's number acknowledges the alarm;
#  (b) receiver up: the modem sends nothing;
#  (c) SIM missing, no signal, unplugged (receiver up): the daemon's status says the modem's
#      problem, the device-problem alert goes out by the receiver, and nothing is lost: a
#      fall's deliveries all reach the receiver.
# A real ModemManager probing an emulated AT modem: bench/modem-real.sh (the kernel rig).
# Uses the debug build unless FALLGUARD_BIN names a binary.
# Usage: bench/modem.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
if [ -n "${FALLGUARD_BIN:-}" ]; then B=$FALLGUARD_BIN; else swift build --product fallguard >/dev/null; B=$PWD/.build/debug/fallguard; fi
WORK=$(mktemp -d /var/tmp/fallguard-modem-bench.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null || true; done; wait 2>/dev/null; rm -rf "$WORK"; }
stop() { kill -9 "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }
trap cleanup EXIT
FALL=$PWD/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv   # a real fall, detected about 8 s in
REPO=$PWD
# shellcheck source=modem-lib.sh
source bench/modem-lib.sh
ANNA=+447700900001 BEN=+447700900002 CARA=+447700900003
failed=0
check() { if "$@"; then :; else failed=1; fi; }

# A private bus with the mock; sets BUS.
start_modem() {   # $1: JSON parameters
    local dir=$WORK/bus-$RANDOM
    mkdir -p "$dir"
    BUS=unix:path=$dir/bus
    dbus-daemon --session --nofork --nopidfile --address="$BUS" 2>/dev/null &
    PIDS+=($!)
    for _ in $(seq 100); do [ -S "$dir/bus" ] && break; sleep 0.05; done
    DBUS_SYSTEM_BUS_ADDRESS=$BUS /usr/bin/python3 -m dbusmock --system -t tools/modem-mock/modemmanager.py -p "$1" \
        >/dev/null 2>"$dir/mock.log" &
    PIDS+=($!)
    for _ in $(seq 200); do DBUS_SYSTEM_BUS_ADDRESS=$BUS mmcli -L 2>/dev/null | grep -q Modem/0 && break; sleep 0.1; done
}
mock() {   # method [args…]: a control call of the mock
    dbus-send --bus="$BUS" --print-reply --dest=org.freedesktop.ModemManager1 /org/freedesktop/ModemManager1 \
        "org.freedesktop.DBus.Mock.$1" "${@:2}"
}
sent() {   # the mock's sent SMS and calls: one "kind number unixtime" a line
    mock Sent | python3 -c '
import re, sys
text = sys.stdin.read()
for kind, number, t in re.findall(r"string \"(sms|call)\"\s+string \"([^\"]*)\"\s+string \"[^\"]*\"\s+string \"([0-9.]+)\"", text):
    print(kind, number, t)'
}
run_daemon() {   # $1: state folder, $2: seconds
    DBUS_SYSTEM_BUS_ADDRESS=$BUS "$B" run --config "$1.yaml" --duration "$2" > "$1.out" 2> "$1.err" &
    DAEMON=$!
    PIDS+=($DAEMON)
}
echo "== (a) the receiver stopped: the modem takes the fall"
start_modem '{}'
start_receiver; stop "$RECEIVER"   # a port nobody listens on
S=$WORK/a; config "$S" "$PORT"; run_daemon "$S" 110
check wait_for 100 sh -c "[ \$(dbus-send --bus='$BUS' --print-reply --dest=org.freedesktop.ModemManager1 /org/freedesktop/ModemManager1 org.freedesktop.DBus.Mock.Sent | grep -c '\"sms\"') -ge 3 ]"
expired=$(expired_at "$S" || true)
sent > "$WORK/a.sent"
first=$(awk '$1 == "sms" {print $3; exit}' "$WORK/a.sent")
last=$(awk '$1 == "sms" {t = $3} END {print t}' "$WORK/a.sent")
if [ -n "$expired" ] && [ -n "$first" ]; then
    printf 'countdown end → modem SMS: first %.1f s, all three %.1f s (bar 60 s, fallback-after 30 s)\n' \
        "$(echo "$first - $expired" | bc -l)" "$(echo "$last - $expired" | bc -l)"
    check [ "$(echo "$last - $expired <= 60" | bc -l)" = 1 ]
else
    echo "no countdown end or no modem SMS: $(cat "$WORK/a.sent")"; tail -20 "$S.err"; failed=1
fi
check sms_once_each "$WORK/a.sent"
check wait_for 40 sh -c "dbus-send --bus='$BUS' --print-reply --dest=org.freedesktop.ModemManager1 /org/freedesktop/ModemManager1 org.freedesktop.DBus.Mock.Sent | grep -q '\"call\"'"
echo "calls by the modem: $(sent | awk '$1 == "call" {print $2}' | tr '\n' ' ')"
replied=$(date +%s.%N)
mock ReceiveSms string:"$ANNA" string:OK >/dev/null
if wait_for 20 grep -q '"event":"acknowledged"' "$S/incidents.jsonl"; then
    printf 'reply "OK" from Anna → acknowledged: %.1f s (poll-interval 2 s)\n' "$(echo "$(date +%s.%N) - $replied" | bc -l)"
else
    echo "the reply did not acknowledge"; failed=1
fi
grep -h "acknowledged" "$S/incidents.jsonl" | head -1
stop "$DAEMON"

echo "== (b) both up: the modem is silent"
start_modem '{}'
start_receiver
S=$WORK/b; config "$S" "$PORT"; run_daemon "$S" 40
check wait_for 35 sh -c "grep -c 'Messages.json' '$WORK/requests.jsonl' | grep -qE '^[3-9]'"
sleep 5
echo "receiver took $(grep -c '"POST"' "$WORK/requests.jsonl" || true) POSTs; the modem sent: $(sent | wc -l)"
check [ "$(sent | wc -l)" = 0 ]
stop "$DAEMON"

for problem in "sim missing:{\"sim\": \"missing\"}" "no signal:{\"signal\": 0}" "unplugged:unplug"; do
    name=${problem%%:*}; params=${problem#*:}
    echo "== (c) $name"
    if [ "$params" = unplug ]; then start_modem '{}'; mock Unplug >/dev/null; else start_modem "$params"; fi
    # Each modem and daemon of a case: the previous ones are stopped.
    rm -f "$WORK/requests.jsonl"; start_receiver
    S=$WORK/c-${name// /-}; config "$S" "$PORT"; run_daemon "$S" 95
    # The status says it within one look; the device-problem alert goes out after two (30 s apart).
    check wait_for 20 sh -c "grep -q 'modem:' '$S/status.json' 2>/dev/null"
    echo "status: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s.get("modem"), [p for p in s.get("problems", []) if "modem" in p])' "$S/status.json")"
    check wait_for 70 sh -c "grep -q 'Device problem\|device-problem\|modem' '$WORK/requests.jsonl' && grep 'Messages.json' '$WORK/requests.jsonl' | grep -qi 'modem'"
    echo "device-problem SMS by the receiver: $(grep -ci 'modem' "$WORK/requests.jsonl" || true) request(s) naming the modem"
    # Nothing lost: the fall's SMS reached every contact by the receiver.
    for n in $ANNA $BEN $CARA; do
        c=$(grep 'Messages.json' "$WORK/requests.jsonl" | grep -F "$n" | grep -ci 'fall' || true)
        echo "the fall's SMS to $n by the receiver: $c"; check [ "$c" -ge 1 ]
    done
    echo "sent by the modem: $(sent | wc -l)"
    check [ "$(sent | wc -l)" = 0 ]
    stop "$DAEMON"
done

if [ "$failed" = 0 ]; then echo "bars: MET"; else echo "bars: NOT MET"; exit 1; fi

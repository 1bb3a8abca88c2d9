#!/usr/bin/env bash
# modem-real-checks.sh : runs INSIDE the kernel rig's guest, after modem-guest.sh has the real
# ModemManager driving the AT modem emulator (tools/modem-emulator/at-modem.py on the host end
# of the guest's ttyS1). The checks of bench/modem.sh, against the real thing: `fallguard run`
# (a replayed real fall, countdown 5 s) with `sms`/`call` on the Twilio-compatible receiver
# (tools/notify-receiver, on the guest's loopback) and `fallback: modem`:
#  (a) receiver stopped: the fall's SMS reach the emulator's "sent" within 60 s of the
#      countdown's end, each contact once; a call; a reply "OK" from the primary acknowledges;
#  (b) receiver up: the modem sends nothing;
#  (c) SIM missing, no signal, unplugged: the problem in status.json, the device-problem SMS
#      by the receiver, the fall's SMS to every contact by the receiver (nothing lost).
# The emulator is driven through $FG_RIG_OUT/ctl (NAME.cmd -> NAME.json). Prints PASS/FAIL
# lines and figures; exit 1 when a check failed.
set -uo pipefail
OUT=${FG_RIG_OUT:?}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
B=${FALLGUARD_BIN:-$REPO/.build/debug/fallguard}
# the daemons' state on the guest's tmpfs (SQLite's locks fail on the 9p share: "disk I/O
# error"); their logs, status and incidents are copied to $OUT/work at the end
WORK=/tmp/fg-modem-work
mkdir -p "$WORK" "$OUT/ctl" "$OUT/work"
FALL=$REPO/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv
ANNA=+447700900001 BEN=+447700900002 CARA=+447700900003
RING_TIMEOUT=40
# shellcheck source=../../bench/modem-lib.sh
source "$REPO/bench/modem-lib.sh"
failed=0 PIDS=()
check() { if "$@"; then :; else failed=1; echo "FAIL: $*"; fi; }
stop() { kill -9 "$1" 2>/dev/null; wait "$1" 2>/dev/null; }
keep() { for d in "$WORK"/*/; do mkdir -p "$OUT/work/$(basename "$d")"; cp "$d"/*.json* "$OUT/work/$(basename "$d")/" 2>/dev/null; done; cp "$WORK"/*.err "$WORK"/*.out "$WORK"/*.yaml "$WORK"/*.jsonl "$OUT/work/" 2>/dev/null; }
trap 'for p in "${PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; keep' EXIT
now() { date +%s.%N; }
n=0
ctl() {   # a command to the emulator on the host; prints its JSON answer
    n=$((n + 1))
    local f=$OUT/ctl/g$n
    echo "$1" > "$f.tmp"; mv "$f.tmp" "$f.cmd"
    for _ in $(seq 300); do [[ -s $f.json ]] && { cat "$f.json"; rm -f "$f.json"; return 0; }; sleep 0.1; done
    echo "{\"error\": \"the emulator did not answer '$1'\"}"; return 1
}
sent() {   # "sms NUMBER UNIXTIME" for each message (its first part), "call NUMBER UNIXTIME" for each call
    ctl sent | python3 -c '
import json, sys
s = json.load(sys.stdin)
for m in s.get("sms", []):
    if m.get("part", 1) == 1: print("sms", m["number"], m["time"])
for c in s.get("calls", []): print("call", c["number"], c["time"])'
}
sms_count() { sent | awk '$1 == "sms"' | wc -l; }
# host minus guest clock (the emulator stamps with the host's): the round trip of 5 that took
# least (the shared folder and the emulated guest make one take seconds at times)
best=
for _ in 1 2 3 4 5; do
    t0=$(now); answer=$(ctl time); t1=$(now)
    host=$(sed -n 's/.*"time": \([0-9.]*\).*/\1/p' <<<"$answer")
    rtt=$(echo "$t1 - $t0" | bc -l)
    if [[ -n $host ]] && { [[ -z $best ]] || (( $(echo "$rtt < $best" | bc -l) )); }; then
        best=$rtt; OFFSET=$(echo "$host - ($t0 + $t1) / 2" | bc -l)
    fi
done
printf 'clock: host - guest = %.2f s (+- %.2f s: half the shortest round trip)\n' "$OFFSET" "$(echo "$best / 2" | bc -l)"

# A bridge runs for hours before a fall: its first look enables the modem (mmcli -e), which
# then registers. Here that is done before the daemon starts, so the fall meets a ready modem.
t=$SECONDS
mmcli -m 0 -e >/dev/null 2>&1
until mmcli -m 0 2>/dev/null | grep -q 'state: registered'; do
    (( SECONDS - t > 120 )) && { echo "FAIL: the modem did not register in 120 s"; failed=1; break; }
    sleep 1
done
echo "modem enabled and registered in $((SECONDS - t)) s: $(mmcli -m 0 | grep -E 'signal quality|operator name' | tr -s ' \n' ' ')"

restart_mm() {   # ModemManager probes the modem again (a SIM is only looked at then)
    kill -9 "$(cat /tmp/ModemManager.pid)" 2>/dev/null
    sleep 1
    ModemManager --debug --log-level=DEBUG --log-timestamps --log-file="$OUT/ModemManager.log" &
    echo $! > /tmp/ModemManager.pid
    local t=$SECONDS
    until mmcli -L 2>/dev/null | grep -q /Modem/; do
        (( SECONDS - t > 180 )) && { echo "ModemManager lists no modem after 180 s"; return 1; }
        sleep 1
    done
    echo "ModemManager lists the modem again after $((SECONDS - t)) s"
}
run_daemon() { "$B" run --config "$1.yaml" --duration "$2" > "$1.out" 2> "$1.err" & DAEMON=$!; PIDS+=($DAEMON); }
have_sms() { [[ $(sms_count) -ge $1 ]]; }
have_call() { sent | grep -q '^call'; }

echo "== (a) the receiver stopped: the real ModemManager takes the fall"
start_receiver; stop "$RECEIVER"
S=$WORK/a; config "$S" "$PORT"; run_daemon "$S" 240
check wait_for 200 have_sms 3
expired=$(expired_at "$S" 2>/dev/null)
sent > "$WORK/a.sent"
first=$(awk '$1 == "sms" {print $3; exit}' "$WORK/a.sent")
last=$(awk '$1 == "sms" {t = $3} END {print t}' "$WORK/a.sent")
if [[ -n $expired && -n $first ]]; then
    f=$(echo "$first - $OFFSET - $expired" | bc -l); l=$(echo "$last - $OFFSET - $expired" | bc -l)
    printf 'countdown end -> the emulator'"'"'s sent SMS: first %.1f s, all three %.1f s (bar 60 s for the first, fallback-after 30 s)\n' "$f" "$l"
    # The bar is the fall reaching the modem's sent SMS. The others follow one after the
    # other on the modem's single AT port, which the emulated serial line makes slow (about
    # 10 s per 160-character part here, ModemManager writing byte by byte).
    check [ "$(echo "$f <= 60" | bc -l)" = 1 ]
else
    echo "FAIL: no countdown end or no SMS sent by the modem: $(cat "$WORK/a.sent")"; tail -20 "$S.err"; failed=1
fi
check sms_once_each "$WORK/a.sent"
check wait_for 90 have_call
echo "calls by the modem: $(sent | awk '$1 == "call" {print $2}' | tr '\n' ' ')"
replied=$(now)
ctl "receive $ANNA OK" >/dev/null
if wait_for 60 grep -q '"event":"acknowledged"' "$S/incidents.jsonl"; then
    printf 'reply "OK" from Anna -> acknowledged: %.1f s (poll-interval 2 s)\n' "$(echo "$(now) - $replied" | bc -l)"
else
    echo "FAIL: the reply did not acknowledge"; failed=1
fi
grep -h '"acknowledged"' "$S/incidents.jsonl" | head -1
stop "$DAEMON"

echo "== (b) both up: the modem is silent"
before=$(sms_count)
start_receiver
S=$WORK/b; config "$S" "$PORT"; run_daemon "$S" 90
check wait_for 80 sh -c "grep -c 'Messages.json' '$WORK/requests.jsonl' | grep -qE '^[3-9]'"
sleep 10
echo "receiver took $(grep -c '"POST"' "$WORK/requests.jsonl") POSTs; the modem sent $(( $(sms_count) - before )) SMS"
check [ "$(sms_count)" = "$before" ]
stop "$DAEMON"; stop "$RECEIVER"

tty=$(cat /tmp/fg-modem.tty 2>/dev/null || echo ttyS1)
pnp=$(basename "$(readlink -f "/sys/class/tty/$tty/device/../..")")
for name in "sim missing" "no signal" "unplugged"; do
    echo "== (c) $name"
    case $name in
        "sim missing") ctl "sim missing" >/dev/null; restart_mm ;;
        "no signal") ctl "signal 0" >/dev/null ;;
        "unplugged") ctl unplug >/dev/null
                     # the port goes, as a USB modem's does: udev's remove, ModemManager drops it
                     echo "$pnp" > /sys/bus/pnp/drivers/serial/unbind ;;
    esac
    sleep 5
    echo "ModemManager: $(mmcli -L 2>&1 | tr -s ' \n' ' '); $(mmcli -m 0 2>&1 | grep -E 'state|signal|failed' | tr -s ' \n' ' ')"
    before=$(sms_count)
    rm -f "$WORK/requests.jsonl"; start_receiver
    S=$WORK/c-${name// /-}; config "$S" "$PORT"; run_daemon "$S" 150
    # The first look enables a modem ModemManager keeps disabled (its restart here leaves it so, as
    # a boot does), 27 s in this guest, before it can read the signal: up to 120 s.
    check wait_for 120 sh -c "grep -q 'modem:' '$S/status.json' 2>/dev/null"
    echo "status: $(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s.get("modem"), [p for p in s.get("problems", []) if "modem" in p])' "$S/status.json" 2>&1)"
    check wait_for 120 sh -c "grep 'Messages.json' '$WORK/requests.jsonl' | grep -qi 'modem'"
    echo "device-problem SMS by the receiver: $(grep -ci 'modem' "$WORK/requests.jsonl") request(s) naming the modem"
    for who in $ANNA $BEN $CARA; do
        c=$(grep 'Messages.json' "$WORK/requests.jsonl" | grep -F "$who" | grep -ci 'fall')
        echo "the fall's SMS to $who by the receiver: $c"; check [ "$c" -ge 1 ]
    done
    echo "sent by the modem: $(( $(sms_count) - before ))"
    check [ "$(sms_count)" = "$before" ]
    stop "$DAEMON"; stop "$RECEIVER"
    case $name in
        "sim missing") ctl "sim ready" >/dev/null; restart_mm ;;
        "no signal") ctl "signal 20" >/dev/null; ctl "register home" >/dev/null ;;
        "unplugged") ctl plug >/dev/null; echo "$pnp" > /sys/bus/pnp/drivers/serial/bind ;;
    esac
done

if [[ $failed == 0 ]]; then echo "modem-real: MET"; else echo "modem-real: NOT MET"; exit 1; fi

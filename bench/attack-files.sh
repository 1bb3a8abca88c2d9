#!/usr/bin/env bash
# Issue 28, attacks 7-14 (secrets, the credentials file, MQTT acknowledgements, the state
# directory, incident ids, input sizes) replayed against a real `fallguard run` on loopback: a
# replayed fall (SisFall F13_SA06_R01) whose alert goes to a webhook (tools/notify-receiver,
# a Telegram-style URL with the bot token in the middle of its path) and to a real mosquitto
# broker, the page and /metrics on 127.0.0.1, the configuration's secrets in a credentials file
# beside it. Attack 12 needs a daemon of its own (a state directory another user owns), run at
# the same time for 30 s. Prints one line per attack, `attack N: refused (evidence)` or
# `attack N: GOT IN (evidence)`, then the secret scan of every output, the files written
# outside the state directories, and the daemon's peak resident memory (bar 100 MB).
# Stops everything it started. Exit 0 when every attack was refused and every bar is met.
#
# Usage: bench/attack-files.sh      (root: attack 12 runs the daemon as root in a folder nobody owns)
#        FALLGUARD_BIN=.build/debug/fallguard bench/attack-files.sh   (skip the release build)
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
[ "$(id -u)" = 0 ] || { echo "needs root (attack 12 runs the daemon as root against a folder owned by nobody)"; exit 77; }
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { echo "needs mosquitto"; exit 77; }
build_release
make_tmp
ROOT=$PWD
FALL=$ROOT/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv
MOSQUITTO=$(command -v mosquitto || echo /usr/sbin/mosquitto)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

TOKEN_SECRET="AAHk-Secret_tok3n9f2"        # the bot token's secret half
TOKEN="bot123456789:$TOKEN_SECRET"
CHAT=987654321                              # a query value
ACK_SECRET="attack-ack-secret-5f3e9a1c77"  # the MQTT acknowledge-secret
SECRETS=("$TOKEN_SECRET" "$CHAT" "$ACK_SECRET")
FAILED=0
PIDS=()
say() { printf 'attack %s: %s\n' "$1" "$2"; }
refused() { say "$1" "refused ($2)"; }
gotin() { say "$1" "GOT IN ($2)"; FAILED=1; }
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    [ -z "${KEEP:-}" ] && rm -rf "$OUT"
}
trap cleanup EXIT

D=$OUT/run; S=$D/state; mkdir -p "$D" "$S" "$OUT/outside"
echo "mine" > "$OUT/outside/victim"
touch "$OUT/marker"; sleep 1

# The webhook receiver (its first answer a 500, so a last error quoting the URL is stored) and the broker.
RPORT=$(free_port); MPORT=$(free_port); WPORT=$(free_port)
python3 tools/notify-receiver/receiver.py --port "$RPORT" --log "$OUT/receiver.jsonl" --fail-first 1 >/dev/null 2>&1 &
PIDS+=($!)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nlog_type all\n' "$MPORT" > "$OUT/mosquitto.conf"
"$MOSQUITTO" -c "$OUT/mosquitto.conf" > "$OUT/broker.log" 2>&1 &
PIDS+=($!)
sleep 1

# Item 8: the secrets live in a credentials file beside the configuration, as documented.
cat > "$D/credentials.yaml" <<EOF
channels:
  hook:
    url: "http://127.0.0.1:$RPORT/$TOKEN/sendMessage?chat_id=$CHAT"
  mq:
    password: mqtt
    acknowledge-secret: "$ACK_SECRET"
EOF
chmod 600 "$D/credentials.yaml"
ROUTE="[hook, mq]"
cat > "$D/config.yaml" <<EOF
credentials-file: credentials.yaml
sensor: {replay: "$FALL"}
gpio: {enabled: false}
alarm: {countdown: 5, final-phase: 2}
state: {directory: "$S"}
metrics: {enabled: true, listen: "127.0.0.1:$WPORT"}
wearer: {name: Attack Wearer, location: the lab}
channels:
  hook: {type: webhook}
  mq: {type: mqtt, host: 127.0.0.1, port: $MPORT, device: attack, username: fallguard}
policy:
  fall: {primary: [], others: [], broadcast: $ROUTE}
  help-requested: {primary: [], others: [], broadcast: $ROUTE}
  resolved: {primary: [], others: [], broadcast: $ROUTE}
  device-problem: {primary: [], others: [], broadcast: $ROUTE}
  heartbeat: {primary: [], others: [], broadcast: $ROUTE}
  retry: {initial: 1, max: 2}
EOF
chmod 600 "$D/config.yaml"

"$B" check-config --no-hardware --config "$D/config.yaml" > "$OUT/check-config.txt" 2>&1; CHECK_RC=$?
"$B" run --config "$D/config.yaml" --duration 240 > "$OUT/daemon.log" 2>&1 &
DAEMON=$!; PIDS+=($DAEMON)
wait_for() { for _ in $(seq $(( $2 * 10 ))); do eval "$1" && return 0; sleep 0.1; done; return 1; }
peak_kib() { awk '/VmHWM/ {print $2}' "/proc/$DAEMON/status" 2>/dev/null || echo 0; }

# Attack 12 beside it: a daemon (root) whose state directory nobody owns, mode 0777, with links planted.
D12=$OUT/run12; S12=$D12/state; mkdir -p "$S12" "$OUT/outside/folder"
printf '#!/bin/sh\ncat >> %s/alerts.jsonl; echo >> %s/alerts.jsonl\n' "$D12" "$D12" > "$D12/pager"; chmod 755 "$D12/pager"
ln -s "$OUT/outside/victim" "$S12/incidents.jsonl"
ln -s "$OUT/outside/victim" "$S12/status.json.tmp"
ln -s "$OUT/outside/db.sqlite" "$S12/outbox.sqlite"
ln -s "$OUT/outside/folder" "$S12/incidents"
chown 65534:65534 "$S12"; chmod 0777 "$S12"
cat > "$D12/config.yaml" <<EOF
sensor: {replay: "$FALL"}
gpio: {enabled: false}
alarm: {countdown: 5, final-phase: 2}
state: {directory: "$S12"}
metrics: {enabled: false}
wearer: {name: Attack Wearer}
channels:
  pager: {type: exec, command: ["$D12/pager"], timeout: 3}
policy:
  fall: {primary: [], others: [], broadcast: [pager]}
  help-requested: {primary: [], others: [], broadcast: [pager]}
  resolved: {primary: [], others: [], broadcast: [pager]}
  device-problem: {primary: [], others: [], broadcast: [pager]}
  heartbeat: {primary: [], others: [], broadcast: [pager]}
EOF
"$B" run --config "$D12/config.yaml" --duration 30 > "$OUT/daemon12.log" 2>&1 &
D12PID=$!; PIDS+=($D12PID)

# The fall alert reaches the webhook (after one 500) and the broker.
fall_delivered() {
    python3 - "$OUT/receiver.jsonl" <<'PY'
import json, sys
try: lines = [json.loads(l) for l in open(sys.argv[1])]
except (OSError, ValueError): sys.exit(1)
sys.exit(0 if any(r.get("status") == 200 and '"kind":"fall"' in r.get("body", "") for r in lines) else 1)
PY
}
wait_for fall_delivered 40 \
    || echo "note: the fall alert did not reach the webhook within 40 s"
wait_for '[ -f "$S/incidents/FG-1/incident.json" ]' 10
sleep 4   # the archive takes the deliveries from the outbox

# --- attack 8: the documented credentials file
if [ "$CHECK_RC" = 0 ] && grep -q "monitoring:" "$OUT/daemon.log"; then
    refused 8 "config.yaml with 'credentials-file: credentials.yaml' beside it: check-config exit 0, the daemon monitoring, the webhook URL from the file in use ($(grep -c '"path": "/bot' "$OUT/receiver.jsonl") requests)"
else
    gotin 8 "check-config exit $CHECK_RC: $(head -c 200 "$OUT/check-config.txt")"
fi

# --- attack 9: a token acknowledgement published retained while the bridge is connected
mosquitto_pub -h 127.0.0.1 -p "$MPORT" -r -t fallguard/attack/ack -m "{\"incident\": \"FG-1\", \"by\": \"Mallory\", \"token\": \"$ACK_SECRET\"}"
sleep 2
left=$(timeout 2 mosquitto_sub -h 127.0.0.1 -p "$MPORT" -t fallguard/attack/ack -C 1 -W 1 --retained-only 2>/dev/null | head -c 80)
state=$(python3 -c "import json; print(json.load(open('$S/status.json')).get('state'))" 2>/dev/null)
remote=$(sed -e "s/host: 127.0.0.1, port: $MPORT/host: broker.example, port: 1883/" "$D/config.yaml" > "$D/remote.yaml"; \
         sed -i "s|credentials-file: credentials.yaml|credentials-file: $D/credentials-token.yaml|" "$D/remote.yaml"; \
         sed -e 's/    acknowledge-secret:/    acknowledge-mode: token\n    acknowledge-secret:/' -e '/password: mqtt/d' "$D/credentials.yaml" > "$D/credentials-token.yaml"; chmod 600 "$D/credentials-token.yaml"; \
         "$B" check-config --no-hardware --config "$D/remote.yaml" 2>&1; echo "exit $?")
if [ "$state" = alert-out ] && [ -z "$left" ] && echo "$remote" | grep -q "exit 78" && echo "$remote" | grep -q "acknowledge-mode"; then
    refused 9 "token ack refused (state still $state), its retained copy cleared from the broker, token mode to a remote broker without TLS: check-config exit 78 ($(echo "$remote" | grep -m1 -o 'acknowledge-mode: token: [^:]*'))"
else
    gotin 9 "state '$state', retained left: '$left', remote token check: $(echo "$remote" | tail -2 | tr '\n' ' ' | cut -c1-160)"
fi

# --- attack 10: a local broker without a secret
sed -e '/acknowledge-secret/d' "$D/credentials.yaml" > "$D/credentials-nosecret.yaml"; chmod 600 "$D/credentials-nosecret.yaml"
sed -e "s|credentials-file: credentials.yaml|credentials-file: $D/credentials-nosecret.yaml|" "$D/config.yaml" > "$D/nosecret.yaml"
nosecret=$("$B" check-config --no-hardware --config "$D/nosecret.yaml" 2>&1)
if echo "$nosecret" | grep -q "warning: channels.mq.acknowledge-secret: without it, any program on this machine"; then
    refused 10 "check-config says so: $(echo "$nosecret" | grep -m1 -o 'warning: channels.mq.acknowledge-secret: without it, any program on this machine[^:]*')"
else
    gotin 10 "check-config silent: $(echo "$nosecret" | tail -1)"
fi

# --- attack 11: 10,000 junk acknowledgements
before=$(grep -c "acknowledgement on fallguard/attack/ack ignored\|acknowledgements on fallguard/attack/ack refused" "$OUT/daemon.log")
python3 -c "
for i in range(10000): print('{\"incident\": \"FG-1\", \"token\": \"guess-%d\"}' % i)" | mosquitto_pub -h 127.0.0.1 -p "$MPORT" -t fallguard/attack/ack -l
sleep 3
after=$(grep -c "acknowledgement on fallguard/attack/ack ignored\|acknowledgements on fallguard/attack/ack refused" "$OUT/daemon.log")
lines=$((after - before))
if ! kill -0 "$DAEMON" 2>/dev/null; then gotin 11 "no daemon running to take the flood (see attack 8)"
elif [ "$lines" -le 10 ]; then refused 11 "10,000 junk acks gave $lines log lines (first few in full, then a count a minute)"
else gotin 11 "10,000 junk acks gave $lines log lines"; fi

# --- attack 9b (item 9 smaller): test-alert beside the daemon under the bridge's client id
"$B" test-alert --config "$D/config.yaml" --channel mq > "$OUT/test-alert.txt" 2>&1; TA_RC=$?
sleep 1
if [ "$TA_RC" = 0 ] && ! grep -q "already connected" "$OUT/broker.log" && grep -q "as fallguard-attack-test-" "$OUT/broker.log"; then
    refused 9 "(client id) test-alert connected as $(grep -m1 -o 'fallguard-attack-test-[0-9]*' "$OUT/broker.log"); the bridge's connection was not taken over"
else
    gotin 9 "(client id) test-alert exit $TA_RC; broker: $(grep -m1 'already connected' "$OUT/broker.log" | cut -c1-120)"
fi
"$B" test-alert --config "$D/config.yaml" --channel hook >> "$OUT/test-alert.txt" 2>&1

# --- attack 13: incident ids
"$B" label ../../outside fall --state "$S" > "$OUT/label1.txt" 2>&1; L1=$?
mkdir -p "$S/incidents/FG-99"; chmod 700 "$S/incidents/FG-99"
python3 - "$S/incidents/FG-1/incident.json" "$S/incidents/FG-99/incident.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["id"] = "../../../outside/forged"
json.dump(r, open(sys.argv[2], "w")); 
PY
"$B" label FG-99 fall --state "$S" > "$OUT/label2.txt" 2>&1; L2=$?
page=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$WPORT/incidents/FG-99")
tokenf=$(curl -s "http://127.0.0.1:$WPORT/incidents/FG-1" | grep -o 'name="csrf" value="[^"]*"' | head -1 | sed 's/.*value="//; s/"$//')
post=$(curl -s -o /dev/null -w '%{http_code}' -X POST -d "csrf=$tokenf&label=fall" "http://127.0.0.1:$WPORT/incidents/FG-99/label")
written=$(find "$OUT" -name forged -o -path "$OUT/outside/incident.json" 2>/dev/null | head -3)
if [ "$L1" = 64 ] && [ "$L2" != 0 ] && [ "$page" = 404 ] && [ "$post" != 303 ] && [ -z "$written" ]; then
    refused 13 "label ../../outside: exit 64; a record naming ../../../outside/forged: label exit $L2, page GET $page, page label POST $post, nothing written outside"
else
    gotin 13 "label exit $L1/$L2, page $page, POST $post, written: $written"
fi

# --- attack 14: gzip bombs (the page's signal and a recording)
{ echo "x_g,y_g,z_g"; yes 0,0,1 | head -c 1000000000; } | gzip -1 > "$OUT/bomb.csv.gz"
mkdir -p "$S/incidents/FG-98"; chmod 700 "$S/incidents/FG-98"
python3 - "$S/incidents/FG-1/incident.json" "$S/incidents/FG-98/incident.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); r["id"] = "FG-98"; r["before"] = 5; r["after"] = 5
json.dump(r, open(sys.argv[2], "w"))
PY
cp "$OUT/bomb.csv.gz" "$S/incidents/FG-98/signal.csv"
rss_before=$(peak_kib)
t0=$(date +%s.%N)
pagecode=$(curl -s -o "$OUT/page98.html" -w '%{http_code}' -m 30 "http://127.0.0.1:$WPORT/incidents/FG-98")
t1=$(date +%s.%N)
rss_after=$(peak_kib)
/usr/bin/time -f "%M" -o "$OUT/replay.rss" "$B" replay "$OUT/bomb.csv.gz" > "$OUT/replay.txt" 2>&1; RP=$?
replay_mb=$(( $(cat "$OUT/replay.rss" | tail -1) / 1024 ))
bomb_mb=$(( $(stat -c %s "$OUT/bomb.csv.gz") / 1024 / 1024 ))
if [ "$pagecode" = 200 ] && grep -q "rows\|KiB\|MiB" "$OUT/page98.html" && [ "$RP" != 0 ] && [ "$replay_mb" -lt 400 ] && [ "$rss_after" -lt 102400 ]; then
    refused 14 "a ${bomb_mb} MB .csv.gz inflating to 1 GB of valid CSV: the page read it no further than the incident's window ($(python3 -c "print('%.2f' % ($t1 - $t0))") s, daemon peak $((rss_after / 1024)) MB), replay refused it (exit $RP, peak $replay_mb MB: $(grep -m1 -o 'more than [0-9]* rows[^)]*\|inflates to more than [0-9]* MiB' "$OUT/replay.txt"))"
else
    gotin 14 "page $pagecode, replay exit $RP peak $replay_mb MB, daemon peak $((rss_after / 1024)) MB"
fi

# --- attack 12: the second daemon, in a state directory nobody owns (0777) with planted links
wait "$D12PID"; RC12=$?
alerts12=$(grep -cE '"kind" *: *"fall"' "$D12/alerts.jsonl" 2>/dev/null); alerts12=${alerts12:-0}
victim=$(cat "$OUT/outside/victim")
mode12=$(stat -c '%a %u' "$S12")
if [ "$victim" = mine ] && [ ! -e "$OUT/outside/db.sqlite" ] && [ -z "$(ls -A "$OUT/outside/folder")" ] && [ "$mode12" = "777 65534" ] \
   && grep -q "state directory not used" "$OUT/daemon12.log" && [ "$alerts12" -ge 1 ] && [ "$RC12" = 0 ]; then
    refused 12 "nothing written through 4 planted links, the folder left 0777 nobody, 'state directory not used: … owned by uid 65534', the fall alert still sent ($alerts12), exit $RC12"
else
    gotin 12 "victim '$victim', db $( [ -e "$OUT/outside/db.sqlite" ] && echo made || echo absent), folder '$(ls "$OUT/outside/folder")', mode $mode12, alerts $alerts12, exit $RC12"
fi

# --- attack 7 and the secret scan: every output of the main daemon
curl -s "http://127.0.0.1:$WPORT/metrics" > "$OUT/metrics.txt"
curl -s "http://127.0.0.1:$WPORT/deliveries" > "$OUT/deliveries.html"
curl -s "http://127.0.0.1:$WPORT/incidents/FG-1" > "$OUT/incident.html"
PEAK=$(peak_kib); PEAK=${PEAK:-0}
kill -TERM "$DAEMON" 2>/dev/null; wait "$DAEMON" 2>/dev/null
sqlite3 "$S/outbox.sqlite" .dump > "$OUT/outbox.dump" 2>/dev/null
receipts=$(sqlite3 "$S/outbox.sqlite" "SELECT COUNT(*) FROM delivery WHERE channel='hook' AND (receipt LIKE '%‹redacted›%' OR last_error LIKE '%‹redacted›%')" 2>/dev/null)
leaks=()
for f in "$OUT/daemon.log" "$OUT/daemon12.log" "$OUT/test-alert.txt" "$OUT/check-config.txt" "$OUT/outbox.dump" "$OUT/metrics.txt" \
         "$OUT/deliveries.html" "$OUT/incident.html" "$S/status.json" $(find "$S/incidents" -name incident.json); do
    for s in "${SECRETS[@]}"; do grep -qF -- "$s" "$f" 2>/dev/null && leaks+=("$(basename "$f"): ${s:0:6}…"); done
done
label_ok=$(cat "$OUT/daemon.log" "$OUT/test-alert.txt" | grep -ciw "mqtt")
label_bad=$(cat "$OUT/daemon.log" "$OUT/test-alert.txt" | grep -c "fallguard\.‹redacted›")
if [ "${#leaks[@]}" = 0 ] && [ "${receipts:-0}" -ge 1 ] && [ "$label_bad" = 0 ]; then
    refused 7 "the bot token, the chat id and the ack secret in none of 10 outputs ($(find "$S/incidents" -name incident.json | wc -l) incident.json); $receipts webhook rows stored with the URL redacted; with MQTT password 'mqtt' the word is left in $label_ok lines, 'fallguard.‹redacted›' in none"
else
    gotin 7 "leaks: ${leaks[*]:-none}; redacted rows: ${receipts:-0}; 'fallguard.‹redacted›' $label_bad times"
fi

# --- nothing written outside the state directories (the run folders and the outside victims)
outside=$(find "$OUT" -newer "$OUT/marker" -type f ! -path "$S/*" ! -path "$S12/*" ! -path "$D/*" ! -path "$D12/*" \
          ! -name receiver.jsonl ! -name broker.log ! -name mosquitto.conf ! -name '*.txt' ! -name '*.html' ! -name outbox.dump \
          ! -name bomb.csv.gz ! -name replay.rss ! -name 'daemon*.log' 2>/dev/null)
outside_written=$(find "$OUT/outside" -newer "$OUT/marker" 2>/dev/null | grep -v "^$OUT/outside$" | grep -v "^$OUT/outside/folder$")
echo "secrets: ${#leaks[@]} found in the journal, test-alert, check-config, the outbox, the archive, status.json, /metrics and the page"
echo "written outside the state directories: ${outside:-nothing}${outside_written:+ $outside_written}"
[ "${PEAK:-0}" -gt 0 ] || PEAK=999999999   # no daemon to measure: not met
echo "daemon peak resident memory: $((PEAK / 1024)) MB (bar 100 MB): $([ "$PEAK" -lt 102400 ] && echo MET || echo 'NOT MET')"
[ -z "$outside$outside_written" ] && [ "$PEAK" -lt 102400 ] || FAILED=1
exit $FAILED

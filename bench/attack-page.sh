#!/usr/bin/env bash
# Issue 28, the page: replays attacks 1-6 (and the two smaller things about the page) against a
# running `fallguard run` on loopback and prints one line each, `attack N: refused (evidence)`
# or `attack N: GOT IN (evidence)`, then a summary (exit 1 when any got in).
#
# Two daemons: the demo (no password, loopback: its page answers only to loopback names) and
# one with a password and TLS on 127.0.0.1 (the sensor replays a fall). Clients are told apart
# by their address: the attacker and the owner use different 127/8 addresses except in attack
# 5, where they share one. The attacks are functions (attack_N); bench/lib-attack.sh holds the
# start, stop, result and summary helpers for scripts that add more.
# Usage: bench/attack-page.sh   (FALLGUARD_BIN=path to try an already built binary)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
. bench/lib-attack.sh
build_release; make_tmp; attack_init
for tool in curl openssl python3; do command -v $tool >/dev/null || { echo "$tool is not installed"; exit 77; }; done
HTTP="python3 bench/attack_http.py"
PASSWORD="correct horse battery"

DEMO=$(free_port)
start_daemon demo "$DEMO" run --state "$OUT/demo-state" --listen "127.0.0.1:$DEMO" --duration 600
make_certificate
AUTH=$(free_port)
cat > "$OUT/auth.yaml" <<YAML
sensor: {replay: "$PWD/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv"}
gpio: {enabled: false}
state: {directory: "$OUT/auth-state"}
metrics: {listen: "127.0.0.1:$AUTH"}
web: {password: "$PASSWORD", tls-certificate: "$OUT/cert.pem", tls-key: "$OUT/key.pem"}
YAML
start_daemon auth "$AUTH" run --config "$OUT/auth.yaml" --duration 600
D="http://127.0.0.1:$DEMO"
A="https://127.0.0.1:$AUTH"
status() { curl -s -k -o /dev/null -w '%{http_code}' --max-time "${MAXTIME:-5}" "$@" || true; }
# The demo's fall makes FG-1; attacks 1 and the label need it.
for _ in $(seq 120); do [ "$(status "$D/incidents/FG-1")" = 200 ] && break; sleep 0.5; done

# 1. DNS rebinding: a page from 127.attacker.example (resolving to 127.0.0.1) reads the page
#    and its form token, then labels the incident.
attack_1() {
    local host="127.attacker.example:$DEMO" page code token label
    page=$(curl -s --max-time 5 -H "Host: $host" -w '\n%{http_code}' "$D/incidents/FG-1")
    code=${page##*$'\n'}
    token=$(grep -o 'name="csrf" value="[0-9a-f]*' <<<"$page" | head -1 | sed 's/.*value="//' || true)
    if [ -n "$token" ]; then
        label=$(status -H "Host: $host" --data "label=no-fall&csrf=$token" "$D/incidents/FG-1/label")
        result 1 GOT-IN "Host $host: /incidents/FG-1 $code with the form token, label POST $label"
    else
        result 1 refused "Host $host: /incidents/FG-1 answered $code without the page or its token; Host 127.0.0.1: $(status "$D/incidents/FG-1")"
    fi
}

# 2. /metrics HTTP Basic as a password oracle: 100 wrong guesses, then the right password.
attack_2() {
    local r wrong last logged
    r=$($HTTP guess "$A/metrics" --from 127.0.0.2 --count 100 --last "$PASSWORD")
    wrong=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(", ".join(f"{v}x{k}" for k,v in d["wrong"].items()), "in", d["seconds"], "s")' "$r")
    last=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["last"])' "$r")
    logged=$(grep -c 'wrong password.*127.0.0.2' "$OUT/auth.log" || true)
    if [ "$last" = 200 ] || ! grep -q '429' <<<"$wrong"; then
        result 2 GOT-IN "100 wrong Basic passwords: $wrong; the right one after them: $last; $logged log lines"
    else
        result 2 refused "100 wrong Basic passwords: $wrong; the right one after them: $last (not compared); $logged log lines name 127.0.0.2"
    fi
}

# 3. One global throttle: five wrong passwords from anyone keep the owner out.
attack_3() {
    local r owner
    r=$($HTTP guess "$A/login" --form --from 127.0.0.3 --count 6)
    owner=$(status --interface 127.0.0.1 -H "Host: evil.example" --data-urlencode "password=$PASSWORD" "$A/login")
    local line; line=$(grep 'signed in from' "$OUT/auth.log" | tail -1 | sed 's/.*signed in/signed in/' || true)
    if [ "$owner" = 303 ]; then
        result 3 refused "attacker 127.0.0.3 form: $(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["wrong"])' "$r"); the owner from 127.0.0.1 then: $owner; log: '$line'"
    else
        result 3 GOT-IN "after 6 wrong passwords from 127.0.0.3 the owner from 127.0.0.1 got $owner"
    fi
}

# 4. Sign-out does not end an open /live stream.
attack_4() {
    local cookie token before after pid
    for _ in $(seq 70); do   # a throttle from the attacks before (one for everybody) may hold the form a minute
        cookie=$(curl -s -k -D - -o /dev/null --interface 127.0.0.4 --data-urlencode "password=$PASSWORD" "$A/login" \
                 | tr -d '\r' | sed -n 's/^set-cookie: \([^;]*\).*/\1/Ip')
        [ -n "$cookie" ] && break
        sleep 1
    done
    [ -n "$cookie" ] || { echo "attack 4: no session from the login within 70 s"; return 1; }
    curl -s -k -N --max-time 20 --interface 127.0.0.4 -b "$cookie" "$A/live" > "$OUT/stream" 2>/dev/null &
    pid=$!; track $pid
    sleep 2
    token=$(curl -s -k --interface 127.0.0.4 -b "$cookie" "$A/" | grep -o 'name="csrf" value="[0-9a-f]*' | head -1 | sed 's/.*value="//')
    before=$(grep -c '^event: samples' "$OUT/stream" || true)
    local out; out=$(status --interface 127.0.0.4 -b "$cookie" --data "csrf=$token" "$A/logout")
    sleep 5
    after=$(( $(grep -c '^event: samples' "$OUT/stream" || true) - before ))
    if kill -0 $pid 2>/dev/null; then
        kill $pid 2>/dev/null || true
        result 4 GOT-IN "sign-out answered $out; the stream still ran 5 s later, $after sample updates after it"
    else
        result 4 refused "sign-out answered $out; the stream had ended 5 s later ($before updates before, $after after)"
    fi
    wait $pid 2>/dev/null || true
}

# 5. Holding the page without a session: idle TLS connections, half-sent requests and /live
#    without a cookie from 127.0.0.5, reopened as soon as closed; meanwhile the owner scrapes
#    /metrics once a second. The verdict is for an owner on another address (the caps are per
#    client); the same run with the owner on the attacker's own address is printed as a note.
hold_and_scrape() {   # OWNER_ADDRESS: prints "answered tried slowest failures opened closed"
    $HTTP hold 127.0.0.1 "$AUTH" --tls --from 127.0.0.5 --seconds 13 > "$OUT/hold.json" &
    local pid=$!; track $pid
    sleep 2
    $HTTP owner "$A/metrics" --from "$1" --seconds 10 --password "$PASSWORD" > "$OUT/owner.json"
    wait $pid || true
    python3 - "$OUT/owner.json" "$OUT/hold.json" <<'PY'
import json, sys
o, h = (json.load(open(f)) for f in sys.argv[1:3])
print(o["answered"], o["tried"], o["slowest_s"], json.dumps(o["failures"]).replace(" ", ""), h["opened"], h["closed_by_server"])
PY
}
attack_5() {
    local answered tried slowest failures opened closed
    read -r answered tried slowest failures opened closed < <(hold_and_scrape 127.0.0.1)
    local what="the owner's /metrics answered $answered of $tried times (slowest $slowest s, failures $failures) while 50 connections without a session from 127.0.0.5 were held open ($opened opened, $closed closed by the daemon)"
    if [ "$answered" = "$tried" ]; then result 5 refused "$what"; else result 5 GOT-IN "$what"; fi
    read -r answered tried slowest failures opened closed < <(hold_and_scrape 127.0.0.5)
    echo "note 5: with the owner on the attacker's own address (the caps cannot tell them apart): answered $answered of $tried (failures $failures; $opened opened, $closed closed by the daemon)"
}

# 6. TLS 1.0 and 1.1 on the page's listener.
attack_6() {
    local v out got=""
    for v in tls1 tls1_1; do
        out=$(openssl s_client -connect "127.0.0.1:$AUTH" -"$v" -cipher 'DEFAULT@SECLEVEL=0' </dev/null 2>&1 || true)
        if ! grep -q 'Cipher is (NONE)' <<<"$out"; then got+="$v: $(grep -m1 -o 'Protocol *: *TLSv[0-9.]*' <<<"$out" | tr -s ' ') $(grep -m1 -o 'Cipher is [A-Z0-9-]*' <<<"$out"); "; fi
    done
    out=$(openssl s_client -connect "127.0.0.1:$AUTH" -tls1_2 </dev/null 2>&1 || true)
    local modern; modern=$(grep -m1 -o 'Cipher is [A-Z0-9-]*' <<<"$out")
    if [ -n "$got" ]; then result 6 GOT-IN "$got"; else result 6 refused "TLS 1.0 and 1.1 handshakes fail (Cipher is (NONE)); TLS 1.2: $modern"; fi
}

# The smaller things: labelling an unknown incident answered 500 with the absolute path.
attack_label() {
    local token body code
    token=$(curl -s "$D/incidents/FG-1" | grep -o 'name="csrf" value="[0-9a-f]*' | head -1 | sed 's/.*value="//')
    body=$(curl -s --max-time 5 -w '\n%{http_code}' --data "label=fall&csrf=$token" "$D/incidents/FG-999/label")
    code=${body##*$'\n'}
    if [ "$code" = 404 ] && ! grep -q "$OUT" <<<"$body"; then
        result label refused "an unknown incident's label: $code, no path in the answer"
    else
        local path=no; grep -q "$OUT" <<<"$body" && path=yes
        result label GOT-IN "an unknown incident's label: $code, the state folder's path in the answer: $path"
    fi
}

run_attack 1 attack_1
run_attack 2 attack_2
run_attack 3 attack_3
run_attack 4 attack_4
run_attack 5 attack_5
run_attack 6 attack_6
run_attack label attack_label
kill -0 "${PIDS[0]}" && kill -0 "${PIDS[1]}" && echo "both daemons ran through every attack" || echo "a daemon stopped during the attacks"
attack_summary

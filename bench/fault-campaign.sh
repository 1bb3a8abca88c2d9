#!/usr/bin/env bash
# The fault campaign (issue 14 §5): each fault injected into a running `fallguard run` that
# replays a real fall (SisFall F13_SA06_R01: detected about 8.2 s in, a 5 s countdown nobody
# aborts, so the fall alert is due about 13.5 s in). A case passes when the fall alert reaches
# its receiver exactly once per idempotency key, or the failure is loud (an error naming the
# cause) and restartable (never exit 78 for anything but the configuration), and never a crash
# (signal) or a hang. Input cases check the exit status and message of one command.
#
# Usage: bench/fault-campaign.sh [CASE...]        (no CASE: all 20, about 8 minutes)
#        FALLGUARD_BIN=.build/debug/fallguard bench/fault-campaign.sh   (skip the release build)
# As root the daemon runs as user nobody (root ignores file modes) and the full-disk case
# mounts a small tmpfs in a private mount namespace; without root those cases are skipped.
# Prints one line per case and a summary; exits 1 if any case failed.
set -uo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh
build_release
make_tmp
ROOT=$PWD
FALL=$ROOT/Tests/FallGuardFieldTestTests/Fixtures/sisfall/F13_SA06_R01.csv
IS_ROOT=0; [ "$(id -u)" = 0 ] && IS_ROOT=1
if [ "$IS_ROOT" = 1 ]; then chmod 755 "$OUT"; AS=(setpriv --reuid=65534 --regid=65534 --clear-groups --); else AS=(); fi
PASSED=(); FAILED=(); SKIPPED=()

pass() { PASSED+=("$CASE"); printf '%-24s PASS  %s\n' "$CASE" "$*"; }
fail() { FAILED+=("$CASE"); printf '%-24s FAIL  %s\n' "$CASE" "$*"; [ -f "$D/log" ] && tail -n 15 "$D/log" | sed 's/^/    | /'; }
skip() { SKIPPED+=("$CASE"); printf '%-24s SKIP  %s\n' "$CASE" "$*"; }

# A case folder with a configuration: the replayed fall, alerts appended by an exec channel to
# alerts.jsonl (through $D/pager, which a case may replace), and CHANNELS/POLICY overrides.
setup() {
    CASE=$1; D=$OUT/$1; mkdir -p "$D/state"
    printf '#!/bin/sh\ncat >> %s/alerts.jsonl; echo >> %s/alerts.jsonl\n' "$D" "$D" > "$D/pager"
    chmod 755 "$D/pager"
    local channels=${CHANNELS:-"  pager: {type: exec, command: [\"$D/pager\"], timeout: 3}"}
    local route=${ROUTE:-pager}
    cat > "$D/config.yaml" <<EOF
sensor: {replay: "$FALL"}
gpio: {enabled: false}
alarm: {countdown: 5, final-phase: 2}
state: {directory: "$D/state"}
metrics: {enabled: ${METRICS:-false}, listen: "127.0.0.1:${METRICS_PORT:-9466}"}
wearer: {name: Test Wearer, location: the lab}
channels:
$channels
policy:
  fall: {primary: [], others: [], broadcast: [$route]}
  help-requested: {primary: [], others: [], broadcast: [$route]}
  resolved: {primary: [], others: [], broadcast: [$route]}
  device-problem: {primary: [], others: [], broadcast: [$route]}
  heartbeat: {primary: [], others: [], broadcast: [$route]}
  retry: {initial: 1, max: 2}
${EXTRA:-}
EOF
    [ "$IS_ROOT" = 1 ] && chown -R 65534:65534 "$D"
}

# Starts the daemon in the background for $1 seconds (PID in $PID), its output in $D/log.
start() { "${AS[@]}" "$B" run --config "$D/config.yaml" --duration "$1" >> "$D/log" 2>&1 & PID=$!; }
# Waits up to $2 seconds for $1 (an extended regular expression) in the log.
wait_log() { for _ in $(seq $(( ${2:-20} * 10 ))); do grep -Eq "$1" "$D/log" 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# The exit status of the daemon (waits for it).
finish() { wait "$PID"; RC=$?; }
# Fall alerts received: "<alerts> <distinct keys>" (exec: alerts.jsonl; mqtt: mqtt.txt).
fall_alerts() {
    python3 - "$D" <<'EOF'
import json, sys, os
d = sys.argv[1]; keys = []
for name, strip in (("alerts.jsonl", 0), ("mqtt.txt", 1)):
    p = os.path.join(d, name)
    if not os.path.exists(p): continue
    for line in open(p, errors="replace"):
        line = line.strip()
        if strip: line = line.split(" ", 1)[1] if " " in line else ""
        if not line.startswith("{"): continue
        try: a = json.loads(line)
        except ValueError: continue
        if a.get("alert", {}).get("kind") == "fall" and not a.get("test"):
            keys.append(a.get("idempotencyKey") or a.get("idempotency_key"))
print(len(keys), len(set(keys)))
EOF
}
# Passes when exactly one fall alert arrived (once per key), the daemon did not die by a signal.
expect_one_alert() {
    read -r n distinct < <(fall_alerts)
    if [ "${RC:-0}" -ge 128 ]; then fail "the daemon died by signal $((RC - 128)) $*"
    elif [ "$n" = 1 ]; then pass "fall alert delivered once $*"
    elif [ "$n" -gt 1 ] && [ "$n" = "$distinct" ]; then pass "fall alert delivered to $n keys, each once $*"
    else fail "$n fall alerts, $distinct distinct keys (expected 1) $*"; fi
}

case_baseline() {
    setup baseline; start 20; finish; expect_one_alert "(exit $RC)"
}

# Starts the daemon as nobody in a private mount namespace whose state directory is a fresh
# 512 KiB tmpfs (unshare and setpriv exec: $PID is the daemon, nsenter -t $PID reaches its mounts).
start_on_tmpfs() {
    unshare -m --propagation private sh -c "mount -t tmpfs -o size=512k,mode=0700,uid=65534,gid=65534 tmpfs '$D/state' \
        && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- '$B' run --config '$D/config.yaml' --duration $1" \
        >> "$D/log" 2>&1 & PID=$!
}

# The outbox and its directory are read-only (a first run made them; then chmod, as nobody).
case_readonly_state() {
    setup readonly-state
    [ "$IS_ROOT" = 1 ] || { skip "needs root to run the daemon as another user"; return; }
    start 2; finish
    chmod 0444 "$D"/state/outbox.sqlite*; chmod 0500 "$D/state"
    start 22; finish
    expect_one_alert "(exit $RC; $(grep -Eci 'read-only|readonly|unhealthy' "$D/log") lines say so)"
}

# Starts the daemon as nobody in a private mount namespace where its state directory is a
# read-only bind mount of itself (as the kernel remounts a failing SD card); $PID is the daemon.
start_on_readonly_mount() {
    unshare -m --propagation private sh -c "mount --bind '$D/state' '$D/state' && mount -o remount,bind,ro '$D/state' \
        && exec setpriv --reuid=65534 --regid=65534 --clear-groups -- '$B' run --config '$D/config.yaml' --duration $1" \
        >> "$D/log" 2>&1 & PID=$!
}

# Issue 28: the outbox file, then the whole state directory, read-only when the daemon starts
# (an SD card the kernel remounted read-only). It used to exit 73 at once and systemd restarted
# it in a loop with nothing monitoring. Each run: the fall alert delivered once, monitoring on
# (the fall detected), the problem shown (the journal's UNHEALTHY line and /metrics' health
# gauge at 0), and the daemon runs its whole duration (exit 0).
case_readonly_at_start() {
    local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    METRICS=true METRICS_PORT=$port setup readonly-at-start
    [ "$IS_ROOT" = 1 ] || { skip "needs root to run the daemon as another user"; return; }
    start 2; finish
    chmod 0644 "$D/state/outbox.sqlite"
    local part said health results=()
    for part in outbox-file state-directory; do
        rm -f "$D/alerts.jsonl"; : > "$D/log"
        if [ "$part" = outbox-file ]; then
            # A clean stop leaves no -wal or -shm; the file alone read-only, its folder writable.
            rm -f "$D/state/outbox.sqlite-wal" "$D/state/outbox.sqlite-shm"; chmod 0444 "$D/state/outbox.sqlite"
            start 24
        else
            start_on_readonly_mount 24
        fi
        wait_log "monitoring:" 10
        health=""
        for _ in $(seq 40); do
            health=$(curl -s -m 1 "http://127.0.0.1:$port/metrics" | awk '$1 == "fallguard_healthy" {print $2 + 0}')
            [ "$health" = 0 ] && break; sleep 0.5
        done
        finish
        read -r n distinct < <(fall_alerts)
        said=$(grep -m1 -o 'UNHEALTHY: [^(]*' "$D/log" | cut -c1-60)
        if [ "$RC" != 0 ]; then fail "$part read-only: exit $RC (expected 0: the daemon keeps running)"; return
        elif [ "$n" != 1 ]; then fail "$part read-only: $n fall alerts (expected 1)"; return
        elif ! grep -q "fall suspected" "$D/log"; then fail "$part read-only: the fall was not detected"; return
        elif [ -z "$said" ] || [ "$health" != 0 ]; then fail "$part read-only: the problem is not shown (log: '$said', fallguard_healthy: '$health')"; return
        fi
        results+=("$part: alert once, exit 0, fallguard_healthy 0, '$said'")
    done
    pass "${results[*]}"
}

# The disk holding the state fills up after start-up.
case_full_disk() {
    setup full-disk
    [ "$IS_ROOT" = 1 ] || { skip "needs root for a private tmpfs"; return; }
    start_on_tmpfs 25; wait_log "monitoring:" 10
    nsenter -t "$PID" -m sh -c "dd if=/dev/zero of='$D/state/filler' bs=4k 2>/dev/null; true"
    finish; expect_one_alert "(exit $RC; $(grep -Eci 'no space|full|unhealthy' "$D/log") lines say so)"
}

# Recording while monitoring (issue 17) when the disk fills: the alarm and the alert go on, the
# recording says it drops samples, nothing stalls.
case_recording_full_disk() {
    EXTRA="recording: {enabled: true, flush-interval: 1, incident-before: 5, incident-after: 5}" setup recording-full-disk
    [ "$IS_ROOT" = 1 ] || { skip "needs root for a private tmpfs"; return; }
    start_on_tmpfs 25; wait_log "monitoring:" 10; sleep 2
    nsenter -t "$PID" -m sh -c "dd if=/dev/zero of='$D/state/filler' bs=4k 2>/dev/null; true"
    finish
    if ! grep -q "the recording cannot be written" "$D/log"; then fail "the recording's failure is not in the log"
    else expect_one_alert "(exit $RC; $(grep -c 'cannot be written' "$D/log") lines say the recording or archive cannot be written)"; fi
}

# incidents.jsonl left root-owned by a `sudo fallguard run`: start-up must not exit 78.
case_incident_log_unwritable() {
    setup incident-log-unwritable
    [ "$IS_ROOT" = 1 ] || { skip "needs root to leave a root-owned file"; return; }
    touch "$D/state/incidents.jsonl"; chown 0:0 "$D/state/incidents.jsonl"; chmod 0600 "$D/state/incidents.jsonl"
    start 20; finish
    if [ "$RC" = 78 ]; then fail "exit 78 (configuration error) for an I/O failure: systemd never restarts it"
    else expect_one_alert "(exit $RC; $(grep -ci 'incidents.jsonl' "$D/log") lines name the log)"; fi
}

# The broker is down when the fall alert is due and comes back 10 s later.
case_broker_down_and_back() {
    command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { CASE=broker-down-and-back; skip "mosquitto not installed"; return; }
    local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    CHANNELS="  mq: {type: mqtt, host: 127.0.0.1, port: $port, device: campaign, publish-timeout: 2, reconnect-delay: 1, reconnect-delay-max: 2}" \
        ROUTE=mq setup broker-down-and-back
    start 40; sleep 24
    # The broker's own log counts what it received (a subscriber started after it could miss
    # the alert the bridge sends the moment it connects).
    printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nuser root\nlog_dest file %s/broker.log\nlog_type all\n' \
        "$port" "$D" > "$D/mosquitto.conf"
    /usr/sbin/mosquitto -c "$D/mosquitto.conf" >/dev/null 2>&1 & local broker=$!
    finish; kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null
    local n; n=$(grep -c "Received PUBLISH from fallguard-campaign (d0.*'fallguard/campaign/alert'" "$D/broker.log")
    if [ "$RC" -ge 128 ]; then fail "the daemon died by signal $((RC - 128))"
    elif [ "$n" = 1 ]; then pass "the broker received the fall alert once (exit $RC; broker started 24 s in)"
    else fail "the broker received $n alerts (expected 1)"; fi
}

# The exec command hangs on its first attempt (its timeout is 3 s), then works.
case_exec_hangs() {
    setup exec-hangs
    printf '#!/bin/sh\nif [ ! -e %s/tried ]; then touch %s/tried; sleep 1000; fi\ncat >> %s/alerts.jsonl; echo >> %s/alerts.jsonl\n' "$D" "$D" "$D" "$D" > "$D/pager"
    start 30; finish
    local left; left=$(pgrep -f "sleep 1000" | wc -l)
    [ "$left" = 0 ] || { fail "the hung command's children are still running"; pkill -f "sleep 1000"; return; }
    expect_one_alert "(exit $RC)"
}

# The exec command exits 69 (EX_UNAVAILABLE) once, then works.
case_exec_fails() {
    setup exec-fails
    printf '#!/bin/sh\nif [ ! -e %s/tried ]; then touch %s/tried; exit 69; fi\ncat >> %s/alerts.jsonl; echo >> %s/alerts.jsonl\n' "$D" "$D" "$D" "$D" > "$D/pager"
    start 25; finish; expect_one_alert "(exit $RC)"
}

# SIGHUP after the configuration file was broken: the daemon keeps the old one.
case_sighup_broken_file() {
    setup sighup-broken-file
    start 22; wait_log "monitoring:" 10
    cp "$D/config.yaml" "$D/config.good"; printf 'policy: {retry: {initial: 1e12}}\nalarm: [\n' >> "$D/config.yaml"
    kill -HUP "$PID"; sleep 1; kill -HUP "$PID"
    finish
    grep -q "SIGHUP: .* has errors; still running" "$D/log" || { fail "no line about the refused reload"; return; }
    expect_one_alert "(exit $RC)"
}

# SIGHUP after a valid file with a retry longer than a day (it trapped the running daemon).
case_sighup_huge_retry() {
    setup sighup-huge-retry
    start 22; wait_log "monitoring:" 10
    sed -i 's/retry: {initial: 1, max: 2}/retry: {initial: 90000, max: 100000}/' "$D/config.yaml"
    kill -HUP "$PID"
    finish
    grep -q "SIGHUP: .* has errors; still running" "$D/log" || { fail "no line about the refused reload (exit $RC)"; return; }
    expect_one_alert "(exit $RC)"
}

# An MQTT channel's CA file is missing at start (a certificate being renewed): the alarm and
# the other channels start all the same.
case_tls_file_missing() {
    CHANNELS="  pager: {type: exec, command: [\"$OUT/tls-file-missing/pager\"], timeout: 3}
  mq: {type: mqtt, host: 127.0.0.1, port: 1, tls: true, ca-file: \"$OUT/tls-file-missing/gone.pem\"}" \
        ROUTE="pager, mq" setup tls-file-missing
    start 20; finish
    if [ "$RC" = 78 ]; then fail "exit 78 (configuration error) for a file that is not there yet"
    else expect_one_alert "(exit $RC; $(grep -c 'gone.pem' "$D/log") lines name the file)"; fi
}

# kill -9 at random moments around the countdown and the dispatch, then a restart.
case_kill_9() {
    local runs=${KILL_RUNS:-5} bad=0 detail=""
    for i in $(seq "$runs"); do
        setup "kill-9-$i"
        local at; at=$(python3 -c "import random; print(round(random.uniform(8.5, 15.0), 2))")
        start 40; sleep "$at"; kill -9 "$PID"; wait "$PID" 2>/dev/null
        # The restart replays a walk: the only fall alert can be the interrupted one.
        sed -i "s|replay: \".*\"|replay: \"$ROOT/$WALK\"|" "$D/config.yaml"
        start 25; finish
        read -r n distinct < <(fall_alerts)
        detail+=" ${at}s:$n"
        [ "$n" = 1 ] || bad=$((bad + 1))
    done
    CASE=kill-9
    if [ "$bad" = 0 ]; then pass "$runs runs, the interrupted fall's alert delivered once each (kill time:alerts$detail)"
    else fail "$bad of $runs runs lost or repeated the alert (kill time:alerts$detail)"; fi
}

# 1,100 idle connections to the metrics endpoint while the fall happens.
case_metrics_flood() {
    local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    METRICS=true METRICS_PORT=$port setup metrics-flood
    start 22; wait_log "monitoring:" 10
    python3 - "$port" <<'EOF' &
import socket, sys, time
held = []
for _ in range(1100):
    try: held.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1))
    except OSError: pass
time.sleep(20)
EOF
    local flood=$!
    finish; kill "$flood" 2>/dev/null; wait "$flood" 2>/dev/null
    expect_one_alert "(exit $RC)"
}

# Acknowledgements nobody may send: none names the incident with the bridge's secret.
case_forged_ack() {
    [ -x /usr/sbin/mosquitto ] || { CASE=forged-ack; skip "mosquitto not installed"; return; }
    local port; port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    CHANNELS="  pager: {type: exec, command: [\"$OUT/forged-ack/pager\"], timeout: 3}
  mq: {type: mqtt, host: 127.0.0.1, port: $port, device: campaign, acknowledge-secret: campaign-secret-0123456789}" \
        ROUTE="pager, mq" setup forged-ack
    printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\n' "$port" > "$D/mosquitto.conf"
    /usr/sbin/mosquitto -c "$D/mosquitto.conf" >/dev/null 2>&1 & local broker=$!
    sleep 0.5
    mosquitto_pub -h 127.0.0.1 -p "$port" -r -t fallguard/campaign/ack -m '{"incident": "FG-1", "by": "retained"}'
    start 25; wait_log "countdown-expired" 25; sleep 1
    for payload in 'FG-1' '{"by": "Home Assistant"}' '{"incident": "FG-1", "by": "Mallory"}' \
                   '{"incident": "FG-1", "token": "guess"}' '{"incident": "FG-1", "hmac": "00", "time": 1}'; do
        mosquitto_pub -h 127.0.0.1 -p "$port" -t fallguard/campaign/ack -m "$payload"
    done
    sleep 2
    local status; status=$(python3 -c "import json; print(json.load(open('$D/state/status.json')).get('state'))" 2>/dev/null)
    finish; kill "$broker" 2>/dev/null; wait "$broker" 2>/dev/null
    if [ "$status" != "alert-out" ]; then fail "state '$status' after 6 forged or retained acks (expected alert-out)"
    elif grep -q "acknowledged by" "$D/log"; then fail "an acknowledgement was taken"
    else pass "alert-out after 1 retained and 5 forged acks ($(grep -c 'ignored' "$D/log") ignored lines)"; fi
}

# Input cases: one command each; expected exit status, a message matching a pattern, no signal.
expect_exit() {   # expected-status timeout pattern command...
    local want=$1 secs=$2 pattern=$3; shift 3
    timeout -s KILL "$secs" "$@" > "$D/log" 2>&1; RC=$?
    local said; said=$(grep -m1 -E "$pattern" "$D/log" | cut -c1-150)
    if [ "$RC" = 137 ]; then fail "hung or out of memory (killed after $secs s)"
    elif [ "$RC" -gt 128 ]; then fail "died by signal $((RC - 128))"
    elif [ "$RC" != "$want" ]; then fail "exit $RC, expected $want"
    elif [ -z "$said" ]; then fail "exit $RC, but no message matching '$pattern'"
    else pass "exit $RC: $said"; fi
}

case_config_numbers() {
    setup config-numbers
    sed -i 's/retry: {initial: 1, max: 2}/retry: {initial: 1e9, max: 2e9}/' "$D/config.yaml"
    expect_exit 78 30 "config.yaml:[0-9]+.*initial" "$B" check-config --config "$D/config.yaml"
}

case_alias_bomb() {
    setup alias-bomb
    python3 - "$D/config.yaml" <<'PY'
import sys
p = sys.argv[1]
text = open(p).read()
bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
for i in range(1, 10):
    bomb.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i-1}"] * 10) + "]")
open(p, "w").write("x-anchors:\n" + "\n".join("  " + b for b in bomb) + "\n"
                   + text.replace("name: Test Wearer", "name: *a9"))
PY
    expect_exit 78 60 "alias|larger|too many" bash -c 'ulimit -v 4000000; exec "$0" "$@"' "$B" check-config --config "$D/config.yaml"
}

case_recording_huge_value() {
    setup recording-huge-value
    mkdir -p "$D/set"; { head -n 400 "$FALL"; echo "1e17,0,1"; } > "$D/set/F01_SA01_R01.csv"
    expect_exit 65 30 "F01_SA01_R01.csv:401" "$B" evaluate "$D/set"
}

case_fifo_csv() {
    setup fifo-csv
    mkdir -p "$D/set"; cp "$FALL" "$D/set/"; mkfifo "$D/set/F01_SA01_R02.csv"
    timeout -s KILL 30 "$B" evaluate "$D/set" > "$D/log" 2>&1; RC=$?
    if [ "$RC" = 137 ]; then fail "evaluate blocked on the FIFO"
    elif [ "$RC" -gt 128 ]; then fail "died by signal $((RC - 128))"
    else pass "exit $RC: $(grep -m1 'F01_SA01_R02' "$D/log" | cut -c1-120)"; fi
}

case_duration_nan() {
    setup duration-nan
    expect_exit 64 10 "duration" "$B" alarm --duration nan
}

ALL=(baseline readonly_state readonly_at_start full_disk recording_full_disk incident_log_unwritable broker_down_and_back exec_hangs exec_fails
     sighup_broken_file sighup_huge_retry tls_file_missing kill_9 metrics_flood forged_ack config_numbers alias_bomb recording_huge_value fifo_csv duration_nan)
if [ $# -gt 0 ]; then CASES=("${@//-/_}"); else CASES=("${ALL[@]}"); fi
echo "fault campaign: $B, $(date -u +%FT%TZ), as $([ "$IS_ROOT" = 1 ] && echo 'root (daemon as nobody)' || id -un)"
for c in "${CASES[@]}"; do
    CHANNELS="" ROUTE="" METRICS="" "case_$c"
done
echo "passed ${#PASSED[@]}, failed ${#FAILED[@]} (${FAILED[*]:-none}), skipped ${#SKIPPED[@]} (${SKIPPED[*]:-none})"
[ "${#FAILED[@]}" = 0 ]

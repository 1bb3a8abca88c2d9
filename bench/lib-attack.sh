# Shared by the attack scripts (issue 28): daemons started and always stopped, one result line
# per attack, and a summary. Source it after bench/lib.sh from a script that has done
# `cd "$(dirname "$0")/.."`; then `build_release; make_tmp; attack_init`.
#
#   start_daemon NAME PORT ARGS...   runs `fallguard ARGS...` (log: $OUT/NAME.log), waits for PORT
#   track PID                         a helper process an attack started, stopped at the end too
#   result N refused|GOT-IN EVIDENCE  prints `attack N: refused (EVIDENCE)` or `attack N: GOT IN (EVIDENCE)`
#   attack_summary                    prints the counts; exits 1 when any attack got in
#
# A script adds an attack as a function and calls `run_attack N FUNCTION`, which records a
# failed attack function (one that could not even be tried) as its own line.

attack_init() {
    PIDS=()
    REFUSED=0
    GOT_IN=0
    BROKEN=0
    trap 'stop_started; [ -n "${KEEP:-}" ] || rm -rf "$OUT"' EXIT
    trap 'exit 130' INT TERM
}

# A free TCP port on 127.0.0.1 (the kernel's choice).
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# A self-signed certificate for 127.0.0.1: $OUT/cert.pem, $OUT/key.pem (0600).
make_certificate() {
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=127.0.0.1 \
        -addext subjectAltName=IP:127.0.0.1 -keyout "$OUT/key.pem" -out "$OUT/cert.pem" 2>/dev/null
    chmod 600 "$OUT/key.pem"
}

start_daemon() {   # NAME PORT ARGS...
    local name=$1 port=$2; shift 2
    "$B" "$@" > "$OUT/$name.log" 2>&1 &
    PIDS+=($!)
    local pid=$!
    for _ in $(seq 300); do
        if ! kill -0 "$pid" 2>/dev/null; then echo "the $name daemon stopped at start:"; tail -20 "$OUT/$name.log"; exit 1; fi
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
        sleep 0.1
    done
    echo "the $name daemon did not listen on $port within 30 s"; tail -20 "$OUT/$name.log"; exit 1
}

track() { PIDS+=("$1"); }

# Stops every process this script started (daemons and helpers), by their ids.
stop_started() {
    local pid
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    PIDS=()
}

result() {   # N refused|GOT-IN EVIDENCE
    if [ "$2" = refused ]; then
        REFUSED=$((REFUSED + 1)); echo "attack $1: refused ($3)"
    else
        GOT_IN=$((GOT_IN + 1)); echo "attack $1: GOT IN ($3)"
    fi
}

run_attack() {   # N FUNCTION
    if ! "$2"; then BROKEN=$((BROKEN + 1)); echo "attack $1: NOT RUN ($2 failed before a verdict)"; fi
}

attack_summary() {
    local total=$((REFUSED + GOT_IN + BROKEN))
    echo "summary: $REFUSED of $total refused, $GOT_IN got in, $BROKEN not run"
    [ "$GOT_IN" = 0 ] && [ "$BROKEN" = 0 ]
}

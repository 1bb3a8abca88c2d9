# Shared by the notify benches: build, a scratch folder on the real disk, the loopback receiver.
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export PATH="/opt/swift/usr/bin:$PATH"
CONFIGURATION=${CONFIGURATION:-release}
if [ -n "${FALLGUARD_BIN:-}" ]; then
    B=$FALLGUARD_BIN         # an already built binary
else
    swift build -c "$CONFIGURATION" --static-swift-stdlib --product fallguard >/dev/null
    B=.build/$CONFIGURATION/fallguard
fi
WORK=$(mktemp -d /var/tmp/fallguard-notify-bench.XXXXXX)
RECEIVER_PID=""
BRIDGE_PID=""
cleanup() {
    [ -n "$RECEIVER_PID" ] && kill "$RECEIVER_PID" 2>/dev/null || true
    [ -n "$BRIDGE_PID" ] && kill -9 "$BRIDGE_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

# start_receiver PORT: the receiver on 127.0.0.1:PORT (0: any); sets PORT and RECEIVER_PID.
start_receiver() {
    rm -f "$WORK/port"
    python3 tools/notify-receiver/receiver.py --port "$1" --port-file "$WORK/port" --log "$WORK/requests.jsonl" \
        --hmac-secret s3cret &
    RECEIVER_PID=$!
    for _ in $(seq 200); do [ -s "$WORK/port" ] && break; sleep 0.05; done
    PORT=$(cat "$WORK/port")
}

stop_receiver() {
    kill "$RECEIVER_PID"
    wait "$RECEIVER_PID" 2>/dev/null || true
    RECEIVER_PID=""
}

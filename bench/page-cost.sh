#!/usr/bin/env bash
# Bars (issue 19): with no page open nothing runs for it; with one page open at most 0.2 % of
# one core extra; live updates at 4 or more a second with the delay from a sample's capture to
# its pixels on the page at most 500 ms.
#
# The release daemon replays 100 s of walking (looped) as its sensor, with the page on. Its CPU
# time is read from the kernel's per-thread run time (/proc/PID/task/*/schedstat, ns) over
# windows of W seconds: A without a page, B with Debian's headless chromium showing the page
# (tools/page-check/page_check.py --live-only, which also measures the update rate and the
# delay in the browser), C without a page again; then D, a second daemon with web.enabled:
# false, for the same window (what "nothing runs for it" is compared with).
# Usage: bench/page-cost.sh [W=90]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release; make_tmp
W=${1:-90}
command -v chromium >/dev/null || { echo "chromium is not installed (tools/setup-debian installs it)"; exit 77; }
PORT=$((20000 + RANDOM % 20000))
config() {   # $1: web enabled
    cat > "$OUT/config-$1.yaml" <<YAML
sensor: {replay: "$PWD/$WALK"}
gpio: {enabled: false}
state: {directory: "$OUT/state-$1"}
metrics: {listen: "127.0.0.1:$PORT"}
web: {enabled: $1}
log: {level: warning}
YAML
    echo "$OUT/config-$1.yaml"
}
runtime_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ s += $1 } END { printf "%d\n", s }'; }
window() {   # $1 pid, $2 seconds: prints the CPU % of one core over the window
    local a b; a=$(runtime_ns "$1"); sleep "$2"; b=$(runtime_ns "$1")
    echo "scale=4; ($b - $a) / ($2 * 10000000)" | bc
}
start_daemon() {
    "$B" run --config "$(config "$1")" > "$OUT/daemon-$1.log" 2>&1 &
    PID=$!
    for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" && break; sleep 0.1; done
    sleep 5   # past start-up
}

start_daemon true
A=$(window $PID "$W")
echo "A: page on, no page open:       $A % of one core"
# B: the whole visit (browser start, page load, W s of updates, browser exit), and within it
# the steady state (from the first updates on the page to the end of the W s).
a=$(runtime_ns $PID); t0=$(date +%s.%N)
python3 tools/page-check/page_check.py --url "http://127.0.0.1:$PORT/" --screenshots "$OUT/shots" --live-only \
    --rate-seconds "$W" --marks "$OUT/mark" > "$OUT/page.json" &
PAGE=$!
while [ ! -e "$OUT/mark.start" ] && kill -0 $PAGE 2>/dev/null; do sleep 0.05; done
s0=$(runtime_ns $PID); u0=$(date +%s.%N)
while [ ! -e "$OUT/mark.end" ] && kill -0 $PAGE 2>/dev/null; do sleep 0.05; done
s1=$(runtime_ns $PID); u1=$(date +%s.%N)
wait $PAGE
b=$(runtime_ns $PID); t1=$(date +%s.%N)
Bp=$(echo "scale=4; ($b - $a) / (($t1 - $t0) * 10000000)" | bc)
Bs=$(echo "scale=4; ($s1 - $s0) / (($u1 - $u0) * 10000000)" | bc)
echo "B: one page open, whole visit ($(printf '%.0f' "$(echo "$t1 - $t0" | bc)") s): $Bp % of one core"
echo "B: one page open, steady ($(printf '%.0f' "$(echo "$u1 - $u0" | bc)") s):      $Bs % of one core"
C=$(window $PID "$W")
echo "C: page closed again:           $C % of one core"
kill -TERM $PID; wait $PID || true
start_daemon false
D=$(window $PID "$W")
echo "D: web.enabled false:           $D % of one core"
kill -TERM $PID; wait $PID || true

python3 - "$OUT/page.json" "$A" "$Bs" "$C" "$D" "$Bp" <<'PY'
import json, sys
page = json.load(open(sys.argv[1]))
a, b, c, d, visit = map(float, sys.argv[2:7])
extra = b - (a + c) / 2
idle = (a + c) / 2 - d
lat = page["delay_ms"]
ok = lambda x: "MET" if x else "NOT MET"
print(f"page: {page['updates_per_second']} updates/s (bar >= 4): {ok(page['updates_per_second'] >= 4)}")
print(f"page: capture-to-pixels delay over {lat['samples']} samples: median {lat['median']} ms, p95 {lat['p95']} ms, max {lat['max']} ms (bar <= 500): {ok(lat['max'] <= 500)}")
print(f"one page open costs {extra:.4f} % of one core while it is open (bar <= 0.2): {ok(extra <= 0.2)}")
print(f"the whole visit, with loading the page and the browser's start and exit: {visit - (a + c) / 2:.4f} % of one core")
print(f"no page open vs web disabled: {idle:+.4f} % of one core (noise of this measurement; nothing runs for the page)")
print(f"console errors in the page: {page['console_errors']}")
PY

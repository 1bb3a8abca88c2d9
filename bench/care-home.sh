#!/usr/bin/env bash
# Issue 30, a care home on one broker: BRIDGES (default 200) real `fallguard run` processes (the
# release build), each replaying a recording with its own `device:`, state directory and an MQTT
# channel to one mosquitto on loopback; FALLS (default 20) of them fall at once, twice (the
# second time with the broker down). Prints, with PASS/FAIL and 'N passed, N failed':
#  - every bridge's discovery, state and availability retained and distinct (ids, names, topics);
#  - alerts exactly once on the broker and in each outbox (x of FALLS), latency p50/p95/max
#    from the alert being raised (end of the countdown) to the broker, and from the impact;
#  - acknowledgements: all bridges share one acknowledge-secret (the worst case); another
#    bridge's valid HMAC ack is refused, an ack for one bridge acknowledges only it;
#  - the broker stopped OUTAGE s (default 30) while fall 2 is raised: every bridge back within
#    a stated bound, every fall-2 alert delivered once when it is back;
#  - a bridge killed -9 and one stopped (hung): 'offline' within the keepalive bound;
#  - RSS and CPU per bridge and of the broker while monitoring.
# Usage: bench/care-home.sh  (env: BRIDGES FALLS QUIET OUTAGE KEEPALIVE RECONNECT_BOUND OUT)
# Takes about 4 minutes and 7-8 GiB of memory for 200 bridges; output in bench/out/care-home/.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
for tool in mosquitto mosquitto_sub mosquitto_pub; do
    command -v "$tool" >/dev/null || { echo "$tool missing: tools/setup-debian installs mosquitto and mosquitto-clients" >&2; exit 1; }
done
[ -n "${FALLGUARD:-}" ] || tools/build-release fallguard >/dev/null
# 200 processes of a few threads each, and their files and sockets.
ulimit -n 65536 2>/dev/null || true
exec python3 bench/care_home.py

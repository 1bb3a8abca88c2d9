#!/usr/bin/env bash
# Issue 30, a site linked to a central broker: two real mosquittos on loopback, the site one
# bridged to the centre (docs/care-home.md's connection: QoS 1, cleansession false, the alarm
# topics out, the acknowledgements in) through a relay the bench cuts; BRIDGES (default 10)
# real `fallguard run` processes on the site broker. Prints, with PASS/FAIL and
# 'N passed, N failed': acknowledgements from the centre reach the right bridge only; with the
# link down OUTAGE s (default 300, the bar), the alarms raised meanwhile and a numbered probe
# (one QoS 1 message a second) arrive at the centre once it is back: lost, duplicated, in order.
# Usage: bench/site-link.sh  (env: BRIDGES OUTAGE OUT; OUTAGE=60 for a quick run)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
for tool in mosquitto mosquitto_sub mosquitto_pub; do
    command -v "$tool" >/dev/null || { echo "$tool missing: tools/setup-debian installs mosquitto and mosquitto-clients" >&2; exit 1; }
done
[ -n "${FALLGUARD:-}" ] || tools/build-release fallguard >/dev/null
exec python3 bench/site_link.py

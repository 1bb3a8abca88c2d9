#!/usr/bin/env bash
# Issue 37's scale bar: `fallguard station` with BRIDGES (200) bridges for MINUTES (30) minutes,
# its memory (RSS, bar 64 MiB) sampled every 5 s and an alarm a minute timed onto a member's page
# in headless chromium (bar 2 s). The bridges are simulated MQTT connections (bench/station_soak.py
# says what they publish). FALLGUARD=path uses that binary (a debug build: its RSS is the larger).
# Usage: [MINUTES=30] [FALLGUARD=.build/debug/fallguard] bench/station-soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
for tool in mosquitto chromium; do
    command -v "$tool" >/dev/null || { echo "$tool missing: tools/setup-debian installs it" >&2; exit 1; }
done
[ -n "${FALLGUARD:-}" ] || tools/build-release fallguard >/dev/null
exec python3 bench/station_soak.py

#!/usr/bin/env bash
# Issue 40 attacks 5 and 6: `fallguard station` with 20,000 fake bridges (60,000 retained
# messages) on its broker and one bridge publishing 20,000 alarm cycles, while a resident's
# bridge raises real alarms: each shown on /site.json within 2 s, the station's peak RSS
# < 128 MB, still connected, its history and log bounded (bench/station_flood.py says how).
# FALLGUARD=path/to/fallguard (default .build/debug/fallguard: say which build in a report);
# FAKES, CYCLES, ALARMS change the sizes; KEEP=1 keeps its folder (logs). Usage: bench/station-flood.sh   (about 1-2 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v mosquitto >/dev/null || { echo "mosquitto missing: tools/setup-debian installs it" >&2; exit 1; }
export FALLGUARD=${FALLGUARD:-.build/debug/fallguard}
[ -x "$FALLGUARD" ] || { echo "$FALLGUARD missing: swift build (or tools/build-release fallguard)" >&2; exit 1; }
exec python3 bench/station_flood.py

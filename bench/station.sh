#!/usr/bin/env bash
# Issue 30, the staff station: `fallguard station` (release build) on a site of BRIDGES
# (default 200) bridges, one of them a real `fallguard run` that falls, the page in Debian's
# headless chromium. Prints, with PASS/FAIL and 'N passed, N failed': 401 without a login; the
# new alarm on screen within 2 s of the bridge raising it; acknowledged in one click as a named
# member of staff, and that name on the bridge; the incidents of the last days list it, and the
# station's SQLite file keeps it. Screenshots in bench/out/station/.
# Usage: bench/station.sh   (about 1 minute)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
for tool in mosquitto mosquitto_sub mosquitto_pub chromium curl; do
    command -v "$tool" >/dev/null || { echo "$tool missing: tools/setup-debian installs it" >&2; exit 1; }
done
[ -n "${FALLGUARD:-}" ] || tools/build-release fallguard >/dev/null
exec python3 bench/station_check.py

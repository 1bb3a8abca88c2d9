#!/usr/bin/env bash
# bench/power-poll.sh: what the power watch's poll costs (issue 36 bar: <= 0.01 % of a core).
# Lays out a power_supply tree as the kernel's test_power makes it (test_ac, test_usb,
# test_battery) in a tmpfs folder, and also reads the machine's own /sys/class/power_supply
# when it has entries; `fallguard power --repeat N` times N reads (CPU time, getrusage);
# the share of a core is that cost once per power.poll-interval (default 10 s).
# Usage: bench/power-poll.sh [N reads, default 20000] [poll interval s, default 10]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-20000}
INTERVAL=${2:-10}
FG=${FALLGUARD_BIN:-.build/debug/fallguard}
[[ -x $FG ]] || { echo "no $FG: swift build first (or set FALLGUARD_BIN)"; exit 1; }
tree=$(mktemp -d /dev/shm/fg-power.XXXXXX 2>/dev/null || mktemp -d)
trap 'rm -rf "$tree"' EXIT
for s in test_ac:Mains test_usb:USB; do
    n=${s%%:*}; mkdir -p "$tree/$n"; echo "${s##*:}" >"$tree/$n/type"; echo 1 >"$tree/$n/online"
done
mkdir -p "$tree/test_battery"
printf 'Battery\n' >"$tree/test_battery/type"; printf '50\n' >"$tree/test_battery/capacity"
printf 'Discharging\n' >"$tree/test_battery/status"; printf '1\n' >"$tree/test_battery/present"
report() {
    local label=$1 line us
    line=$("$FG" power --root "$2" --repeat "$N")
    us=$(sed -n 's/.*per_read_us \([0-9.]*\).*/\1/p' <<<"$line")
    echo "power-poll: $label: $line; at one read per $INTERVAL s: $(awk "BEGIN{printf \"%.5f\", $us / 1e6 / $INTERVAL * 100}") % of a core (bar 0.01 %)"
}
report "test_power-shaped tree ($(basename "$tree"))" "$tree"
if [[ -n $(ls /sys/class/power_supply 2>/dev/null) ]]; then report "this machine's /sys/class/power_supply" /sys/class/power_supply; fi

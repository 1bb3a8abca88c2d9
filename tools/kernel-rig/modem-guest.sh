#!/usr/bin/env bash
# modem-guest.sh [-- COMMAND...] : runs INSIDE the kernel rig's guest (run-guest.sh with the
# second serial port of bench/modem-real.sh): tags the emulated modem's serial port for
# ModemManager with a udev rule, starts a system D-Bus, polkitd and the real ModemManager
# (`--debug`, its log in $FG_RIG_OUT/ModemManager.log), waits until `mmcli -L` lists the modem,
# then runs COMMAND (default: `mmcli -m 0`).
#
# Environment: FG_RIG_OUT (required: the folder shared with the host), FG_MODEM_TTY (the
#   port, default: the first ttyS after ttyS0 that has a UART), FG_MODEM_WAIT seconds (120).
# Exit: COMMAND's status; 3 when ModemManager shows no modem in time.
set -euo pipefail
OUT=${FG_RIG_OUT:?FG_RIG_OUT not set}
say() { echo "modem-guest: $(cut -d' ' -f1 /proc/uptime) $*" >&2; }
[[ ${1:-} == -- ]] && shift

# The emulated modem's port: a 16550A (sysfs `type` 4) that is not the console's ttyS0.
tty=${FG_MODEM_TTY:-}
if [[ -z $tty ]]; then
    for t in /sys/class/tty/ttyS[1-9]; do
        [[ $(cat "$t/type" 2>/dev/null) != 0 ]] && { tty=${t##*/}; break; }
    done
fi
[[ -n $tty ]] || { say "no second serial port with a UART (ls /sys/class/tty: $(ls /sys/class/tty | tr '\n' ' '))"; exit 3; }
echo "$tty" > /tmp/fg-modem.tty
say "modem port: $tty ($(readlink -f /sys/class/tty/$tty/device 2>/dev/null || echo 'no device'))"

# ModemManager's strict filter forbids a platform UART ("platform driver check") unless udev
# tags it explicitly; the port is the modem's primary AT port.
mkdir -p /etc/udev/rules.d
cat > /etc/udev/rules.d/78-fallguard-modem.rules <<EOF
ACTION!="add|change|move|bind", GOTO="fallguard_modem_end"
SUBSYSTEM=="tty", KERNEL=="$tty", ENV{ID_MM_CANDIDATE}="1", ENV{ID_MM_DEVICE_PROCESS}="1", ENV{ID_MM_PORT_TYPE_AT_PRIMARY}="1"
LABEL="fallguard_modem_end"
EOF
if ! pgrep -x systemd-udevd >/dev/null; then
    /lib/systemd/systemd-udevd --daemon
    say "started systemd-udevd"
fi
udevadm control --reload
udevadm trigger --action=add "/sys/class/tty/$tty"
udevadm settle --timeout=30 || true
udevadm info "/sys/class/tty/$tty" | grep -E 'ID_MM|DEVPATH' >&2 || true

# A system bus (the host's /etc/dbus-1 and ModemManager's bus policy, shared read-only).
mkdir -p /run/dbus /var/lib/dbus
[[ -s /var/lib/dbus/machine-id ]] || dbus-uuidgen --ensure=/var/lib/dbus/machine-id
rm -f /run/dbus/pid
dbus-daemon --system --fork
for _ in $(seq 100); do [[ -S /run/dbus/system_bus_socket ]] && break; sleep 0.1; done
# polkitd: ModemManager authorises every Messaging/Voice/Control call through it.
if [[ ${FG_MODEM_POLKIT:-1} == 1 && -x /usr/lib/polkit-1/polkitd ]]; then
    /usr/lib/polkit-1/polkitd --no-debug >"$OUT/polkitd.log" 2>&1 &
fi
ModemManager --debug --log-level=DEBUG --log-timestamps --log-file="$OUT/ModemManager.log" &
MM_PID=$!
echo "$MM_PID" > /tmp/ModemManager.pid
t0=$(cut -d' ' -f1 /proc/uptime)
found=0
for _ in $(seq $(( ${FG_MODEM_WAIT:-120} * 2 ))); do
    if mmcli -L 2>/dev/null | grep -q '/Modem/'; then found=1; break; fi
    sleep 0.5
done
t1=$(cut -d' ' -f1 /proc/uptime)
if [[ $found != 1 ]]; then
    say "ModemManager lists no modem after $(awk "BEGIN{print $t1-$t0}") s"
    mmcli -L >&2 || true
    exit 3
fi
say "ModemManager lists the modem after $(awk "BEGIN{printf \"%.1f\", $t1-$t0}") s: $(mmcli -L | tr -s ' ' | tr '\n' ' ')"
echo "$(awk "BEGIN{printf \"%.1f\", $t1-$t0}")" > "$OUT/modem-found-after"
[[ $# -gt 0 ]] || set -- mmcli -m 0
"$@"

#!/bin/sh
# Installs FallGuard on this machine, or stages it in a folder. Safe to run again: an existing
# /etc/fallguard/config.yaml is never overwritten, the user and groups are made only once.
#
# Usage: deploy/install.sh [--binary PATH] [--prefix DIR] [--destdir DIR] [--layout local|package] [--no-enable]
#   --binary PATH   the fallguard executable (default .build/release/fallguard; build it first with
#                   tools/build-release)
#   --prefix DIR    where the program goes (default /usr/local: DIR/bin/fallguard)
#   --destdir DIR   stage everything under DIR (or set DESTDIR): files only; no user, no udev
#                   reload, and the unit is enabled inside DIR (systemctl --root)
#   --layout package  unit and udev rules in /usr/lib (for the .deb) instead of /etc
#   --no-enable     do not enable the unit (the .deb enables it from its postinst)
#
# /etc/fallguard/config.yaml comes from deploy/fallguard.yaml: no channel, so the service starts
# and protects locally and says that nobody will be told until one is configured; the file's
# comments show the edits. Every key: deploy/fallguard.example.yaml (installed under share/doc).
#
# On this machine (no --destdir), as root: user and group fallguard (also in gpio and iio where
# those groups exist), the program, the configuration, the udev rules (reloaded and replayed if
# udev runs), the systemd unit (daemon-reload and enable if systemd runs, else enabled for the
# next boot). Start it with `systemctl start fallguard`; check it with `fallguard check-config`.
set -eu

repo="$(cd "$(dirname "$0")/.." && pwd)"
binary="$repo/.build/release/fallguard"
prefix=/usr/local
destdir="${DESTDIR:-}"
layout=local
enable=yes
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --prefix) prefix="$2"; shift 2 ;;
        --destdir) destdir="$2"; shift 2 ;;
        --layout) layout="$2"; shift 2 ;;
        --no-enable) enable=no; shift ;;
        -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case "$layout" in
    local) unitdir=/etc/systemd/system; rulesdir=/etc/udev/rules.d; polkitdir=/etc/polkit-1/rules.d ;;
    package) unitdir=/usr/lib/systemd/system; rulesdir=/usr/lib/udev/rules.d; polkitdir=/usr/share/polkit-1/rules.d ;;
    *) echo "install.sh: --layout is local or package, not $layout" >&2; exit 2 ;;
esac
if [ ! -x "$binary" ]; then
    echo "install.sh: no program at $binary; build it first:" >&2
    echo "  tools/build-release" >&2
    exit 1
fi
if [ -z "$destdir" ] && [ "$(id -u)" != 0 ]; then
    echo "install.sh: run as root (sudo deploy/install.sh) or stage with --destdir DIR" >&2
    exit 1
fi
setup="$repo/deploy/fallguard-setup"
d="$destdir"
say() { echo "install.sh: $*"; }

[ -z "$d" ] && "$setup" user

install -D -m 0755 "$binary" "$d$prefix/bin/fallguard"
install -D -m 0755 "$setup" "$d$prefix/lib/fallguard/fallguard-setup"
install -D -m 0644 "$repo/deploy/fallguard.example.yaml" "$d$prefix/share/doc/fallguard/fallguard.example.yaml"
install -D -m 0644 "$repo/docs/raspberry-pi.md" "$d$prefix/share/doc/fallguard/raspberry-pi.md"
install -D -m 0644 "$repo/docs/building-the-package.md" "$d$prefix/share/doc/fallguard/building-the-package.md"
# The staff station (docs/care-home.md): its example and unit, installed, never enabled here.
install -D -m 0644 "$repo/docs/care-home.md" "$d$prefix/share/doc/fallguard/care-home.md"
install -D -m 0644 "$repo/deploy/fallguard-station.example.yaml" "$d$prefix/share/doc/fallguard/fallguard-station.example.yaml"
say "program $prefix/bin/fallguard"
# The ADXL345 overlay, compiled when dtc is here (build-deb.sh requires it); copying it to
# /boot/firmware/overlays is left to the owner (docs/raspberry-pi.md).
install -D -m 0644 "$repo/deploy/overlays/fallguard-adxl345.dts" "$d$prefix/share/fallguard/overlays/fallguard-adxl345.dts"
install -D -m 0644 "$repo/deploy/config.txt" "$d$prefix/share/fallguard/config.txt"
if command -v dtc >/dev/null; then
    dtc -@ -Wno-unit_address_vs_reg -I dts -O dtb -o "$d$prefix/share/fallguard/overlays/fallguard-adxl345.dtbo" \
        "$repo/deploy/overlays/fallguard-adxl345.dts"
    say "overlay $prefix/share/fallguard/overlays/fallguard-adxl345.dtbo"
fi

config=/etc/fallguard/config.yaml
if [ -e "$d$config" ]; then
    say "kept the existing $config (the current example: $prefix/share/doc/fallguard/fallguard.example.yaml)"
else
    install -D -m 0640 "$repo/deploy/fallguard.yaml" "$d$config"
    say "configuration $config (no channel yet: it protects locally, nobody is told; its comments say how to add one)"
fi
chmod 0750 "$d/etc/fallguard"
[ -z "$d" ] && "$setup" config-owner "$config"

install -D -m 0644 "$repo/udev/99-fallguard.rules" "$d$rulesdir/99-fallguard.rules"
say "udev rules $rulesdir/99-fallguard.rules"
# ModemManager's SMS and calls for the daemon's user (a `modem` channel, docs/off-the-grid.md).
install -D -m 0644 "$repo/deploy/polkit/50-fallguard-modem.rules" "$d$polkitdir/50-fallguard-modem.rules"
say "polkit rule $polkitdir/50-fallguard-modem.rules"

mkdir -p "$d$unitdir"
sed -e "s|^ExecStart=/usr/local/bin/fallguard|ExecStart=$prefix/bin/fallguard|" \
    -e "s|file:///usr/share/doc/fallguard/|file://$prefix/share/doc/fallguard/|" \
    "$repo/deploy/fallguard.service" > "$d$unitdir/fallguard.service.new"
chmod 0644 "$d$unitdir/fallguard.service.new"
mv "$d$unitdir/fallguard.service.new" "$d$unitdir/fallguard.service"
say "systemd unit $unitdir/fallguard.service"
sed -e "s|^ExecStart=/usr/local/bin/fallguard|ExecStart=$prefix/bin/fallguard|" \
    -e "s|file:///usr/share/doc/fallguard/|file://$prefix/share/doc/fallguard/|" \
    "$repo/deploy/fallguard-station.service" > "$d$unitdir/fallguard-station.service.new"
chmod 0644 "$d$unitdir/fallguard-station.service.new"
mv "$d$unitdir/fallguard-station.service.new" "$d$unitdir/fallguard-station.service"
say "systemd unit $unitdir/fallguard-station.service (the staff station: not enabled; docs/care-home.md)"

if [ -z "$d" ]; then
    "$setup" state
    "$setup" udev-reload
    [ $enable = yes ] && "$setup" systemd-enable
else
    say "staged in $d: no user, udev or systemd calls on this machine"
    [ $enable = yes ] && "$setup" systemd-enable "$d"
fi
exit 0

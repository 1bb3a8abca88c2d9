#!/bin/sh
# Builds fallguard_VERSION_ARCH.deb with dpkg-deb from a release build. The package installs the
# same files as deploy/install.sh --prefix /usr (unit and udev rules under /usr/lib), and its
# maintainer scripts run the same idempotent steps (deploy/fallguard-setup): user and groups,
# configuration ownership, udev reload, systemd enable. /etc/fallguard/config.yaml is a conffile:
# dpkg keeps a changed one on upgrade.
#
# Usage: deploy/build-deb.sh [--binary PATH] [--version V] [--output DIR]
#   --binary PATH  package this executable instead of building
#                  (tools/build-release)
#   --version V    package version (default: from `git describe`, else 0.1.0)
#   --output DIR   where the .deb goes (default: .build/deb)
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
version=""
output="$repo/.build/deb"
while [ $# -gt 0 ]; do
    case "$1" in
        --binary) binary="$2"; shift 2 ;;
        --version) version="$2"; shift 2 ;;
        --output) output="$2"; shift 2 ;;
        *) echo "build-deb.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
if [ -z "$binary" ]; then
    "$repo/tools/build-release" fallguard
    binary="$repo/.build/release/fallguard"
fi
if [ -z "$version" ]; then
    version="$(git -C "$repo" describe --tags --match 'v[0-9]*' 2>/dev/null | sed 's/^v//; s/-/+/g')" || true
    [ -n "$version" ] || version="0.1.0+git$(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo local)"
fi
arch="$(dpkg --print-architecture)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="$work/fallguard_${version}_$arch"

"$repo/deploy/install.sh" --binary "$binary" --prefix /usr --destdir "$stage" --layout package --no-enable >/dev/null
# As Debian packages do: no debugging symbols in the shipped program.
strip --strip-unneeded "$stage/usr/bin/fallguard"

# Depends: the Debian packages holding the shared libraries the program loads.
depends="adduser, passwd, udev, systemd"
for lib in $(objdump -p "$binary" | awk '/NEEDED/ { print $2 }'); do
    pkg="$(dpkg -S "*/$lib" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1)" || true
    if [ -n "$pkg" ]; then
        case ", $depends, " in *", $pkg, "*) ;; *) depends="$depends, $pkg" ;; esac
    else
        echo "build-deb.sh: warning: $lib is not from a Debian package (build with --static-swift-stdlib)" >&2
    fi
done

# libgpiod is opened with dlopen too (Sources/CLibGPIOD/shim.h): 2.x (libgpiod3, Debian 13 /
# trixie) or 1.6 (libgpiod2, Debian 12 / bookworm), so one package serves both.
depends="$depends, libgpiod3 | libgpiod2"

# libcurl is opened with dlopen when an e-mail channel is configured (Sources/CLibCurl/shim.h),
# so it is not among the NEEDED libraries: recommended, as optional features are.
recommends="$(dpkg -S '*/libcurl.so.4' 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1)" || true
[ -n "$recommends" ] || recommends=libcurl4

mkdir -p "$stage/DEBIAN"
size="$(du -sk --exclude=DEBIAN "$stage" | cut -f1)"
cat > "$stage/DEBIAN/control" <<CONTROL
Package: fallguard
Version: $version
Architecture: $arch
Maintainer: FallGuard maintainers <maintainers@fallguard.invalid>
Installed-Size: $size
Depends: $depends
Recommends: $recommends
Section: misc
Priority: optional
Description: fall-detection sensor bridge for Linux (Raspberry Pi)
 Reads an ADXL345 or MPU6050 accelerometer through IIO at 40 Hz, detects falls,
 sounds a GPIO buzzer with a countdown the wearer can abort with a button, and
 alerts helpers by SMS, call, webhook, MQTT or e-mail from a durable outbox.
CONTROL
echo /etc/fallguard/config.yaml > "$stage/DEBIAN/conffiles"
setup=/usr/lib/fallguard/fallguard-setup
cat > "$stage/DEBIAN/postinst" <<SCRIPT
#!/bin/sh
set -e
if [ "\$1" = configure ]; then
    $setup user
    $setup state
    $setup config-owner /etc/fallguard/config.yaml
    $setup udev-reload
    $setup systemd-enable
    [ -z "\$2" ] || $setup systemd-restart
fi
SCRIPT
cat > "$stage/DEBIAN/prerm" <<SCRIPT
#!/bin/sh
set -e
if [ "\$1" = remove ]; then
    $setup systemd-stop
fi
SCRIPT
cat > "$stage/DEBIAN/postrm" <<SCRIPT
#!/bin/sh
set -e
if [ "\$1" = remove ] || [ "\$1" = purge ]; then
    if [ -S /run/udev/control ]; then udevadm control --reload || true; fi
    if [ -d /run/systemd/system ]; then systemctl daemon-reload || true; fi
fi
SCRIPT
chmod 0755 "$stage/DEBIAN/postinst" "$stage/DEBIAN/prerm" "$stage/DEBIAN/postrm"

mkdir -p "$output"
deb="$output/fallguard_${version}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"

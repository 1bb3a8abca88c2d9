#!/bin/sh
# Builds fallguard_VERSION_ARCH.deb with dpkg-deb from a release build. The package installs the
# same files as deploy/install.sh --prefix /usr (unit and udev rules under /usr/lib), and its
# maintainer scripts run the same idempotent steps (deploy/fallguard-setup): user and groups,
# configuration ownership, udev reload, systemd enable. /etc/fallguard/config.yaml is a conffile:
# dpkg keeps a changed one on upgrade.
#
# Usage: deploy/build-deb.sh [--arch amd64|arm64] [--swift-sdk NAME [--swift-sdks-path DIR]]
#                            [--binary PATH] [--version V] [--output DIR]
#   --arch A       package for A (default: this machine's). arm64 on an amd64 machine is a
#                  cross-build: tools/arm64-sdk assembles a Swift SDK for aarch64 from Debian
#                  packages (sid's swiftlang, trixie's arm64 libraries; root, cached under
#                  ~/.cache/fallguard-arm64 or $FALLGUARD_ARM64_CACHE) and builds with it.
#   --swift-sdk NAME  build with the host's Swift and this Swift SDK instead (one that
#                  `swift sdk list` shows, e.g. swift.org's static Linux SDK or an aarch64 SDK);
#                  --swift-sdks-path DIR: where it is, if not in the default place.
#   --binary PATH  package this executable instead of building (tools/build-release)
#   --version V    package version (default: fallguardVersion in
#                  Sources/FallGuardDaemon/Version.swift, what `fallguard --version` prints)
#   --output DIR   where the .deb goes (default: .build/deb)
set -eu
repo="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
version=""
arch="$(dpkg --print-architecture)"
swift_sdk=""
swift_sdks_path=""
output="$repo/.build/deb"
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch="$2"; shift 2 ;;
        --swift-sdk) swift_sdk="$2"; shift 2 ;;
        --swift-sdks-path) swift_sdks_path="$2"; shift 2 ;;
        --binary) binary="$2"; shift 2 ;;
        --version) version="$2"; shift 2 ;;
        --output) output="$2"; shift 2 ;;
        *) echo "build-deb.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
case "$arch" in amd64|arm64) ;; *) echo "build-deb.sh: --arch amd64 or arm64" >&2; exit 2 ;; esac
# Which package holds a library: this machine's dpkg database, or for a cross-build the list
# tools/arm64-sdk wrote of trixie's arm64 packages it extracted.
filelist=""
if [ -z "$binary" ] && [ -n "$swift_sdk" ]; then
    scratch="$repo/.build-sdk-$arch"
    set -- -c release --static-swift-stdlib --product fallguard --scratch-path "$scratch" --swift-sdk "$swift_sdk"
    [ -z "$swift_sdks_path" ] || set -- "$@" --swift-sdks-path "$swift_sdks_path"
    (cd "$repo" && swift build "$@" >&2)
    binary="$(cd "$repo" && swift build "$@" --show-bin-path)/fallguard"
elif [ -z "$binary" ] && [ "$arch" != "$(dpkg --print-architecture)" ]; then
    [ "$arch" = arm64 ] || { echo "build-deb.sh: cross-builds to arm64 only" >&2; exit 2; }
    binary="$("$repo/tools/arm64-sdk" build)"
fi
if [ -z "$binary" ]; then
    "$repo/tools/build-release" fallguard
    binary="$repo/.build/release/fallguard"
fi
if [ "$arch" != "$(dpkg --print-architecture)" ]; then
    sysroot="$("$repo/tools/arm64-sdk" libs)" || sysroot=""
    [ -z "$sysroot" ] || filelist="$sysroot/var/lib/dpkg/fallguard-files"
fi
if [ -z "$version" ]; then
    version="$(sed -n 's/^public let fallguardVersion = "\(.*\)"$/\1/p' "$repo/Sources/FallGuardDaemon/Version.swift")"
    [ -n "$version" ] || { echo "build-deb.sh: no fallguardVersion in Sources/FallGuardDaemon/Version.swift" >&2; exit 1; }
fi
case "$(file -b "$binary")" in
    *aarch64*) [ "$arch" = arm64 ] ;;
    *x86-64*) [ "$arch" = amd64 ] ;;
    *) false ;;
esac || { echo "build-deb.sh: $binary is not an $arch program: $(file -b "$binary")" >&2; exit 1; }
# The package ships the ADXL345 overlay compiled (/usr/share/fallguard/overlays/*.dtbo): an owner
# copies it to the firmware and has no dtc. Refuse to make a package without it.
command -v dtc >/dev/null || {
    echo "build-deb.sh: dtc not found: the package must ship the compiled ADXL345 overlay; install it: apt install device-tree-compiler" >&2
    exit 1
}
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
stage="$work/fallguard_${version}_$arch"

"$repo/deploy/install.sh" --binary "$binary" --prefix /usr --destdir "$stage" --layout package --no-enable >/dev/null
dtbo=usr/share/fallguard/overlays/fallguard-adxl345.dtbo
[ -s "$stage/$dtbo" ] || { echo "build-deb.sh: /$dtbo was not made (dtc failed?)" >&2; exit 1; }
# As Debian packages do: no debugging symbols in the shipped program.
strip=strip
[ "$arch" = "$(dpkg --print-architecture)" ] || strip=aarch64-linux-gnu-strip   # binutils-aarch64-linux-gnu
"$strip" --strip-unneeded "$stage/usr/bin/fallguard"

# Depends: the Debian packages holding the shared libraries the program loads; libc6 at least
# the newest glibc symbol version it needs (2.38 with Debian's Swift runtime: trixie and later).
owner() {
    if [ -n "$filelist" ]; then
        awk -v f="/$1" 'length($2) > length(f) && substr($2, length($2) - length(f) + 1) == f { print $1; exit }' "$filelist"
    else
        dpkg -S "*/$1" 2>/dev/null | grep -v '^diversion' | head -1 | cut -d: -f1
    fi
}
glibc="$(readelf -V --wide "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)"
depends="adduser, passwd, udev, systemd"
for lib in $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
    pkg="$(owner "$lib")" || true
    if [ -n "$pkg" ]; then
        [ "$pkg" != libc6 ] || [ -z "$glibc" ] || pkg="libc6 (>= $glibc)"
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
recommends="$(owner libcurl.so.4)" || true
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

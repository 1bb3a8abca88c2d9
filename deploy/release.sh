#!/usr/bin/env bash
# Makes FallGuard's signed apt repository: a folder any static web host can serve (no server-side
# code), which an owner adds with a key under /etc/apt/keyrings and `signed-by=` (docs/raspberry-pi.md)
# and then installs and upgrades with apt.
#
#   deploy/release.sh [--deb FILE]... [--arch "amd64 arm64"] [--output DIR]
#                     [--key ID | --test-key DIR] [--suite trixie] [--url URL]
#
#   --deb FILE    put this built package in (repeat; its version and architecture are read from
#                 it). Without --deb, deploy/build-deb.sh builds one per --arch (arm64 is a
#                 cross-build: ~30 min on a loaded 2-core machine, docs/building-the-package.md).
#   --arch LIST   the architectures to build when no --deb is given (default "amd64 arm64")
#   --output DIR  the repository (default .build/apt). An existing one is added to: the older
#                 versions stay in the pool, so `apt upgrade` sees the new one and a downgrade is
#                 still possible. A package whose file name is already there with other bytes is
#                 refused: a version is published once (bump it).
#   --key ID      sign with this key from gpg's keyring ($GNUPGHOME or ~/.gnupg): the project's
#                 archive key (docs/releasing.md: how it is made, kept and renewed)
#   --test-key DIR  sign with a test key kept in the gpg home DIR (made there, no passphrase, on
#                 first use; reused after, so a second release is signed by the same key): tests
#                 and benches. The repository's Label says "TEST KEY".
#   --suite NAME  the distribution apt names in its source line (default trixie: the package
#                 needs trixie's glibc 2.41 and libgpiod3)
#   --url URL     where the folder will be served: written into the example source file
#                 fallguard.sources (default https://fallguard.example.org/apt)
#
# The folder:
#   pool/main/f/fallguard/fallguard_V_ARCH.deb      the packages (every version published)
#   dists/SUITE/main/binary-ARCH/Packages{,.gz,.xz}  the index, one per architecture
#   dists/SUITE/Release, InRelease, Release.gpg      the index's hashes, signed (clear and detached)
#   fallguard-archive-keyring.gpg                    the public key, binary: /etc/apt/keyrings/
#   fallguard-archive-keyring.asc                    the same, armoured; its fingerprint is printed
#   fallguard.sources                                the owner's deb822 source (Signed-By: the key)
#   SHA256SUMS, SHA256SUMS.asc                       every file's hash, signed (for downloads by hand)
#   build-info/DATE.txt                              what each run published was made from
#
# What pins the build (so one commit makes the same package later) and what moves: the Swift
# packages by Package.resolved when present (not committed: build-info/ keeps a copy); the Swift
# toolchain is the one on PATH (6.3.1 at /opt/swift here: `swift --version` is recorded in the
# build log); the arm64 SDK comes from Debian sid's swiftlang and trixie's arm64 libraries as the
# mirror serves them on the day (tools/arm64-sdk caches them: the cache, not the mirror, pins a
# rebuild); snapshot.debian.org is not reachable from the build machines, so no snapshot date is
# pinned. SOURCE_DATE_EPOCH is the commit's time (dpkg-deb's file times), so two builds of one
# commit with the same toolchain and caches give the same .deb (bench/apt-repo.sh checks).
# Needs: dpkg-dev tools (dpkg-deb), apt-utils (apt-ftparchive), gnupg, xz-utils.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
debs=()
arches="amd64 arm64"
output="$repo/.build/apt"
key=""
test_key=0
suite=trixie
url=https://fallguard.example.org/apt
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) debs+=("$(realpath "$2")"); shift 2 ;;
        --arch) arches="$2"; shift 2 ;;
        --output) output="$2"; shift 2 ;;
        --key) key="$2"; shift 2 ;;
        --test-key) test_key=1; test_home="$2"; shift 2 ;;
        --suite) suite="$2"; shift 2 ;;
        --url) url="$2"; shift 2 ;;
        *) echo "release.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
die() { echo "release.sh: $*" >&2; exit 1; }
for tool in dpkg-deb apt-ftparchive gpg xz gzip sha256sum; do
    command -v "$tool" >/dev/null || die "$tool not found (apt install dpkg apt-utils gnupg xz-utils)"
done
[ -n "$key" ] || [ "$test_key" = 1 ] || die "say how to sign: --key ID (the project's archive key) or --test-key"
[ -z "$key" ] || [ "$test_key" = 0 ] || die "--key and --test-key: one or the other"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
label="FallGuard"
if [ "$test_key" = 1 ]; then
    install -d -m 0700 "$test_home"
    export GNUPGHOME="$(realpath "$test_home")"
    key="$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')"
    if [ -z "$key" ]; then
        gpg --batch --quiet --passphrase '' --quick-gen-key "FallGuard TEST archive key (not for owners) <test@fallguard.invalid>" ed25519 sign 30d 2>/dev/null
        key="$(gpg --batch --with-colons --list-secret-keys | awk -F: '$1 == "fpr" { print $10; exit }')"
        echo "release.sh: made a test key in $GNUPGHOME" >&2
    fi
    label="FallGuard (TEST KEY)"
fi
gpg --batch --list-secret-keys "$key" >/dev/null 2>&1 || die "no secret key $key in ${GNUPGHOME:-~/.gnupg}"
fingerprint="$(gpg --batch --with-colons --list-keys "$key" | awk -F: '$1 == "fpr" { print $10; exit }')"

# The packages: given, or built from this checkout.
if [ ${#debs[@]} = 0 ]; then
    SOURCE_DATE_EPOCH="$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)"
    export SOURCE_DATE_EPOCH
    for a in $arches; do
        start=$(date +%s)
        echo "release.sh: building the $a package (deploy/build-deb.sh --arch $a) ..." >&2
        debs+=("$("$repo/deploy/build-deb.sh" --arch "$a" --output "$work/debs")")
        echo "release.sh: $a built in $(( $(date +%s) - start )) s" >&2
    done
fi

# What the packages were made from, beside them: the commit, the toolchain, the Swift packages'
# resolved versions (Package.resolved is not committed: `from:` ranges in Package.swift move to
# newer releases unless this file is put back before a rebuild), the arm64 SDK's Debian packages.
mkdir -p "$output/build-info"
info="$output/build-info/$(date -u +%Y%m%dT%H%M%SZ).txt"
{
    echo "commit: $(git -C "$repo" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$repo" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "SOURCE_DATE_EPOCH: ${SOURCE_DATE_EPOCH:-unset}"
    echo "swift: $(swift --version 2>&1 | head -1)"
    echo "dpkg-deb: $(dpkg-deb --version | head -1)"
    for deb in "${debs[@]}"; do echo "package: $(basename "$deb") sha256 $(sha256sum < "$deb" | cut -d' ' -f1)"; done
    cache="${FALLGUARD_ARM64_CACHE:-$HOME/.cache/fallguard-arm64}"
    [ ! -d "$cache/debs" ] || echo "arm64 SDK packages (tools/arm64-sdk cache): $(ls "$cache/debs" | tr '\n' ' ')"
    if [ -f "$repo/Package.resolved" ]; then echo "Package.resolved:"; cat "$repo/Package.resolved"; fi
} > "$info"

pool="pool/main/f/fallguard"
mkdir -p "$output/$pool"
for deb in "${debs[@]}"; do
    [ -f "$deb" ] || die "$deb: no such file"
    name="$(dpkg-deb -f "$deb" Package)_$(dpkg-deb -f "$deb" Version)_$(dpkg-deb -f "$deb" Architecture).deb"
    [ "$(dpkg-deb -f "$deb" Package)" = fallguard ] || die "$deb: not a fallguard package"
    if [ -e "$output/$pool/$name" ]; then
        cmp -s "$deb" "$output/$pool/$name" ||
            die "$output/$pool/$name is already published with other contents: a version is published once; bump it (Sources/FallGuardDaemon/Version.swift)"
        echo "release.sh: $name already published (same bytes)" >&2
    else
        cp "$deb" "$output/$pool/$name"
        echo "release.sh: added $name" >&2
    fi
done

# The indexes: one Packages per architecture present in the pool.
present="$(for f in "$output/$pool"/*.deb; do dpkg-deb -f "$f" Architecture; done | sort -u | tr '\n' ' ')"
present="${present% }"
dist="dists/$suite"
rm -rf "${output:?}/$dist"
for a in $present; do
    d="$output/$dist/main/binary-$a"
    mkdir -p "$d"
    (cd "$output" && apt-ftparchive --arch "$a" packages "$pool") > "$d/Packages"
    gzip -9n < "$d/Packages" > "$d/Packages.gz"
    xz -9 < "$d/Packages" > "$d/Packages.xz"
done
apt-ftparchive \
    -o APT::FTPArchive::Release::Origin=FallGuard \
    -o "APT::FTPArchive::Release::Label=$label" \
    -o "APT::FTPArchive::Release::Suite=$suite" \
    -o "APT::FTPArchive::Release::Codename=$suite" \
    -o "APT::FTPArchive::Release::Architectures=$present" \
    -o APT::FTPArchive::Release::Components=main \
    -o "APT::FTPArchive::Release::Description=FallGuard fall detection for Raspberry Pi (Debian $suite)" \
    release "$output/$dist" > "$work/Release"
mv "$work/Release" "$output/$dist/Release"
gpg --batch --quiet --yes --local-user "$fingerprint" --clearsign --output "$output/$dist/InRelease" "$output/$dist/Release"
gpg --batch --quiet --yes --local-user "$fingerprint" --armor --detach-sign --output "$output/$dist/Release.gpg" "$output/$dist/Release"

gpg --batch --yes --export "$fingerprint" > "$output/fallguard-archive-keyring.gpg"
gpg --batch --yes --armor --export "$fingerprint" > "$output/fallguard-archive-keyring.asc"
cat > "$output/fallguard.sources" <<SOURCES
Types: deb
URIs: $url
Suites: $suite
Components: main
Signed-By: /etc/apt/keyrings/fallguard-archive-keyring.gpg
SOURCES

(cd "$output" && find . -type f ! -name SHA256SUMS ! -name SHA256SUMS.asc -printf '%P\n' | LC_ALL=C sort | xargs sha256sum) > "$work/SHA256SUMS"
mv "$work/SHA256SUMS" "$output/SHA256SUMS"
gpg --batch --quiet --yes --local-user "$fingerprint" --clearsign --output "$output/SHA256SUMS.asc" "$output/SHA256SUMS"

echo "release.sh: $output: suite $suite, architectures $present; $(ls "$output/$pool" | wc -l) package file(s)" >&2
echo "release.sh: signed by $fingerprint ($label)" >&2
echo "$output"

#!/usr/bin/env bash
# The owner's path through the signed apt repository (issue 39), end to end on this machine:
# deploy/release.sh makes the repository (a test key), `python3 -m http.server` serves it on
# loopback as any static host would, and a fresh Debian trixie root (mmdebstrap, chroot; no
# systemd) follows docs/raspberry-pi.md step 4 literally (the lines between its
# "owner-apt-steps" marks, with the repository's address replaced by the loopback one):
# key under /etc/apt/keyrings, a deb822 source with Signed-By, `apt update`, `apt install
# fallguard` with apt's signature checking on (the default). Then:
#   - the installed configuration passes check-config as user fallguard; the demo run as the
#     service's user fills /var/lib/fallguard (outbox.sqlite, the incident archive);
#   - the owner edits /etc/fallguard/config.yaml;
#   - a later version (this package repacked with the next patch version: same program) is
#     published into the same repository, `apt update && apt upgrade` installs it: the edited
#     configuration is kept byte for byte (no .dpkg-new/.dpkg-dist), outbox rows and archive
#     files are unchanged and read by the upgraded program (`fallguard incidents`), and the
#     postinst asked for the service's restart (no systemd in a chroot: its message says what
#     it did; on a Pi it is `systemctl try-restart`);
#   - three attacks on the web host are refused by apt: a package changed in the pool ("Hash
#     Sum mismatch" at download, nothing installed), an index changed without the key (apt update
#     fails), the repository re-signed with another key (NO_PUBKEY / not signed);
#   - the same program and SOURCE_DATE_EPOCH give a byte-identical .deb (deploy/build-deb.sh).
#
# Usage: bench/apt-repo.sh [--arch amd64|arm64] [--deb FILE]
#   --deb FILE  the package to publish (default: deploy/build-deb.sh of tools/build-release's
#               program, built if missing: a release build, 12 to 60 min on a loaded machine;
#               FALLGUARD_DEBUG_PACKAGE=1: of .build/debug/fallguard instead).
#               A package of a debug program works too: the toolchain's Swift runtime is then
#               bind-mounted read-only into the root (the release package needs none).
#   --arch arm64  an arm64 root under qemu-user (binfmt; slow: apt's maintainer scripts run
#               emulated); the .deb must then be arm64 (deploy/build-deb.sh --arch arm64).
# Root, network to the Debian mirror (the root's own packages) and loopback. The trixie base is
# made once into ${FALLGUARD_APT_CACHE:-~/.cache/fallguard-apt}. Not in CI's default run
# (minutes, downloads); prints "apt-repo: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export PATH=/opt/swift/usr/bin:$PATH
arch=amd64
deb=""
while [ $# -gt 0 ]; do
    case "$1" in
        --arch) arch="$2"; shift 2 ;;
        --deb) deb="$(realpath "$2")"; shift 2 ;;
        *) echo "apt-repo.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "apt-repo.sh: needs root (mmdebstrap, chroot)" >&2; exit 2; }
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
passed=0 failed=0
result() { echo "apt-repo: $1: $2"; if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi; }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then result PASS "$what"; else result FAIL "$what"; fi; }
finish() { echo "apt-repo: $passed passed, $failed failed ($(elapsed) s)"; [ "$failed" = 0 ]; exit $?; }

work="$(mktemp -d /tmp/fg-apt-repo.XXXXXX)"
. bench/lib-trixie-root.sh
cleanup() { trixie_cleanup; rm -rf "$work"; }
trap cleanup EXIT

# ---- the packages: 0.4.x as built, and the next patch version repacked from it -------------
trixie_package apt-repo
[ "$(dpkg-deb -f "$deb" Architecture)" = "$arch" ] || { echo "apt-repo.sh: $deb is not $arch" >&2; exit 2; }
next_version
echo "apt-repo: packages $v1 and $v2 ($arch) ready ($(elapsed) s)"

# ---- the repository and its static server --------------------------------------------------
port=$((20000 + RANDOM % 20000))
url="http://127.0.0.1:$port"
site="$work/site"
deploy/release.sh --deb "$deb" --output "$site" --test-key "$work/key" --url "$url" >"$work/release1.log" 2>&1 ||
    { cat "$work/release1.log"; exit 1; }
check "release.sh: signed InRelease, Release.gpg, SHA256SUMS.asc, the key" test -s "$site/dists/trixie/InRelease" -a -s "$site/dists/trixie/Release.gpg" -a -s "$site/SHA256SUMS.asc" -a -s "$site/fallguard-archive-keyring.gpg"
check "SHA256SUMS matches every published file" sh -c "cd '$site' && sha256sum --quiet -c SHA256SUMS"
check "InRelease verifies with the published key alone (gpgv)" gpgv --keyring "$site/fallguard-archive-keyring.gpg" "$site/dists/trixie/InRelease"
serve "$site" "$port" || { echo "apt-repo.sh: the static server did not start" >&2; exit 1; }

# ---- a fresh trixie root ----------------------------------------------------------------------
trixie_root

# ---- the docs' steps, literally -----------------------------------------------------------------
steps=$(sed -n '/<!-- owner-apt-steps: begin/,/<!-- owner-apt-steps: end/p' docs/raspberry-pi.md | grep '^sudo ' |
    sed -e 's/^sudo //' -e 's/[[:space:]]*#.*$//' -e "s|https://fallguard.example.org/apt|$url|g")
[ -n "$steps" ] || { echo "apt-repo.sh: no owner-apt-steps block in docs/raspberry-pi.md" >&2; exit 1; }
s=$(date +%s)
ok=1
while IFS= read -r line; do
    echo "apt-repo:   # $line"
    if ! in_root sh -c "$line" >>"$work/steps.log" 2>&1; then
        ok=0; result FAIL "docs step failed: $line: $(tail -n 3 "$work/steps.log" | tr '\n' ' ')"; break
    fi
done <<<"$steps"
[ $ok = 1 ] || finish
result PASS "docs/raspberry-pi.md step 4 ($(wc -l <<<"$steps") commands) in a fresh trixie $arch root: $(( $(date +%s) - s )) s"
check "the source is signed-by the key under /etc/apt/keyrings" grep -qx "Signed-By: /etc/apt/keyrings/fallguard-archive-keyring.gpg" "$root/etc/apt/sources.list.d/fallguard.sources"
check "no trusted.gpg shortcut: the key is not in apt's global keyrings" sh -c "! ls '$root'/etc/apt/trusted.gpg.d/ 2>/dev/null | grep -qi fallguard && [ ! -e '$root/etc/apt/trusted.gpg' ]"
check "apt got the index from the loopback server, signature checked (InRelease fetched)" grep -q '"GET /dists/trixie/InRelease' "$work/http-$port.log"
check "installed: fallguard $v1 $arch" test "$(in_root dpkg-query -W -f '${Status} ${Version} ${Architecture}' fallguard)" = "install ok installed $v1 $arch"
echo "apt-repo: dependencies pulled: $(grep -c '^Setting up' "$work/steps.log") packages set up"
in_root runuser -u fallguard -- fallguard check-config --config /etc/fallguard/config.yaml --no-hardware >"$work/check-config.log" 2>&1
check "the installed configuration passes check-config as user fallguard" test $? = 0

# ---- state the upgrade must keep ------------------------------------------------------------------
in_root runuser -u fallguard -- fallguard run --duration 20 --state /var/lib/fallguard --listen "127.0.0.1:$((port + 1001))" >"$work/demo.log" 2>&1
state=$root/var/lib/fallguard
check "the demo run filled the state folder: outbox.sqlite and the incident archive" test -s "$state/outbox.sqlite" -a -d "$state/incidents"
outbox_before=$(sqlite3 "$state/outbox.sqlite" .dump 2>/dev/null | sha256sum)
rows=$(sqlite3 "$state/outbox.sqlite" "SELECT name FROM sqlite_master WHERE type='table'" 2>/dev/null |
    while read -r t; do printf '%s=%s ' "$t" "$(sqlite3 "$state/outbox.sqlite" "SELECT count(*) FROM \"$t\"")"; done)
archive_before=$(cd "$state/incidents" 2>/dev/null && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)
echo "apt-repo: state before the upgrade: outbox rows: ${rows:-none}; archive: $(find "$state/incidents" -type f 2>/dev/null | wc -l) files"
check "the outbox has rows to keep" test -n "$(echo "$rows" | grep -E '=[1-9]')"
sed -i 's/^#wearer:/wearer:/; s/^#  name: Margaret/  name: Margaret/' "$root/etc/fallguard/config.yaml"
config_before=$(sha256sum <"$root/etc/fallguard/config.yaml")
perm_before=$(in_root stat -c '%a %U %G' /etc/fallguard/config.yaml)
in_root runuser -u fallguard -- fallguard check-config --config /etc/fallguard/config.yaml --no-hardware >/dev/null 2>&1
check "the owner's edit (wearer: Margaret) passes check-config" test $? = 0

# ---- the next version, published and upgraded to --------------------------------------------------
deploy/release.sh --deb "$deb2" --output "$site" --test-key "$work/key" --url "$url" >"$work/release2.log" 2>&1 ||
    { cat "$work/release2.log"; exit 1; }
check "the repository holds both versions" test -e "$site/pool/main/f/fallguard/fallguard_${v1}_$arch.deb" -a -e "$site/pool/main/f/fallguard/fallguard_${v2}_$arch.deb"
cp "$deb2" "$work/same-name.deb"; echo x >> "$work/same-name.deb"
cp -a "$site" "$work/site-republish"
deploy/release.sh --deb "$work/same-name.deb" --output "$work/site-republish" --test-key "$work/key" >"$work/republish.log" 2>&1
check "release.sh refuses to publish a version again with other bytes" sh -c "! cmp -s '$work/same-name.deb' '$work/site-republish/pool/main/f/fallguard/fallguard_${v2}_$arch.deb' && grep -q 'published once' '$work/republish.log'"
s=$(date +%s)
in_root sh -c 'apt update && apt upgrade' >"$work/upgrade.log" 2>&1
rc=$?
result "$([ $rc = 0 ] && echo PASS || echo FAIL)" "apt update && apt upgrade: exit $rc in $(( $(date +%s) - s )) s"
check "upgraded: fallguard $v2" test "$(in_root dpkg-query -W -f '${Version}' fallguard)" = "$v2"
check "the edited configuration is kept byte for byte" test "$(sha256sum <"$root/etc/fallguard/config.yaml")" = "$config_before"
check "its owner and mode kept ($perm_before)" test "$(in_root stat -c '%a %U %G' /etc/fallguard/config.yaml)" = "$perm_before"
check "no .dpkg-new / .dpkg-dist / .dpkg-old beside it" sh -c "! ls '$root'/etc/fallguard/*.dpkg-* 2>/dev/null"
check "outbox rows unchanged (sqlite3 .dump identical)" test "$(sqlite3 "$state/outbox.sqlite" .dump 2>/dev/null | sha256sum)" = "$outbox_before"
check "incident archive unchanged (every file's hash)" test "$(cd "$state/incidents" && find . -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum)" = "$archive_before"
in_root runuser -u fallguard -- fallguard incidents --state /var/lib/fallguard >"$work/incidents.log" 2>&1
check "the upgraded program reads the archive (fallguard incidents lists the demo's fall)" sh -c "grep -q 'FG-' '$work/incidents.log'"
check "the postinst asked for the service's restart (chroot: 'runs the new version from its next start')" grep -q "fallguard-setup: systemd is not running: fallguard.service runs the new version" "$work/upgrade.log"

# ---- a tampered web host ----------------------------------------------------------------------------
program_sum=$(sha256sum <"$root/usr/bin/fallguard")
# 1. The package in the pool replaced (same size, other bytes): the index still says the real hash.
tampered_copy pool
pkg="$attack_dir/pool/main/f/fallguard/fallguard_${v2}_$arch.deb"
tamper_package "$pkg"
in_root sh -c 'apt update && apt install --reinstall fallguard' >"$work/attack-pool.log" 2>&1
rc=$?
check "a changed package is refused: exit $rc, $(grep -o 'Hash Sum mismatch\|unexpected size' "$work/attack-pool.log" | head -1)" sh -c "[ $rc != 0 ] && grep -q 'Hash Sum mismatch\|unexpected size' '$work/attack-pool.log'"
check "and nothing of it installed (/usr/bin/fallguard unchanged)" test "$(sha256sum <"$root/usr/bin/fallguard")" = "$program_sum"
# 2. The index rewritten to match a changed package, Release left as signed.
tampered_copy index
(cd "$attack_dir" && apt-ftparchive --arch "$arch" packages pool/main/f/fallguard | sed 's/^Description: .*/Description: changed/' > dists/trixie/main/binary-$arch/Packages &&
    gzip -9nf -k dists/trixie/main/binary-$arch/Packages && xz -9f -k dists/trixie/main/binary-$arch/Packages)
in_root apt update >"$work/attack-index.log" 2>&1
rc=$?
check "a changed index is refused by apt update: exit $rc, $(grep -o 'Hash Sum mismatch\|unexpected size\|not signed' "$work/attack-index.log" | head -1)" sh -c "[ $rc != 0 ] && grep -q 'Hash Sum mismatch\|unexpected size\|is not signed' '$work/attack-index.log'"
# 3. The whole repository re-signed with another key.
tampered_copy otherkey
deploy/release.sh --deb "$deb2" --output "$attack_dir" --test-key "$work/other-key" >/dev/null 2>&1
in_root apt update >"$work/attack-key.log" 2>&1
rc=$?
check "a repository signed by another key is refused: exit $rc, $(grep -o 'NO_PUBKEY\|is not signed' "$work/attack-key.log" | head -1)" sh -c "[ $rc != 0 ] && grep -q 'NO_PUBKEY\|is not signed' '$work/attack-key.log'"
in_root apt install --reinstall fallguard >"$work/attack-key-install.log" 2>&1
rc=$?
check "and nothing from it installs (apt install --reinstall: exit $rc, $(grep -o 'cannot be downloaded\|Unable to locate' "$work/attack-key-install.log" | head -1))" sh -c "{ [ $rc != 0 ] || grep -q 'cannot be downloaded' '$work/attack-key-install.log'; } && [ \"\$(sha256sum <'$root/usr/bin/fallguard')\" = '$program_sum' ]"
if [ -n "${APT_REPO_KEEP:-}" ]; then
    mkdir -p "$APT_REPO_KEEP" && cp "$work"/*.log "$APT_REPO_KEEP"/ && echo "apt-repo: logs in $APT_REPO_KEEP"
fi
finish

#!/usr/bin/env bash
# deploy/release.sh in seconds, as CI can run it (no root, no network, no build): two tiny
# stand-in fallguard packages per architecture published into one repository with a test key,
# then checked the way apt checks them, without apt: InRelease and Release.gpg verify with the
# published key alone (gpgv), every index's size and SHA256 match the signed Release, every
# package's size and SHA256 match its index; SHA256SUMS and its signature; the second release
# keeps the first's packages; a version republished with other bytes is refused and changes
# nothing; a changed index no longer matches the signed Release; deploy/build-deb.sh gives the same
# .deb for the same program and SOURCE_DATE_EPOCH (release.sh sets it to the commit's time). bench/apt-repo.sh runs real
# apt against a real package (root, minutes).
set -uo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
fails() { ! "$@"; }
check() { if "${@:2}" >/dev/null 2>&1; then echo "  ok   $1"; else echo "  FAIL $1"; fail=1; fi; }

stand_in() { # stand_in VERSION ARCH [EXTRA]: a minimal package named fallguard
    local d="$work/pkg-$1-$2"
    mkdir -p "$d/DEBIAN" "$d/usr/share/doc/fallguard"
    echo "stand-in $1 $2 ${3:-}" > "$d/usr/share/doc/fallguard/stand-in"
    printf 'Package: fallguard\nVersion: %s\nArchitecture: %s\nMaintainer: test <t@fallguard.invalid>\nDescription: stand-in\n' "$1" "$2" > "$d/DEBIAN/control"
    dpkg-deb --root-owner-group -Zgzip --build "$d" "$work/fallguard_$1_$2${3:+-$3}.deb" >/dev/null
    echo "$work/fallguard_$1_$2${3:+-$3}.deb"
}
site="$work/site"
key="$work/key"
release() { "$here/deploy/release.sh" --output "$site" --test-key "$key" --url http://127.0.0.1:1/apt "$@" >>"$work/release.log" 2>&1; }

# Every index's size and SHA256 in the signed Release; every package's in its index.
release_matches() {
    local dist="$site/dists/trixie" line sum size name
    while read -r sum size name; do
        [ -f "$dist/$name" ] || return 1
        [ "$(stat -c %s "$dist/$name")" = "$size" ] && [ "$(sha256sum < "$dist/$name" | cut -d' ' -f1)" = "$sum" ] || return 1
    done < <(awk '/^SHA256:/ { on = 1; next } /^[^ ]/ { on = 0 } on { print $1, $2, $3 }' "$dist/Release")
}
packages_match() {
    local f
    for f in "$site"/dists/trixie/main/binary-*/Packages; do
        awk '/^Filename:/ { f = $2 } /^Size:/ { s = $2 } /^SHA256:/ { print f, s, $2 }' "$f" | while read -r name size sum; do
            [ "$(stat -c %s "$site/$name")" = "$size" ] && [ "$(sha256sum < "$site/$name" | cut -d' ' -f1)" = "$sum" ] || exit 1
        done || return 1
    done
}

echo "[first release: 0.0.1 for amd64 and arm64]"
check "release.sh without a key says how to sign (exit 1)" sh -c "! '$here/deploy/release.sh' --deb '$(stand_in 0.0.1 amd64)' --output '$work/nokey'"
release --deb "$work/fallguard_0.0.1_amd64.deb" --deb "$(stand_in 0.0.1 arm64)"
check "release.sh exits 0" test $? = 0
check "InRelease verifies with the published key alone (gpgv)" gpgv --keyring "$site/fallguard-archive-keyring.gpg" "$site/dists/trixie/InRelease"
check "Release.gpg verifies Release" gpgv --keyring "$site/fallguard-archive-keyring.gpg" "$site/dists/trixie/Release.gpg" "$site/dists/trixie/Release"
check "InRelease carries the same Release" sh -c "gpg --batch --quiet --decrypt '$site/dists/trixie/InRelease' 2>/dev/null | cmp -s - '$site/dists/trixie/Release'"
check "Release: Architectures amd64 arm64, Components main, Suite trixie, Label says TEST KEY" sh -c "grep -qx 'Architectures: amd64 arm64' '$site/dists/trixie/Release' && grep -qx 'Components: main' '$site/dists/trixie/Release' && grep -qx 'Suite: trixie' '$site/dists/trixie/Release' && grep -q 'TEST KEY' '$site/dists/trixie/Release'"
check "every index matches the signed Release (size, SHA256)" release_matches
check "every package matches its index (size, SHA256)" packages_match
check "the amd64 index lists only amd64, the arm64 index only arm64" sh -c "grep -q 'Architecture: amd64' '$site/dists/trixie/main/binary-amd64/Packages' && ! grep -q 'Architecture: arm64' '$site/dists/trixie/main/binary-amd64/Packages' && grep -q 'Architecture: arm64' '$site/dists/trixie/main/binary-arm64/Packages'"
check "SHA256SUMS matches every file; its signature verifies" sh -c "cd '$site' && sha256sum --quiet -c SHA256SUMS && gpgv --keyring ./fallguard-archive-keyring.gpg SHA256SUMS.asc"
check "fallguard.sources: the URL and Signed-By /etc/apt/keyrings/" sh -c "grep -qx 'URIs: http://127.0.0.1:1/apt' '$site/fallguard.sources' && grep -qx 'Signed-By: /etc/apt/keyrings/fallguard-archive-keyring.gpg' '$site/fallguard.sources'"
check "build-info names the commit" sh -c "grep -q '^commit: ' '$site'/build-info/*.txt"
check "no secret key in the folder" sh -c "! grep -rl 'PRIVATE KEY' '$site'"

echo "[second release: 0.0.2 amd64 into the same folder, same key]"
fpr1="$(gpg --batch --with-colons --show-keys "$site/fallguard-archive-keyring.gpg" 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')"
release --deb "$(stand_in 0.0.2 amd64)"
check "both versions in the amd64 index" sh -c "grep -qx 'Version: 0.0.1' '$site/dists/trixie/main/binary-amd64/Packages' && grep -qx 'Version: 0.0.2' '$site/dists/trixie/main/binary-amd64/Packages'"
check "arm64 0.0.1 still published" grep -qx 'Version: 0.0.1' "$site/dists/trixie/main/binary-arm64/Packages"
check "signed by the same key as the first" test "$(gpg --batch --with-colons --show-keys "$site/fallguard-archive-keyring.gpg" 2>/dev/null | awk -F: '$1 == "fpr" { print $10; exit }')" = "$fpr1"
check "indexes and packages still match the signed Release" sh -c "gpgv --keyring '$site/fallguard-archive-keyring.gpg' '$site/dists/trixie/InRelease'" 
check "  (hashes)" release_matches
before="$(cd "$site" && find . -type f ! -path './build-info/*' -print0 | sort -z | xargs -0 sha256sum)"
release --deb "$(stand_in 0.0.2 amd64 changed)" && republished=0 || republished=$?
check "0.0.2 again with other bytes: refused (exit 1), says a version is published once" sh -c "[ $republished = 1 ] && grep -q 'published once' '$work/release.log'"
check "and the folder is unchanged" test "$(cd "$site" && find . -type f ! -path './build-info/*' -print0 | sort -z | xargs -0 sha256sum)" = "$before"

echo "[build-deb.sh: the same input and SOURCE_DATE_EPOCH give the same .deb]"
cp /bin/true "$work/program"   # any x86-64 program shows the packaging
same() { SOURCE_DATE_EPOCH=1764000000 "$here/deploy/build-deb.sh" --arch amd64 --binary "$work/program" --version 0.0.3 --output "$work/$1" 2>/dev/null; }
if command -v dtc >/dev/null && [ "$(dpkg --print-architecture)" = amd64 ]; then
    first=$(same repro-a); sleep 1.1; second=$(same repro-b)
    check "two builds a second apart: byte-identical ($(sha256sum < "$first" | cut -c1-16))" cmp -s "$first" "$second"
    later=$(SOURCE_DATE_EPOCH=1764000001 "$here/deploy/build-deb.sh" --arch amd64 --binary "$work/program" --version 0.0.3 --output "$work/repro-c" 2>/dev/null)
    check "another SOURCE_DATE_EPOCH: another .deb (the check can fail)" fails cmp -s "$first" "$later"
else
    echo "  skip (needs dtc and an amd64 machine)"
fi

echo "[what apt would refuse]"
echo "Package: fallguard" >> "$site/dists/trixie/main/binary-amd64/Packages"
check "a changed index no longer matches the signed Release" fails release_matches
[ $fail = 0 ] && echo "release-check: PASS" || { echo "release-check: FAIL"; sed 's/^/  log: /' "$work/release.log" | tail -n 20; }
exit $fail

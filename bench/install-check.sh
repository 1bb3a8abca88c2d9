#!/usr/bin/env bash
# Checks deploy/install.sh and deploy/build-deb.sh the way CI can: install.sh twice into a
# staging folder (same files, the edited configuration kept, the unit enabled inside it),
# --prefix honoured; the system steps of deploy/fallguard-setup (user, groups, ownership) twice in
# a private mount namespace over a copy of /etc (the host's users are untouched); the .deb built
# and inspected with dpkg-deb -I / -c.
#
# Usage: bench/install-check.sh [--binary PATH]   (default: the debug build, built if missing;
#        a release build is what ships, but any fallguard executable shows the packaging)
set -euo pipefail
# The files made below get the modes a fresh shell gives them, whatever the caller's umask.
umask 022
here="$(cd "$(dirname "$0")/.." && pwd)"
binary=""
[ "${1:-}" = --binary ] && binary="$2"
if [ -z "$binary" ]; then
    binary="$here/.build/debug/fallguard"
    [ -x "$binary" ] || (cd "$here" && nice -n 10 swift build --product fallguard >/dev/null)
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if "${@:2}"; then echo "  ok   $1"; else echo "  FAIL $1"; fail=1; fi; }
listing() { (cd "$1" && find . -printf '%M %p %l\n' | sort); }

echo "[install.sh into a staging folder, twice]"
stage="$work/stage"
"$here/deploy/install.sh" --binary "$binary" --destdir "$stage" > "$work/first.log"
listing "$stage" > "$work/first.list"
echo "# edited by the owner" >> "$stage/etc/fallguard/config.yaml"
"$here/deploy/install.sh" --binary "$binary" --destdir "$stage" > "$work/second.log"
listing "$stage" > "$work/second.list"
check "second run installs the same files" diff -u "$work/first.list" "$work/second.list"
check "second run keeps the edited configuration" grep -q "^# edited by the owner" "$stage/etc/fallguard/config.yaml"
check "second run says so" grep -q "kept the existing /etc/fallguard/config.yaml" "$work/second.log"
check "program 0755" test "$(stat -c %a "$stage/usr/local/bin/fallguard")" = 755
check "program is the given binary" cmp -s "$binary" "$stage/usr/local/bin/fallguard"
check "configuration 0640 in a 0750 folder" test "$(stat -c %a "$stage/etc/fallguard/config.yaml") $(stat -c %a "$stage/etc/fallguard")" = "640 750"
check "configuration is the shipped one (deploy/fallguard.yaml)" bash -c "head -n -1 '$stage/etc/fallguard/config.yaml' | cmp -s - '$here/deploy/fallguard.yaml'"
check "the example with every key is beside the docs" cmp -s "$here/deploy/fallguard.example.yaml" "$stage/usr/local/share/doc/fallguard/fallguard.example.yaml"
check "udev rules in /etc/udev/rules.d" cmp -s "$here/udev/99-fallguard.rules" "$stage/etc/udev/rules.d/99-fallguard.rules"
check "unit in /etc/systemd/system, ExecStart in the prefix" grep -qx "ExecStart=/usr/local/bin/fallguard run --config /etc/fallguard/config.yaml" "$stage/etc/systemd/system/fallguard.service"
check "unit enabled (multi-user.target.wants link)" test "$(readlink "$stage/etc/systemd/system/multi-user.target.wants/fallguard.service")" = /etc/systemd/system/fallguard.service
check "station unit installed, ExecStart in the prefix, not enabled" bash -c "grep -qx 'ExecStart=/usr/local/bin/fallguard station --config /etc/fallguard/station.yaml' '$stage/etc/systemd/system/fallguard-station.service' && test ! -e '$stage/etc/systemd/system/multi-user.target.wants/fallguard-station.service' && test -f '$stage/usr/local/share/doc/fallguard/care-home.md' -a -f '$stage/usr/local/share/doc/fallguard/fallguard-station.example.yaml'"
check "setup steps and docs installed" test -x "$stage/usr/local/lib/fallguard/fallguard-setup" -a -f "$stage/usr/local/share/doc/fallguard/raspberry-pi.md"
"$here/deploy/install.sh" --binary "$binary" --destdir "$work/opt" --prefix /opt/fallguard --no-enable >/dev/null
check "--prefix /opt/fallguard: program and ExecStart follow" grep -qx "ExecStart=/opt/fallguard/bin/fallguard run --config /etc/fallguard/config.yaml" "$work/opt/etc/systemd/system/fallguard.service"
check "--no-enable: no enable link" test ! -e "$work/opt/etc/systemd/system/multi-user.target.wants"

echo "[fallguard-setup system steps, twice, over a private copy of /etc]"
if [ "$(id -u)" = 0 ] && unshare -m --propagation private true 2>/dev/null; then
    host_before="$(getent passwd fallguard || true) $(getent group fallguard || true)"
    unshare -m --propagation private -- bash -c '
        set -eu
        cp -a /etc "$1/etc"
        mount --bind "$1/etc" /etc
        mount -t tmpfs fg-varlib /var/lib
        groupadd --system gpio 2>/dev/null || true
        install -d -m 0755 /etc/fallguard
        echo "sensor: {}" > /etc/fallguard/config.yaml
        chmod 0644 /etc/fallguard/config.yaml
        for run in 1 2; do
            "$2/deploy/fallguard-setup" user
            "$2/deploy/fallguard-setup" state
            "$2/deploy/fallguard-setup" config-owner /etc/fallguard/config.yaml
        done > "$1/setup.log"
        { getent passwd fallguard; id -nG fallguard; stat -c "%U:%G %a" /var/lib/fallguard /etc/fallguard /etc/fallguard/config.yaml; } > "$1/setup.state"
    ' _ "$work" "$here"
    check "user fallguard: system account, no login, home /var/lib/fallguard" grep -qE '^fallguard:x:[0-9]+:[0-9]+:FallGuard sensor bridge:/var/lib/fallguard:/usr/sbin/nologin$' "$work/setup.state"
    check "user fallguard is in groups fallguard and gpio" grep -qx "fallguard gpio" "$work/setup.state"
    check "state directory fallguard:fallguard 0700" grep -qx "fallguard:fallguard 700" "$work/setup.state"
    check "configuration folder root:fallguard 0750, file root:fallguard 0640" bash -c "grep -qx 'root:fallguard 750' '$work/setup.state' && grep -qx 'root:fallguard 640' '$work/setup.state'"
    check "second run changes nothing (each step said once)" test "$(grep -c 'created user\|created group\|added user\|group fallguard, mode' "$work/setup.log")" = 5
    check "host users and groups untouched" test "$(getent passwd fallguard || true) $(getent group fallguard || true)" = "$host_before"
else
    echo "  skip (needs root and a mount namespace)"
fi

echo "[build-deb.sh refuses to leave out the overlay]"
nodtc="$work/nodtc"
mkdir -p "$nodtc"
for tool in sh dirname sed dpkg file mktemp rm; do ln -s "$(command -v $tool)" "$nodtc/$tool"; done
PATH="$nodtc" "$here/deploy/build-deb.sh" --binary "$binary" --version 0.0.0+check --output "$work/nodtc-deb" > /dev/null 2> "$work/nodtc.err" && nodtc_status=0 || nodtc_status=$?
check "without dtc: exit 1, says why, no package" bash -c "test $nodtc_status = 1 && grep -q 'dtc not found' '$work/nodtc.err' && ! ls '$work/nodtc-deb'/*.deb 2>/dev/null"

echo "[build-deb.sh and dpkg-deb]"
deb="$("$here/deploy/build-deb.sh" --binary "$binary" --version 0.0.0+check --output "$work/deb" 2>"$work/deb.err")"
cat "$work/deb.err" | sed 's/^/  /'
check "package built: $(basename "$deb")" test -f "$deb"
dpkg-deb -I "$deb" > "$work/info"
dpkg-deb -c "$deb" > "$work/contents"
sed 's/^/    /' "$work/info" | grep -E 'Package|Version|Architecture|Depends|Recommends|Installed-Size|conffiles|postinst|prerm|postrm'
check "control: package fallguard 0.0.0+check" bash -c "grep -q '^ Package: fallguard$' '$work/info' && grep -q '^ Version: 0.0.0+check$' '$work/info'"
check "control: depends on udev and systemd" grep -qE '^ Depends: .*udev, systemd' "$work/info"
check "control: recommends libcurl (the e-mail channel opens it with dlopen)" grep -qE '^ Recommends: libcurl4' "$work/info"
check "control: depends on libgpiod3 or libgpiod2 (opened with dlopen, either API)" grep -qE '^ Depends: .*libgpiod3 \| libgpiod2' "$work/info"
for f in ./usr/bin/fallguard ./usr/lib/systemd/system/fallguard.service ./usr/lib/udev/rules.d/99-fallguard.rules \
         ./etc/fallguard/config.yaml ./usr/lib/fallguard/fallguard-setup ./usr/share/doc/fallguard/fallguard.example.yaml \
         ./usr/share/doc/fallguard/raspberry-pi.md ./usr/share/fallguard/overlays/fallguard-adxl345.dtbo \
         ./usr/share/fallguard/config.txt; do
    check "contains $f" grep -q " $f\$" "$work/contents"
done
check "every file root/root" bash -c "! awk '{ print \$2 }' '$work/contents' | grep -v '^root/root$'"
check "nothing under /usr/local or /etc/systemd" bash -c "! grep -E ' \./(usr/local|etc/systemd)' '$work/contents'"
mkdir "$work/x"
dpkg-deb -e "$deb" "$work/x/DEBIAN"
dpkg-deb -x "$deb" "$work/x"
check "conffiles: /etc/fallguard/config.yaml" grep -qx /etc/fallguard/config.yaml "$work/x/DEBIAN/conffiles"
check "postinst runs the setup steps" bash -c "grep -q 'fallguard-setup user' '$work/x/DEBIAN/postinst' && grep -q 'fallguard-setup systemd-enable' '$work/x/DEBIAN/postinst'"
check "maintainer scripts parse (sh -n)" sh -n "$work/x/DEBIAN/postinst" "$work/x/DEBIAN/prerm" "$work/x/DEBIAN/postrm"
check "packaged program (stripped) runs: fallguard detectors" bash -c "'$work/x/usr/bin/fallguard' detectors | grep -q multiphase"
check "packaged unit runs /usr/bin/fallguard" grep -qx "ExecStart=/usr/bin/fallguard run --config /etc/fallguard/config.yaml" "$work/x/usr/lib/systemd/system/fallguard.service"
check "packaged unit passes systemd-security bars" bash -c "sed 's|^ExecStart=/usr/bin/|ExecStart=/usr/local/bin/|' '$work/x/usr/lib/systemd/system/fallguard.service' > '$work/fallguard.service' && '$here/bench/systemd-security.sh' '$work/fallguard.service' >/dev/null"

[ $fail = 0 ] && echo "install-check: PASS" || echo "install-check: FAIL"
exit $fail

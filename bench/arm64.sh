#!/usr/bin/env bash
# FallGuard on aarch64, here (issue 27): the arm64 package cross-built on this x86-64 machine,
# its program run under qemu-aarch64 against the project's emulators, compared with the x86
# build, and the package installed in a fresh arm64 trixie root. Root; Debian 12 x86-64.
#
#   bench/arm64.sh [PART...]      parts: deb e2e evaluate root (default: all, in that order)
#
#   deb       deploy/build-deb.sh --arch arm64: time, size, `file`, the newest GLIBC symbol
#             version the program needs (bar: <= 2.41, trixie's glibc)
#   e2e       the end-to-end suites that start the built program (record, watch, gpio with
#             libgpiod 1.6 and 2.x, alarm, run with the page, MQTT, webhook, exec, the caregiver
#             loop, ...) from the x86 test build, with FALLGUARD_BINARY a wrapper that runs the
#             arm64 program under qemu-aarch64 -L <tools/arm64-sdk qemu-root>
#   evaluate  `fallguard evaluate --json --trials` of the shared dev folders with each detector,
#             arm64 (under qemu) against x86: the outputs must be identical
#   root      the .deb in a fresh arm64 trixie root (mmdebstrap --arch arm64, qemu-user through
#             binfmt): installs with its dependencies; the user, the 0640 configuration, the
#             state folder, the unit, the udev rules; `fallguard check-config` and a 20 s demo
#             run inside (chroot, no systemd)
#
# Variables: FALLGUARD_ARM64_DEB (a built .deb: skips the build), FALLGUARD_X86_BINARY (default
# .build/debug/fallguard, built with the tests), ARM64_E2E_FILTER (the suites, a regex),
# ARM64_OUT (results; default bench/out/arm64), FALLGUARD_ARM64_CACHE (tools/arm64-sdk).
# Prints one "arm64: PART: ..." line per result and "N passed, N failed" at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
export PATH=/opt/swift/usr/bin:$PATH
out=${ARM64_OUT:-$repo/bench/out/arm64}
mkdir -p "$out"
parts=${*:-deb e2e evaluate root}
passed=0 failed=0
result() { # result PASS|FAIL PART TEXT
    echo "arm64: $2: $1: $3"
    if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}
now() { date +%s; }

deb=${FALLGUARD_ARM64_DEB:-}
binary=""
need_deb() {
    [ -n "$deb" ] && return
    local s; s=$(now)
    deb=$(deploy/build-deb.sh --arch arm64 --output "$out/deb" 2>"$out/build-deb.log") || { tail -n 20 "$out/build-deb.log"; deb=""; return 1; }
    echo "arm64: deb: built in $(( $(now) - s )) s (caches: ${FALLGUARD_ARM64_CACHE:-~/.cache/fallguard-arm64})"
}
# The program as packaged (stripped), taken out of the .deb.
need_binary() {
    [ -n "$binary" ] && return
    need_deb || return 1
    rm -rf "$out/unpacked"
    dpkg-deb -x "$deb" "$out/unpacked"
    binary="$out/unpacked/usr/bin/fallguard"
}
# FALLGUARD_BINARY for the tests: the arm64 program under qemu-aarch64 with trixie's libraries.
need_wrapper() {
    [ -x "$out/fallguard-qemu" ] && [ -n "$binary" ] && return
    need_binary || return 1
    local cached; cached=$(tools/arm64-sdk qemu-root) || return 1
    # A hard-linked copy beside the results: the tests also run the program as user nobody,
    # who cannot enter root's cache in /root.
    local root=$out/qemu-root
    rm -rf "$root"
    cp -al "$cached" "$root" 2>/dev/null || cp -a "$cached" "$root"
    # The GPIO emulator preloads libfakegpio.so (tools/gpio-emulator): an aarch64 build of it at
    # the same path under the qemu root, where the arm64 loader finds it first.
    local fake=$repo/.build-emu/gpio/libfakegpio.so
    mkdir -p "$root$(dirname "$fake")"
    /opt/swift/usr/bin/clang --target=aarch64-linux-gnu --sysroot="$(tools/arm64-sdk libs)" -fuse-ld=lld \
        -O2 -shared -fPIC -Wall -Wextra -o "$root$fake" tools/gpio-emulator/fakegpio.c -ldl -lpthread || return 1
    printf '#!/bin/sh\nexec qemu-aarch64-static -L %s %s "$@"\n' "$root" "$binary" > "$out/fallguard-qemu"
    chmod +x "$out/fallguard-qemu"
}

part_deb() {
    need_deb || { result FAIL deb "deploy/build-deb.sh --arch arm64 failed ($out/build-deb.log)"; return; }
    need_binary
    echo "arm64: deb: $(basename "$deb"), $(du -k "$deb" | cut -f1) KiB; program $(du -k "$binary" | cut -f1) KiB"
    local f; f=$(file -b "$binary")
    echo "arm64: deb: file: $f"
    case "$f" in *"ARM aarch64"*) result PASS deb "file says ARM aarch64" ;; *) result FAIL deb "file says: $f" ;; esac
    local g; g=$(readelf -V --wide "$binary" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1)
    if [ "$(printf '%s\nGLIBC_2.41\n' "$g" | sort -V | tail -1)" = GLIBC_2.41 ]; then
        result PASS deb "newest glibc symbol version $g (trixie: 2.41)"
    else
        result FAIL deb "needs $g, newer than trixie's 2.41"
    fi
    echo "arm64: deb: NEEDED $(readelf -d "$binary" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')"
    echo "arm64: deb: Depends: $(dpkg-deb -f "$deb" Depends)"
    local v want; v=$(dpkg-deb -f "$deb" Version)
    want=$(sed -n 's/^public let fallguardVersion = "\(.*\)"$/\1/p' Sources/FallGuardDaemon/Version.swift)
    need_wrapper
    local says; says=$("$out/fallguard-qemu" --version 2>&1)
    if [ "$v" = "$want" ] && [ "$says" = "$want" ]; then
        result PASS deb "one version: package $v, fallguard --version $says"
    else
        result FAIL deb "versions differ: package $v, source $want, fallguard --version $says"
    fi
}

part_e2e() {
    need_wrapper || { result FAIL e2e "no arm64 program"; return; }
    local filter=${ARM64_E2E_FILTER:-'IIOEndToEndTests|GPIOEndToEndTests|LibGPIOD2BarTests|PassiveBuzzerTests|AlarmEndToEndTests|DaemonEndToEndTests|DaemonCommandTests|DaemonCrashDuringCountdownTests|DaemonReloadTests|WebPageTests|FieldRecorderTests|CaregiverLoopEndToEndTests|TestAlertClientIDTests|\.CLITests|CrashTests'}
    local s; s=$(now)
    FALLGUARD_BINARY="$out/fallguard-qemu" swift test --skip-build --no-parallel --filter "$filter" >"$out/e2e.log" 2>&1
    local rc=$?
    local summary; summary=$(grep -E "Test run with [0-9]+ tests? .*(passed|failed)" "$out/e2e.log" | tail -1)
    echo "arm64: e2e: $(( $(now) - s )) s: $summary"
    grep -E "^✘ Test .*(failed|recorded an issue)" "$out/e2e.log" | sed 's/^/arm64: e2e:   /' | head -20
    if [ $rc = 0 ]; then result PASS e2e "$summary"; else result FAIL e2e "exit $rc: $summary (log $out/e2e.log)"; fi
}

part_evaluate() {
    need_wrapper || { result FAIL evaluate "no arm64 program"; return; }
    local x86=${FALLGUARD_X86_BINARY:-$repo/.build/debug/fallguard}
    [ -x "$x86" ] || { result FAIL evaluate "no x86 program at $x86 (swift build, or FALLGUARD_X86_BINARY)"; return; }
    local data=${FALLGUARD_DATASETS:-$repo/../shared/datasets}
    local d det
    for d in "$data"/*/; do
        d=${d%/}
        for det in multiphase sum-abs per-axis; do
            local name; name="$(basename "$d")-$det"
            "$x86" evaluate "$d" --detector "$det" --json --trials >"$out/eval-x86-$name.json" 2>"$out/eval-x86-$name.err"
            local s; s=$(now)
            "$out/fallguard-qemu" evaluate "$d" --detector "$det" --json --trials >"$out/eval-arm64-$name.json" 2>"$out/eval-arm64-$name.err"
            local t=$(( $(now) - s ))
            local n; n=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); e=d.get("events") or {}; print("%s falls, %s detected, %s ADLs, %s alarmed, %s false alarms in events" % (d.get("falls"), d.get("detected_falls"), d.get("adls"), d.get("alarmed_adls"), e.get("false_alarms") if isinstance(e, dict) else len(e)))' "$out/eval-x86-$name.json" 2>/dev/null)
            if [ -s "$out/eval-x86-$name.json" ] && cmp -s "$out/eval-x86-$name.json" "$out/eval-arm64-$name.json"; then
                result PASS evaluate "$name: identical ($(wc -c <"$out/eval-x86-$name.json") bytes of JSON: $n; arm64 under qemu $t s)"
            else
                result FAIL evaluate "$name: differs: $(diff "$out/eval-x86-$name.json" "$out/eval-arm64-$name.json" | head -c 300)"
            fi
        done
    done
}

part_root() {
    need_deb || { result FAIL root "no .deb"; return; }
    # aarch64 programs run through binfmt_misc (qemu-user-static, binfmt-support).
    command -v update-binfmts >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq binfmt-support qemu-user-static >/dev/null
    [ -e /proc/sys/fs/binfmt_misc/register ] || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || update-binfmts --enable qemu-aarch64
    [ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ] || { result FAIL root "no binfmt_misc entry for aarch64"; return; }
    local root=$out/trixie-root
    local in=(unshare --mount --propagation private -- sh -c 'mount -t proc proc "$0/proc"; mount --bind /dev "$0/dev"; mount -t tmpfs tmpfs "$0/run"; exec chroot "$0" "$@"' "$root")
    # ARM64_ROOT_KEEP=1: check the root of the last run again, without making it anew.
    if [ "${ARM64_ROOT_KEEP:-0}" != 1 ] || [ ! -x "$root/usr/bin/fallguard" ]; then
        rm -rf "$root"
        local s; s=$(now)
        # A fresh trixie arm64 system (mmdebstrap's apt variant: the required packages and apt; their
        # maintainer scripts run under qemu-user), made once into the cache, unpacked fresh each run.
        local base=${FALLGUARD_ARM64_CACHE:-$HOME/.cache/fallguard-arm64}/trixie-arm64-base.tar
        if [ ! -s "$base" ]; then
            mkdir -p "$(dirname "$base")"
            if ! mmdebstrap --arch=arm64 --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
                trixie "$base.tmp.tar" http://deb.debian.org/debian >"$out/root-mmdebstrap.log" 2>&1; then
                result FAIL root "mmdebstrap --arch arm64 trixie failed: $(tail -n 2 "$out/root-mmdebstrap.log")"; return
            fi
            mv "$base.tmp.tar" "$base"
            echo "arm64: root: trixie arm64 base made in $(( $(now) - s )) s ($(du -m "$base" | cut -f1) MB)"
        fi
        mkdir -p "$root"
        tar -xf "$base" -C "$root"
        cp "$deb" "$root/tmp/"
        local in0=(unshare --mount --propagation private -- sh -c 'mount -t proc proc "$0/proc"; exec chroot "$0" "$@"' "$root")
        "${in0[@]}" apt-get -o 'Acquire::Check-Valid-Until=false' update >"$out/root-update.log" 2>&1 \
            || { result FAIL root "apt-get update: $(tail -n 2 "$out/root-update.log")"; return; }
        s=$(now)
        if "${in[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y "/tmp/$(basename "$deb")" >"$out/root-install.log" 2>&1; then
            result PASS root "apt-get install of the .deb with its dependencies ($(( $(now) - s )) s)"
        else
            result FAIL root "apt-get install: $(tail -n 3 "$out/root-install.log")"; return
        fi
    fi
    local check
    check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then result PASS root "$what"; else result FAIL root "$what"; fi; }
    check "dpkg: fallguard $(dpkg-deb -f "$deb" Version) arm64 installed, its dependencies with it" sh -c "\"\$@\" dpkg-query -W -f '\${Status} \${Architecture}' fallguard | grep -qx 'install ok installed arm64'" sh "${in[@]}"
    check "user fallguard exists" "${in[@]}" getent passwd fallguard
    check "/etc/fallguard/config.yaml is 0640 root:fallguard" test "$("${in[@]}" stat -c '%a %U %G' /etc/fallguard/config.yaml)" = "640 root fallguard"
    check "state folder /var/lib/fallguard owned by fallguard" test "$("${in[@]}" stat -c '%U' /var/lib/fallguard)" = fallguard
    check "unit /usr/lib/systemd/system/fallguard.service" test -f "$root/usr/lib/systemd/system/fallguard.service"
    check "udev rules under /usr/lib/udev/rules.d" sh -c "ls '$root'/usr/lib/udev/rules.d/*fallguard* >/dev/null"
    # The installed configuration (deploy/fallguard.yaml: no channel) passes, warning that nobody
    # will be told; as the service's user.
    "${in[@]}" runuser -u fallguard -- \
        fallguard check-config --config /etc/fallguard/config.yaml --no-hardware >"$out/root-check-config.log" 2>&1
    local rc=$?
    echo "arm64: root: check-config exit $rc: $(tail -n 2 "$out/root-check-config.log" | tr '\n' ' ' | head -c 200)"
    check "fallguard check-config of the installed configuration, as user fallguard, exits 0" test "$rc" = 0
    check "and warns that nobody will be told" grep -q "no channel: nobody will be told" "$out/root-check-config.log"
    # The demo: no configuration, the bundled fall replayed; as user fallguard in its state folder.
    s=$(now)
    "${in[@]}" runuser -u fallguard -- fallguard run --duration 20 --state /var/lib/fallguard/demo >"$out/root-demo.log" 2>&1
    rc=$?
    echo "arm64: root: demo run --duration 20: exit $rc in $(( $(now) - s )) s; $(grep -m1 'fall suspected' "$out/root-demo.log" | head -c 160)"
    check "a 20 s demo run exits 0 and detects the bundled fall" sh -c "[ $rc = 0 ] && grep -q 'fall suspected' '$out/root-demo.log'"
    check "the demo's incident is in its state folder" grep -q fall-suspected "$root/var/lib/fallguard/demo/incidents.jsonl"
}

for p in $parts; do
    case "$p" in
        deb) part_deb ;;
        e2e) part_e2e ;;
        evaluate) part_evaluate ;;
        root) part_root ;;
        *) echo "bench/arm64.sh: unknown part $p" >&2; exit 2 ;;
    esac
done
echo "arm64: $passed passed, $failed failed"
[ "$failed" = 0 ]

#!/usr/bin/env bash
# docs/raspberry-pi.md's owner path, followed literally (issue 39): every command of the
# numbered steps' ```sh blocks (1 to 10), in order, as root in a fresh Debian trixie root
# (mmdebstrap, chroot), with the package from deploy/release.sh's signed repository on a
# loopback static server. The Pi's parts are the project's emulators: after step 6's reboot
# the root runs inside tools/gpio-emulator (buzzer GPIO18, button GPIO17, LED GPIO27 through the
# real libgpiod 2.2 of trixie) and tools/iio-emulator (an ADXL345, the real libiio 0.26), and a
# `systemctl` stand-in starts the unit's ExecStart as its User (no systemd in a chroot).
# What cannot be run as written is said, with what is run instead:
#   - step 2's `apt full-upgrade` runs (the root is a Debian trixie, not Raspberry Pi OS);
#   - step 5's `nano /boot/firmware/config.txt`: the ```ini lines that follow are appended, as
#     the text says ("add at the end"); /boot/firmware/overlays/ is made first (a Pi's card has it);
#   - step 6's `reboot`: the root's processes end and the next commands run in the emulators;
#   - step 8's `fallguard setup` gets its answers on standard input (ntfy to a loopback receiver,
#     countdown 10 s; the orientation skipped: the emulated sensor lies still), and the button
#     is pressed through the GPIO emulator when setup asks for it;
#   - step 10: the sensor plays a real fall (SisFall F01_SA02_R01), the wearer back up, the same
#     fall again; the bench presses the button in the first countdown, lets the second run out,
#     then holds the button 2.5 s.
# Then, still running in the emulators: the next version (the package repacked as the next patch
# version) published into the same repository and `apt update && apt upgrade` (step 4's text): the
# configuration setup wrote kept byte for byte, the outbox's rows and the incident archive's files
# kept, the running service restarted by the package (a new process, the new version, monitoring);
# and a package changed on the web host refused by apt ("Hash Sum mismatch", nothing installed).
# Lines marked in the docs as an alternative (`<!-- owner-path: alternative -->` before the
# block) are not run. A command whose comment says "must say: X" must print X.
#
# Usage: bench/owner-path.sh [--deb FILE]... [--arch amd64|arm64]
#   --deb FILE  a package to publish (repeat: e.g. the amd64 and the arm64 one in one repository,
#               as deploy/release.sh makes it). Default: the release package of this machine's
#               architecture, built if missing; FALLGUARD_DEBUG_PACKAGE=1: a package of
#               .build/debug/fallguard.
#   --arch A    the root's architecture (default: the first package's). arm64: a trixie arm64
#               root under qemu-user (binfmt_misc; the GPIO emulator's preload library built for
#               aarch64), every program in it emulated: slower, the waits are 3 times longer.
# Root, the Debian mirror (the root's packages), loopback. Prints "owner-path: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." && repo=$PWD && export PATH=/opt/swift/usr/bin:$PATH
arch="" deb="" debs=() phase=""
while [ $# -gt 0 ]; do
    case "$1" in
        --deb) debs+=("$(realpath "$2")"); shift 2 ;;
        --arch) arch="$2"; shift 2 ;;
        --phase) phase="$2"; work="$3"; shift 3 ;;   # internal: a boot inside the emulators
        *) echo "owner-path.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
[ "$(id -u)" = 0 ] || { echo "owner-path.sh: needs root (mmdebstrap, chroot, the emulators)" >&2; exit 2; }
# The root's architecture, and its package among those given.
[ -n "$arch" ] || arch=$( [ ${#debs[@]} -gt 0 ] && dpkg-deb -f "${debs[0]}" Architecture || dpkg --print-architecture)
for d in "${debs[@]}"; do [ "$(dpkg-deb -f "$d" Architecture)" = "$arch" ] && deb=$d; done
[ ${#debs[@]} = 0 ] || [ -n "$deb" ] || { echo "owner-path.sh: no $arch package among --deb" >&2; exit 2; }
# Under qemu-user every program in the root runs emulated (the program starts in 3-7 s).
slow=1; [ "$arch" = "$(dpkg --print-architecture)" ] || slow=3
start=$(date +%s)
elapsed() { echo $(( $(date +%s) - start )); }
result() { echo "owner-path: $1: $2"; echo "$1" >> "$work/results"; }
check() { local what=$1; shift; if "$@" >/dev/null 2>&1; then result PASS "$what"; else result FAIL "$what"; fi; }
finish() {
    local p f; p=$(grep -c PASS "$work/results" 2>/dev/null); f=$(grep -c FAIL "$work/results" 2>/dev/null)
    echo "owner-path: ${p:-0} passed, ${f:-0} failed ($(elapsed) s)"; [ "${f:-0}" = 0 ]; exit $?
}

# ---- the steps, from the docs ---------------------------------------------------------------------
# One line per command: STEP<TAB>KIND<TAB>TEXT; KIND sh (a command) or ini (a line that
# follows a `nano FILE`, to append there).
extract_steps() {
    python3 - "$repo/docs/raspberry-pi.md" <<'EOF'
import re, sys
step, block, alternative, skip_block = None, None, False, False
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("# Reference"): break
    m = re.match(r"## (\d+)\. ", line)
    if m: step = int(m.group(1)); continue
    if step is None: continue
    if "<!-- owner-path: alternative" in line: alternative = True; continue
    if block is None and line.startswith("```"):
        block = line[3:].strip(); skip_block = alternative; alternative = False; continue
    if block is not None and line.startswith("```"): block = None; continue
    if block is None or skip_block or not line.strip(): continue
    if block == "sh": print(f"{step}\tsh\t{line}")
    elif block == "ini": print(f"{step}\tini\t{line}")
EOF
}

# The root's view of a docs line: the repository's address, and `sudo ` (root already).
for_root() { sed -e 's/^sudo //' -e 's/&& sudo /\&\& /g' -e "s|https://fallguard.example.org/apt|$url|g" <<<"$1"; }

# run_line STEP LINE: one docs command in the root; "must say: X" checked against its output.
run_line() {
    local n=$1 line=$2 cmd want out rc
    cmd=$(for_root "$line" | sed -e 's/[[:space:]]*#.*$//')
    want=$(sed -n 's/.*# must say: \(.*\)$/\1/p' <<<"$line" | sed "s/arm64/$arch/")
    case "$cmd" in
        reboot) result PASS "step $n: $cmd (the root's processes end; what follows runs in the emulators)"; return ;;
        "nano /boot/firmware/config.txt")
            grep -P "^$n\tini\t" "$work/steps" | cut -f3- >> "$root/boot/firmware/config.txt"
            check "step $n: $cmd: the lines after it appended ($(grep -cP "^$n\tini\t" "$work/steps") lines)" grep -qx "dtoverlay=fallguard-adxl345" "$root/boot/firmware/config.txt"
            return ;;
        "fallguard setup") setup_step "$n"; return ;;
    esac
    out=$(in_root sh -c "$cmd" 2>&1); rc=$?
    printf '%s\n' "# step $n: $cmd" "$out" >> "$work/steps.log"
    if [ -n "$want" ]; then
        check "step $n: $cmd: says '$want'" grep -qF -- "$want" <<<"$out"
    else
        check "step $n: $cmd: exit $rc$( [ $rc != 0 ] && printf ': %s' "$(tail -n 2 <<<"$out" | tr '\n' ' ')")" test "$rc" = 0
    fi
}

# ---- the first part: steps 1 to 6, without the Pi's parts ------------------------------------------
if [ -z "$phase" ]; then
    work="$(mktemp -d /tmp/fg-owner-path.XXXXXX)"
    . bench/lib-trixie-root.sh
    cleanup() { trixie_cleanup; [ -n "${OWNER_PATH_KEEP:-}" ] && cp -r "$work"/*.log "$OWNER_PATH_KEEP"/ 2>/dev/null; rm -rf "$work"; }
    trap cleanup EXIT
    : > "$work/results"
    trixie_package owner-path
    [ ${#debs[@]} -gt 0 ] || debs=("$deb")
    port=$((20000 + RANDOM % 20000)); url="http://127.0.0.1:$port"; site=$work/site
    published=(); for d in "${debs[@]}"; do published+=(--deb "$d"); done
    deploy/release.sh "${published[@]}" --output "$site" --test-key "$work/key" --url "$url" >"$work/release.log" 2>&1 ||
        { cat "$work/release.log"; exit 1; }
    echo "owner-path: repository: $(sed -n 's/^release.sh: .*: suite/suite/p' "$work/release.log"); the root: trixie $arch"
    serve "$site" "$port" || { echo "owner-path.sh: the static server did not start" >&2; exit 1; }
    trixie_root
    extract_steps > "$work/steps"
    echo "owner-path: $(grep -c $'\tsh\t' "$work/steps") commands in steps $(cut -f1 "$work/steps" | sort -un | tr '\n' ' ')of docs/raspberry-pi.md"
    mkdir -p "$root/boot/firmware/overlays" && touch "$root/boot/firmware/config.txt"
    declare -p url root runtime arch deb site port slow > "$work/env"
    while IFS=$'\t' read -r n kind line; do
        [ "$kind" = sh ] && [ "$n" -le 6 ] && run_line "$n" "$line"
    done < "$work/steps"
    check "the overlay from the package is in the firmware folder" test -s "$root/boot/firmware/overlays/fallguard-adxl345.dtbo"
    # The Pi boots with systemd: a stand-in that runs the unit's ExecStart as its User.
    install -m 0755 bench/systemctl-standin "$root/usr/bin/systemctl"
    mkdir -p "$work/run/systemd/system"
    python3 tools/notify-receiver/receiver.py --port 0 --port-file "$work/receiver.port" --log "$work/receiver.jsonl" >"$work/receiver.log" 2>&1 &
    servers+=($!)
    for _ in $(seq 50); do [ -s "$work/receiver.port" ] && break; sleep 0.1; done
    echo "receiver=$(cat "$work/receiver.port")" >> "$work/env"
    # Step 10's sensor: a real fall, lying still 20 s, standing 10 s, the same fall again.
    python3 - Tests/FallGuardFieldTestTests/Fixtures/sisfall/F01_SA02_R01.csv "$work/falls.csv" <<'EOF'
import sys
rows = open(sys.argv[1]).read().split("\n")
head, data = rows[0], [r for r in rows[1:] if r]
print(head, *(data + data[-40:] * 20 + data[:40] * 10 + data), sep="\n", file=open(sys.argv[2], "w"))
EOF
    still=$work/still.csv
    { echo "x_g,y_g,z_g"; for _ in $(seq 400); do echo "0.03,-0.97,-0.12"; done; } > "$still"
    for boot in 1 2; do
        recording=$still; [ $boot = 2 ] && recording=$work/falls.csv
        tools/gpio-emulator/gpio-emu --control "$work/gpio.sock" --log "$work/gpio-$boot.jsonl" -- \
            tools/iio-emulator/iio-emu --model adxl345-direct --recording "$recording" --start-delay $([ $boot = 2 ] && echo 15 || echo 0) -- \
            "$0" --phase "boot$boot" "$work"
        echo "owner-path: boot $boot over ($(elapsed) s)"
    done
    finish
fi

# ---- after the reboot: inside the emulators ------------------------------------------------------
. bench/lib-trixie-root.sh
. "$work/env"
trap trixie_cleanup EXIT
# The GPIO emulator's library (for the root's architecture) and kernel socket, at the same paths
# in the root.
IN_ROOT_BIND="$(dirname "$(sed 's/^[^=]*=//; s/;.*//' <<<"$FAKEGPIO_CHIPS")")"
preload_for_root "${LD_PRELOAD%%:*}" || exit 1
export IN_ROOT_BIND
gpio_ctl() { tools/gpio-emulator/gpio-ctl -s "$work/gpio.sock" "$@" >/dev/null; }
# What udev does at boot with the package's rules (no udev in a chroot): the device nodes and
# the IIO attributes the service writes, to group fallguard (the rule's own RUN command); and
# the emulators' plumbing open to that user (the kernel's side needs none).
rules=$root/usr/lib/udev/rules.d/99-fallguard.rules
[ -e "$rules" ] || rules=$root/lib/udev/rules.d/99-fallguard.rules
iio_run=$(sed -n "s/.*RUN+=\"\/bin\/sh -c '\(.*\)'\"$/\1/p" "$rules" | sed 's/\$\$/$/g')
for d in /sys/bus/iio/devices/iio:device*; do
    in_root sh -c "devpath=${d#/sys}; $iio_run"
done
in_root sh -c 'for c in /dev/gpiochip*; do chgrp fallguard "$c" && chmod 0660 "$c"; done'
sock_dir=$(dirname "$(sed 's/^[^=]*=//; s/;.*//' <<<"$FAKEGPIO_CHIPS")")
chmod 0755 "$sock_dir"; chmod 0666 "$sock_dir"/*.sock 2>/dev/null
check "boot: udev's part done (the IIO attributes and /dev/gpiochip0 to group fallguard)" \
    in_root sh -c "ls -l /sys/bus/iio/devices/iio:device0/in_accel_sampling_frequency /dev/gpiochip0 | grep -c ' root fallguard ' | grep -qx 2"
in_root systemctl start fallguard   # enabled: systemd starts it at boot

setup_step() {
    local n=$1 out=$work/setup.out
    # The answers, as the owner types them: who, ntfy to the loopback receiver, the pins and
    # sensor as offered, a 10 s countdown; then the checks: orientation skipped, the buzzer
    # heard, Enter for the button and for the simulated fall (pressed below), the alert arrived.
    printf '%s\n' Margaret "" ntfy "http://127.0.0.1:$receiver" fallguard-owner-path-bench "" "" "" "" 10 \
        skip yes "" yes "" > "$work/setup.answers"
    ( for cue in "Press the abort button now" "FALL DETECTED"; do
          for _ in $(seq 3000); do grep -q "$cue" "$out" 2>/dev/null && break; sleep 0.1; done
          sleep 0.5; gpio_ctl hold GPIO17 200
      done ) &
    local presser=$!
    in_root fallguard setup < "$work/setup.answers" > "$out" 2>&1
    local rc=$?
    kill "$presser" 2>/dev/null; wait "$presser" 2>/dev/null
    cat "$out" >> "$work/steps.log"
    check "step $n: fallguard setup: exit $rc" test $rc = 0
    for said in "sensor found: adxl345" "buzzer heard." "button pressed." "test alert received." "simulated fall aborted" "fallguard.service started again"; do
        check "step $n: setup says '$said'" grep -qF "$said" "$out"
    done
    check "step $n: the test alert reached the ntfy topic" grep -q '"path": "/fallguard-owner-path-bench"' "$work/receiver.jsonl"
}

if [ "$phase" = boot1 ]; then
    : > "$work/steps.log.boot1"
    while IFS=$'\t' read -r n kind line; do
        [ "$kind" = sh ] && [ "$n" -ge 7 ] && [ "$n" -le 9 ] && run_line "$n" "$line"
    done < "$work/steps"
    told() { ! in_root fallguard status 2>&1 | grep -q 'nobody will be told'; }
    check "after step 9: fallguard status no longer says 'nobody will be told'" told
    in_root systemctl stop fallguard
    exit 0
fi

# boot2: step 10, the whole chain.
incidents=$root/var/lib/fallguard/incidents.jsonl
wait_for() { # wait_for SECONDS TEXT FILE (SECONDS times $slow)
    local end=$(( $(date +%s) + $1 * slow ))
    while [ "$(date +%s)" -lt $end ]; do grep -q "$2" "$3" 2>/dev/null && return 0; sleep 0.2; done; return 1
}
before=$(grep -c fall-suspected "$incidents" 2>/dev/null); before=${before:-0}
check "step 10.1: the dropped sensor starts the countdown (fall-suspected)" wait_for 60 "fall-suspected" "$incidents"
sleep 2; gpio_ctl hold GPIO17 200
check "step 10.1: the press stops it: a false alarm, nothing sent" wait_for 10 '"event":"false-alarm"' "$incidents"
sent_before=$(grep -c '"path": "/fallguard-owner-path-bench"' "$work/receiver.jsonl")
count_at_least() { # count_at_least SECONDS N TEXT FILE (SECONDS times $slow)
    local end=$(( $(date +%s) + $1 * slow ))
    while [ "$(date +%s)" -lt $end ]; do [ "$(grep -c -- "$3" "$4" 2>/dev/null)" -ge "$2" ] && return 0; sleep 0.2; done; return 1
}
check "step 10.2: the same again: a second countdown" count_at_least 90 $((before + 2)) fall-suspected "$incidents"
check "step 10.2: it runs out and the alert goes out" wait_for 40 '"event":"countdown-expired"' "$incidents"
check "step 10.2: the helper gets it (the ntfy topic)" count_at_least 20 $((sent_before + 1)) '"path": "/fallguard-owner-path-bench"' "$work/receiver.jsonl"
gpio_ctl hold GPIO17 2500
check "step 10.3: holding the button 2 s asks for help" wait_for 15 '"event":"help-requested"' "$incidents"
beeps=$(grep -c '"offset": 18, .*"value": 1' "$work/gpio-2.jsonl" 2>/dev/null)
echo "owner-path: step 10: buzzer on $beeps times; incidents: $(grep -o '"event":"[a-z-]*"' "$incidents" | sort | uniq -c | tr -s ' \n' ' ')"

# ---- the next version through apt, the service running ---------------------------------------------
wait_ok() { # wait_ok SECONDS CMD...: CMD succeeds within SECONDS times $slow
    local end=$(( $(date +%s) + $1 * slow )); shift
    while [ "$(date +%s)" -lt $end ]; do "$@" && return 0; sleep 1; done; return 1
}
state=$root/var/lib/fallguard
# The outbox's rows (each table's row ids; the running service may update a row, not drop it)
# and the archive's files (each one's hash).
outbox_rows() {
    local t
    for t in $(sqlite3 -readonly "$state/outbox.sqlite" "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'grdb_%'"); do
        sqlite3 -readonly "$state/outbox.sqlite" "SELECT rowid FROM \"$t\"" | sed "s/^/$t /"
    done | sort
}
archive_files() { (cd "$state/incidents" && find . -type f -print0 | sort -z | xargs -0 -r sha256sum); }
# An incident's signal.csv is written again when its window after the incident ends
# (recording.incident-after, 60 s): the archive to keep is the one no file changed in for 65 s.
archive_settled() { [ -z "$(find "$state/incidents" -type f -newermt '-65 seconds' 2>/dev/null)" ]; }
s=$(date +%s); wait_ok 150 archive_settled; echo "owner-path: the archive settled in $(( $(date +%s) - s )) s"
outbox_rows > "$work/outbox-before"; archive_files > "$work/archive-before"
config_before=$(sha256sum <"$root/etc/fallguard/config.yaml")
pid_before=$(cat "$work/run/fallguard-standin.pid" 2>/dev/null)
echo "owner-path: before the upgrade: outbox $(cut -d' ' -f1 "$work/outbox-before" | uniq -c | tr -s ' \n' ' ')rows; archive $(wc -l <"$work/archive-before") files; service PID $pid_before"
check "the outbox and the archive have something to keep" test -s "$work/outbox-before" -a -s "$work/archive-before"
next_version
deploy/release.sh --deb "$deb2" --output "$site" --test-key "$work/key" --url "$url" >"$work/release2.log" 2>&1 ||
    { cat "$work/release2.log"; exit 1; }
s=$(date +%s)
in_root sh -c 'apt update && apt upgrade' >"$work/upgrade.log" 2>&1
rc=$?
result "$([ $rc = 0 ] && echo PASS || echo FAIL)" "upgrade: apt update && apt upgrade to $v2: exit $rc in $(( $(date +%s) - s )) s"
check "upgrade: fallguard $v2 $arch installed" test "$(in_root dpkg-query -W -f '${Version} ${Architecture}' fallguard)" = "$v2 $arch"
check "upgrade: the configuration fallguard setup wrote kept byte for byte, no .dpkg-* beside it" \
    sh -c "[ \"\$(sha256sum <'$root/etc/fallguard/config.yaml')\" = '$config_before' ] && ! ls '$root'/etc/fallguard/*.dpkg-* 2>/dev/null"
outbox_rows > "$work/outbox-after"; archive_files > "$work/archive-after"
check "upgrade: every outbox row kept ($(wc -l <"$work/outbox-before") before, $(wc -l <"$work/outbox-after") after)" \
    test -z "$(comm -23 "$work/outbox-before" "$work/outbox-after")"
check "upgrade: every archive file kept unchanged ($(wc -l <"$work/archive-before") files)" \
    test -z "$(comm -23 "$work/archive-before" "$work/archive-after")"
pid_after=$(cat "$work/run/fallguard-standin.pid" 2>/dev/null)
check "upgrade: the package restarted the running service (PID $pid_before -> $pid_after)" \
    sh -c "grep -q 'fallguard.service restarted' '$work/upgrade.log' && [ -n '$pid_after' ] && [ '$pid_after' != '$pid_before' ] && kill -0 '$pid_after'"
monitoring() { in_root fallguard status 2>&1 | grep -q 'state: monitoring'; }
check "upgrade: the restarted service monitors (fallguard status: state: monitoring)" wait_ok 20 monitoring
in_root runuser -u fallguard -- fallguard incidents --state /var/lib/fallguard >"$work/incidents.log" 2>&1
check "upgrade: the new program reads the archive (fallguard incidents: $(grep -c 'FG-' "$work/incidents.log") incidents)" grep -q 'FG-' "$work/incidents.log"

# ---- a package changed on the web host ---------------------------------------------------------------
program_sum=$(sha256sum <"$root/usr/bin/fallguard")
tampered_copy pool
tamper_package "$attack_dir/pool/main/f/fallguard/fallguard_${v2}_$arch.deb"
in_root sh -c 'apt update && apt install --reinstall fallguard' >"$work/attack-pool.log" 2>&1
rc=$?
check "a changed package is refused: exit $rc, $(grep -o 'Hash Sum mismatch\|unexpected size' "$work/attack-pool.log" | head -1)" \
    sh -c "[ $rc != 0 ] && grep -q 'Hash Sum mismatch\|unexpected size' '$work/attack-pool.log'"
check "and nothing of it installed (/usr/bin/fallguard unchanged)" test "$(sha256sum <"$root/usr/bin/fallguard")" = "$program_sum"
in_root systemctl stop fallguard
exit 0

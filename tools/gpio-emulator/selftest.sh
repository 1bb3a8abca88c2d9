#!/usr/bin/env bash
# selftest.sh: prove the GPIO emulator with Debian's unmodified libgpiod tools
# (gpiodetect, gpioinfo, gpioget, gpioset, gpiomon) plus raw uAPI checks: first the
# libgpiod 1.6 tools (uAPI v1) with uapi_test.c, then the libgpiod 2.x tools (uAPI v2:
# gpionotify too) with uapi_v2_test.py. The 2.x tools are the system's when `gpiod` is 2.x
# (Debian 13), else the copy tools/setup-debian unpacks from bookworm-backports into
# $FALLGUARD_LIBGPIOD2_DIR (default /var/cache/fallguard/libgpiod2: bin/ and lib/).
#
# Usage: tools/gpio-emulator/selftest.sh
# Exit: 0 all passed; 1 something failed (each failure is printed);
#       77 skipped (not root, no mount namespaces, or no tools at all) with the reason.
#       A missing half (1.6 or 2.x tools) is reported as SKIP and the other half still runs.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"

skip() {
    echo "selftest: SKIP: $*"
    exit 77
}

if [ "${1:-}" != --inner ] && [ "${1:-}" != --inner-v2 ]; then
    [ "$(id -u)" = 0 ] || skip "needs root (private mount namespace, tmpfs, mknod); running as uid $(id -u)"
    unshare -m --propagation private true 2>/dev/null || skip "cannot create a mount namespace here (unshare -m failed)"
    for t in python3 "${CC:-cc}"; do
        command -v "$t" >/dev/null || skip "$t not installed (apt-get install python3 gcc)"
    done
    # Which tools: 1.6 from the system; 2.x from the system or the bookworm-backports copy.
    v1=0 v2_bin="" v2_lib=""
    case "$(gpiodetect --version 2>/dev/null | head -1)" in
        *v1.6*) v1=1 ;;
        *v2.*) v2_bin=$(dirname "$(command -v gpiodetect)") ;;
    esac
    cache=${FALLGUARD_LIBGPIOD2_DIR:-/var/cache/fallguard/libgpiod2}
    if [ -z "$v2_bin" ] && [ -x "$cache/bin/gpiodetect" ]; then
        v2_bin=$cache/bin v2_lib=$cache/lib
    fi
    [ "$v1" = 1 ] || [ -n "$v2_bin" ] || skip "no libgpiod tools: apt-get install gpiod (or run tools/setup-debian for the 2.x copy)"
    build="$REPO/.build-emu/gpio"
    "$HERE/gpio-emu" --build-only >/dev/null || { echo "selftest: FAIL: building libfakegpio.so"; exit 1; }
    work=$(mktemp -d "${TMPDIR:-/tmp}/gpio-selftest.XXXXXX")
    trap 'rm -rf "$work"' EXIT
    status=0
    if [ "$v1" = 1 ]; then
        echo "selftest: libgpiod 1.6 tools ($(gpiodetect --version | head -1)), uAPI v1"
        ${CC:-cc} -O2 -Wall -Wextra -Werror -o "$build/uapi_test" "$HERE/uapi_test.c" ||
            { echo "selftest: FAIL: building uapi_test"; exit 1; }
        mkdir -p "$work/v1"
        "$HERE/gpio-emu" --rpi --chip gpiochip1,gpio-emu-test,8 --input-only 2 \
            --log "$work/v1/gpio.jsonl" --control "$work/v1/control.sock" \
            -- "$HERE/selftest.sh" --inner "$work/v1" "$build/uapi_test"
        rc=$?
        [ "$rc" = 77 ] && skip "gpio-emu could not set up its namespace"
        [ "$rc" = 0 ] || status=1
    else
        echo "selftest: SKIP: libgpiod 1.6 tools (Debian 12 'gpiod') not installed: uAPI v1 checks not run"
    fi
    if [ -n "$v2_bin" ]; then
        echo "selftest: libgpiod 2.x tools ($(LD_LIBRARY_PATH=$v2_lib "$v2_bin/gpiodetect" --version | head -1), $v2_bin), uAPI v2"
        mkdir -p "$work/v2"
        "$HERE/gpio-emu" --rpi --chip gpiochip1,gpio-emu-test,8 --input-only 2 \
            --log "$work/v2/gpio.jsonl" --control "$work/v2/control.sock" \
            -- "$HERE/selftest.sh" --inner-v2 "$work/v2" "$v2_bin" "$v2_lib"
        rc=$?
        [ "$rc" = 77 ] && skip "gpio-emu could not set up its namespace"
        [ "$rc" = 0 ] || status=1
    else
        echo "selftest: SKIP: libgpiod 2.x tools not found (system gpiod is 1.6 and $cache/bin has none: run tools/setup-debian)"
    fi
    exit "$status"
fi

# ------------------------------------------------------------ inside gpio-emu ---
mode=$1
work=$2
LOG=$FALLGUARD_GPIO_LOG
ctl() { "$HERE/gpio-ctl" "$@"; }
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS: $*"; }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...
    local what=$1; shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
# wait_until TIMEOUT_S COMMAND...: poll COMMAND every 20 ms
wait_until() {
    local deadline=$(( $(date +%s%N) + $1 * 1000000000 )); shift
    while ! "$@" >/dev/null 2>&1; do
        [ "$(date +%s%N)" -lt "$deadline" ] || return 1
        sleep 0.02
    done
}
requested() { ctl get "$1" | grep -q "requested=1"; }
free() { ctl get "$1" | grep -q "requested=0"; }
# log_has PYTHON_EXPR: some JSON record r in the log satisfies the expression
log_has() {
    python3 - "$LOG" "$1" <<'EOF'
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
sys.exit(0 if any(eval(sys.argv[2], {}, {"r": r}) for r in recs) else 1)
EOF
}

if [ "$mode" = --inner-v2 ]; then
    # ------------------------------------------- libgpiod 2.x tools, uAPI v2 ---
    export PATH="$3:$PATH"
    [ -z "${4:-}" ] || export LD_LIBRARY_PATH="$4${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

    # 1. gpiodetect, gpioinfo, gpioget
    out=$(gpiodetect 2>&1)
    check "v2 gpiodetect lists 'gpiochip0 [pinctrl-bcm2711] (58 lines)'" grep -qx 'gpiochip0 \[pinctrl-bcm2711\] (58 lines)' <<<"$out"
    check "v2 gpiodetect lists 'gpiochip1 [gpio-emu-test] (8 lines)'" grep -qx 'gpiochip1 \[gpio-emu-test\] (8 lines)' <<<"$out"
    [ "$failed" = 0 ] || echo "$out"
    info=$(gpioinfo -c gpiochip0 2>&1)
    check "v2 gpioinfo -c gpiochip0: 58 lines, line 17 \"GPIO17\" input" \
        bash -c "grep -q '^gpiochip0 - 58 lines:' <<<'$info' && grep -Eq 'line +17:[[:space:]]+\"GPIO17\"[[:space:]]+input\$' <<<'$info'"
    check "v2 gpioinfo finds line GPIO57 by name" bash -c "gpioinfo GPIO57 | grep -Eq '^gpiochip0 57[[:space:]]+\"GPIO57\"[[:space:]]+input'"
    check "v2 gpioget by chip number and offset: GPIO17 (reset pull-down) inactive" \
        bash -c '[ "$(gpioget -c 0 17)" = "\"17\"=inactive" ]'

    # 2. gpioset holds GPIO18 as output; busy for others; released on exit
    gpioset -c gpiochip0 GPIO18=1 &
    setpid=$!
    if wait_until 5 requested 18; then
        check "v2 gpioinfo: line 18 output, consumer \"gpioset\"" \
            bash -c "gpioinfo -c 0 18 | grep -Eq '^gpiochip0 18[[:space:]]+\"GPIO18\"[[:space:]]+output consumer=\"gpioset\"'"
        check "v2 control 'get 18': level=1, a v2 line request by gpioset" \
            bash -c "'$HERE/gpio-ctl' get 18 | grep -q 'level=1 requested=1 kind=line direction=output consumer=\"gpioset\"'"
        err=$(gpioget -c 0 18 2>&1); rc=$?
        check "v2 gpioget of the busy line fails with 'Device or resource busy' ($err)" \
            bash -c "[ $rc != 0 ] && grep -q 'Device or resource busy' <<<'$err'"
    else
        fail "v2 gpioset never requested line 18"
    fi
    kill -TERM "$setpid" 2>/dev/null; wait "$setpid" 2>/dev/null
    check "v2 line 18 is free again after gpioset exits" wait_until 5 free 18
    check "v2 log: request of GPIO18 by gpioset (kind line, output)" log_has \
        'r.get("event")=="request" and r.get("kind")=="line" and r.get("offset")==18 and r.get("consumer")=="gpioset" and r.get("direction")=="output"'
    check "v2 log: release of GPIO18 by gpioset" log_has \
        'r.get("event")=="release" and r.get("offset")==18 and r.get("consumer")=="gpioset" and r.get("kind")=="line"'

    # 3. a 100 ms pulse with gpioset --toggle, timed from the log
    gpioset -c 0 -t 20ms,100ms,0 18=0
    check "v2 log times a 100 ms pulse of gpioset --toggle (CLOCK_MONOTONIC at the ioctl)" python3 - "$LOG" <<'PY'
import json, sys
lv = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "level" and r.get("offset") == 18]
t_on = [r["t_ns"] for r in lv if r["value"] == 1][-1]
t_off = [r["t_ns"] for r in lv if r["value"] == 0 and r["t_ns"] > t_on][0]
d = (t_off - t_on) / 1e6
print("  pulse %.1f ms" % d)
sys.exit(0 if 100 <= d < 2000 else 1)
PY

    # 4. gpionotify sees gpioset request and release line 18 (GPIO_V2_GET_LINEINFO_WATCH_IOCTL)
    gpionotify -c 0 -n 2 -F '%E %o %C' 18 >"$work/notify" 2>&1 &
    npid=$!
    sleep 0.3
    gpioset -c 0 -t 50ms,0 18=1
    if wait_until 5 bash -c "! kill -0 $npid"; then
        wait "$npid"
        check "v2 gpionotify: 'requested 18 gpioset' then 'released 18'" \
            bash -c "head -1 '$work/notify' | grep -Eq '^requested 18 \"?gpioset' && sed -n 2p '$work/notify' | grep -q '^released 18'"
        [ "$failed" = 0 ] || cat "$work/notify"
    else
        kill "$npid"; fail "v2 gpionotify did not report: $(cat "$work/notify")"
    fi

    # 5. gpiomon: press and release; active-low
    gpiomon -c 0 -b pull-up -n 2 -F '%e %o' 17 >"$work/mon1" 2>&1 &
    monpid=$!
    if wait_until 5 requested 17; then
        check "v2 gpioinfo: line 17 input, pull-up, both edges, consumer \"gpiomon\"" \
            bash -c "gpioinfo -c 0 17 | grep -Eq 'input bias=pull-up edges=both consumer=\"gpiomon\"'"
        ctl press 17 >/dev/null; sleep 0.05; ctl release 17 >/dev/null
    else
        fail "v2 gpiomon never requested line 17"
    fi
    if wait_until 5 bash -c "! kill -0 $monpid"; then
        wait "$monpid"; rc=$?
        check "v2 gpiomon exits 0 after 2 events: press = falling (2), release = rising (1)" \
            bash -c "[ $rc = 0 ] && [ \"\$(tr '\n' ' ' <'$work/mon1')\" = '2 17 1 17 ' ]"
    else
        kill "$monpid"; fail "v2 gpiomon did not see press and release: $(cat "$work/mon1")"
    fi
    gpiomon -c 0 -l -b pull-up -n 2 -F '%e' 17 >"$work/mon2" 2>&1 &
    monpid=$!
    wait_until 5 requested 17 && ctl hold 17 30 >/dev/null
    if wait_until 5 bash -c "! kill -0 $monpid"; then
        wait "$monpid"
        check "v2 active-low: hold 30 ms = rising then falling (logical edges)" \
            bash -c "[ \"\$(tr '\n' ' ' <'$work/mon2')\" = '1 2 ' ]"
    else
        kill "$monpid"; fail "v2 gpiomon --active-low did not see the hold: $(cat "$work/mon2")"
    fi

    # 6. bounce without debounce: 10 events with the kernel's timestamps
    gpiomon -c 0 -b pull-up -n 10 -F '%e %S' 17 >"$work/mon3" 2>&1 &
    monpid=$!
    wait_until 5 requested 17 && ctl bounce 17 10 500 1 >/dev/null
    if wait_until 5 bash -c "! kill -0 $monpid"; then
        wait "$monpid"
        check "v2 bounce: 10 events, alternating, increasing timestamps < 5 ms apart" python3 - "$work/mon3" <<'PY'
import sys
ev = [l.split() for l in open(sys.argv[1]) if l.strip()]
ts = [int(s.split(".")[0]) * 10**9 + int(s.split(".")[1]) for _, s in ev]
gaps = [(b - a) / 1e3 for a, b in zip(ts, ts[1:])]
print("  %d events, gaps (us): %s" % (len(ev), " ".join("%.0f" % g for g in gaps)))
sys.exit(0 if len(ev) == 10 and [e for e, _ in ev] == ["2", "1"] * 5 and all(0 < g < 5000 for g in gaps) else 1)
PY
    else
        kill "$monpid"; fail "v2 gpiomon did not get 10 bounce events: $(cat "$work/mon3")"
    fi

    # 7. the kernel's debounce (GPIO_V2_LINE_ATTR_ID_DEBOUNCE): the bounces are one edge, 10 ms after the last
    gpiomon -c 0 -b pull-up -p 10ms -n 2 -F '%e %S' 17 >"$work/mon4" 2>&1 &
    monpid=$!
    reply=""
    if wait_until 5 requested 17; then
        check "v2 gpioinfo shows debounce-period=10ms" bash -c "gpioinfo -c 0 17 | grep -q 'debounce-period=10ms'"
        reply=$(ctl bounce 17 10 500 0)
        sleep 0.2
        ctl release 17 >/dev/null
    fi
    if wait_until 5 bash -c "! kill -0 $monpid"; then
        wait "$monpid"
        check "v2 debounce: one falling edge stamped 10 ms after the last bounce, then the release" python3 - "$work/mon4" "$reply" <<'PY'
import sys
ev = [l.split() for l in open(sys.argv[1]) if l.strip()]
last = int([w for w in sys.argv[2].split() if w.startswith("last_ns=")][0][8:])
ts = [int(s.split(".")[0]) * 10**9 + int(s.split(".")[1]) for _, s in ev]
d = (ts[0] - last) / 1e6 if ts else -1
print("  first event %.2f ms after the last bounce edge; events %s" % (d, [e for e, _ in ev]))
sys.exit(0 if [e for e, _ in ev] == ["2", "1"] and 10 <= d < 30 else 1)
PY
    else
        kill "$monpid"; fail "v2 gpiomon --debounce-period did not get 2 events: $(cat "$work/mon4")"
    fi

    # 8. event clock realtime
    gpiomon -c 0 -b pull-up -E realtime --unquoted -n 1 -F '%S' 17 >"$work/mon5" 2>&1 &
    monpid=$!
    now=0
    wait_until 5 requested 17 && { now=$(date +%s.%N); ctl press 17 >/dev/null; ctl release 17 >/dev/null; }
    if wait_until 5 bash -c "! kill -0 $monpid"; then
        wait "$monpid"
        check "v2 --event-clock realtime: the timestamp is wall-clock time ($(cat "$work/mon5"), now $now)" \
            python3 -c "import sys; sys.exit(0 if abs(float(open('$work/mon5').read().split()[0]) - $now) < 2 else 1)"
    else
        kill "$monpid"; fail "v2 gpiomon -E realtime: $(cat "$work/mon5")"
    fi

    # 9. raw uAPI v2: errno values, seqnos, values, config, watch ABI, release
    if out=$(python3 "$HERE/uapi_v2_test.py" /dev/gpiochip1 2 2>&1); then
        pass "uapi_v2_test: $(tail -1 <<<"$out")"
    else
        fail "uapi_v2_test:"; echo "$out"
    fi
    echo "selftest (v2): $passed passed, $failed failed"
    [ "$failed" = 0 ]
    exit
fi
uapi_test=$3

# 1. gpiodetect
out=$(gpiodetect 2>&1)
check "gpiodetect lists 'gpiochip0 [pinctrl-bcm2711] (58 lines)'" grep -qx 'gpiochip0 \[pinctrl-bcm2711\] (58 lines)' <<<"$out"
check "gpiodetect lists the second chip 'gpiochip1 [gpio-emu-test] (8 lines)'" grep -qx 'gpiochip1 \[gpio-emu-test\] (8 lines)' <<<"$out"
[ "$failed" = 0 ] || echo "$out"

# 2. gpioinfo names
info=$(gpioinfo gpiochip0 2>&1)
check "gpioinfo shows 58 lines" grep -q '^gpiochip0 - 58 lines:' <<<"$info"
ok=1
for n in $(seq 0 27); do
    grep -Eq "line +$n: +\"GPIO$n\" +unused +input +active-high" <<<"$info" || { ok=0; echo "  missing GPIO$n in: $(grep "line *$n:" <<<"$info")"; }
done
check "gpioinfo names lines 0..27 GPIO0..GPIO27, unused inputs" [ "$ok" = 1 ]
check "gpioinfo names line 57 GPIO57" grep -Eq 'line +57: +"GPIO57"' <<<"$info"

# 3. gpioset --mode=signal holds GPIO18 as output
gpioset --mode=signal gpiochip0 18=1 &
setpid=$!
if wait_until 5 requested 18; then
    info=$(gpioinfo gpiochip0)
    check "gpioinfo: line 18 used by \"gpioset\" as output" \
        grep -Eq 'line +18: +"GPIO18" +"gpioset" +output +active-high \[used\]' <<<"$info"
    check "control 'get 18': level=1 output consumer gpioset" \
        bash -c "'$HERE/gpio-ctl' get 18 | grep -q 'level=1 requested=1 kind=handle direction=output consumer=\"gpioset\"'"
    err=$(gpioget gpiochip0 18 2>&1); rc=$?
    check "second request of a busy line fails with 'Device or resource busy' ($err)" \
        bash -c "[ $rc != 0 ] && grep -q 'Device or resource busy' <<<'$err'"
    err=$(gpioset gpiochip0 18=0 2>&1); rc=$?
    check "gpioset on the busy line fails with 'Device or resource busy'" \
        bash -c "[ $rc != 0 ] && grep -q 'Device or resource busy' <<<'$err'"
else
    fail "gpioset --mode=signal never requested line 18"
fi
kill -TERM "$setpid" 2>/dev/null; wait "$setpid" 2>/dev/null
check "line 18 is free again after gpioset exits" wait_until 5 free 18
check "log: level 1 on GPIO18 by gpioset" log_has \
    'r.get("event")=="level" and r.get("offset")==18 and r.get("value")==1 and r.get("consumer")=="gpioset" and r.get("chip")=="gpiochip0" and r.get("name")=="GPIO18" and isinstance(r.get("t_ns"),int)'
check "log: request and release of GPIO18 by gpioset" log_has \
    'r.get("event")=="release" and r.get("offset")==18 and r.get("consumer")=="gpioset"'
check "released output keeps its level (Raspberry Pi OS behaviour)" \
    bash -c "'$HERE/gpio-ctl' get 18 | grep -q 'level=1 requested=0 kind=none direction=output'"

# 4. buzzer timing from the log: a 100 ms pulse
gpioset --mode=time --usec=100000 gpiochip0 18=0 && gpioset --mode=time --usec=100000 gpiochip0 18=1 && gpioset gpiochip0 18=0
check "log times a 100 ms buzzer pulse (CLOCK_MONOTONIC at the ioctl)" python3 - "$LOG" <<'EOF'
import json, sys
lv = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "level" and r.get("offset") == 18]
t_on = [r["t_ns"] for r in lv if r["value"] == 1][-1]
t_off = [r["t_ns"] for r in lv if r["value"] == 0 and r["t_ns"] > t_on][0]
d = (t_off - t_on) / 1e6
print("  pulse %.1f ms" % d)
sys.exit(0 if 100 <= d < 2000 else 1)
EOF

# 5. gpiomon: press and release through the control socket
check "line 17 reads 0 before anyone asks for a pull-up (BCM2711 reset pull-down)" \
    bash -c '[ "$(gpioget gpiochip0 17)" = 0 ]'
gpiomon --num-events=2 --falling-edge --rising-edge --bias=pull-up --format='%e %s.%n' gpiochip0 17 >"$work/mon1" 2>&1 &
monpid=$!
if wait_until 5 requested 17; then
    err=$(gpioget gpiochip0 17 2>&1); rc=$?
    check "gpioget of the line gpiomon holds fails with 'Device or resource busy'" \
        bash -c "[ $rc != 0 ] && grep -q 'Device or resource busy' <<<'$err'"
    check "gpioinfo: line 17 used by \"gpiomon\" with pull-up" \
        bash -c "gpioinfo gpiochip0 | grep -Eq 'line +17: +\"GPIO17\" +\"gpiomon\" +input +active-high \\[used pull-up\\]'"
    ctl press 17 >/dev/null; sleep 0.05; ctl release 17 >/dev/null
else
    fail "gpiomon never requested line 17"
fi
if wait_until 5 bash -c "! kill -0 $monpid"; then
    wait "$monpid"; rc=$?
    check "gpiomon (pull-up, active-high) exits 0 after 2 events" [ "$rc" = 0 ]
    check "press = falling edge, release = rising edge" \
        bash -c "[ \"\$(cut -d' ' -f1 '$work/mon1' | tr '\n' ' ')\" = '0 1 ' ]"
else
    kill "$monpid"; fail "gpiomon did not receive press and release: $(cat "$work/mon1")"
fi
gpiomon --num-events=2 --active-low --bias=pull-up --format='%e' gpiochip0 17 >"$work/mon2" 2>&1 &
monpid=$!
if wait_until 5 requested 17; then
    ctl hold 17 30 >/dev/null
fi
if wait_until 5 bash -c "! kill -0 $monpid"; then
    wait "$monpid"
    check "active-low: hold 30 ms = rising then falling (logical edges, as the kernel)" \
        bash -c "[ \"\$(tr '\n' ' ' <'$work/mon2')\" = '1 0 ' ]"
else
    kill "$monpid"; fail "gpiomon --active-low did not see the hold: $(cat "$work/mon2")"
fi

# 6. bounce: 10 edges 0.5 ms apart -> 10 events, increasing timestamps
gpiomon --num-events=10 --bias=pull-up --format='%e %s %n' gpiochip0 17 >"$work/mon3" 2>&1 &
monpid=$!
if wait_until 5 requested 17; then
    reply=$(ctl bounce 17 10 500 1)
    check "bounce reply reports 10 edges ($reply)" grep -q '^ok edges=10 level=1' <<<"$reply"
fi
if wait_until 5 bash -c "! kill -0 $monpid"; then
    wait "$monpid"
    check "bounce: 10 events, alternating, strictly increasing timestamps ~0.5 ms apart" python3 - "$work/mon3" <<'EOF'
import sys
ev = [l.split() for l in open(sys.argv[1]) if l.strip()]
ts = [int(s) * 10**9 + int(n) for _, s, n in ev]
kinds = [e for e, _, _ in ev]
gaps = [(b - a) / 1e3 for a, b in zip(ts, ts[1:])]
print("  %d events, gaps (us): %s" % (len(ev), " ".join("%.0f" % g for g in gaps)))
ok = len(ev) == 10 and all(g > 0 for g in gaps) and kinds == ["0", "1"] * 5 \
    and all(g < 5000 for g in gaps)
sys.exit(0 if ok else 1)
EOF
else
    kill "$monpid"; fail "gpiomon did not get 10 bounce events: $(cat "$work/mon3")"
fi

# 7. control protocol basics
check "control 'now' is CLOCK_MONOTONIC ns" bash -c "'$HERE/gpio-ctl' now | grep -Eq '^ok [0-9]+$'"
check "control 'log' returns the log path" bash -c "[ \"\$('$HERE/gpio-ctl' log)\" = 'ok $LOG' ]"
check "control rejects unknown commands with 'error'" bash -c "! '$HERE/gpio-ctl' frobnicate 17 | grep -qv '^error'"
check "control 'wait' times out with 'error timeout'" bash -c "'$HERE/gpio-ctl' wait 17 0 30 | grep -q '^error timeout'"

# 8. raw uAPI: errno values, EBUSY, EINVAL, EIO, EPERM, release on close/exit, kfifo, watch
if out=$("$uapi_test" /dev/gpiochip1 2); then
    pass "uapi_test: $(tail -1 <<<"$out")"
else
    fail "uapi_test:"; echo "$out"
fi

echo "selftest (v1): $passed passed, $failed failed"
[ "$failed" = 0 ]

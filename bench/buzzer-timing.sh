#!/usr/bin/env bash
# Buzzer pattern timing through the real libgpiod (1.6 or 2.x) in the GPIO emulator: plays a
# 50/150 ms pattern for 40 s (400 edges) with `fallguard gpio`, reads every level change of
# the buzzer line (GPIO18) with its CLOCK_MONOTONIC time from the emulator's log, and
# compares each edge with the configured schedule (its start fitted as the median offset).
# Bar: every edge within ±10 ms. Prints max and p99 edge error. Exit 0 pass, 1 fail, 77 skip.
# GPIO_LIBRARY=v2 runs it through libgpiod 2.x (the system's, or the copy tools/setup-debian
# unpacks into /var/cache/fallguard/libgpiod2); default v1 (1.6).
set -euo pipefail
cd "$(dirname "$0")/.."
PATTERN=${PATTERN:-50/150}
SECONDS_TO_RUN=${SECONDS_TO_RUN:-40}
tools/build-release fallguard >/dev/null
B=$(tools/build-release fallguard --show-bin-path)/fallguard
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
LIB=${GPIO_LIBRARY:-v1}
libdir=${FALLGUARD_LIBGPIOD2_DIR:-/var/cache/fallguard/libgpiod2}/lib
if [ "$LIB" = v2 ] && ! ldconfig -p | grep -q 'libgpiod\.so\.3 ' && [ -e "$libdir/libgpiod.so.3" ]; then
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
set +e
tools/gpio-emulator/gpio-emu --log "$tmp/gpio.jsonl" -- "$B" gpio --library "$LIB" --output GPIO18 --pattern "$PATTERN" --duration "$SECONDS_TO_RUN" >/dev/null
rc=$?
set -e
[ $rc = 77 ] && { echo "skip: the GPIO emulator needs root and namespaces"; exit 77; }
[ $rc = 0 ] || { echo "fallguard gpio failed ($rc)"; exit 1; }
python3 - "$tmp/gpio.jsonl" "$PATTERN" "$LIB" <<'PY'
import json, sys
on, off = (int(x) for x in sys.argv[2].split("/"))
lv = [r for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "level" and r["offset"] == 18]
lv = lv[next(i for i, r in enumerate(lv) if r["value"] == 1):]
if lv and lv[-1]["value"] == 0 and len(lv) % 2 == 0:
    lv = lv[:-1]  # the final switch-off at exit is not part of the pattern
def offset(k):
    return (k // 2) * (on + off) * 1_000_000 + (on * 1_000_000 if k % 2 else 0)
# The schedule's start is not in the log: take the one that fits best (the median).
t0 = sorted(r["t_ns"] - offset(k) for k, r in enumerate(lv))[len(lv) // 2]
errs = []
for k, r in enumerate(lv):
    errs.append(abs(r["t_ns"] - t0 - offset(k)) / 1e6)
    if r["value"] != (0 if k % 2 else 1):
        print("edge %d has the wrong level" % k); sys.exit(1)
s = sorted(errs)
p99 = s[min(len(s) - 1, int(0.99 * len(s)))]
print("buzzer pattern %s ms through libgpiod %s (emulated): %d edges" % (sys.argv[2], "1.6" if sys.argv[3] == "v1" else "2.x", len(errs)))
print("edge error vs schedule: max %.3f ms, p99 %.3f ms, median %.3f ms (bar: max <= 10 ms)" % (s[-1], p99, s[len(s) // 2]))
sys.exit(0 if s[-1] <= 10 and len(errs) >= 200 else 1)
PY

#!/usr/bin/env bash
# Bar (issue 14 §5): 0 crashes when libFuzzer feeds arbitrary bytes to the parsers of what
# comes from outside: the configuration file (FuzzConfig), recordings (FuzzRecording), MQTT
# acknowledgement payloads (FuzzAcknowledgement) and IIO sysfs attribute text
# (FuzzIIOAttributes). The targets are the package in fuzz/, built with
# `--sanitize=fuzzer --sanitize=address` into fuzz/.build (10 minutes on the 2-core VM the
# first time; `swift build` and `swift test` of FallGuard never build it). Each target runs for
# the given time, one after the other, from fuzz/corpus/<target> (the seeds and what earlier
# runs found, which the unit tests replay in CI); new inputs go to bench/out/fuzz/<target>/corpus
# and a crash to bench/out/fuzz/<target>/crash-*. Prints per target: runs, executions a second,
# crashes, corpus size. To keep what a run found as regression tests:
#   fuzz/.build/release/FuzzX -merge=1 fuzz/corpus/<target> bench/out/fuzz/<target>/corpus
# One instance at a time: they share fuzz/.build. A fuzz/.build made with other flags than
# BUILD's below keeps its uninstrumented objects (swiftc skips an object whose IR did not
# change): remove it first. A `swift build` there by hand with another environment (this
# script sets SWIFT_BACKTRACE) makes the next run rebuild everything.
# Usage: bench/fuzz.sh [SECONDS-PER-TARGET (300)] [TARGET…]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
# A trap goes to libFuzzer and AddressSanitizer: Swift's own backtracer, reading the crashed
# process's memory, trips AddressSanitizer and hides the report.
export SWIFT_BACKTRACE=enable=no
SECONDS_EACH=${1:-300}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(config recording acknowledgement iio-attributes)

product() {
    case $1 in
        config) echo FuzzConfig ;;
        recording) echo FuzzRecording ;;
        acknowledgement) echo FuzzAcknowledgement ;;
        iio-attributes) echo FuzzIIOAttributes ;;
        *) echo "unknown target $1 (config, recording, acknowledgement, iio-attributes)" >&2; exit 64 ;;
    esac
}

# swiftc instruments a library module for coverage only when asked: without the second line
# libFuzzer sees the harness's two branches and none of the parser's.
BUILD=(swift build -c release --sanitize=fuzzer --sanitize=address
       -Xswiftc -sanitize-coverage=edge,trace-cmp,inline-8bit-counters,pc-table)
start=$(date +%s)
(cd fuzz && "${BUILD[@]}" 2>&1 | grep -E "error|Compiling Fuzz|Build complete" || true)
BIN=$(cd fuzz && "${BUILD[@]}" --show-bin-path)
echo "build: $(( $(date +%s) - start )) s"

total=0
rows=()
for t in "${TARGETS[@]}"; do
    p=$(product "$t")
    [ -x "$BIN/$p" ] || { echo "$BIN/$p was not built"; exit 1; }
    W=bench/out/fuzz/$t
    rm -rf "$W"; mkdir -p "$W/corpus"
    dict=()
    [ -f "fuzz/dict/$t.dict" ] && dict=(-dict="fuzz/dict/$t.dict")
    # -timeout: a single input taking 10 s is a hang, reported like a crash.
    "$BIN/$p" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$W/" "${dict[@]}" "$W/corpus" "fuzz/corpus/$t" >"$W/log" 2>&1 || true
    stat() { awk -v k="stat::$1:" '$1 == k {print $2}' "$W/log" | tail -1; }
    crashes=$(find "$W" -maxdepth 1 -name 'crash-*' -o -maxdepth 1 -name 'timeout-*' -o -maxdepth 1 -name 'oom-*' -o -maxdepth 1 -name 'leak-*' | wc -l)
    total=$((total + crashes))
    seeds=$(ls "fuzz/corpus/$t" | wc -l)
    found=$(ls "$W/corpus" | wc -l)
    rows+=("$(printf '%-16s %10s runs %8s exec/s %3s crashes   corpus %4s kept + %4s new   (%s s)' \
        "$t" "$(stat number_of_executed_units)" "$(stat average_exec_per_sec)" "$crashes" "$seeds" "$found" "$SECONDS_EACH")")
    echo "${rows[-1]}"
    if [ "$crashes" != 0 ]; then
        grep -m1 -B2 -A25 -E "ERROR: (libFuzzer|AddressSanitizer)|Fatal error|SUMMARY" "$W/log" || tail -30 "$W/log"
        ls "$W"/crash-* "$W"/timeout-* "$W"/oom-* "$W"/leak-* 2>/dev/null || true
    fi
done
echo
printf '%s\n' "${rows[@]}"
echo "crashes: $total (bar 0): $([ "$total" = 0 ] && echo MET || echo NOT MET)"
[ "$total" = 0 ]

#!/usr/bin/env bash
# Issue 35 (throughput): two fallguard-bench programs (a base and a change) compared on a shared
# machine. Absolute samples per second swing with the load, so the two run interleaved, ROUNDS
# times each, with the load average beside every run; the median of each and their ratio are
# printed. Then, load-independent, the instructions per sample of each detector's `process`
# (inclusive: the rules it calls; both detectors run through it) counted by valgrind's callgrind on a tenth of the folder's
# recordings (perf has no hardware counters on this machine).
# Usage: bench/throughput-ab.sh BASE NEW [DATA=../shared/datasets/sisfall-6axis-40hz-dev] [ROUNDS=5]
#   BASE, NEW: fallguard-bench programs (tools/build-release fallguard-bench; copy the base aside).
#   CALLGRIND=0 skips the instruction count.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
[ $# -ge 2 ] || { echo "usage: $0 BASE NEW [DATA] [ROUNDS]"; exit 64; }
BASE=$(realpath "$1"); NEW=$(realpath "$2")
DATA=${3:-../shared/datasets/sisfall-6axis-40hz-dev}
ROUNDS=${4:-5}
make_tmp
for r in $(seq "$ROUNDS"); do
    for which in base new; do
        prog=$BASE; [ $which = new ] && prog=$NEW
        load=$(cut -d' ' -f1 /proc/loadavg)
        "$prog" "$DATA" --seconds 2 > "$OUT/$which-$r.txt"
        echo "round $r $which (load $load): $(grep -E '^(multiphase|sixaxis|sum-abs) detector( \([^)]*\))?:' "$OUT/$which-$r.txt" \
            | sed -E 's/ detector( \([^)]*\))?: ([0-9.]+) million.*/ \2/' | tr '\n' ' ')"
    done
done
python3 - "$OUT" "$ROUNDS" <<'PY'
import re, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rates(which):
    r = {}
    for i in range(1, rounds + 1):
        for line in open(f"{out}/{which}-{i}.txt"):
            m = re.match(r"(multiphase|sixaxis|sum-abs) detector(?: \([^)]*\))?: ([0-9.]+) million", line)
            if m: r.setdefault(m.group(1), []).append(float(m.group(2)))
    return r
b, n = rates("base"), rates("new")
for k in ("multiphase", "sixaxis", "sum-abs"):
    mb, mn = statistics.median(b[k]), statistics.median(n[k])
    print(f"{k:11s} median million samples/s: base {mb:5.1f}  new {mn:5.1f}  ratio {mn / mb:4.2f}")
PY
[ "${CALLGRIND:-1}" = 0 ] && exit 0
# A tenth of the recordings (every tenth file), so that valgrind takes minutes, not hours.
mkdir -p "$OUT/tenth"
i=0
for f in "$DATA"/*/*.csv*; do
    i=$((i + 1)); [ $((i % 10)) = 0 ] || continue
    mkdir -p "$OUT/tenth/$(basename "$(dirname "$f")")"
    ln -s "$(realpath "$f")" "$OUT/tenth/$(basename "$(dirname "$f")")/"
done
for which in base new; do
    prog=$BASE; [ $which = new ] && prog=$NEW
    # valgrind 3.19 cannot read the DWARF 5 of these programs: count on a copy without it.
    objcopy --strip-debug "$prog" "$OUT/$which-bench"
    valgrind --tool=callgrind --callgrind-out-file="$OUT/$which.callgrind" "$OUT/$which-bench" "$OUT/tenth" --seconds 0.000001 \
        > "$OUT/$which-valgrind.txt" 2>&1
    # Every pass of both detectors goes through MultiphaseDetector.process (sixaxis wraps it):
    # its inclusive instructions over its calls are the instructions per sample.
    callgrind_annotate --inclusive=yes --tree=caller "$OUT/$which.callgrind" 2>/dev/null \
        | grep -B1 -E '\*  .*MultiphaseDetectorV7processyAA0A9SuspectedVSgAA18AccelerationSampleVF' | python3 -c '
import re, sys
text = sys.stdin.read()
calls = int(re.search(r"\(([0-9,]+)x\)", text).group(1).replace(",", ""))
ir = int(re.search(r"^([0-9,]+) .*\*  ", text, re.M).group(1).replace(",", ""))
print(f"'"$which"': MultiphaseDetector.process: {ir:,} instructions in {calls:,} calls: {ir / calls:.1f} per sample")'
done

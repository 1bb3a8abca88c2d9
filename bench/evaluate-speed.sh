#!/usr/bin/env bash
# Bar (issue 2): `fallguard evaluate` over the whole dev folder (2,830 files) in under 3 s.
# Prints the wall-clock time of 5 runs (release build) and their median.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/datasets/sisfall-40hz-dev}
tools/build-release fallguard >/dev/null
B=.build/release/fallguard
$B evaluate "$DATA" >/dev/null   # warm the page cache once
times=()
for i in 1 2 3 4 5; do
    s=$(date +%s.%N)
    $B evaluate "$DATA" --json >/tmp/fallguard-evaluate.json
    e=$(date +%s.%N)
    times+=("$(echo "$e - $s" | bc -l)")
done
sorted=$(printf '%s\n' "${times[@]}" | sort -n)
median=$(echo "$sorted" | sed -n 3p)
printf 'runs (s): %s\n' "$(echo $sorted | tr '\n' ' ')"
printf 'median: %.3f s over %s files (%s cores)\n' "$median" "$(find "$DATA" -name '*.csv' | wc -l)" "$(nproc)"
python3 -c "import json;d=json.load(open('/tmp/fallguard-evaluate.json'));print('scores: sensitivity %.2f %%, specificity %.2f %%'%(d['sensitivity'],d['specificity']))"
if (( $(echo "$median < 3" | bc -l) )); then echo "bar: < 3 s: MET"; else echo "bar: < 3 s: NOT MET"; exit 1; fi

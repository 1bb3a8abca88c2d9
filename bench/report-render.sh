#!/usr/bin/env bash
# Bar (issue 17, part 4): the report of the whole development folder renders in headless
# Chromium in under 5 s. Times `chromium --headless --dump-dom` on the page, which returns once
# the page has loaded and been laid out: browser start-up included (an upper bound), three
# runs, and checks that every plot is in the rendered DOM.
# Usage: bench/report-render.sh [DATASET=../shared/datasets/sisfall-40hz-dev]
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
build_release; make_tmp
DATASET=${1:-../shared/datasets/sisfall-40hz-dev}
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
[ -n "$CHROMIUM" ] || { echo "chromium is not installed (tools/setup-debian installs it)"; exit 77; }
start=$(date +%s.%N)
made=$("$B" report "$DATASET" --out "$OUT/report.html")
made_s=$(echo "$(date +%s.%N) - $start" | bc)
size=$(stat -c %s "$OUT/report.html")
plots=$(echo "$made" | sed -n 's/.*: \([0-9]*\) plots.*/\1/p')
worst=0
for i in 1 2 3; do
    t0=$(date +%s.%N)
    "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom "file://$OUT/report.html" > "$OUT/dom.html" 2>/dev/null
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    svgs=$(grep -o '<svg' "$OUT/dom.html" | wc -l)
    printf 'render %d: %.2f s, %d plots in the DOM\n' "$i" "$t" "$svgs"
    worst=$(echo "if ($t > $worst) $t else $worst" | bc)
    [ "$svgs" = "$plots" ] || { echo "NOT MET: $svgs plots rendered, $plots written"; exit 1; }
done
printf '%s\nreport: %d bytes, written in %.1f s; worst render %.2f s (limit 5): %s\n' "$made" "$size" "$made_s" "$worst" \
    "$(echo "$worst < 5" | bc | sed 's/1/MET/;s/0/NOT MET/')"

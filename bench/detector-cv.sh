#!/usr/bin/env bash
# Bars (issues 15 and 26), on the SisFall dev folder, leave one subject out (LOSO):
#   sensitivity >= 99.5 %, specificity >= 99.5 % (99.3 % before issue 26), specificity on the
#   older subjects' (SE*) ADLs >= 99.5 %. Daily living (hapt-dev-50hz): bench/daily-living.sh.
# Reported per population (SA* young, SE* older) and for the falls closest to an older person's
# (F10 forward fall while sitting down, F13 slumping forward from a chair), and per feature:
# each step adds one part of the detector and is cross-validated on its own grid, so the gain
# of each step is a held-out gain. Trials too short to judge (a decision still due when the
# recording ends) are counted apart.
#
# For each subject, the grid point with the best specificity among those with training
# sensitivity >= 99.5 % is chosen on the other subjects and applied to the held-out one.
# The research behind it, in Python (same steps plus look length, descent velocity and the
# simulated older faller): tools/detector-research/softlook.py (output in softlook_output.txt).
# Usage: bench/detector-cv.sh [DATA] [--python]   (--python also reruns softlook.py, ~1 min)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/datasets/sisfall-40hz-dev}
tools/build-release fallguard >/dev/null
B=.build/release/fallguard
# SA15/ holds D17_SE15_R*.csv: SA15's own D17 trials under a wrong name (FINDINGS.md), so SE15 is young.
POP=(--population 'young=SA*,SE15' --population 'older=SE*' --focus F10,F13)
out=/tmp/fallguard-cv
mkdir -p $out

# Steps 0-4 are the detector before issue 26 (no rotation, no descent), as they were measured then.
OLD="--set look-rotation=0 --set strong-free-fall=1.5"

step() {   # step N NAME [options…]: one cross-validation into $out/step-N.txt, one summary line
    local n=$1 name=$2; shift 2
    local file="$out/step-$n.txt"
    $B cross-validate "$DATA" "${POP[@]}" --min-sensitivity 99.5 "$@" > "$file"
    local held se f short
    held=$(grep '^Held out:' "$file" | sed -E 's/^Held out: //; s/, accuracy.*//')
    se=$(grep -E '^  older  ' "$file" | sed -E 's/.*specificity +([0-9.]+) % \(([0-9]+\/[0-9]+)\).*/\1 % (\2)/')
    f=$(grep -E '^  young F10\+F13' "$file" | sed -E 's/.*sensitivity +([0-9.]+) % \(([0-9]+\/[0-9]+)\).*/\1 % (\2)/')
    short=$(grep -E '^Too short' "$file" | sed -E 's/Too short to judge: ([0-9]+) trials.*/\1/' || true)
    printf '%s %-62s %s\n      SE ADL specificity %s, young F10+F13 sensitivity %s, too short %s\n' \
        "$n" "$name" "$held" "$se" "$f" "${short:-0}"
}

echo "Leave-one-subject-out on $DATA, per feature (each line: held-out figures of that step's grid)"
step 0 "before issue 15 (fast decision for impacts >= 1.6-1.7 g)" $OLD \
    --set soft-impact=16 --grid impact=1.6,1.65,1.7 --grid posture-change=40,50 --grid strong-impact=2.2,2.6
step 1 "+ long look for moderate impacts and short posture change" $OLD \
    --set soft-impact=1.65 --set calm-activity=0 \
    --grid impact=1.8,2.0,2.2 --grid look-posture-change=30,35,40 --grid look-stillness=0.06,0.08,0.1
step 2 "+ long look after soft impacts (soft-impact 1.3-1.5 g)" --set calm-activity=0 $OLD \
    --grid soft-impact=1.3,1.4,1.5 --grid impact=1.8,2.0,2.2 --grid look-posture-change=30,35,40 --grid look-stillness=0.06,0.08,0.1
step 3 "+ look length 5/6/8 s" --set calm-activity=0 $OLD \
    --grid soft-impact=1.3,1.4,1.5 --grid look-posture-change=30,35,40 --grid look=5,6,8
step 4 "+ calm start: 30 deg suffices after std|a| <= 0.05-0.15 g" $OLD \
    --grid soft-impact=1.3,1.4,1.5 --grid look-posture-change=35,40 --grid calm-activity=0,0.05,0.1,0.15
step 5 "+ rotation: a look only after the trunk turned look-rotation in half a second (issue 26)" \
    --grid look-rotation=0,45,50,55,60
step 6 "+ a strong impact with a short posture change needs a descent (strong-free-fall)" \
    --grid look-rotation=0,45,50,55,60 --grid strong-free-fall=0.8,0.85,1.5
step 7 "shipped defaults (no choice: in-sample figures)" --grid look=6
echo
echo "Step 6 (the whole detector) in full:"
sed -n '/^Subject/,$p' "$out/step-6.txt"
echo
echo "Shipped defaults, per population and activity:"
$B evaluate "$DATA" "${POP[@]}" | sed -n '1,/^Code/p' | sed '$d'
if [[ "${2:-}" == "--python" ]]; then
    python3 tools/detector-research/softlook.py | tee tools/detector-research/softlook_output.txt
fi

# The bar is on step 6: the whole detector, its rotation and descent cross-validated (the look
# settings as steps 1-3 chose them in 23 or 24 of 25 folds).
line=$(grep '^Held out:' "$out/step-6.txt")
sens=$(echo "$line" | sed -E 's/.*sensitivity ([0-9.]+) %.*/\1/')
spec=$(echo "$line" | sed -E 's/.*specificity ([0-9.]+) %.*/\1/')
se=$(grep -E '^  older  ' "$out/step-6.txt" | sed -E 's/.*specificity +([0-9.]+) %.*/\1/')
if (( $(echo "$sens >= 99.5 && $spec >= 99.5 && $se >= 99.5" | bc -l) )); then
    echo "bar: LOSO sensitivity $sens % >= 99.5, specificity $spec % >= 99.5, SE ADL specificity $se % >= 99.5: MET"
else
    echo "bar: LOSO sensitivity $sens % >= 99.5, specificity $spec % >= 99.5, SE ADL specificity $se % >= 99.5: NOT MET"; exit 1
fi

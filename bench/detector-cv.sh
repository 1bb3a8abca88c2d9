#!/usr/bin/env bash
# Bar (issue 2): on the SisFall dev folder, the default detector reaches sensitivity >= 99.0 %
# and specificity >= 98.0 % with parameters chosen by subject-wise cross-validation.
#
# Leave one subject out: for each subject, the grid point with the best specificity among
# those with training sensitivity >= 99.5 % is chosen on the other subjects and applied to
# the held-out one. The grid spans the default's neighbourhood in all five tuned settings.
# (The research behind the structure is in tools/detector-research/, which ran a 27,200-point
# grid in Python: 99.47 % / 99.18 % held out.)
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/datasets/sisfall-40hz-dev}
tools/build-release fallguard >/dev/null
B=.build/release/fallguard
$B cross-validate "$DATA" \
    --grid impact=1.5,1.55,1.6,1.65,1.7,1.75,1.8 \
    --grid posture-change=30,40,50 \
    --grid stillness=0.2,0.3,0.4 \
    --grid strong-impact=2.2,2.6,3.0 \
    --grid strong-posture-change=20,30 \
    --min-sensitivity 99.5 | tee /tmp/fallguard-cv.txt
echo
$B evaluate "$DATA" | sed -n 1,7p
held=$(grep '^Held out' /tmp/fallguard-cv.txt)
sens=$(echo "$held" | sed -E 's/.*sensitivity ([0-9.]+) %.*/\1/')
spec=$(echo "$held" | sed -E 's/.*specificity ([0-9.]+) %.*/\1/')
if (( $(echo "$sens >= 99.0 && $spec >= 98.0" | bc -l) )); then
    echo "bar: held-out sensitivity $sens % >= 99.0 and specificity $spec % >= 98.0: MET"
else
    echo "bar: held-out sensitivity $sens % >= 99.0 and specificity $spec % >= 98.0: NOT MET"; exit 1
fi

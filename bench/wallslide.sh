#!/usr/bin/env bash
# Issue 35, the faint sliding down a wall (FallAllD F35): does "how far the hip went down",
# measured by strapdown integration of the gyroscope and the accelerometer between two still
# periods (zero-velocity updates at both ends), separate it from sitting and lying down?
#   1. the method's check: every still-to-still movement of >= 15 deg per code on SisFall
#      (sitting down D07-D10 should drop ~0.4-0.5 m and rise as much), FallAllD, and HAPT's
#      labelled transitions (stand-to-sit ~ +0.4 m, sit-to-stand ~ -0.4 m);
#   2. the rule: the detector's soft candidates that end neither upright nor lying (1.4 g, still
#      <= 0.40 g, posture 20-60 deg), per code, how many trials a "dropped >= X m" rule fires on.
# Python only (numpy); ~2-10 min on a busy 2-core machine. Output: stdout and
# tools/detector-research/wallslide_output.txt. WALLSLIDE_CORRECT=0: without the tilt correction.
# Usage: bench/wallslide.sh [DATASETS_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
export DATASETS=$(cd "${1:-../shared/datasets}" && pwd)
cd tools/detector-research
python3 wallslide.py all D05,D06,D07,D08,D09,D10,D11,D12,D13,D14,D15,D16,D17,D19,F08,F09,F10,F11,F12,F13,F14,F15 | tee wallslide_output.txt

#!/usr/bin/env bash
# Bar (issue 2): the default detector alone processes >= 10 million samples per second on
# one core. Also reports the ring buffer and the resampler. Release build, one thread.
# Issue 35: both detectors (multiphase, sixaxis) >= 10 million samples per second; a second
# run on the six-axis folder feeds them samples that carry the gyroscope (SIXAXIS=0 skips it).
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/datasets/sisfall-40hz-dev}
tools/build-release fallguard-bench >/dev/null
.build/release/fallguard-bench "$DATA" --seconds 3
if [ "${SIXAXIS:-1}" != 0 ]; then
    .build/release/fallguard-bench "${DATA6:-../shared/datasets/sisfall-6axis-40hz-dev}" --seconds 3
fi

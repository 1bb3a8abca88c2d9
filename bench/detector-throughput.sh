#!/usr/bin/env bash
# Bar (issue 2): the default detector alone processes >= 10 million samples per second on
# one core. Also reports the ring buffer and the resampler. Release build, one thread.
set -euo pipefail
cd "$(dirname "$0")/.."
DATA=${1:-../shared/datasets/sisfall-40hz-dev}
tools/build-release fallguard-bench >/dev/null
.build/release/fallguard-bench "$DATA" --seconds 3

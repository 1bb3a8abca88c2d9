#!/usr/bin/env bash
# emulator-dumps.sh OUTDIR : the same dumps as the guest's (dump-attrs.py iio / gpio), taken
# on the HOST from the project's emulators, configured like the rig:
#   IIO:  tools/iio-emulator adxl345-direct (iio:device0) and mpu6050 (iio:device1,
#         trigger0), nested in the order the rig probes them;
#   GPIO: tools/gpio-emulator, one generic chip like the rig's gpio-sim chip: gpiochip0
#         "fallguard-sim", 32 lines, GPIO17/GPIO18/GPIO27 named, pull-down (gpio-sim's
#         default pull), released outputs go back to their pull (gpio-sim's free()).
# Writes OUTDIR/dump-iio.json and OUTDIR/dump-gpio.json. Needs root (the emulators'
# private mount namespace). Exit 77 when the emulators cannot run here.
set -euo pipefail
OUT=${1:?usage: emulator-dumps.sh OUTDIR}
RIG=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$RIG/../.." && pwd)
mkdir -p "$OUT"
REC=$REPO/Sources/FallGuardFieldTest/Resources/demo-fall.csv
tmp=$(mktemp -d /tmp/fg-emu-dump.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$REPO/tools/iio-emulator/iio-emu" --model adxl345-direct --recording "$REC" --loop --write-log "$tmp/adxl.csv" -- \
    "$REPO/tools/iio-emulator/iio-emu" --model mpu6050 --recording "$REC" --loop --write-log "$tmp/mpu.csv" -- \
    python3 "$RIG/dump-attrs.py" iio --emu-log "$tmp/adxl.csv" --emu-log "$tmp/mpu.csv" --out "$OUT/dump-iio.json"

names=$(python3 -c 'print(",".join({17: "GPIO17", 18: "GPIO18", 27: "GPIO27"}.get(i, "") for i in range(32)))')
"$REPO/tools/gpio-emulator/gpio-emu" --release-outputs input --chip gpiochip0,fallguard-sim,32 --line-names "$names" --pull down -- \
    python3 "$RIG/dump-attrs.py" gpio --chip /dev/gpiochip0 --drive emu --out "$OUT/dump-gpio.json"

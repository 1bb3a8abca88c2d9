#!/usr/bin/env bash
# Compiles deploy/overlays/fallguard-adxl345.dts with dtc (Debian's device-tree-compiler) as the
# Raspberry Pi kernel builds overlays, with no warning allowed, and checks the result: the
# adi,adxl345 node at 0x53 on i2c_arm, the optional interrupt fragment, the addr and interrupt
# parameters, and that deploy/config.txt loads the overlay by its file name.
# Usage: bench/dt-overlay.sh
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
src="$here/deploy/overlays/fallguard-adxl345.dts"
command -v dtc >/dev/null || { echo "dt-overlay: dtc not found (apt-get install device-tree-compiler; tools/setup-debian does)" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail=0
check() { if "${@:2}"; then echo "  ok   $1"; else echo "  FAIL $1"; fail=1; fi; }

echo "dt-overlay: $(dtc --version)"
dtc -@ -Wno-unit_address_vs_reg -I dts -O dtb -o "$work/fallguard-adxl345.dtbo" "$src" 2> "$work/warnings" || true
sed 's/^/  /' "$work/warnings"
check "compiles to fallguard-adxl345.dtbo" test -s "$work/fallguard-adxl345.dtbo"
check "no warnings" test ! -s "$work/warnings"
dtc -I dtb -O dts -o "$work/back.dts" "$work/fallguard-adxl345.dtbo" 2>/dev/null
back="$(cat "$work/back.dts")"
check "node compatible adi,adxl345" grep -q 'compatible = "adi,adxl345";' <<<"$back"
check "reg 0x53" grep -q 'reg = <0x53>;' <<<"$back"
check "fragment 0 active, interrupt fragment dormant" bash -c 'grep -q "__overlay__" <<<"$1" && grep -q "__dormant__" <<<"$1"' _ "$back"
check "targets i2c_arm (fixup)" grep -q 'i2c_arm = "/fragment@0:target:0' <<<"$back"
check "interrupt on gpio (fixup)" grep -q 'gpio = "/fragment@1/__dormant__/accelerometer@53:interrupt-parent:0"' <<<"$back"
check "parameters addr and interrupt" bash -c 'grep -q "addr = " <<<"$1" && grep -q "interrupt = " <<<"$1"' _ "$back"
check "config.txt loads it by name" grep -qx "dtoverlay=fallguard-adxl345" "$here/deploy/config.txt"
check "config.txt has the stock MPU6050 line" grep -q "^#dtoverlay=mpu6050,interrupt=4,addr=0x68" "$here/deploy/config.txt"
[ $fail = 0 ] && echo "dt-overlay: PASS" || echo "dt-overlay: FAIL"
exit $fail

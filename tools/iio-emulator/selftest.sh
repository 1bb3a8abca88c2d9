#!/usr/bin/env bash
# selftest.sh: check that the unmodified libiio 0.24 (iio_info, iio_attr, iio_readdev) sees and
# reads each emulated model like a device on a Raspberry Pi.
#
# Usage: tools/iio-emulator/selftest.sh [adxl345-direct|adxl345-buffered|mpu6050|compose ...]
# Exit: 0 all passed, 1 a check failed, 77 skipped (not root / no mount namespace / no libiio tools).
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EMU="$HERE/iio-emu"
CTL="$HERE/iio-emu-ctl"
CHECK="$HERE/check_capture.py"
DATA=/work/shared/datasets/sisfall-40hz-dev/SA01/F05_SA01_R04.csv

# ------------------------------------------------------------------ helpers (inner and outer)
FAILS=0
pass() { printf '  PASS %s\n' "$*"; }
fail() { printf '  FAIL %s\n' "$*"; FAILS=$((FAILS + 1)); }
check() {   # check "description" command...   (passes when the command succeeds)
    local what="$1"; shift
    if "$@"; then pass "$what"; else fail "$what"; fi
}
has() { grep -qF -- "$2" <<<"$1"; }                      # has "$text" "needle"
ctl() { "$CTL" "$IIOEMU_CONTROL" "$@"; }
ctlq() { "$CTL" "$IIOEMU_CONTROL" "$@" >/dev/null; }
status_field() { ctl status | tr ' ' '\n' | sed -n "s/^$1=//p"; }
is_int() { [[ "$1" =~ ^-?[0-9]+$ ]]; }
sysattr() { tr -d '\0' <"/sys/bus/iio/devices/$IIOEMU_DEVICE/$1"; }   # libiio writes "1\0"
capture_ok() {   # capture_ok "what" check_capture-args...
    local what="$1" msg rc; shift
    msg="$(python3 "$CHECK" "$@")"; rc=$?
    check "$what: $msg" test "$rc" = 0
}
settle() { sleep 0.1; }        # let the emulator apply a write (an inotify round trip)
stalled_read() {   # a buffered read during a stall gets nothing and libiio's refill times out
    timeout 10 iio_readdev -u local: -T 600 -b 4 -s 4 "$1" accel_x >"$TMPD/stall.bin" 2>"$TMPD/stall.err"
    check "stall is visible: refill times out ($(grep -o 'Unable to refill.*' "$TMPD/stall.err")), no data" \
        bash -c 'grep -q "Unable to refill buffer: Connection timed out" "$1" && ! [ -s "$2" ]' _ "$TMPD/stall.err" "$TMPD/stall.bin"
}

# ------------------------------------------------------------------ inner tests (inside iio-emu)
inner_adxl345_direct() {
    local info v1 v2 v3 raw
    info="$(iio_info -u local: 2>&1)"
    check "iio_info lists $IIOEMU_DEVICE: adxl345 (not buffer capable)" \
        grep -qE "^[[:space:]]+$IIOEMU_DEVICE: adxl345\$" <<<"$info"
    check "iio_info: channels accel_x/y/z, input, no scan index" \
        bash -c 'for c in x y z; do grep -qE "accel_$c:  \(input\)\$" <<<"$1" || exit 1; done' _ "$info"
    check "iio_info: scale value: 0.038300" has "$info" "scale value: 0.038300"
    check "iio_info: sampling_frequency value: 100.000000000 (IIO_VAL_INT_PLUS_NANO)" \
        has "$info" "sampling_frequency value: 100.000000000"
    check "iio_info: device attr sampling_frequency_available" \
        has "$info" "sampling_frequency_available value: 0.09765625 0.1953125 0.390625 0.78125 1.5625 3.125 6.25 12.5 25 50 100 200 400 800 1600 3200"
    check "iio_info: calibbias per channel" has "$info" "calibbias value: 0"
    check "iio_info: no trigger, no buffer" bash -c '! grep -q "buffer capable" <<<"$1" && grep -q "No trigger on this device" <<<"$1"' _ "$info"
    check "no /dev node for a direct-only device" test ! -e "/dev/$IIOEMU_DEVICE"

    raw="$(iio_attr -u local: -c adxl345 accel_x raw)"
    check "iio_attr -c adxl345 accel_x raw -> integer ($raw)" is_int "$raw"
    sleep 0.05
    check "that raw value was written by the emulator (write log)" \
        bash -c 'awk -F, -v v="$1" '"'"'$1=="sample" && $6==v {f=1} END {exit !f}'"'"' "$2"' _ "$raw" "$IIOEMU_LOG"
    v1="$(iio_attr -u local: -c adxl345 accel_z raw)"; sleep 0.05
    v2="$(iio_attr -u local: -c adxl345 accel_z raw)"; sleep 0.05
    v3="$(iio_attr -u local: -c adxl345 accel_z raw)"
    check "raw values change over time ($v1 $v2 $v3)" bash -c '[ "$1" != "$2" ] || [ "$2" != "$3" ]' _ "$v1" "$v2" "$v3"

    iio_attr -u local: -c adxl345 accel_x sampling_frequency 50 >/dev/null; settle
    v1="$(iio_attr -u local: -c adxl345 accel_x sampling_frequency)"
    check "write sampling_frequency 50 -> reads back 50.000000000 ($v1)" test "$v1" = "50.000000000"
    check "emulator rate follows (rate_hz=$(status_field rate_hz))" test "$(status_field rate_hz)" = 50
    iio_attr -u local: -c adxl345 accel_x sampling_frequency 40 >/dev/null; settle
    v1="$(iio_attr -u local: -c adxl345 accel_x sampling_frequency)"
    check "write 40 -> driver picks the power-of-two rate 25.000000000 ($v1)" test "$v1" = "25.000000000"
    iio_attr -u local: -c adxl345 accel_x sampling_frequency 100 >/dev/null; settle

    echo 1.0 > "/sys/bus/iio/devices/$IIOEMU_DEVICE/in_accel_scale"; settle
    check "write to read-only in_accel_scale is undone" test "$(sysattr in_accel_scale)" = "0.038300"
    iio_attr -u local: -c adxl345 accel_y calibbias 1000 >/dev/null; settle
    v1="$(iio_attr -u local: -c adxl345 accel_y calibbias)"
    check "calibbias 1000 -> 8-bit register: reads back -24 like the driver ($v1)" test "$v1" = "-24"
    iio_attr -u local: -c adxl345 accel_y calibbias 0 >/dev/null; settle

    check "ctl stall" ctlq stall
    sleep 0.05; v1="$(sysattr in_accel_x_raw)$(sysattr in_accel_y_raw)$(sysattr in_accel_z_raw)"
    local w1; w1="$(status_field written)"; sleep 0.3
    v2="$(sysattr in_accel_x_raw)$(sysattr in_accel_y_raw)$(sysattr in_accel_z_raw)"
    check "stall is visible: raw files frozen, nothing written" bash -c '[ "$1" = "$2" ] && [ "$3" = "$4" ]' _ "$v1" "$v2" "$w1" "$(status_field written)"
    ctl resume >/dev/null; sleep 0.1
    check "resume: samples written again" test "$(status_field written)" -gt "$w1"

    ctl garbage >/dev/null; sleep 0.1
    v1="$(iio_attr -u local: -c adxl345 accel_x raw 2>&1)"
    check "garbage: _raw holds non-numeric text ($v1)" bash -c '! [[ "$1" =~ ^-?[0-9]+$ ]]' _ "$v1"
    ctl normal >/dev/null; sleep 0.1
    check "normal: numeric again" is_int "$(sysattr in_accel_x_raw)"

    ctl stuck >/dev/null; sleep 0.05
    v1="$(sysattr in_accel_x_raw)$(sysattr in_accel_y_raw)$(sysattr in_accel_z_raw)"; sleep 0.2
    v2="$(sysattr in_accel_x_raw)$(sysattr in_accel_y_raw)$(sysattr in_accel_z_raw)"
    check "stuck: bit-identical readings while still written" test "$v1" = "$v2"
    ctl normal >/dev/null; ctl saturate >/dev/null; sleep 0.1
    v1="$(sysattr in_accel_x_raw)"
    check "saturate: full-scale value ($v1)" bash -c '[ "$1" = 4095 ] || [ "$1" = -4096 ]' _ "$v1"
    ctl normal >/dev/null

    check "ctl unplug" ctlq unplug
    check "unplug: device folder gone" test ! -e "/sys/bus/iio/devices/$IIOEMU_DEVICE"
    check "unplug: libiio no longer finds adxl345" bash -c '! iio_attr -u local: -c adxl345 accel_x raw >/dev/null 2>&1'
    check "ctl replug" ctlq replug
    sleep 0.05
    check "replug: libiio reads it again" is_int "$(iio_attr -u local: -c adxl345 accel_x raw)"
    check "replug: driver defaults again (100.000000000)" test "$(sysattr in_accel_sampling_frequency)" = "100.000000000"
    check "ctl now -> CLOCK_MONOTONIC ns" bash -c 'ctl_out="$("$1" "$2" now)"; [[ "$ctl_out" =~ ^ok\ [0-9]+$ ]]' _ "$CTL" "$IIOEMU_CONTROL"
    check "unknown command -> error reply" bash -c '! "$1" "$2" frobnicate >/dev/null' _ "$CTL" "$IIOEMU_CONTROL"
}

inner_adxl345_buffered() {
    local info out v1
    info="$(iio_info -u local: 2>&1)"
    check "iio_info lists $IIOEMU_DEVICE: adxl345 (buffer capable)" has "$info" "$IIOEMU_DEVICE: adxl345 (buffer capable)"
    check "iio_info: accel_x index 0, format le:s13/16>>0" has "$info" "accel_x:  (input, index: 0, format: le:s13/16>>0)"
    check "iio_info: accel_z index 2" has "$info" "accel_z:  (input, index: 2, format: le:s13/16>>0)"
    check "iio_info: buffer attributes data_available, direction" has "$info" "direction value: in"
    check "iio_info: no trigger (FIFO-driven)" has "$info" "No trigger on this device"
    check "/dev/$IIOEMU_DEVICE exists" test -p "/dev/$IIOEMU_DEVICE"
    check "sysfs: scan_elements and buffer0/ like a 6.x kernel" test -f "/sys/bus/iio/devices/$IIOEMU_DEVICE/buffer0/in_accel_x_en"

    out="$TMPD/adxl.bin"
    timeout 20 iio_readdev -u local: -T 0 -b 20 -s 100 adxl345 accel_x accel_y accel_z >"$out" 2>"$TMPD/adxl.err"
    check "iio_readdev -s 100 adxl345 accel_x accel_y accel_z (exit $?)" test -s "$out"
    capture_ok "capture == write log, byte for byte" --model adxl345-buffered --channels accel_x,accel_y,accel_z --bin "$out" --log "$IIOEMU_LOG" --count 100
    check "libiio fell back to read() (High-speed mode not enabled)" grep -q "High-speed mode not enabled" "$TMPD/adxl.err"
    check "buffer disabled again after iio_readdev" test "$(sysattr buffer/enable)" = 0

    iio_attr -u local: -c adxl345 accel_x sampling_frequency 50 >/dev/null; settle
    v1="$(iio_attr -u local: -c adxl345 accel_x sampling_frequency)"
    check "write sampling_frequency 50 -> 50.000000000 ($v1)" test "$v1" = "50.000000000"
    out="$TMPD/adxl50.bin"
    timeout 20 iio_readdev -u local: -T 0 -b 10 -s 30 adxl345 accel_z >"$out" 2>/dev/null
    capture_ok "capture of accel_z alone at 50 Hz matches" --model adxl345-buffered --channels accel_z --bin "$out" --log "$IIOEMU_LOG" --count 30

    ctl stall >/dev/null
    stalled_read adxl345
    ctl resume >/dev/null
    timeout 10 iio_readdev -u local: -T 2000 -b 4 -s 4 adxl345 accel_x >"$TMPD/r.bin" 2>/dev/null
    check "resume: buffered reads work again" test "$(stat -c %s "$TMPD/r.bin")" = 8
}

inner_mpu6050() {
    local info out v1 t0 t1
    info="$(iio_info -u local: 2>&1)"
    check "iio_info lists $IIOEMU_DEVICE: mpu6050 (buffer capable)" has "$info" "$IIOEMU_DEVICE: mpu6050 (buffer capable)"
    check "iio_info lists trigger0: mpu6050-dev${IIOEMU_DEVICE#iio:device}" has "$info" "trigger0: mpu6050-dev${IIOEMU_DEVICE#iio:device}"
    check "iio_info: current trigger set by the driver" has "$info" "Current trigger: trigger0(mpu6050-dev${IIOEMU_DEVICE#iio:device})"
    check "iio_info: accel_x index 0, format be:S16/16>>0" has "$info" "accel_x:  (input, index: 0, format: be:S16/16>>0)"
    check "iio_info: temp index 3, anglvel_x index 4" bash -c 'grep -qF "temp:  (input, index: 3, format: be:S16/16>>0)" <<<"$1" && grep -qF "anglvel_x:  (input, index: 4, format: be:S16/16>>0)" <<<"$1"' _ "$info"
    check "iio_info: timestamp index 7, le:S64/64>>0" has "$info" "timestamp:  (input, index: 7, format: le:S64/64>>0)"
    check "iio_info: accel scale 0.000598 and scale_available" has "$info" "scale_available value: 0.000598 0.001196 0.002392 0.004785"
    check "iio_info: mount_matrix identity" has "$info" "mount_matrix value: 1, 0, 0; 0, 1, 0; 0, 0, 1"
    check "iio_info: temp offset 12420, scale 2.941176" bash -c 'grep -qF "offset value: 12420" <<<"$1" && grep -qF "scale value: 2.941176" <<<"$1"' _ "$info"
    check "iio_info: sampling_frequency 50 (driver default), available 10 20 50 100 200 500" \
        bash -c 'grep -qF "sampling_frequency value: 50" <<<"$1" && grep -qF "sampling_frequency_available value: 10 20 50 100 200 500" <<<"$1"' _ "$info"
    check "iio_info: current_timestamp_clock realtime" has "$info" "current_timestamp_clock value: realtime"

    iio_attr -u local: -d mpu6050 sampling_frequency 40 >/dev/null; settle
    v1="$(iio_attr -u local: -d mpu6050 sampling_frequency)"
    check "write sampling_frequency 40 -> reads back 40 (\"%u\" like the driver) ($v1)" test "$v1" = 40
    check "emulator streams at 40 Hz (rate_hz=$(status_field rate_hz))" test "$(status_field rate_hz)" = 40
    iio_attr -u local: -d mpu6050 sampling_frequency 30 >/dev/null; settle
    check "30 -> divider 32: shows 30, chip runs at 30.303 Hz" bash -c '[ "$1" = 30 ] && [ "$2" = 30.303 ]' _ "$(sysattr sampling_frequency)" "$(status_field rate_hz | cut -c1-6)"
    echo 40.000000 > "/sys/bus/iio/devices/$IIOEMU_DEVICE/sampling_frequency"; settle
    check "\"40.000000\" rejected (kstrtoint: EINVAL), value kept" test "$(sysattr sampling_frequency)" = 30
    iio_attr -u local: -d mpu6050 sampling_frequency 40 >/dev/null; settle

    iio_attr -u local: -c mpu6050 accel_x scale 0.002392 >/dev/null; settle
    check "accel scale 0.002392 (+-8 g) accepted" test "$(sysattr in_accel_scale)" = 0.002392
    check "emulator converts with the new scale (scale=$(status_field scale))" test "$(status_field scale)" = 0.002392
    echo 0.5 > "/sys/bus/iio/devices/$IIOEMU_DEVICE/in_accel_scale"; settle
    check "accel scale 0.5 rejected (not in the table)" test "$(sysattr in_accel_scale)" = 0.002392
    iio_attr -u local: -c mpu6050 accel_x scale 0.000598 >/dev/null; settle

    out="$TMPD/mpu.bin"
    timeout 20 iio_readdev -u local: -T 0 -b 20 -s 100 mpu6050 accel_x accel_y accel_z timestamp >"$out" 2>"$TMPD/mpu.err"
    check "iio_readdev -s 100 mpu6050 accel_x accel_y accel_z timestamp" test -s "$out"
    capture_ok "capture == write log (be s16, pad, le s64 ts)" --model mpu6050 --channels accel_x,accel_y,accel_z,timestamp --bin "$out" --log "$IIOEMU_LOG" --count 100 --rate 40

    iio_attr -u local: -d mpu6050 current_timestamp_clock monotonic >/dev/null; settle
    t0="$(ctl now | cut -d' ' -f2)"
    out="$TMPD/mpu2.bin"
    timeout 20 iio_readdev -u local: -T 0 -t "mpu6050-dev${IIOEMU_DEVICE#iio:device}" -b 10 -s 20 mpu6050 accel_z timestamp anglvel_x temp >"$out" 2>/dev/null
    t1="$(ctl now | cut -d' ' -f2)"
    check "iio_readdev -t wrote trigger0/sampling_frequency, which real sysfs refuses: removed" \
        test ! -e /sys/bus/iio/devices/trigger0/sampling_frequency
    capture_ok "-t trigger, accel_z+temp+anglvel_x+timestamp" --model mpu6050 --channels accel_z,temp,anglvel_x,timestamp --bin "$out" --log "$IIOEMU_LOG" --count 20 --rate 40
    check "current_timestamp_clock monotonic: timestamps within the capture's CLOCK_MONOTONIC window" \
        python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(); ts=[struct.unpack_from("<q",d,i+8)[0] for i in range(0,len(d),16)]; sys.exit(not (int(sys.argv[2]) <= ts[0] and ts[-1] <= int(sys.argv[3])))' "$out" "$t0" "$t1"

    ctl stall >/dev/null
    stalled_read mpu6050
    ctl resume >/dev/null

    ctl unplug >/dev/null
    check "unplug: device folder, trigger0 and /dev node gone" \
        bash -c '! [ -e "/sys/bus/iio/devices/$1" ] && ! [ -e /sys/bus/iio/devices/trigger0 ] && ! [ -e "/dev/$1" ]' _ "$IIOEMU_DEVICE"
    check "unplug: iio_info finds no mpu6050" bash -c '! iio_info -u local: 2>/dev/null | grep -q mpu6050'
    ctl replug >/dev/null
    check "replug: back with driver defaults (sampling_frequency 50)" test "$(iio_attr -u local: -d mpu6050 sampling_frequency)" = 50
    timeout 10 iio_readdev -u local: -T 2000 -b 4 -s 4 mpu6050 accel_x >"$TMPD/r.bin" 2>"$TMPD/r.err"
    check "replug: buffered reads work again ($(stat -c %s "$TMPD/r.bin") bytes $(grep -v High-speed "$TMPD/r.err"))" test "$(stat -c %s "$TMPD/r.bin")" = 8
}

inner_compose() {
    # two emulators in one namespace (nested iio-emu): both devices visible to one libiio context
    local info
    info="$(iio_info -u local: 2>&1)"
    check "two devices in one context (adxl345 + mpu6050)" bash -c 'grep -qE "iio:device[0-9]+: adxl345" <<<"$1" && grep -qE "iio:device[0-9]+: mpu6050" <<<"$1"' _ "$info"
    check "both read through libiio" bash -c 'iio_attr -u local: -c adxl345 accel_x raw >/dev/null && iio_attr -u local: -c mpu6050 accel_x raw >/dev/null'
}

# ------------------------------------------------------------------ outer driver
if [ "${1:-}" = --inner ]; then
    name="$2"
    echo "  ($name: $IIOEMU_DEVICE, control $IIOEMU_CONTROL)"
    "inner_${name//-/_}"
    exit $((FAILS > 0))
fi

if [ "$(id -u)" != 0 ]; then
    echo "selftest: SKIP: needs root (mount namespace, tmpfs, mkfifo)" >&2
    exit 77
fi
for t in iio_info iio_attr iio_readdev python3; do
    if ! command -v "$t" >/dev/null; then echo "selftest: SKIP: $t not installed" >&2; exit 77; fi
done
if ! unshare -m --propagation private true 2>/dev/null; then
    echo "selftest: SKIP: cannot create a mount namespace here" >&2
    exit 77
fi

TMPD="$(mktemp -d /tmp/iioemu-selftest.XXXXXX)"
export TMPD
trap 'rm -rf "$TMPD"' EXIT
if [ -f "$DATA" ]; then REC="$DATA"; else
    REC="$TMPD/rec.csv"
    python3 -c 'import math
print("x_g,y_g,z_g")
for i in range(600):
    t=i/40; print("%.3f,%.3f,%.3f" % (0.05*math.sin(t), -1+0.3*math.sin(3*t), 0.1*math.cos(t)))' >"$REC"
fi

run_model() {   # run_model NAME MODEL [extra iio-emu args]
    local name="$1" model="$2"; shift 2
    local log="$TMPD/$name.log.csv" sock="$TMPD/$name.sock" rc
    echo "== $name ($model)"
    IIOEMU_LOG="$log" "$EMU" --model "$model" --recording "$REC" --start-delay 0.2 --loop \
        --control "$sock" --write-log "$log" "$@" -- "$HERE/selftest.sh" --inner "$name"
    rc=$?
    if [ "$rc" = 77 ]; then echo "selftest: SKIP ($name)"; exit 77; fi
    [ "$rc" = 0 ] || FAILS=$((FAILS + 1))
    check "$name: the write log ends with the stop event and no left-overs" \
        bash -c 'tail -1 "$1" | grep -q ",stop generated=" && ! ls /sys/bus/iio/devices 2>/dev/null | grep -q .' _ "$log"
}
export -f pass fail check has ctl ctlq status_field is_int sysattr settle stalled_read capture_ok
export CTL CHECK

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(adxl345-direct adxl345-buffered mpu6050 compose)
for w in "${want[@]}"; do
    case "$w" in
        adxl345-direct|adxl345-buffered|mpu6050) run_model "$w" "$w" ;;
        compose)
            echo "== compose (adxl345-direct + mpu6050 in one namespace)"
            IIOEMU_LOG=/dev/null "$EMU" --model adxl345-direct --recording "$REC" -- \
                "$EMU" --model mpu6050 --recording "$REC" --control "$TMPD/c.sock" -- \
                "$HERE/selftest.sh" --inner compose || FAILS=$((FAILS + 1)) ;;
        *) echo "unknown test $w" >&2; exit 2 ;;
    esac
done

if [ "$FAILS" -gt 0 ]; then
    echo "selftest: FAILED ($FAILS failing section(s) or check(s))"
    exit 1
fi
echo "selftest: all passed"

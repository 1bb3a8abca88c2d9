#!/usr/bin/env bash
# smoke.sh : plain checks run INSIDE the guest, after guest-setup.sh:
#   tools/kernel-rig/run-guest.sh 6.12 -- tools/kernel-rig/smoke.sh
# Lists the IIO devices, runs iio_info, writes known values into the ADXL345 and
# MPU6050 data registers through i2c-dev (i2c-stub) and reads them back through the
# drivers' _raw attributes, fires the MPU6050 interrupt, runs gpiodetect/gpioinfo/
# gpioset/gpioget on gpio-sim, and `fallguard devices` when a built binary exists.
# Prints "N passed, N failed" and exits non-zero on any failure.
set -uo pipefail
# shellcheck disable=SC1091
source /tmp/fg-rig.env
pass=0; failn=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; failn=$((failn + 1)); }
expect() { # expect WHAT GOT WANT
    if [[ $2 == "$3" ]]; then ok "$1 = $2"; else bad "$1 = '$2', expected '$3'"; fi
}
section() { echo; echo "=== $*"; }

section "ls /sys/bus/iio/devices/"
ls /sys/bus/iio/devices/
for d in /sys/bus/iio/devices/iio:device*; do echo "${d##*/}/name: $(cat "$d/name")"; done

section "iio_info -u local:"
iio_info -u local: 2>&1 | tee /tmp/iio_info.txt | head -n 80
if grep -q 'adxl345' /tmp/iio_info.txt; then ok "iio_info lists adxl345"; else bad "iio_info lists no adxl345"; fi

if [[ -n ${FG_IIO_ADXL345:-} ]]; then
    section "ADXL345 (${FG_IIO_ADXL345##*/}, i2c-$FG_I2C_BUS 0x53)"
    a=$FG_IIO_ADXL345
    for f in in_accel_scale in_accel_sampling_frequency sampling_frequency_available; do
        [[ -e $a/$f ]] && echo "$f: $(cat "$a/$f")"
    done
    ls "$a"
    # little-endian 16-bit data registers, 13 significant bits (full resolution)
    w16le() { i2cset -f -y "$FG_I2C_BUS" 0x53 "$1" $(($2 & 0xff)); i2cset -f -y "$FG_I2C_BUS" 0x53 $(($1 + 1)) $((($2 >> 8) & 0xff)); }
    w16le 0x32 0x0fff; w16le 0x34 0xf000; w16le 0x36 0x0100
    expect "adxl345 in_accel_x_raw (0x0fff)" "$(cat "$a/in_accel_x_raw")" 4095
    expect "adxl345 in_accel_y_raw (0xf000)" "$(cat "$a/in_accel_y_raw")" -4096
    expect "adxl345 in_accel_z_raw (0x0100)" "$(cat "$a/in_accel_z_raw")" 256
    w16le 0x32 0x1000; w16le 0x36 0xff00
    expect "adxl345 in_accel_x_raw (0x1000)" "$(cat "$a/in_accel_x_raw")" -4096
    expect "adxl345 in_accel_z_raw (0xff00)" "$(cat "$a/in_accel_z_raw")" -256
    echo 40 >"$a/in_accel_sampling_frequency" && echo "wrote 40 Hz, reads back $(cat "$a/in_accel_sampling_frequency")"
    echo 50 >"$a/in_accel_sampling_frequency"
    expect "adxl345 rate after writing 50" "$(cat "$a/in_accel_sampling_frequency")" 50.000000000
    # register 0x2c BW_RATE should now hold 0x09 (50 Hz)
    expect "adxl345 BW_RATE register" "$(i2cget -f -y "$FG_I2C_BUS" 0x53 0x2c)" 0x09
fi

if [[ -n ${FG_IIO_ADXL345:-} ]]; then
    section "ADXL345 unbind / bind"
    c=$(cat "$FG_RIG_SYSFS/adxl345_client")
    drv=/sys/bus/i2c/drivers/adxl345_i2c
    echo "$c" >"$drv/unbind"
    if grep -qx adxl345 /sys/bus/iio/devices/iio:device*/name 2>/dev/null; then bad "adxl345 still listed after unbind"; else ok "adxl345 gone after unbind of $c"; fi
    echo "$c" >"$drv/bind"
    a2=""
    for d in /sys/bus/iio/devices/iio:device*; do [[ $(cat "$d/name") == adxl345 ]] && a2=$d; done
    if [[ -n $a2 ]]; then
        ok "adxl345 back as ${a2##*/} after bind"
        expect "adxl345 in_accel_x_raw after rebind" "$(cat "$a2/in_accel_x_raw")" -4096
        FG_IIO_ADXL345=$a2
    else
        bad "adxl345 did not come back after bind"
    fi
fi

if [[ -n ${FG_IIO_MPU6050:-} ]]; then
    section "MPU6050 (${FG_IIO_MPU6050##*/}, i2c-$FG_I2C_BUS 0x68)"
    m=$FG_IIO_MPU6050
    for f in in_accel_scale in_accel_scale_available sampling_frequency sampling_frequency_available; do
        [[ -e $m/$f ]] && echo "$f: $(cat "$m/$f")"
    done
    ls "$m"
    # big-endian 16-bit data registers ACCEL_XOUT_H 0x3b ...
    w16be() { i2cset -f -y "$FG_I2C_BUS" 0x68 "$1" $((($2 >> 8) & 0xff)); i2cset -f -y "$FG_I2C_BUS" 0x68 $(($1 + 1)) $(($2 & 0xff)); }
    w16be 0x3b 0x1234; w16be 0x3d 0xfffe; w16be 0x3f 0x4000
    expect "mpu6050 in_accel_x_raw (0x1234)" "$(cat "$m/in_accel_x_raw")" 4660
    expect "mpu6050 in_accel_y_raw (0xfffe)" "$(cat "$m/in_accel_y_raw")" -2
    expect "mpu6050 in_accel_z_raw (0x4000)" "$(cat "$m/in_accel_z_raw")" 16384
    if [[ -d $m/buffer ]]; then
        ok "mpu6050 has buffer/ (interrupt $(cat "$FG_RIG_SYSFS/mpu6050_irq"))"
        for t in /sys/bus/iio/devices/trigger*; do echo "${t##*/}: $(cat "$t/name")"; done
        echo 1 >"$FG_RIG_SYSFS/fire_mpu6050"
        sleep 0.2
        expect "mpu6050 interrupts fired" "$(cat "$FG_RIG_SYSFS/fired_mpu6050")" 1
        grep -E 'mpu|adxl' /proc/interrupts || true
    else
        echo "mpu6050: no buffer/ (no interrupt given)"
    fi
fi

if [[ -n ${FG_GPIOCHIP:-} ]]; then
    section "gpio-sim ($FG_GPIOCHIP)"
    gpiodetect
    if gpiodetect | grep -q "^$FG_GPIOCHIP \[fallguard-sim\] (32 lines)"; then ok "gpiodetect shows $FG_GPIOCHIP"; else bad "gpiodetect does not show $FG_GPIOCHIP with 32 lines"; fi
    gpioinfo "$FG_GPIOCHIP" | head -n 5
    # an output driven by libgpiod is visible in sim_gpioN/value
    gpioset --mode=time --sec=1 "$FG_GPIOCHIP" 3=1 &
    sleep 0.5
    expect "sim_gpio3/value while gpioset drives 1" "$(cat "$FG_GPIOSIM_SYSFS/sim_gpio3/value")" 1
    wait
    # a pull set through sysfs is what gpioget reads (a button to ground would be pull-down)
    echo pull-up >"$FG_GPIOSIM_SYSFS/sim_gpio5/pull"
    expect "gpioget line 5 after pull-up" "$(gpioget "$FG_GPIOCHIP" 5)" 1
    echo pull-down >"$FG_GPIOSIM_SYSFS/sim_gpio5/pull"
    expect "gpioget line 5 after pull-down" "$(gpioget "$FG_GPIOCHIP" 5)" 0
fi

FG_BIN=${FALLGUARD_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/.build/debug/fallguard}
if [[ -x $FG_BIN ]]; then
    section "fallguard devices ($FG_BIN)"
    if "$FG_BIN" devices; then ok "fallguard devices exited 0"; else bad "fallguard devices exited $?"; fi
fi

echo
echo "smoke: $pass passed, $failn failed"
[[ $failn -eq 0 ]]

#!/usr/bin/env bash
# guest-setup.sh -- COMMAND... : runs INSIDE the guest booted by run-guest.sh.
# Loads i2c-stub, the helper module, the real IIO drivers, configfs and gpio-sim,
# creates one gpio-sim chip, writes what it made to /tmp/fg-rig.env (and exports it),
# then runs COMMAND and exits with its status.
#
# Environment (set by run-guest.sh):
#   FG_RIG_BUILD      folder with fg_i2c_devices.ko and gpio_sim.ko
#   FG_RIG_SENSORS    comma list of adxl345,mpu6050 (default both; "none" for neither)
#   FG_RIG_MPU_IRQ    1 (default): give the MPU6050 a fireable interrupt
#   FG_RIG_ADXL_IRQ   0 (default)
#   FG_RIG_GPIO_LINES number of gpio-sim lines (default 32; 0: no gpio-sim)
#   FG_RIG_QUIET      1: print only errors from the setup
set -euo pipefail

t_setup=$(cut -d' ' -f1 /proc/uptime)
say() { [[ ${FG_RIG_QUIET:-0} == 1 ]] || echo "guest: $*" >&2; }
fail() { echo "guest: error: $*" >&2; dmesg | tail -n 30 >&2; exit 125; }

[[ ${1:-} == -- ]] && shift
BUILD=${FG_RIG_BUILD:?FG_RIG_BUILD not set}
SENSORS=${FG_RIG_SENSORS:-adxl345,mpu6050}
MPU_IRQ=${FG_RIG_MPU_IRQ:-1}
ADXL_IRQ=${FG_RIG_ADXL_IRQ:-0}
LINES=${FG_RIG_GPIO_LINES:-32}
KREL=$(uname -r)

# always printed, quiet or not: run-guest.sh tells "booted, then overran its time" (a failure)
# from "never booted" (exit 90, a skip) by this line
echo "guest: kernel $KREL up after ${t_setup} s of guest uptime" >&2
[[ -e /lib/modules/$KREL/modules.dep ]] || fail "/lib/modules/$KREL has no modules.dep (virtme did not link the extracted modules)"

has() { [[ ,$SENSORS, == *,$1,* ]]; }
on_off() { [[ $1 == 1 ]] && echo 1 || echo 0; }

ENV=/tmp/fg-rig.env
: >"$ENV"
export_var() { export "$1=$2"; printf '%s=%q\n' "$1" "$2" >>"$ENV"; }

# ---- sensors: i2c-stub + helper + the real drivers -------------------------------
if [[ $SENSORS != none ]]; then
    addrs=()
    has adxl345 && addrs+=(0x53)
    has mpu6050 && addrs+=(0x68)
    [[ ${#addrs[@]} -gt 0 ]] || fail "FG_RIG_SENSORS='$SENSORS' names no known sensor"
    modprobe i2c-dev
    # the kernel's own i2c-stub, or the one build-modules.sh built (Debian's arm64 kernel has none)
    if [[ -f $BUILD/i2c-stub.ko ]]; then
        insmod "$BUILD/i2c-stub.ko" chip_addr="$(IFS=,; echo "${addrs[*]}")"
    else
        modprobe i2c-stub chip_addr="$(IFS=,; echo "${addrs[*]}")"
    fi
    bus=""
    for a in /sys/bus/i2c/devices/i2c-*; do
        [[ $(cat "$a/name") == "SMBus stub driver" ]] && bus=${a##*/i2c-}
    done
    [[ -n $bus ]] || fail "i2c-stub created no adapter"
    export_var FG_I2C_BUS "$bus"
    # i2c-stub starts with every register 0; preset the power-on values of a real chip
    # that the probes check or report (the rest of both register maps resets to 0):
    # ADXL345 DEVID 0x00=0xe5, BW_RATE 0x2c=0x0a (100 Hz); MPU6050 PWR_MGMT_1 0x6b=0x40
    # (sleep), WHO_AM_I 0x75=0x68.
    if has adxl345; then
        i2cset -y "$bus" 0x53 0x00 0xe5
        i2cset -y "$bus" 0x53 0x2c 0x0a
    fi
    if has mpu6050; then
        i2cset -y "$bus" 0x68 0x6b 0x40
        i2cset -y "$bus" 0x68 0x75 0x68
    fi
    insmod "$BUILD/fg_i2c_devices.ko" \
        adxl345="$(has adxl345 && echo 1 || echo 0)" mpu6050="$(has mpu6050 && echo 1 || echo 0)" \
        adxl345_irq="$(on_off "$ADXL_IRQ")" mpu6050_irq="$(on_off "$MPU_IRQ")"
    has adxl345 && modprobe adxl345_i2c
    has mpu6050 && modprobe inv-mpu6050-i2c
    for d in /sys/bus/iio/devices/iio:device*; do
        [[ -e $d/name ]] || continue
        n=$(cat "$d/name")
        export_var "FG_IIO_${n^^}" "$d"
        say "iio: ${d##*/} = $n"
    done
    if has adxl345; then [[ -n ${FG_IIO_ADXL345:-} ]] || fail "adxl345 did not probe"; fi
    if has mpu6050; then [[ -n ${FG_IIO_MPU6050:-} ]] || fail "mpu6050 did not probe"; fi
    export_var FG_RIG_SYSFS /sys/kernel/fg_i2c_devices
fi

# ---- gpio-sim -------------------------------------------------------------------
if [[ $LINES != 0 ]]; then
    modprobe configfs 2>/dev/null || true
    mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
    insmod "$BUILD/gpio_sim.ko"
    cfg=/sys/kernel/config/gpio-sim/fallguard
    mkdir "$cfg" "$cfg/bank0"
    echo "$LINES" >"$cfg/bank0/num_lines"
    echo fallguard-sim >"$cfg/bank0/label"
    # line names as on a Raspberry Pi (GPIO17 button, GPIO18 buzzer, GPIO27 LED)
    for i in 17 18 27; do
        (( i < LINES )) || continue
        mkdir "$cfg/bank0/line$i"
        echo "GPIO$i" >"$cfg/bank0/line$i/name"
    done
    echo 1 >"$cfg/live"
    chip=$(cat "$cfg/bank0/chip_name")
    dev=$(cat "$cfg/dev_name")
    export_var FG_GPIOCHIP "$chip"
    export_var FG_GPIOSIM_SYSFS "/sys/devices/platform/$dev/$chip"
    say "gpio-sim: $chip ($dev, $LINES lines)"
fi

t_ready=$(cut -d' ' -f1 /proc/uptime)
say "rig ready after ${t_ready} s of guest uptime (setup took $(awk "BEGIN{print $t_ready-$t_setup}") s)"
[[ $# -gt 0 ]] || set -- true
set +e
"$@"
status=$?
set -e
t_end=$(cut -d' ' -f1 /proc/uptime)
# run-guest.sh reads this line to split boot time from command time
echo "guest: command exited $status after $(awk "BEGIN{print $t_end-$t_ready}") s; kernel uptime at setup ${t_setup} s, rig ready ${t_ready} s; guest-side total $(awk "BEGIN{print $t_end-$t_setup}") s" >&2
exit "$status"

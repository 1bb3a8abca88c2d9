#!/usr/bin/env bash
# Checks udev/99-fallguard.rules with the real udev (udevadm test) against fake IIO and GPIO
# devices, in a private mount namespace: nothing on the host changes (its /dev, /run, /etc/group,
# rules folders and /sys/devices/platform are hidden behind tmpfs and bind mounts).
#
# udev 252 (Debian 12) has no `udevadm verify` (added in 254); `udevadm test` parses the rules
# file (reporting any syntax error with its line) and applies it to a device.
# Checks: no parse warnings; the accelerometer gets group fallguard, mode 0660, the stable
# links, and its RUN program really makes exactly the written attributes group-writable; the
# header's GPIO chip goes to group fallguard alone, also where a gpio group exists (Raspberry
# Pi OS, whose desktop user is in it), and gets /dev/fallguard/gpiochip; another GPIO chip and
# other IIO devices are left alone; /dev/gpiomem becomes root-only.
# Usage: bench/udev-rules-check.sh        (root; exit 0 pass, 1 fail, 77 cannot run here)
set -euo pipefail
# The files made below get the modes a fresh shell gives them, whatever the caller's umask.
umask 022
here="$(cd "$(dirname "$0")/.." && pwd)"
rules="$here/udev/99-fallguard.rules"

if [ "${1:-}" != --inside ]; then
    command -v udevadm >/dev/null || { echo "udev-rules-check: udevadm not found (apt-get install udev; tools/setup-debian does)" >&2; exit 1; }
    [ "$(id -u)" = 0 ] || { echo "udev-rules-check: needs root for a private mount namespace" >&2; exit 77; }
    unshare -m --propagation private true 2>/dev/null || { echo "udev-rules-check: cannot create a mount namespace here" >&2; exit 77; }
    fail=0
    for variant in with-gpio-group without-gpio-group; do
        unshare -m --propagation private -- "$0" --inside "$variant" || fail=1
    done
    [ $fail = 0 ] && echo "udev-rules-check: PASS" || echo "udev-rules-check: FAIL"
    exit $fail
fi

variant="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Private views of everything udevadm test reads or writes.
mount -t tmpfs fg-dev /dev
mknod -m 0666 /dev/null c 1 3
mount -t tmpfs fg-run /run
mount -t tmpfs fg-rules /etc/udev/rules.d
for d in /usr/lib/udev/rules.d /lib/udev/rules.d; do
    [ -d "$d" ] && ! mountpoint -q "$d" && mount -t tmpfs fg-rules "$d"
done
cp "$rules" /etc/udev/rules.d/
cp /etc/group "$work/group"
echo "fallguard:x:64990:" >> "$work/group"
[ "$variant" = with-gpio-group ] && echo "gpio:x:64991:" >> "$work/group"
grep -v '^gpio:' "$work/group" > "$work/group.1" || true
[ "$variant" = with-gpio-group ] && cp "$work/group" "$work/group.1"
mount --bind "$work/group.1" /etc/group
mount -t tmpfs fg-platform /sys/devices/platform
mount -t tmpfs fg-bus /sys/bus
mkdir -p /sys/bus/iio/devices /sys/bus/gpio/devices /sys/bus/platform/drivers/pinctrl-bcm2835 /sys/bus/misc

# A fake ADXL345 on I2C1 with the attributes the bridge writes (and one it must not touch).
make_iio() {  # name, index, parent
    local d="/sys/devices/platform/soc/$3/iio:device$2"
    mkdir -p "$d/buffer" "$d/scan_elements" "$d/trigger"
    ln -s /sys/bus/iio "$d/subsystem"
    printf 'MAJOR=250\nMINOR=%s\nDEVNAME=iio:device%s\nDEVTYPE=iio_device\n' "$2" "$2" > "$d/uevent"
    echo "$1" > "$d/name"
    for f in sampling_frequency in_accel_scale current_timestamp_clock buffer/enable buffer/length \
             buffer/watermark scan_elements/in_accel_x_en scan_elements/in_accel_y_en \
             scan_elements/in_accel_z_en scan_elements/in_timestamp_en trigger/current_trigger \
             in_accel_x_raw scan_elements/in_accel_x_type; do
        echo 0 > "$d/$f"; chmod 0644 "$d/$f"
    done
    echo "$d"
}
accel="$(make_iio adxl345 0 fe804000.i2c/i2c-1/1-0053)"
other="$(make_iio bmp280 1 fe804000.i2c/i2c-1/1-0077)"
chip=/sys/devices/platform/soc/fe200000.gpio/gpiochip0
mkdir -p "$chip"
touch /sys/devices/platform/soc/uevent /sys/devices/platform/soc/fe200000.gpio/uevent
ln -s /sys/bus/gpio "$chip/subsystem"
ln -s /sys/bus/platform/drivers/pinctrl-bcm2835 /sys/devices/platform/soc/fe200000.gpio/driver
printf 'MAJOR=254\nMINOR=0\nDEVNAME=gpiochip0\n' > "$chip/uevent"
# The firmware's GPIO expander (not the header) and the register window.
expander=/sys/devices/platform/soc/soc:firmware/soc:firmware:gpio/gpiochip1
mkdir -p "$expander"
ln -s /sys/bus/gpio "$expander/subsystem"
printf 'MAJOR=254\nMINOR=1\nDEVNAME=gpiochip1\n' > "$expander/uevent"
gpiomem=/sys/devices/platform/soc/fe200000.gpiomem/misc/gpiomem
mkdir -p "$gpiomem"
ln -s /sys/bus/misc "$gpiomem/subsystem"
printf 'MAJOR=10\nMINOR=125\nDEVNAME=gpiomem\n' > "$gpiomem/uevent"

fail=0
check() {  # description, command...
    if "${@:2}"; then echo "  ok   $1"; else echo "  FAIL $1"; fail=1; fi
}
run_test() { SYSTEMD_DEVICE_VERIFY_SYSFS=0 udevadm test --action=add "$1" 2>&1; }

echo "[$variant]"
out="$(run_test "$accel")"
check "rules parse without warnings" bash -c '! grep -E "99-fallguard.rules:[0-9]+ " <<<"$1" | grep -vE " (GROUP|MODE|LINK|RUN|OWNER) "' _ "$out"
check "accelerometer: group fallguard" grep -q "99-fallguard.rules:[0-9]* GROUP 64990" <<<"$out"
check "accelerometer: mode 0660" grep -q "99-fallguard.rules:[0-9]* MODE 0660" <<<"$out"
check "accelerometer: /dev/fallguard/accel" grep -q "LINK 'fallguard/accel'" <<<"$out"
check "accelerometer: /dev/fallguard/adxl345" grep -q "LINK 'fallguard/adxl345'" <<<"$out"
# Run the RUN program udev would run, on the fake attributes.
cmd="$(sed -n "s/^run: '\(.*\)'$/\1/p" <<<"$out")"
check "accelerometer: one RUN program" test -n "$cmd"
bash -c "$cmd"
for f in sampling_frequency in_accel_scale current_timestamp_clock buffer/enable buffer/length buffer/watermark \
         scan_elements/in_accel_x_en scan_elements/in_timestamp_en trigger/current_trigger; do
    check "attribute $f: fallguard, group-writable" test "$(stat -c '%G %A' "$accel/$f")" = "fallguard -rw-rw-r--"
done
for f in in_accel_x_raw scan_elements/in_accel_x_type uevent name; do
    check "attribute $f: untouched" test "$(stat -c '%G %A' "$accel/$f")" = "root -rw-r--r--"
done
out="$(run_test "$other")"
check "other IIO device (bmp280): no rule applies" bash -c '! grep -q "99-fallguard.rules:[0-9]" <<<"$1"' _ "$out"
out="$(run_test "$chip")"
check "header gpiochip: group fallguard" grep -q "99-fallguard.rules:[0-9]* GROUP 64990" <<<"$out"
check "header gpiochip: not group gpio" bash -c '! grep -qE "GROUP gpio" <<<"$1"' _ "$out"
check "header gpiochip: mode 0660" grep -q "99-fallguard.rules:[0-9]* MODE 0660" <<<"$out"
check "header gpiochip: /dev/fallguard/gpiochip" grep -q "LINK 'fallguard/gpiochip'" <<<"$out"
out="$(run_test "$expander")"
check "other gpiochip: no rule applies" bash -c '! grep -q "99-fallguard.rules:[0-9]" <<<"$1"' _ "$out"
out="$(run_test "$gpiomem")"
check "gpiomem: group root" grep -qE "99-fallguard.rules:[0-9]+ GROUP (0|root)" <<<"$out"
check "gpiomem: mode 0600" grep -q "99-fallguard.rules:[0-9]* MODE 0600" <<<"$out"
exit $fail

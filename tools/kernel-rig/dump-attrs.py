#!/usr/bin/env python3
"""Dumps what a device looks like to a program, as JSON, so that the real drivers (in the
guest) and the project's emulators (on the host) can be compared with diff-dumps.py.

    dump-attrs.py iio  [--emu-log FILE]... --out iio.json
    dump-attrs.py gpio --chip /dev/gpiochipN --drive sim:SYSFS_DIR|emu --out gpio.json

iio: for every /sys/bus/iio/devices/iio:deviceN and triggerN: every regular file below it
  (buffer/, buffer0/, scan_elements/, trigger/ included; power/ and symlinks not), with its
  permission (r, w) and its value or the errno of the read; then a fixed list of writes per
  device (PROBES: rates, scales, clocks, calibbias, buffer set-up, writes while the buffer is
  enabled), each with the errno the write returned (or 0) and what the attribute reads back
  afterwards. Values written are restored. Against the emulator (regular files, which cannot
  return an error to the writer) the errno is the one the emulator's write log says the
  kernel would return (`--emu-log`, one per emulated device), and read-backs wait 0.15 s
  for the emulator to apply the write.
gpio: GPIO character device probes with the kernel uAPI (v1 and v2 ioctls, as libgpiod 1.6
  and 2.x use them): chip info, line info of some lines, request validation errnos, values
  of outputs as the simulated hardware sees them, inputs driven from outside, edge events
  (ids, offsets, seqno), active-low, release on close. The outside world is gpio-sim's
  sysfs (`sim:DIR`: value, pull) or the GPIO emulator's control socket (`emu`).
"""
import argparse
import errno
import fcntl
import glob
import json
import os
import re
import select
import socket
import stat
import struct
import sys
import time

# ---------------------------------------------------------------------------------- IIO

PROBES = {
    "adxl345": [
        ("in_accel_sampling_frequency", ["40", "50", "12.5", "1", "0.05", "3200", "6400", "abc", "-1", "100"]),
        ("in_accel_scale", ["0.038300", "1", "abc"]),
        ("in_accel_x_calibbias", ["1000", "-5", "0"]),
    ],
    "mpu6050": [
        ("sampling_frequency", ["40", "1000", "4", "3", "1001", "40.000000", "abc", "100", "50"]),
        ("in_accel_scale", ["0.004785", "0.001196", "0.5", "0.0006", "abc", "0.000598"]),
        ("in_anglvel_scale", ["0.000133090", "1", "0.001064724"]),
        ("in_anglvel_x_calibbias", ["100", "-5", "0"]),
        ("current_timestamp_clock", ["monotonic", "bogus", "boottime", "realtime"]),
        ("buffer/length", ["4", "1", "0", "64"]),
        ("buffer/watermark", ["2", "0", "1000", "1"]),
        ("scan_elements/in_accel_x_en", ["2", "abc", "0"]),
        # buffer life cycle: nothing enabled -> EINVAL; then accel_x + timestamp
        ("buffer/enable", ["1"]),
        ("scan_elements/in_accel_x_en", ["1"]),
        ("scan_elements/in_timestamp_en", ["1"]),
        # the gyroscope in the same scan (issue 35): accel_x, anglvel_z, timestamp
        ("scan_elements/in_anglvel_z_en", ["1"]),
        ("buffer/enable", ["1"]),
        ("@read", ["buffer/enable", "in_accel_x_raw", "scan_elements/in_accel_x_en", "scan_elements/in_anglvel_z_en"]),
        ("in_anglvel_scale", ["0.000266181"]),
        ("sampling_frequency", ["40"]),
        ("in_accel_scale", ["0.004785"]),
        ("buffer/length", ["8"]),
        ("scan_elements/in_accel_y_en", ["1"]),
        ("current_timestamp_clock", ["monotonic"]),
        ("buffer/enable", ["0"]),
        ("scan_elements/in_accel_x_en", ["0"]),
        ("scan_elements/in_timestamp_en", ["0"]),
        ("scan_elements/in_anglvel_z_en", ["0"]),
        ("trigger/current_trigger", ["bogus", "", "@trigger"]),
    ],
}


class EmuLogs:
    """The emulators' write logs: 'write ATTR=... rejected EXXX' events."""

    def __init__(self, paths):
        self.files = [open(p, errors="replace") for p in paths]
        for f in self.files:
            f.seek(0, os.SEEK_END)

    def since(self):
        out = []
        for f in self.files:
            out += [l for l in f.read().splitlines() if l.startswith("event,")]
        return out


def read_attr(path):
    try:
        with open(path, "rb") as f:
            v = f.read().decode(errors="replace")
        # one trailing newline is the format; anything else (a NUL byte...) is kept
        return {"value": v[:-1] if v.endswith("\n") else v}
    except OSError as e:
        return {"errno": errno.errorcode.get(e.errno, str(e.errno))}


def write_attr(path, value, logs):
    """errno name or 0."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)   # as echo and libiio (fopen "w"); sysfs ignores O_TRUNC
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    try:
        os.write(fd, value.encode() + b"\n")
        code = 0
    except OSError as e:
        code = errno.errorcode.get(e.errno, str(e.errno))
    finally:
        os.close(fd)
    if logs is not None:
        time.sleep(0.15)   # inotify, the emulator's 15 ms quiet time, its rewrite
        rel = os.path.relpath(path, os.path.dirname(path))
        for line in logs.since():
            m = re.search(r"write (\S+?)=.* rejected (E[A-Z]+)", line)
            if m and m.group(1).endswith(rel):
                code = m.group(2)
    return code


def tree(d):
    out = {}
    for root, dirs, files in os.walk(d, followlinks=False):
        rel = os.path.relpath(root, d)
        if rel.split("/")[0] in ("power", "subsystem", "driver", "of_node", "firmware_node", "supplier", "consumer"):
            dirs[:] = []
            continue
        dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(root, x))]
        for f in files:
            p = os.path.join(root, f)
            if os.path.islink(p):
                continue
            st = os.stat(p)
            key = f if rel == "." else f"{rel}/{f}"
            perm = ("r" if st.st_mode & stat.S_IRUSR else "-") + ("w" if st.st_mode & stat.S_IWUSR else "-")
            entry = {"perm": perm}
            if st.st_mode & stat.S_IRUSR:
                entry.update(read_attr(p))
            out[key] = entry
    return out


def dump_iio(a):
    logs = EmuLogs(a.emu_log) if a.emu_log else None
    base = "/sys/bus/iio/devices"
    result = {"kind": "iio", "source": "emulator" if logs else "kernel " + os.uname().release, "devices": {}}
    names = {}
    for d in sorted(glob.glob(base + "/iio:device*")) + sorted(glob.glob(base + "/trigger*")):
        name = read_attr(d + "/name").get("value", "?")
        names[os.path.basename(d)] = name
    for d in sorted(glob.glob(base + "/iio:device*")) + sorted(glob.glob(base + "/trigger*")):
        dev = os.path.basename(d)
        name = names[dev]
        entry = {"sysfs": dev, "name": name, "attributes": tree(d), "writes": []}
        for attr, values in PROBES.get(name, []) if dev.startswith("iio:") else []:
            if attr == "@read":
                for r in values:
                    entry["writes"].append({"read": r, **read_attr(f"{d}/{r}")})
                continue
            p = f"{d}/{attr}"
            if not os.path.exists(p):
                entry["writes"].append({"attribute": attr, "missing": True})
                continue
            before = read_attr(p).get("value")
            for v in values:
                if v == "@trigger":
                    v = next((n for k, n in names.items() if k.startswith("trigger") and n.startswith(name)), "")
                code = write_attr(p, v, logs)
                entry["writes"].append({"attribute": attr, "wrote": v, "errno": code, "reads": read_attr(p)})
            if before is not None and attr not in ("buffer/enable",) and len(values) > 1:
                write_attr(p, before, logs)
        result["devices"][f"{dev}:{name}"] = entry
    return result


# --------------------------------------------------------------------------------- GPIO

def iowr(nr, size):
    return (3 << 30) | (size << 16) | (0xB4 << 8) | nr


def ior(nr, size):
    return (2 << 30) | (size << 16) | (0xB4 << 8) | nr


V2_INFO_SIZE, V2_REQ_SIZE, V2_CONFIG_SIZE, V2_VALUES_SIZE = 256, 592, 272, 16
CHIPINFO = ior(0x01, 68)
V2_GET_LINEINFO = iowr(0x05, V2_INFO_SIZE)
V2_GET_LINE = iowr(0x07, V2_REQ_SIZE)
V2_SET_CONFIG = iowr(0x0D, V2_CONFIG_SIZE)
V2_GET_VALUES = iowr(0x0E, V2_VALUES_SIZE)
V2_SET_VALUES = iowr(0x0F, V2_VALUES_SIZE)
V1_GET_LINEINFO = iowr(0x02, 72)
V1_GET_LINEHANDLE = iowr(0x03, 364)
V1_GET_LINEEVENT = iowr(0x04, 48)
V1_HANDLE_GET = iowr(0x08, 64)
V1_HANDLE_SET = iowr(0x09, 64)

USED, ACTIVE_LOW, INPUT, OUTPUT = 1, 2, 4, 8
RISING, FALLING, OPEN_DRAIN, OPEN_SOURCE = 16, 32, 64, 128
PULL_UP, PULL_DOWN, BIAS_DISABLED, CLOCK_REALTIME, CLOCK_HTE = 256, 512, 1024, 2048, 4096
ATTR_FLAGS, ATTR_OUTPUT_VALUES, ATTR_DEBOUNCE = 1, 2, 3
# v1 handle flags
H_INPUT, H_OUTPUT, H_ACTIVE_LOW, H_OPEN_DRAIN, H_OPEN_SOURCE = 1, 2, 4, 8, 16
H_BIAS_PULL_UP, H_BIAS_PULL_DOWN, H_BIAS_DISABLE = 32, 64, 128
E_RISING, E_FALLING = 1, 2


def v2_config(flags, attrs=()):
    b = struct.pack("=QI5I", flags, len(attrs), 0, 0, 0, 0, 0)
    for aid, val, mask in attrs:
        b += struct.pack("=IIQQ", aid, 0, val, mask)
    return b + b"\0" * (V2_CONFIG_SIZE - len(b))


def v2_request(chip, offsets, flags, attrs=(), consumer=b"fg-dump", bufsize=0):
    offs = list(offsets) + [0] * (64 - len(offsets))
    b = struct.pack("=64I32s", *offs, consumer) + v2_config(flags, attrs)
    b += struct.pack("=II5Ii", len(offsets), bufsize, 0, 0, 0, 0, 0, 0)
    buf = bytearray(b)
    fcntl.ioctl(chip, V2_GET_LINE, buf)
    return struct.unpack_from("=i", buf, V2_REQ_SIZE - 4)[0]


def v2_lineinfo(chip, offset):
    buf = bytearray(V2_INFO_SIZE)
    struct.pack_into("=I", buf, 64, offset)
    fcntl.ioctl(chip, V2_GET_LINEINFO, buf)
    name, consumer, off, nattrs, flags = struct.unpack_from("=32s32sIIQ", buf)
    attrs = [list(struct.unpack_from("=IIQ", buf, 80 + 16 * i)) for i in range(nattrs)]
    return {"name": name.split(b"\0")[0].decode(), "consumer": consumer.split(b"\0")[0].decode(),
            "flags": flag_names(flags), "attrs": attrs}


def flag_names(f):
    names = ["used", "active-low", "input", "output", "rising", "falling", "open-drain", "open-source",
             "pull-up", "pull-down", "bias-disabled", "realtime", "hte"]
    return [n for i, n in enumerate(names) if f & (1 << i)]


def v2_get(fd, mask):
    buf = bytearray(struct.pack("=QQ", 0, mask))
    fcntl.ioctl(fd, V2_GET_VALUES, buf)
    return struct.unpack("=QQ", buf)[0]


def v2_set(fd, bits, mask):
    fcntl.ioctl(fd, V2_SET_VALUES, bytearray(struct.pack("=QQ", bits, mask)))


def v1_handle(chip, offsets, flags, defaults=(), consumer=b"fg-dump"):
    offs = list(offsets) + [0] * (64 - len(offsets))
    dv = list(defaults) + [0] * (64 - len(defaults))
    b = struct.pack("=64IIx64B32sIi".replace("x", ""), *offs, flags, *dv, consumer, len(offsets), 0)
    buf = bytearray(b)
    fcntl.ioctl(chip, V1_GET_LINEHANDLE, buf)
    return struct.unpack_from("=i", buf, len(buf) - 4)[0]


def v1_event(chip, offset, hflags, eflags, consumer=b"fg-dump"):
    buf = bytearray(struct.pack("=III32si", offset, hflags, eflags, consumer, 0))
    fcntl.ioctl(chip, V1_GET_LINEEVENT, buf)
    return struct.unpack_from("=i", buf, 44)[0]


def v1_get(fd):
    buf = bytearray(64)
    fcntl.ioctl(fd, V1_HANDLE_GET, buf)
    return list(buf[:2])


def v1_set(fd, values):
    fcntl.ioctl(fd, V1_HANDLE_SET, bytearray(bytes(values) + bytes(64 - len(values))))


def errno_of(fn, *a, **k):
    try:
        r = fn(*a, **k)
        if isinstance(r, int) and r > 2:
            os.close(r)
        return 0
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))


def read_events(fd, size, fmt, timeout=1.0):
    out = []
    while select.select([fd], [], [], timeout)[0]:
        data = os.read(fd, size * 16)
        if not data:
            break
        for i in range(0, len(data) - size + 1, size):
            out.append(struct.unpack_from(fmt, data, i))
        timeout = 0.1
    return out


class Sim:
    """gpio-sim: sim_gpioN/{value,pull}."""

    def __init__(self, d):
        self.d = d

    def level(self, off):
        return int(open(f"{self.d}/sim_gpio{off}/value").read())

    def drive(self, off, v):
        with open(f"{self.d}/sim_gpio{off}/pull", "w") as f:
            f.write("pull-up" if v else "pull-down")
        time.sleep(0.05)


class Emu:
    """The GPIO emulator's control socket."""

    def ctl(self, cmd):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(os.environ["FALLGUARD_GPIO_CONTROL"])
        s.sendall((cmd + "\n").encode())
        r = s.makefile("rb").readline().decode().strip()
        s.close()
        return r

    def level(self, off):
        m = re.search(r"level=(\d)", self.ctl(f"get {off}"))
        return int(m.group(1)) if m else None

    def drive(self, off, v):
        self.ctl(f"set {off} {v}")
        time.sleep(0.05)


def dump_gpio(a):
    chip = os.open(a.chip, os.O_RDWR | os.O_CLOEXEC)
    hw = Sim(a.drive[4:]) if a.drive.startswith("sim:") else Emu()
    r = {"kind": "gpio", "source": "emulator" if isinstance(hw, Emu) else "kernel " + os.uname().release, "probes": {}}
    P = r["probes"]
    buf = bytearray(68)
    fcntl.ioctl(chip, CHIPINFO, buf)
    name, label, lines = struct.unpack("=32s32sI", buf)
    P["chipinfo"] = {"label": label.split(b"\0")[0].decode(), "lines": lines}
    P["lineinfo"] = {o: v2_lineinfo(chip, o) for o in (0, 5, 17, 18, 27)}
    # v2 validation
    P["v2 errnos"] = {
        "no lines": errno_of(v2_request, chip, [], INPUT),
        "offset past the end": errno_of(v2_request, chip, [lines], INPUT),
        "input|output": errno_of(v2_request, chip, [0], INPUT | OUTPUT),
        "edge on output": errno_of(v2_request, chip, [0], OUTPUT | RISING),
        "open-drain on input": errno_of(v2_request, chip, [0], INPUT | OPEN_DRAIN),
        "bias without direction": errno_of(v2_request, chip, [0], PULL_UP),
        "two biases": errno_of(v2_request, chip, [0], INPUT | PULL_UP | PULL_DOWN),
        "flag USED": errno_of(v2_request, chip, [0], INPUT | USED),
        "HTE clock": errno_of(v2_request, chip, [0], INPUT | RISING | CLOCK_HTE),
        "debounce on output": errno_of(v2_request, chip, [0], OUTPUT, [(ATTR_DEBOUNCE, 1000, 1)]),
        "same line twice": errno_of(v2_request, chip, [5, 5], INPUT),
    }
    # v2 outputs: the simulated pin follows, active-low inverts
    fd = v2_request(chip, [18, 27], OUTPUT, [(ATTR_OUTPUT_VALUES, 0b01, 0b11)])
    o = {"initial pins (18, 27)": [hw.level(18), hw.level(27)], "info 18": v2_lineinfo(chip, 18)}
    v2_set(fd, 0b10, 0b11)
    o["after set 18=0 27=1"] = [hw.level(18), hw.level(27)]
    o["get values"] = v2_get(fd, 0b11)
    o["busy"] = errno_of(v2_request, chip, [18], INPUT)
    o["set on input of another request"] = None
    fcntl.ioctl(fd, V2_SET_CONFIG, bytearray(v2_config(OUTPUT | ACTIVE_LOW)))
    v2_set(fd, 0b11, 0b11)
    o["active-low set 1,1 -> pins"] = [hw.level(18), hw.level(27)]
    os.close(fd)
    time.sleep(0.1)
    o["after close: info 18"] = v2_lineinfo(chip, 18)
    o["after close: pins"] = [hw.level(18), hw.level(27)]
    P["v2 outputs"] = o
    # v2 inputs: pull from the request, driven from outside, edge events
    fd = v2_request(chip, [17], INPUT | RISING | FALLING | PULL_UP)
    i = {"pulled up: value": v2_get(fd, 1), "info": v2_lineinfo(chip, 17)}
    try:
        v2_set(fd, 1, 1)
        i["set on an input"] = 0
    except OSError as e:
        i["set on an input"] = errno.errorcode[e.errno]
    hw.drive(17, 0)
    i["driven low: value"] = v2_get(fd, 1)
    hw.drive(17, 1)
    ev = read_events(fd, 48, "=QIIII")
    i["events (id, offset, seqno, line_seqno)"] = [list(e[1:]) for e in ev]
    os.close(fd)
    fd = v2_request(chip, [17], INPUT | ACTIVE_LOW | FALLING | PULL_UP)
    hw.drive(17, 0)
    hw.drive(17, 1)
    ev = read_events(fd, 48, "=QIIII")
    i["active-low, falling edges only: events"] = [list(e[1:]) for e in ev]
    os.close(fd)
    P["v2 inputs"] = i
    # v1 (libgpiod 1.6)
    v = {}
    v["output + input flags"] = errno_of(v1_handle, chip, [18], H_INPUT | H_OUTPUT)
    v["open-drain on input"] = errno_of(v1_handle, chip, [18], H_INPUT | H_OPEN_DRAIN)
    v["bias without direction"] = errno_of(v1_handle, chip, [18], H_BIAS_PULL_UP)
    fd = v1_handle(chip, [18], H_OUTPUT, [1])
    v["output default 1: pin"] = hw.level(18)
    v1_set(fd, [0])
    v["set 0: pin"] = hw.level(18)
    v["busy (event on a held line)"] = errno_of(v1_event, chip, 18, H_INPUT, E_RISING | E_FALLING)
    os.close(fd)
    v["event on an output"] = errno_of(v1_event, chip, 18, H_OUTPUT, E_RISING)
    fd = v1_event(chip, 17, H_INPUT | H_ACTIVE_LOW | H_BIAS_PULL_UP, E_RISING | E_FALLING)
    hw.drive(17, 0)
    hw.drive(17, 1)
    ev = read_events(fd, 16, "=QI")
    v["active-low both edges: event ids (press, release)"] = [e[1] for e in ev]
    os.close(fd)
    fd = v1_handle(chip, [5], H_INPUT | H_BIAS_PULL_DOWN)
    v["pull-down input reads"] = v1_get(fd)[0]
    try:
        v1_set(fd, [1])
        v["set on an input"] = 0
    except OSError as e:
        v["set on an input"] = errno.errorcode[e.errno]
    os.close(fd)
    P["v1"] = v
    time.sleep(0.1)
    P["released"] = {o: v2_lineinfo(chip, o)["flags"] for o in (5, 17, 18, 27)}
    return r


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["iio", "gpio"])
    p.add_argument("--out", required=True)
    p.add_argument("--emu-log", action="append", default=[])
    p.add_argument("--chip", default="/dev/gpiochip0")
    p.add_argument("--drive", default="emu")
    a = p.parse_args()
    r = dump_iio(a) if a.kind == "iio" else dump_gpio(a)
    with open(a.out, "w") as f:
        json.dump(r, f, indent=1, sort_keys=True)
    n = len(r.get("devices", r.get("probes", {})))
    print(f"dump-attrs: {a.kind} ({r['source']}): {n} {'devices' if a.kind == 'iio' else 'probe groups'} -> {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""uapi_v2_test.py - raw GPIO uAPI v2 checks against the emulator (or a real chip).

Usage (inside gpio-emu, so that the preload answers the ioctls):
    python3 uapi_v2_test.py /dev/gpiochipN INPUT_ONLY_OFFSET

Needs a chip of at least 8 unnamed, unused lines with no pull (gpio-emu's
`--chip gpiochip1,gpio-emu-test,8 --input-only 2`). Struct layouts follow
/usr/include/linux/gpio.h (checked by size below); errno values follow
drivers/gpio/gpiolib-cdev.c. Prints one line per check, then a summary;
exit 0 when all pass.
"""
import errno
import fcntl
import os
import select
import struct
import sys
import time

# _IOWR(0xB4, nr, size)
def iowr(nr, size):
    return (3 << 30) | (size << 16) | (0xB4 << 8) | nr

V2_INFO_SIZE, V2_REQ_SIZE, V2_CONFIG_SIZE, V2_VALUES_SIZE = 256, 592, 272, 16
GET_LINEINFO = iowr(0x05, V2_INFO_SIZE)
GET_LINEINFO_WATCH = iowr(0x06, V2_INFO_SIZE)
GET_LINE = iowr(0x07, V2_REQ_SIZE)
SET_CONFIG = iowr(0x0D, V2_CONFIG_SIZE)
GET_VALUES = iowr(0x0E, V2_VALUES_SIZE)
SET_VALUES = iowr(0x0F, V2_VALUES_SIZE)
V1_GET_LINEINFO_WATCH = iowr(0x0B, 72)
UNWATCH = iowr(0x0C, 4)

USED, ACTIVE_LOW, INPUT, OUTPUT = 1, 2, 4, 8
RISING, FALLING, OPEN_DRAIN, OPEN_SOURCE = 16, 32, 64, 128
PULL_UP, PULL_DOWN, BIAS_DISABLED, CLOCK_REALTIME, CLOCK_HTE = 256, 512, 1024, 2048, 4096
ATTR_FLAGS, ATTR_OUTPUT_VALUES, ATTR_DEBOUNCE = 1, 2, 3

passed = failed = 0


def check(what, ok):
    global passed, failed
    if ok:
        passed += 1
        print("ok   " + what)
    else:
        failed += 1
        print("FAIL " + what)


def config(flags, attrs=()):
    """struct gpio_v2_line_config: attrs are (id, value, mask)."""
    b = struct.pack("=QI5I", flags, len(attrs), 0, 0, 0, 0, 0)
    for aid, val, mask in attrs:
        b += struct.pack("=IIQQ", aid, 0, val, mask)
    return b + b"\0" * (V2_CONFIG_SIZE - len(b))


def request(chip, offsets, flags, attrs=(), consumer=b"uapi-v2", bufsize=0, raw_config=None):
    offs = list(offsets) + [0] * (64 - len(offsets))
    b = struct.pack("=64I32s", *offs, consumer)
    b += raw_config if raw_config is not None else config(flags, attrs)
    b += struct.pack("=II5Ii", len(offsets), bufsize, 0, 0, 0, 0, 0, 0)
    assert len(b) == V2_REQ_SIZE
    buf = bytearray(b)
    fcntl.ioctl(chip, GET_LINE, buf)
    return struct.unpack_from("=i", buf, V2_REQ_SIZE - 4)[0]


def errno_of(fn, *a, **k):
    try:
        fd = fn(*a, **k)
        if isinstance(fd, int) and fd > 2:
            os.close(fd)
        return 0
    except OSError as e:
        return e.errno


def lineinfo(chip, offset, watch=False):
    buf = bytearray(V2_INFO_SIZE)
    struct.pack_into("=I", buf, 64, offset)
    fcntl.ioctl(chip, GET_LINEINFO_WATCH if watch else GET_LINEINFO, buf)
    name, consumer, off, nattrs, flags = struct.unpack_from("=32s32sIIQ", buf)
    attrs = [struct.unpack_from("=IIQ", buf, 80 + 16 * i) for i in range(nattrs)]
    return consumer.split(b"\0")[0].decode(), off, flags, attrs


def get_values(fd, mask):
    buf = bytearray(struct.pack("=QQ", 0, mask))
    fcntl.ioctl(fd, GET_VALUES, buf)
    return struct.unpack("=QQ", buf)[0]


def set_values(fd, bits, mask):
    fcntl.ioctl(fd, SET_VALUES, bytearray(struct.pack("=QQ", bits, mask)))


def ctl(cmd):
    import socket
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(os.environ["FALLGUARD_GPIO_CONTROL"])
    s.sendall((cmd + "\n").encode())
    f = s.makefile("rb")
    reply = f.readline().decode().strip()
    s.close()
    return reply


def read_events(fd, timeout=1.0):
    out = []
    while select.select([fd], [], [], timeout)[0]:
        data = os.read(fd, 48 * 16)
        for i in range(0, len(data), 48):
            out.append(struct.unpack_from("=QIIII", data, i))
        timeout = 0.05
    return out


def main():
    path, input_only = sys.argv[1], int(sys.argv[2])
    chip = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    name = os.path.basename(path)

    # struct and flag validation
    check("num_lines 0 -> EINVAL", errno_of(request, chip, [], INPUT) == errno.EINVAL)
    check("offset past the last line -> EINVAL", errno_of(request, chip, [99], INPUT) == errno.EINVAL)
    check("INPUT|OUTPUT -> EINVAL", errno_of(request, chip, [0], INPUT | OUTPUT) == errno.EINVAL)
    check("edge without INPUT -> EINVAL", errno_of(request, chip, [0], OUTPUT | RISING) == errno.EINVAL)
    check("open-drain without OUTPUT -> EINVAL", errno_of(request, chip, [0], INPUT | OPEN_DRAIN) == errno.EINVAL)
    check("bias without direction -> EINVAL", errno_of(request, chip, [0], PULL_UP) == errno.EINVAL)
    check("two biases -> EINVAL", errno_of(request, chip, [0], INPUT | PULL_UP | PULL_DOWN) == errno.EINVAL)
    check("unknown flag (USED) -> EINVAL", errno_of(request, chip, [0], INPUT | USED) == errno.EINVAL)
    check("HTE clock without a timestamp engine -> EOPNOTSUPP",
          errno_of(request, chip, [0], INPUT | RISING | CLOCK_HTE) == errno.EOPNOTSUPP)
    check("debounce on an output -> EINVAL",
          errno_of(request, chip, [0], OUTPUT, [(ATTR_DEBOUNCE, 1000, 1)]) == errno.EINVAL)
    bad = bytearray(config(INPUT))
    bad[12] = 1   # config padding
    check("non-zero config padding -> EINVAL", errno_of(request, chip, [0], 0, raw_config=bytes(bad)) == errno.EINVAL)
    check("num_attrs 11 -> EINVAL",
          errno_of(request, chip, [0], 0, raw_config=struct.pack("=QI5I", INPUT, 11, 0, 0, 0, 0, 0) + b"\0" * 240) == errno.EINVAL)
    check("input-only line as output -> EIO", errno_of(request, chip, [input_only], OUTPUT) == errno.EIO)
    buf = bytearray(V2_INFO_SIZE)
    buf[250] = 1
    try:
        fcntl.ioctl(chip, GET_LINEINFO, buf)
        e = 0
    except OSError as x:
        e = x.errno
    check("line info with non-zero padding -> EINVAL", e == errno.EINVAL)

    # outputs: per-line flags and output values from attributes; values; EPERM on inputs
    fd = request(chip, [0, 1, 3], OUTPUT, [(ATTR_OUTPUT_VALUES, 0b101, 0b111),
                                           (ATTR_FLAGS, INPUT | PULL_UP, 0b010)])
    check("request of 3 lines returns a descriptor", fd > 2)
    consumer, off, flags, _ = lineinfo(chip, 0)
    check("line 0: used, output, consumer 'uapi-v2'", consumer == "uapi-v2" and flags & USED and flags & OUTPUT)
    _, _, flags1, _ = lineinfo(chip, 1)
    check("line 1 (a FLAGS attribute): input with pull-up", flags1 & INPUT and flags1 & PULL_UP and not flags1 & OUTPUT)
    check("output values from the OUTPUT_VALUES attribute: 1, (input pulled up) 1, 1",
          get_values(fd, 0b111) == 0b111)
    check("physical levels: line 0 high, line 3 high",
          "level=1" in ctl("get %s:0" % name) and "level=1" in ctl("get %s:3" % name))
    set_values(fd, 0b000, 0b101)
    check("SET_VALUES with a mask sets lines 0 and 3 low", get_values(fd, 0b101) == 0 and "level=0" in ctl("get %s:3" % name))
    try:
        set_values(fd, 0b010, 0b010)
        e = 0
    except OSError as x:
        e = x.errno
    check("SET_VALUES on an input line -> EPERM", e == errno.EPERM)
    try:
        get_values(fd, 0)
        e = 0
    except OSError as x:
        e = x.errno
    check("GET_VALUES with an empty mask -> EINVAL", e == errno.EINVAL)
    check("a line already requested -> EBUSY", errno_of(request, chip, [3], INPUT) == errno.EBUSY)
    check("the same line twice in one request -> EBUSY", errno_of(request, chip, [5, 5], INPUT) == errno.EBUSY)
    check("a failed request released what it took", errno_of(lambda: os.close(request(chip, [5], INPUT))) == 0)

    # SET_CONFIG: output -> input with edges; active-low
    fcntl.ioctl(fd, SET_CONFIG, bytearray(config(INPUT | ACTIVE_LOW | RISING | FALLING | PULL_DOWN)))
    _, _, flags, _ = lineinfo(chip, 0)
    check("SET_CONFIG: line 0 now input, active-low, both edges, pull-down",
          flags & INPUT and flags & ACTIVE_LOW and flags & RISING and flags & FALLING and flags & PULL_DOWN)
    check("active-low input pulled down reads 1 (logical)", get_values(fd, 0b001) == 0b001)
    os.close(fd)
    time.sleep(0.05)
    consumer, _, flags, _ = lineinfo(chip, 0)
    check("close() releases every line", consumer == "" and not flags & USED)

    # edge events: struct gpio_v2_line_event, seqno and line_seqno, offsets
    fd = request(chip, [4, 6], INPUT | RISING | FALLING | PULL_UP)
    for cmd in ("press %s:4" % name, "press %s:6" % name, "release %s:4" % name):
        ctl(cmd)
    ev = read_events(fd)
    check("3 events as 48-byte records: offsets 4, 6, 4", [e[2] for e in ev] == [4, 6, 4])
    check("ids: falling, falling, rising", [e[1] for e in ev] == [2, 2, 1])
    check("seqno 1, 2, 3 over the request; line_seqno 1, 1, 2", [e[3] for e in ev] == [1, 2, 3] and [e[4] for e in ev] == [1, 1, 2])
    now = time.monotonic_ns()
    check("timestamps CLOCK_MONOTONIC, increasing", all(0 < now - e[0] < 5e9 for e in ev) and ev == sorted(ev))
    os.close(fd)

    # kernel debounce: a burst of bounces is one event, stamped after the period
    fd = request(chip, [4], INPUT | RISING | FALLING | PULL_UP, [(ATTR_DEBOUNCE, 5000, 1)])
    _, _, _, attrs = lineinfo(chip, 4)
    check("line info reports the debounce attribute (5000 us)", (ATTR_DEBOUNCE, 0, 5000) in attrs)
    reply = ctl("bounce %s:4 6 300 0" % name)
    last = int([w for w in reply.split() if w.startswith("last_ns=")][0][8:])
    ev = read_events(fd)
    check("6 bounces -> one falling event", [e[1] for e in ev] == [2])
    check("stamped >= 5 ms after the last bounce", ev and 5e6 <= ev[0][0] - last < 50e6)
    check("single-line request: seqno == line_seqno == 1", ev and ev[0][3] == 1 and ev[0][4] == 1)
    ctl("release %s:4" % name)
    os.close(fd)

    # event_buffer_size: a full kfifo drops
    fd = request(chip, [4], INPUT | RISING | FALLING | PULL_UP, bufsize=4)
    ctl("bounce %s:4 8 200 1" % name)
    ev = read_events(fd)
    check("event_buffer_size 4: 4 of 8 events kept", len(ev) == 4)
    check("control 'get' counts the dropped events", "dropped=4" in ctl("get %s:4" % name))
    os.close(fd)

    # watch: v2 records from the chip fd; v1 and v2 watches do not mix on one fd
    w = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    lineinfo(w, 7, watch=True)
    fd = request(chip, [7], OUTPUT)
    os.close(fd)
    recs = []
    while select.select([w], [], [], 1.0)[0] and len(recs) < 2:
        data = os.read(w, 288 * 4)
        recs += [struct.unpack_from("=QI", data, i + 256) for i in range(0, len(data), 288)]
    check("watch: REQUESTED then RELEASED as 288-byte gpio_v2_line_info_changed", [r[1] for r in recs] == [1, 2])
    buf = bytearray(72)
    struct.pack_into("=I", buf, 0, 6)
    try:
        fcntl.ioctl(w, V1_GET_LINEINFO_WATCH, buf)
        e = 0
    except OSError as x:
        e = x.errno
    check("a v1 watch on a chip fd with v2 watches -> EPERM", e == errno.EPERM)
    try:
        lineinfo(w, 7, watch=True)
        e = 0
    except OSError as x:
        e = x.errno
    check("watching the same line twice -> EBUSY", e == errno.EBUSY)
    fcntl.ioctl(w, UNWATCH, bytearray(struct.pack("=I", 7)))
    os.close(w)

    print("uapi v2: %d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

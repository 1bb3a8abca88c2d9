#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gpio_kernel.py - the "kernel" half of the FallGuard GPIO emulator.

One process per set of emulated GPIO chips.  It owns the line state, answers
the GPIO uAPI v1 and v2 requests forwarded by libfakegpio.so (the LD_PRELOAD half),
delivers edge events and line-info-changed records, serves the line-oriented
control socket used by tests, and appends output-level changes to a JSON-lines
log.  Python 3 standard library only.

Normally started by ./gpio-emu; see README.md for the options and protocols.
"""

import argparse
import errno
import fcntl
import heapq
import json
import os
import selectors
import signal
import socket
import stat
import struct
import sys
import termios
import time

# ---------------------------------------------------------------- uAPI v1 ---
# Values from /usr/include/linux/gpio.h
GPIOLINE_FLAG_KERNEL = 1 << 0
GPIOLINE_FLAG_IS_OUT = 1 << 1
GPIOLINE_FLAG_ACTIVE_LOW = 1 << 2
GPIOLINE_FLAG_OPEN_DRAIN = 1 << 3
GPIOLINE_FLAG_OPEN_SOURCE = 1 << 4
GPIOLINE_FLAG_BIAS_PULL_UP = 1 << 5
GPIOLINE_FLAG_BIAS_PULL_DOWN = 1 << 6
GPIOLINE_FLAG_BIAS_DISABLE = 1 << 7

REQ_INPUT = 1 << 0
REQ_OUTPUT = 1 << 1
REQ_ACTIVE_LOW = 1 << 2
REQ_OPEN_DRAIN = 1 << 3
REQ_OPEN_SOURCE = 1 << 4
REQ_PULL_UP = 1 << 5
REQ_PULL_DOWN = 1 << 6
REQ_BIAS_DISABLE = 1 << 7
REQ_VALID = 0xFF

EV_REQ_RISING = 1 << 0
EV_REQ_FALLING = 1 << 1
EV_REQ_VALID = EV_REQ_RISING | EV_REQ_FALLING
EV_RISING = 0x01
EV_FALLING = 0x02

LINE_CHANGED_REQUESTED = 1
LINE_CHANGED_RELEASED = 2
LINE_CHANGED_CONFIG = 3

GPIOHANDLES_MAX = 64
EVENT_FIFO = 16       # DECLARE_KFIFO(events, struct gpioevent_data, 16)
WATCH_FIFO = 32       # DECLARE_KFIFO(events, struct gpio_v2_line_info_changed, 32)

FMT_CHIPINFO = "=32s32sI"                 # 68
FMT_LINEINFO = "=II32s32s"                # 72
FMT_HANDLEREQ = "=64II64s32sIi"           # 364
FMT_HANDLECFG = "=I64s4I"                 # 84
FMT_HANDLEDATA = "=64s"                   # 64
FMT_EVENTREQ = "=III32si"                 # 48
FMT_EVENTDATA = "=QI4x"                   # 16
FMT_INFOCHANGED = "=II32s32sQI20x"        # 104

# ---------------------------------------------------------------- uAPI v2 ---
V2_USED = 1 << 0
V2_ACTIVE_LOW = 1 << 1
V2_INPUT = 1 << 2
V2_OUTPUT = 1 << 3
V2_EDGE_RISING = 1 << 4
V2_EDGE_FALLING = 1 << 5
V2_OPEN_DRAIN = 1 << 6
V2_OPEN_SOURCE = 1 << 7
V2_BIAS_PULL_UP = 1 << 8
V2_BIAS_PULL_DOWN = 1 << 9
V2_BIAS_DISABLED = 1 << 10
V2_CLOCK_REALTIME = 1 << 11
V2_CLOCK_HTE = 1 << 12
V2_EDGE = V2_EDGE_RISING | V2_EDGE_FALLING
V2_DIRECTION = V2_INPUT | V2_OUTPUT
V2_DRIVE = V2_OPEN_DRAIN | V2_OPEN_SOURCE
V2_BIAS = V2_BIAS_PULL_UP | V2_BIAS_PULL_DOWN | V2_BIAS_DISABLED
V2_VALID = V2_ACTIVE_LOW | V2_EDGE | V2_CLOCK_REALTIME | V2_CLOCK_HTE | V2_DIRECTION | \
    V2_DRIVE | V2_BIAS
ATTR_FLAGS, ATTR_OUTPUT_VALUES, ATTR_DEBOUNCE = 1, 2, 3
V2_LINES_MAX = 64
V2_ATTRS_MAX = 10
V2_EV_RISING, V2_EV_FALLING = 1, 2

FMT_V2_ATTR = "=IIQ"                      # 16: id, padding, union {flags, values, debounce_period_us}
FMT_V2_CFGATTR = "=IIQQ"                  # 24: attr + mask
FMT_V2_CONFIG_HDR = "=QI5I"               # 32: flags, num_attrs, padding[5]; then attrs[10]
V2_CONFIG_SIZE = 32 + V2_ATTRS_MAX * 24   # 272
FMT_V2_REQ_HDR = "=64I32s"                # 288: offsets, consumer; then config
FMT_V2_REQ_TAIL = "=II5Ii"                # 32: num_lines, event_buffer_size, padding[5], fd
V2_REQUEST_SIZE = 288 + V2_CONFIG_SIZE + 32   # 592
FMT_V2_INFO_HDR = "=32s32sIIQ"            # 80: name, consumer, offset, num_attrs, flags; attrs[10]; padding[4]
V2_INFO_SIZE = 80 + V2_ATTRS_MAX * 16 + 16    # 256
FMT_V2_CHANGED_TAIL = "=QI5I"             # 32: timestamp_ns, event_type, padding[5]
FMT_V2_EVENT = "=QIIII24x"                # 48: timestamp_ns, id, offset, seqno, line_seqno
FMT_V2_VALUES = "=QQ"                     # 16: bits, mask

for _f, _n in ((FMT_CHIPINFO, 68), (FMT_LINEINFO, 72), (FMT_HANDLEREQ, 364),
               (FMT_HANDLECFG, 84), (FMT_HANDLEDATA, 64), (FMT_EVENTREQ, 48),
               (FMT_EVENTDATA, 16), (FMT_INFOCHANGED, 104), (FMT_V2_ATTR, 16),
               (FMT_V2_CFGATTR, 24), (FMT_V2_CONFIG_HDR, 32), (FMT_V2_REQ_HDR, 288),
               (FMT_V2_REQ_TAIL, 32), (FMT_V2_INFO_HDR, 80), (FMT_V2_CHANGED_TAIL, 32),
               (FMT_V2_EVENT, 48), (FMT_V2_VALUES, 16)):
    assert struct.calcsize(_f) == _n, _f

# ------------------------------------------------- preload wire protocol ---
MAGIC = 0x49504746
MSG_SIZE = 1024
MSG_HDR = "=IIQiIII"   # magic, op, t_ns, pid, len, arg, flags  (32 bytes)
REPLY_HDR = "=iI24x"   # err, len, pad (32 bytes)
assert struct.calcsize(MSG_HDR) == 32 and struct.calcsize(REPLY_HDR) == 32

OP_OPEN, OP_CHIPINFO, OP_LINEINFO, OP_LINEHANDLE, OP_LINEEVENT = 1, 2, 3, 4, 5
OP_GET_VALUES, OP_SET_VALUES, OP_SET_CONFIG, OP_WATCH, OP_UNWATCH = 6, 7, 8, 9, 10
OP_V2_LINEINFO, OP_V2_WATCH, OP_V2_GET_LINE = 11, 12, 13
OP_V2_SET_CONFIG, OP_V2_GET_VALUES, OP_V2_SET_VALUES = 14, 15, 16
OP_UNKNOWN = 99

# --------------------------------------------------------- board presets ---
# Raspberry Pi 4 B, device tree gpio-line-names (bcm2711-rpi-4-b.dts).
RPI4_DT_NAMES = [
    "ID_SDA", "ID_SCL", "SDA1", "SCL1", "GPIO_GCLK", "GPIO5", "GPIO6",
    "SPI_CE1_N", "SPI_CE0_N", "SPI_MISO", "SPI_MOSI", "SPI_SCLK", "GPIO12",
    "GPIO13", "TXD1", "RXD1", "GPIO16", "GPIO17", "GPIO18", "GPIO19", "GPIO20",
    "GPIO21", "GPIO22", "GPIO23", "GPIO24", "GPIO25", "GPIO26", "GPIO27",
    "RGMII_MDIO", "RGMIO_MDC", "CTS0", "RTS0", "TXD0", "RXD0", "SD1_CLK",
    "SD1_CMD", "SD1_DATA0", "SD1_DATA1", "SD1_DATA2", "SD1_DATA3", "PWM0_MISO",
    "PWM1_MOSI", "STATUS_LED_G_CLK", "SPIFLASH_CE_N", "SDA0", "SCL0",
    "RGMII_RXCLK", "RGMII_RXCTL", "RGMII_RXD0", "RGMII_RXD1", "RGMII_RXD2",
    "RGMII_RXD3", "RGMII_TXCLK", "RGMII_TXCTL", "RGMII_TXD0", "RGMII_TXD1",
    "RGMII_TXD2", "RGMII_TXD3",
]
assert len(RPI4_DT_NAMES) == 58


def bcm2711_reset_pull(offset):
    """Pull resistor state of a BCM2711 pin after reset (datasheet table 'pull'
    column: GPIO0-8 high, GPIO9-27 low; the rest approximated)."""
    if offset <= 8:
        return "up"
    if offset <= 27:
        return "down"
    if offset <= 29:
        return "none"
    if offset <= 33:
        return "down"
    if offset <= 36:
        return "up"
    if offset <= 44:
        return "down"
    return "up"


def now_ns():
    return time.monotonic_ns()   # CLOCK_MONOTONIC, same clock as the kernel's v1 events


def cstr(b):
    return b.split(b"\0", 1)[0].decode("utf-8", "replace")


def cbytes(s, size):
    b = (s or "").encode("utf-8")[: size - 1]
    return b + b"\0" * (size - len(b))


class GpioError(Exception):
    def __init__(self, err):
        super().__init__(os.strerror(err))
        self.errno = err


# ------------------------------------------------------------------ model ---
class KernelHold:
    """A line held by an in-kernel consumer (LED trigger, hog, ...)."""
    kind = "kernel"

    def __init__(self, consumer):
        self.consumer = consumer
        self.pid = 0
        self.eflags = 0


class Line:
    def __init__(self, chip, offset, name, pull):
        self.chip = chip
        self.offset = offset
        self.name = name or ""
        self.pull = pull            # hardware pull resistor: up / down / none
        self.ext = None             # level driven from outside (test), or None
        self.drive = None           # level the SoC drives, or None (not driving)
        self.is_out = False         # the kernel's FLAG_IS_OUT
        self.last_level = 1 if pull == "up" else 0
        self.holder = None          # Request, KernelHold or None
        # descriptor flags, valid while requested (cleared on release)
        self.active_low = False
        self.open_drain = False
        self.open_source = False
        self.bias = None            # "pull-up" / "pull-down" / "disable" / None
        self.input_only = False
        self.output_only = False
        self.waiters = []           # control-socket 'wait' commands
        # uAPI v2 request state, valid while a v2 request holds the line
        self.edge = 0               # EV_REQ_RISING | EV_REQ_FALLING bits
        self.clock_realtime = False
        self.debounce_us = 0        # the kernel's software debounce (pinctrl-bcm2835 has none in hardware)
        self.deb_level = 0          # debounced physical level
        self.deb_gen = 0            # invalidates pending debounce timers
        self.line_seqno = 0

    def level(self):
        if self.drive is not None:
            return self.drive
        if self.ext is not None:
            return self.ext
        if self.pull == "up":
            return 1
        if self.pull == "down":
            return 0
        return self.last_level      # floating: keeps whatever it had

    def source(self):
        if self.drive is not None:
            return "output"
        if self.ext is not None:
            return "external"
        if self.pull == "up":
            return "pull-up"
        if self.pull == "down":
            return "pull-down"
        return "floating"

    def flags(self):
        f = 0
        if self.holder is not None:
            f |= GPIOLINE_FLAG_KERNEL
        if self.is_out:
            f |= GPIOLINE_FLAG_IS_OUT
        if self.active_low:
            f |= GPIOLINE_FLAG_ACTIVE_LOW
        if self.open_drain:
            f |= GPIOLINE_FLAG_OPEN_DRAIN
        if self.open_source:
            f |= GPIOLINE_FLAG_OPEN_SOURCE
        if self.bias == "pull-up":
            f |= GPIOLINE_FLAG_BIAS_PULL_UP
        elif self.bias == "pull-down":
            f |= GPIOLINE_FLAG_BIAS_PULL_DOWN
        elif self.bias == "disable":
            f |= GPIOLINE_FLAG_BIAS_DISABLE
        return f

    def consumer(self):
        return self.holder.consumer if self.holder is not None else ""

    def lineinfo(self):
        return struct.pack(FMT_LINEINFO, self.offset, self.flags(),
                           cbytes(self.name, 32), cbytes(self.consumer(), 32))

    def edge_bits(self):
        h = self.holder
        if isinstance(h, Request) and h.kind == "event":
            return h.eflags
        if isinstance(h, Request) and h.kind == "line":
            return self.edge
        return 0

    def flags_v2(self):
        f = 0
        if self.holder is not None:
            f |= V2_USED
        if self.active_low:
            f |= V2_ACTIVE_LOW
        f |= V2_OUTPUT if self.is_out else V2_INPUT
        e = self.edge_bits()
        if e & EV_REQ_RISING:
            f |= V2_EDGE_RISING
        if e & EV_REQ_FALLING:
            f |= V2_EDGE_FALLING
        if self.open_drain:
            f |= V2_OPEN_DRAIN
        if self.open_source:
            f |= V2_OPEN_SOURCE
        if self.bias == "pull-up":
            f |= V2_BIAS_PULL_UP
        elif self.bias == "pull-down":
            f |= V2_BIAS_PULL_DOWN
        elif self.bias == "disable":
            f |= V2_BIAS_DISABLED
        if self.clock_realtime:
            f |= V2_CLOCK_REALTIME
        return f

    def lineinfo_v2(self):
        attrs = b""
        n = 0
        if self.debounce_us:
            attrs += struct.pack(FMT_V2_ATTR, ATTR_DEBOUNCE, 0, self.debounce_us)
            n += 1
        attrs += b"\0" * ((V2_ATTRS_MAX - n) * 16)
        return struct.pack(FMT_V2_INFO_HDR, cbytes(self.name, 32), cbytes(self.consumer(), 32),
                           self.offset, n, self.flags_v2()) + attrs + b"\0" * 16


class Chip:
    def __init__(self, name, label, nlines, major, minor):
        self.name = name
        self.label = label
        self.major = major
        self.minor = minor
        self.lines = [Line(self, i, "", "none") for i in range(nlines)]
        self.conns = set()          # open chip descriptors (ChipConn)
        self.sysfs_dir = "/sys/bus/gpio/devices/" + name
        self.sysdev_link = "/sys/dev/char/%d:%d" % (major, minor)
        self.node = "/dev/" + name


class Conn:
    """Server side of one of the preload's socketpairs, or a control client."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.fds = []
        self.closed = False


class ChipConn(Conn):
    kind = "chip"

    def __init__(self, sock, chip, pid):
        super().__init__(sock)
        self.chip = chip
        self.pid = pid
        self.watched = set()
        self.watch_abi = 0          # 1 or 2 after the first watch; the other one is EPERM


class Request(Conn):
    def __init__(self, sock, kind, chip, lines, consumer, flags, eflags, pid):
        super().__init__(sock)
        self.kind = kind            # "handle" or "event"
        self.chip = chip
        self.lines = lines
        self.consumer = consumer
        self.flags = flags
        self.eflags = eflags
        self.pid = pid
        self.dropped = 0
        self.delivered = 0
        self.armed = kind == "handle"   # the IRQ is requested after direction_input
        self.seqno = 0                  # v2: request-wide event sequence number
        self.fifo = EVENT_FIFO          # v2: event_buffer_size (kfifo, a power of two)


class OpenConn(Conn):
    kind = "open"


class ControlConn(Conn):
    kind = "control"

    def __init__(self, sock):
        super().__init__(sock)
        self.queue = []
        self.busy = False


# ----------------------------------------------------------------- server ---
class Server:
    def __init__(self, args, chips):
        self.args = args
        self.chips = chips
        self.sel = selectors.DefaultSelector()
        self.timers = []
        self.timer_seq = 0
        self.running = True
        self.verbose = args.verbose
        self.release_outputs = args.release_outputs
        self.logf = open(args.log, "a", buffering=1) if args.log else None
        self.truesize = {}
        self.deferred = None

    # -- utilities ------------------------------------------------------
    def debug(self, msg):
        if self.verbose:
            sys.stderr.write("gpio-kernel: %s\n" % msg)

    def log(self, rec):
        if self.deferred is not None:
            self.deferred.append(rec)
        elif self.logf:
            self.logf.write(json.dumps(rec) + "\n")

    def defer_log(self):
        """Hold level records made while a request is set up, so the log reads
        'request' first and then the level it caused."""
        self.deferred = []

    def flush_log(self, first=()):
        pending, self.deferred = self.deferred or [], None
        for rec in list(first) + pending:
            self.log(rec)

    def add_timer(self, when_ns, fn):
        self.timer_seq += 1
        heapq.heappush(self.timers, (when_ns, self.timer_seq, fn))

    def skb_truesize(self, size):
        """Kernel memory charged per queued record of this size (SIOCOUTQ unit)."""
        if size not in self.truesize:
            a, b = socket.socketpair()
            try:
                b.send(b"\0" * size)
                self.truesize[size] = max(1, self.outq(b))
            except OSError:
                self.truesize[size] = 0
            finally:
                a.close()
                b.close()
        return self.truesize[size]

    @staticmethod
    def outq(sock):
        return struct.unpack("i", fcntl.ioctl(sock.fileno(), termios.TIOCOUTQ, b"\0" * 4))[0]

    def queued_records(self, sock, size):
        """How many records the reader has not consumed yet (kernel kfifo fill)."""
        ts = self.skb_truesize(size)
        if ts <= 0:
            return 0
        try:
            return (self.outq(sock) + ts - 1) // ts
        except OSError:
            return 0

    def push_record(self, conn, data, fifo):
        if conn.closed:
            return False
        if self.queued_records(conn.sock, len(data)) >= fifo:
            return False
        try:
            conn.sock.send(data, socket.MSG_DONTWAIT | socket.MSG_NOSIGNAL)
            return True
        except OSError:
            return False

    # -- line state -----------------------------------------------------
    def update_level(self, line, t_ns, cause, pid=None, was_out=False):
        new = line.level()
        old = line.last_level
        if new == old:
            return
        line.last_level = new
        rec = {"t_ns": t_ns, "chip": line.chip.name, "offset": line.offset,
               "name": line.name, "value": new, "consumer": line.consumer(),
               "event": "level" if (line.is_out or was_out) else "input", "cause": cause}
        if line.active_low and line.holder is not None:
            rec["logical"] = new ^ 1
            rec["active_low"] = True
        if pid:
            rec["pid"] = pid
        self.log(rec)
        self.debug("%s:%d level %d -> %d (%s)" % (line.chip.name, line.offset, old, new, cause))
        self.emit_edge(line, new, t_ns)
        for w in list(line.waiters):
            if w[0] == new:
                line.waiters.remove(w)
                w[1]("ok level=%d t_ns=%d" % (new, now_ns()))

    def emit_edge(self, line, level, ts):
        req = line.holder
        if isinstance(req, Request) and req.kind == "line":
            self.edge_v2(req, line, level, ts)
            return
        if not isinstance(req, Request) or req.kind != "event" or not req.eflags \
                or not req.armed:
            return
        logical = level ^ (1 if line.active_low else 0)
        if req.eflags == EV_REQ_VALID:
            ev = EV_RISING if logical else EV_FALLING
        elif req.eflags == EV_REQ_RISING:
            if not logical:
                return
            ev = EV_RISING
        else:
            if logical:
                return
            ev = EV_FALLING
        if self.push_record(req, struct.pack(FMT_EVENTDATA, ts, ev), EVENT_FIFO):
            req.delivered += 1
        else:
            req.dropped += 1
            self.debug("event FIFO is full - event dropped")

    # -- uAPI v2 edges: edge_irq_thread() / debounce_work_func() of gpiolib-cdev.c
    def edge_v2(self, req, line, level, ts):
        if line.is_out or line.holder is not req:
            return
        if line.debounce_us:
            # debounce_irq_handler(): (re)start the delayed work on every raw edge
            line.deb_gen += 1
            gen = line.deb_gen
            self.add_timer(now_ns() + line.debounce_us * 1000,
                           lambda: self.debounce_done(req, line, gen))
            return
        self.put_event_v2(req, line, level, ts)

    def debounce_done(self, req, line, gen):
        if gen != line.deb_gen or line.holder is not req or req.closed:
            return
        level = line.level()
        if level == line.deb_level:
            return                  # a glitch: no event
        line.deb_level = level
        self.put_event_v2(req, line, level, now_ns())

    def put_event_v2(self, req, line, level, ts):
        if not line.edge:
            return
        logical = level ^ (1 if line.active_low else 0)
        if line.edge == EV_REQ_VALID:
            ev = V2_EV_RISING if logical else V2_EV_FALLING
        elif line.edge == EV_REQ_RISING:
            if not logical:
                return
            ev = V2_EV_RISING
        else:
            if logical:
                return
            ev = V2_EV_FALLING
        if line.clock_realtime:
            ts = time.time_ns()
        line.line_seqno += 1
        req.seqno += 1
        seqno = line.line_seqno if len(req.lines) == 1 else req.seqno
        data = struct.pack(FMT_V2_EVENT, ts, ev, line.offset, seqno, line.line_seqno)
        if self.push_record(req, data, req.fifo):
            req.delivered += 1
        else:
            req.dropped += 1
            self.debug("event FIFO is full - event dropped")

    def notify(self, line, event_type):
        data = {}
        for cc in list(line.chip.conns):
            if line.offset in cc.watched:
                if cc.watch_abi not in data:
                    if cc.watch_abi == 2:
                        data[2] = line.lineinfo_v2() + struct.pack(
                            FMT_V2_CHANGED_TAIL, now_ns(), event_type, 0, 0, 0, 0, 0)
                    else:
                        data[cc.watch_abi] = struct.pack(
                            FMT_INFOCHANGED, line.offset, line.flags(), cbytes(line.name, 32),
                            cbytes(line.consumer(), 32), now_ns(), event_type)
                self.push_record(cc, data[cc.watch_abi], WATCH_FIFO)

    def apply_desc_flags(self, line, flags):
        line.active_low = bool(flags & REQ_ACTIVE_LOW)
        line.open_drain = bool(flags & REQ_OPEN_DRAIN)
        line.open_source = bool(flags & REQ_OPEN_SOURCE)
        if flags & REQ_PULL_UP:
            line.bias = "pull-up"
        elif flags & REQ_PULL_DOWN:
            line.bias = "pull-down"
        elif flags & REQ_BIAS_DISABLE:
            line.bias = "disable"
        else:
            line.bias = None

    def set_bias_hw(self, line):
        # gpio_set_bias(): only when a bias flag is set; "as-is" keeps the pin's pull
        if line.bias == "pull-up":
            line.pull = "up"
        elif line.bias == "pull-down":
            line.pull = "down"
        elif line.bias == "disable":
            line.pull = "none"

    def set_output_raw(self, line, raw):
        if line.open_drain and raw:
            line.drive = None      # emulated open drain: not driven high
        elif line.open_source and not raw:
            line.drive = None      # emulated open source: not driven low
        else:
            line.drive = raw

    def direction_output(self, line, logical, t_ns, cause, pid):
        if line.input_only:
            raise GpioError(errno.EIO)
        raw = (1 if logical else 0) ^ (1 if line.active_low else 0)
        self.set_bias_hw(line)
        line.is_out = True
        self.set_output_raw(line, raw)
        self.update_level(line, t_ns, cause, pid)

    def direction_input(self, line, t_ns, cause, pid):
        if line.output_only:
            raise GpioError(errno.EIO)
        was_out = line.is_out
        line.is_out = False
        line.drive = None
        self.set_bias_hw(line)
        self.update_level(line, t_ns, cause, pid, was_out=was_out)

    def holder_alive(self, line):
        """Before judging a line busy, collect a close() the holder already did."""
        h = line.holder
        if isinstance(h, Request) and not h.closed:
            try:
                d = h.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                if d == b"":
                    self.close_conn(h)
            except BlockingIOError:
                pass
            except OSError:
                self.close_conn(h)
        return line.holder is not None

    def free_line(self, line, t_ns, cause):
        """gpiod_free(): clear the descriptor flags, keep or drop the output."""
        line.holder = None
        line.active_low = False
        line.open_drain = False
        line.open_source = False
        line.bias = None
        line.edge = 0
        line.clock_realtime = False
        line.debounce_us = 0
        line.deb_gen += 1
        line.line_seqno = 0
        was_out = line.is_out
        if self.release_outputs == "input" and line.is_out:
            # the pin stops driving and follows its pull (mainline pinctrl-bcm2835; gpio-sim's
            # free() too), but gpiod_free() does not clear FLAG_IS_OUT: line info still says
            # output until the next request sets a direction (seen on gpio-sim, 6.1 and 6.12)
            line.drive = None
        self.notify(line, LINE_CHANGED_RELEASED)
        self.update_level(line, t_ns, cause, was_out=was_out)

    def log_request(self, req, t_ns, event, collect=None):
        for line in req.lines:
            rec = {"t_ns": t_ns, "chip": line.chip.name, "offset": line.offset,
                   "name": line.name, "event": event, "consumer": req.consumer,
                   "kind": req.kind, "pid": req.pid}
            if event != "release":
                rec["direction"] = "output" if line.is_out else "input"
                rec["active_low"] = line.active_low
                rec["bias"] = line.bias or "as-is"
                if line.open_drain:
                    rec["drive"] = "open-drain"
                elif line.open_source:
                    rec["drive"] = "open-source"
                if req.kind in ("event", "line"):
                    rec["edge"] = {1: "rising", 2: "falling", 3: "both"}.get(line.edge_bits(), "none")
                if line.debounce_us:
                    rec["debounce_us"] = line.debounce_us
                rec["level"] = line.level()
            if collect is not None:
                collect.append(rec)
            else:
                self.log(rec)

    # -- uAPI handlers ----------------------------------------------------
    @staticmethod
    def validate_handle_flags(flags):
        if flags & ~REQ_VALID:
            raise GpioError(errno.EINVAL)
        if (flags & REQ_INPUT) and (flags & REQ_OUTPUT):
            raise GpioError(errno.EINVAL)
        if (flags & REQ_OPEN_DRAIN) and (flags & REQ_OPEN_SOURCE):
            raise GpioError(errno.EINVAL)
        if not (flags & REQ_OUTPUT) and (flags & (REQ_OPEN_DRAIN | REQ_OPEN_SOURCE)):
            raise GpioError(errno.EINVAL)
        if not (flags & (REQ_INPUT | REQ_OUTPUT)) and \
                (flags & (REQ_BIAS_DISABLE | REQ_PULL_UP | REQ_PULL_DOWN)):
            raise GpioError(errno.EINVAL)
        Server.validate_one_bias(flags)

    @staticmethod
    def validate_one_bias(flags):
        if ((flags & REQ_BIAS_DISABLE) and (flags & (REQ_PULL_DOWN | REQ_PULL_UP))) or \
                ((flags & REQ_PULL_DOWN) and (flags & REQ_PULL_UP)):
            raise GpioError(errno.EINVAL)

    def get_line(self, chip, offset):
        if offset >= len(chip.lines):
            raise GpioError(errno.EINVAL)
        return chip.lines[offset]

    def op_chip(self, cc, op, t_ns, pid, payload, extra):
        chip = cc.chip
        if op == OP_CHIPINFO:
            return struct.pack(FMT_CHIPINFO, cbytes(chip.name, 32), cbytes(chip.label, 32),
                               len(chip.lines))
        if op in (OP_LINEINFO, OP_WATCH):
            offset = struct.unpack_from("=I", payload)[0]
            line = self.get_line(chip, offset)
            if op == OP_WATCH:
                self.watch(cc, offset, 1)
            self.holder_alive(line)
            return line.lineinfo()
        if op == OP_UNWATCH:
            offset = struct.unpack_from("=I", payload)[0]
            if offset >= len(chip.lines):
                raise GpioError(errno.EINVAL)
            if offset not in cc.watched:
                raise GpioError(errno.EBUSY)
            cc.watched.discard(offset)
            return payload[:4]
        if op in (OP_V2_LINEINFO, OP_V2_WATCH):
            if any(payload[240:256]):        # gpio_v2_line_info.padding
                raise GpioError(errno.EINVAL)
            offset = struct.unpack_from("=I", payload, 64)[0]
            line = self.get_line(chip, offset)
            if op == OP_V2_WATCH:
                self.watch(cc, offset, 2)
            self.holder_alive(line)
            return line.lineinfo_v2()
        if op == OP_V2_GET_LINE:
            return self.linereq_create(cc, t_ns, pid, payload, extra)
        if op == OP_LINEHANDLE:
            return self.linehandle_create(cc, t_ns, pid, payload, extra)
        if op == OP_LINEEVENT:
            return self.lineevent_create(cc, t_ns, pid, payload, extra)
        raise GpioError(errno.EINVAL)

    @staticmethod
    def watch(cc, offset, abi):
        # lineinfo_ensure_abi_version(): one chip fd reads v1 or v2 records, not both
        if cc.watch_abi and cc.watch_abi != abi:
            raise GpioError(errno.EPERM)
        if offset in cc.watched:
            raise GpioError(errno.EBUSY)
        cc.watch_abi = abi
        cc.watched.add(offset)

    def linehandle_create(self, cc, t_ns, pid, payload, extra):
        fields = struct.unpack_from(FMT_HANDLEREQ, payload)
        offsets = fields[0:64]
        flags, defaults, label, nlines = fields[64], fields[65], fields[66], fields[67]
        if extra is None:
            raise GpioError(errno.ENOMEM)
        if nlines == 0 or nlines > GPIOHANDLES_MAX:
            raise GpioError(errno.EINVAL)
        self.validate_handle_flags(flags)
        consumer = cstr(label) or "?"
        chip = cc.chip
        req = Request(extra, "handle", chip, [], consumer, flags, 0, pid)
        self.defer_log()
        try:
            for i in range(nlines):
                line = self.get_line(chip, offsets[i])
                if self.holder_alive(line):
                    raise GpioError(errno.EBUSY)
                line.holder = req
                req.lines.append(line)
                self.apply_desc_flags(line, flags)
                if flags & REQ_OUTPUT:
                    self.direction_output(line, defaults[i], t_ns, "request", pid)
                elif flags & REQ_INPUT:
                    self.direction_input(line, t_ns, "request", pid)
                self.notify(line, LINE_CHANGED_REQUESTED)
        except GpioError:
            for line in req.lines:
                self.free_line(line, t_ns, "request-failed")
            self.flush_log()
            raise
        self.register(req)
        recs = []
        self.log_request(req, t_ns, "request", recs)
        self.flush_log(recs)
        return payload[:364]

    def lineevent_create(self, cc, t_ns, pid, payload, extra):
        offset, lflags, eflags, label, _fd = struct.unpack_from(FMT_EVENTREQ, payload)
        chip = cc.chip
        if extra is None:
            raise GpioError(errno.ENOMEM)
        line = self.get_line(chip, offset)
        if (lflags & ~REQ_VALID) or (eflags & ~EV_REQ_VALID):
            raise GpioError(errno.EINVAL)
        if lflags & (REQ_OUTPUT | REQ_OPEN_DRAIN | REQ_OPEN_SOURCE):
            raise GpioError(errno.EINVAL)
        self.validate_one_bias(lflags)
        if self.holder_alive(line):
            raise GpioError(errno.EBUSY)
        consumer = cstr(label) or "?"
        req = Request(extra, "event", chip, [line], consumer, lflags, eflags, pid)
        line.holder = req
        self.apply_desc_flags(line, lflags)
        self.defer_log()
        try:
            self.direction_input(line, t_ns, "request", pid)
        except GpioError:
            self.free_line(line, t_ns, "request-failed")
            self.flush_log()
            raise
        self.notify(line, LINE_CHANGED_REQUESTED)
        req.armed = True
        self.register(req)
        recs = []
        self.log_request(req, t_ns, "request", recs)
        self.flush_log(recs)
        return payload[:48]

    # -- uAPI v2: linereq_create() and the linereq_* ioctls of gpiolib-cdev.c
    @staticmethod
    def parse_config_v2(data):
        flags, nattrs = struct.unpack_from(FMT_V2_CONFIG_HDR, data)[0:2]
        padding = struct.unpack_from(FMT_V2_CONFIG_HDR, data)[2:]
        if nattrs > V2_ATTRS_MAX or any(padding):
            raise GpioError(errno.EINVAL)
        attrs = []
        for i in range(nattrs):
            aid, apad, val, mask = struct.unpack_from(FMT_V2_CFGATTR, data, 32 + 24 * i)
            if apad:
                raise GpioError(errno.EINVAL)
            attrs.append((aid, val, mask))
        return flags, attrs

    @staticmethod
    def config_for_line(cfg, i):
        """(flags, output value, debounce_us) of line i: the first attribute whose mask
        names the line wins, else the config's flags (gpio_v2_line_config_flags() & co)."""
        flags, attrs = cfg
        f, value, deb = flags, 0, 0
        for aid, val, mask in attrs:
            if aid == ATTR_FLAGS and mask >> i & 1:
                f = val
                break
        for aid, val, mask in attrs:
            if aid == ATTR_OUTPUT_VALUES and mask >> i & 1:
                value = val >> i & 1
                break
        for aid, val, mask in attrs:
            if aid == ATTR_DEBOUNCE and mask >> i & 1:
                deb = val & 0xFFFFFFFF
                break
        return f, value, deb

    @staticmethod
    def validate_flags_v2(flags, debounced):
        if flags & ~V2_VALID:
            raise GpioError(errno.EINVAL)
        if flags & V2_CLOCK_HTE:
            raise GpioError(errno.EOPNOTSUPP)     # no hardware timestamp engine (CONFIG_HTE)
        if (flags & V2_INPUT) and (flags & V2_OUTPUT):
            raise GpioError(errno.EINVAL)
        if (flags & V2_EDGE) and not (flags & V2_INPUT):
            raise GpioError(errno.EINVAL)
        if (flags & V2_OPEN_DRAIN) and (flags & V2_OPEN_SOURCE):
            raise GpioError(errno.EINVAL)
        if (flags & V2_DRIVE) and not (flags & V2_OUTPUT):
            raise GpioError(errno.EINVAL)
        if (flags & V2_BIAS) and not (flags & V2_DIRECTION):
            raise GpioError(errno.EINVAL)
        if bin(flags & V2_BIAS).count("1") > 1:
            raise GpioError(errno.EINVAL)
        if debounced and not (flags & V2_INPUT):
            raise GpioError(errno.EINVAL)

    def validate_config_v2(self, cfg, nlines):
        for i in range(nlines):
            f, _v, deb = self.config_for_line(cfg, i)
            self.validate_flags_v2(f, deb > 0)

    @staticmethod
    def v2_to_v1_flags(f):
        v1 = 0
        for a, b in ((V2_INPUT, REQ_INPUT), (V2_OUTPUT, REQ_OUTPUT), (V2_ACTIVE_LOW, REQ_ACTIVE_LOW),
                     (V2_OPEN_DRAIN, REQ_OPEN_DRAIN), (V2_OPEN_SOURCE, REQ_OPEN_SOURCE),
                     (V2_BIAS_PULL_UP, REQ_PULL_UP), (V2_BIAS_PULL_DOWN, REQ_PULL_DOWN),
                     (V2_BIAS_DISABLED, REQ_BIAS_DISABLE)):
            if f & a:
                v1 |= b
        return v1

    def configure_line_v2(self, req, line, f, value, deb, t_ns, cause, pid):
        self.apply_desc_flags(line, self.v2_to_v1_flags(f))
        line.clock_realtime = bool(f & V2_CLOCK_REALTIME)
        if f & V2_OUTPUT:
            line.edge = 0
            line.debounce_us = 0
            line.deb_gen += 1
            self.direction_output(line, value, t_ns, cause, pid)
        elif f & V2_INPUT:
            # edge_detector_setup(): no event for what the request itself changes
            line.edge = 0
            line.debounce_us = 0
            self.direction_input(line, t_ns, cause, pid)
            line.edge = (EV_REQ_RISING if f & V2_EDGE_RISING else 0) | \
                (EV_REQ_FALLING if f & V2_EDGE_FALLING else 0)
            if deb != line.debounce_us:
                line.deb_gen += 1
                line.deb_level = line.level()
            line.debounce_us = deb

    def linereq_create(self, cc, t_ns, pid, payload, extra):
        offs = struct.unpack_from("=64I", payload)
        label = struct.unpack_from("=32s", payload, 256)[0]
        cfg = self.parse_config_v2(payload[288:288 + V2_CONFIG_SIZE])
        nlines, bufsize = struct.unpack_from(FMT_V2_REQ_TAIL, payload, 288 + V2_CONFIG_SIZE)[0:2]
        padding = struct.unpack_from(FMT_V2_REQ_TAIL, payload, 288 + V2_CONFIG_SIZE)[2:7]
        if extra is None:
            raise GpioError(errno.ENOMEM)
        if nlines == 0 or nlines > V2_LINES_MAX or any(padding):
            raise GpioError(errno.EINVAL)
        self.validate_config_v2(cfg, nlines)
        chip = cc.chip
        consumer = cstr(label) or "?"
        req = Request(extra, "line", chip, [], consumer, 0, 0, pid)
        if bufsize == 0:
            bufsize = nlines * 16
        bufsize = min(bufsize, V2_LINES_MAX * 16)
        req.fifo = 1 << (bufsize - 1).bit_length()      # kfifo_alloc rounds up
        self.defer_log()
        try:
            for i in range(nlines):
                line = self.get_line(chip, offs[i])
                if self.holder_alive(line):
                    raise GpioError(errno.EBUSY)
                line.holder = req
                req.lines.append(line)
                f, value, deb = self.config_for_line(cfg, i)
                self.configure_line_v2(req, line, f, value, deb, t_ns, "request", pid)
                self.notify(line, LINE_CHANGED_REQUESTED)
        except GpioError:
            for line in req.lines:
                self.free_line(line, t_ns, "request-failed")
            self.flush_log()
            raise
        req.armed = True
        self.register(req)
        recs = []
        self.log_request(req, t_ns, "request", recs)
        self.flush_log(recs)
        return payload[:V2_REQUEST_SIZE]

    def op_request_v2(self, req, op, t_ns, pid, payload):
        n = len(req.lines)
        if op == OP_V2_GET_VALUES:
            _bits, mask = struct.unpack_from(FMT_V2_VALUES, payload)
            mask &= (1 << n) - 1
            if not mask:
                raise GpioError(errno.EINVAL)
            bits = 0
            for i, line in enumerate(req.lines):
                if mask >> i & 1:
                    lvl = line.deb_level if line.debounce_us else line.level()
                    if lvl ^ (1 if line.active_low else 0):
                        bits |= 1 << i
            return struct.pack(FMT_V2_VALUES, bits, mask)
        if op == OP_V2_SET_VALUES:
            bits, mask = struct.unpack_from(FMT_V2_VALUES, payload)
            mask &= (1 << n) - 1
            if not mask:
                raise GpioError(errno.EINVAL)
            for i, line in enumerate(req.lines):
                if mask >> i & 1 and not line.is_out:
                    raise GpioError(errno.EPERM)
            for i, line in enumerate(req.lines):
                if mask >> i & 1:
                    raw = (bits >> i & 1) ^ (1 if line.active_low else 0)
                    self.set_output_raw(line, raw)
                    self.update_level(line, t_ns, "set", pid)
            return None
        if op == OP_V2_SET_CONFIG:
            cfg = self.parse_config_v2(payload[:V2_CONFIG_SIZE])
            self.validate_config_v2(cfg, n)
            self.defer_log()
            try:
                for i, line in enumerate(req.lines):
                    f, value, deb = self.config_for_line(cfg, i)
                    self.configure_line_v2(req, line, f, value, deb, t_ns, "config", pid)
                    self.notify(line, LINE_CHANGED_CONFIG)
            finally:
                recs = []
                self.log_request(req, t_ns, "config", recs)
                self.flush_log(recs)
            return None
        raise GpioError(errno.EINVAL)

    def op_request(self, req, op, t_ns, pid, payload):
        if req.kind == "line":
            return self.op_request_v2(req, op, t_ns, pid, payload)
        if op == OP_GET_VALUES:
            vals = bytearray(64)
            if req.kind == "event":
                line = req.lines[0]
                vals[0] = line.level() ^ (1 if line.active_low else 0)
            else:
                for i, line in enumerate(req.lines):
                    vals[i] = line.level() ^ (1 if line.active_low else 0)
            return bytes(vals)
        if req.kind == "event":
            raise GpioError(errno.EINVAL)
        if op == OP_SET_VALUES:
            if not req.lines[0].is_out:
                raise GpioError(errno.EPERM)
            vals = payload[:64]
            for i, line in enumerate(req.lines):
                raw = (1 if vals[i] else 0) ^ (1 if line.active_low else 0)
                self.set_output_raw(line, raw)
                self.update_level(line, t_ns, "set", pid)
            return None
        if op == OP_SET_CONFIG:
            flags, defaults = struct.unpack_from(FMT_HANDLECFG, payload)[0:2]
            self.validate_handle_flags(flags)
            self.defer_log()
            try:
                for i, line in enumerate(req.lines):
                    self.apply_desc_flags(line, flags)
                    if flags & REQ_OUTPUT:
                        self.direction_output(line, defaults[i], t_ns, "config", pid)
                    elif flags & REQ_INPUT:
                        self.direction_input(line, t_ns, "config", pid)
                    self.notify(line, LINE_CHANGED_CONFIG)
            finally:
                req.flags = flags
                recs = []
                self.log_request(req, t_ns, "config", recs)
                self.flush_log(recs)
            return None
        raise GpioError(errno.EINVAL)

    # -- connections ------------------------------------------------------
    def register(self, conn):
        conn.sock.setblocking(False)
        self.sel.register(conn.sock, selectors.EVENT_READ, conn)

    def close_conn(self, conn):
        if conn.closed:
            return
        conn.closed = True
        try:
            self.sel.unregister(conn.sock)
        except (KeyError, ValueError):
            pass
        for fd in conn.fds:
            os.close(fd)
        conn.fds = []
        t = now_ns()
        if isinstance(conn, Request):
            self.log_request(conn, t, "release")
            for line in conn.lines:
                if line.holder is conn:
                    self.free_line(line, t, "release")
            self.debug("released %s request of %s (pid %d)" % (conn.kind, conn.consumer, conn.pid))
        elif isinstance(conn, ChipConn):
            conn.chip.conns.discard(conn)
        conn.sock.close()

    def accept(self, lsock, cls):
        try:
            s, _ = lsock.accept()
        except OSError:
            return
        conn = cls(s)
        self.register(conn)

    def read_msgs(self, conn):
        """Read fixed-size preload messages (with SCM_RIGHTS) from conn."""
        while not conn.closed:
            want = MSG_SIZE - len(conn.buf)
            try:
                data, anc, _flags, _addr = conn.sock.recvmsg(want, socket.CMSG_SPACE(4 * 4))
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                self.close_conn(conn)
                return
            for level, typ, cdata in anc:
                if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
                    n = len(cdata) // 4
                    conn.fds.extend(struct.unpack("=%di" % n, cdata[: n * 4]))
            if not data:
                self.close_conn(conn)
                return
            conn.buf += data
            if len(conn.buf) == MSG_SIZE:
                msg, conn.buf = conn.buf, b""
                fds, conn.fds = conn.fds, []
                self.dispatch(conn, msg, fds)

    def dispatch(self, conn, msg, fds):
        magic, op, t_ns, pid, plen, arg, oflags = struct.unpack_from(MSG_HDR, msg)
        payload = msg[32:]
        reply_fd = fds[0] if fds else None
        extra_fd = fds[1] if len(fds) > 1 else None
        for fd in fds[2:]:
            os.close(fd)
        extra = None
        err, out = 0, None
        try:
            if magic != MAGIC or reply_fd is None:
                raise GpioError(errno.EINVAL)
            if extra_fd is not None:
                extra = socket.socket(fileno=extra_fd)
                extra_fd = None
            if isinstance(conn, OpenConn):
                out = self.op_open(conn, op, pid, arg, oflags, extra)
                extra = None
            elif isinstance(conn, ChipConn):
                if op in (OP_LINEHANDLE, OP_LINEEVENT, OP_V2_GET_LINE):
                    out = self.op_chip(conn, op, t_ns, pid, payload, extra)
                    extra = None      # now owned by the Request
                else:
                    out = self.op_chip(conn, op, t_ns, pid, payload, None)
            elif isinstance(conn, Request):
                out = self.op_request(conn, op, t_ns, pid, payload)
            else:
                raise GpioError(errno.EINVAL)
        except GpioError as e:
            err = e.errno
            self.debug("op %d (ioctl 0x%x) on %s: %s" % (op, arg, type(conn).__name__, os.strerror(err)))
        except Exception as e:  # never let one bad request kill the "kernel"
            sys.stderr.write("gpio-kernel: internal error on op %d: %r\n" % (op, e))
            err = errno.EIO
        if self.deferred is not None:
            self.flush_log()
        if extra is not None:
            extra.close()
        if extra_fd is not None:
            os.close(extra_fd)
        if reply_fd is not None:
            out = out or b""
            rep = struct.pack(REPLY_HDR, err, len(out)) + out
            rep += b"\0" * (MSG_SIZE - len(rep))
            try:
                os.write(reply_fd, rep)
            except OSError:
                pass
            os.close(reply_fd)
        if isinstance(conn, OpenConn):
            self.close_conn(conn)

    def op_open(self, conn, op, pid, minor, oflags, extra):
        if op != OP_OPEN or extra is None:
            raise GpioError(errno.EINVAL)
        for chip in self.chips:
            if chip.minor == minor:
                cc = ChipConn(extra, chip, pid)
                chip.conns.add(cc)
                self.register(cc)
                self.debug("pid %d opened %s" % (pid, chip.node))
                return None
        raise GpioError(errno.ENXIO)

    # -- control socket ---------------------------------------------------
    def control_read(self, cc):
        try:
            data = cc.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.close_control(cc)
            return
        cc.buf += data
        while b"\n" in cc.buf:
            line, cc.buf = cc.buf.split(b"\n", 1)
            cc.queue.append(line.decode("utf-8", "replace").strip())
        self.control_pump(cc)

    def close_control(self, cc):
        if cc.closed:
            return
        cc.closed = True
        try:
            self.sel.unregister(cc.sock)
        except (KeyError, ValueError):
            pass
        cc.sock.close()

    def control_pump(self, cc):
        while cc.queue and not cc.busy and not cc.closed:
            cmd = cc.queue.pop(0)
            if not cmd:
                continue
            cc.busy = True

            def done(reply, cc=cc):
                cc.busy = False
                self.control_send(cc, reply)
                self.control_pump(cc)
            try:
                self.control_command(cmd, done)
            except GpioError as e:
                done("error %s" % os.strerror(e.errno))
            except (ValueError, IndexError, KeyError) as e:
                done("error %s" % (e.args[0] if e.args else "bad arguments"))

    def control_send(self, cc, reply):
        if cc.closed:
            return
        try:
            cc.sock.setblocking(True)
            cc.sock.sendall((reply.replace("\n", " ") + "\n").encode())
            cc.sock.setblocking(False)
        except OSError:
            self.close_control(cc)

    def find_line(self, spec):
        if ":" in spec:
            cname, off = spec.rsplit(":", 1)
            for chip in self.chips:
                if chip.name == cname or chip.label == cname:
                    o = int(off)
                    if 0 <= o < len(chip.lines):
                        return chip.lines[o]
                    raise ValueError("no line %s" % spec)
            raise ValueError("no chip %s" % cname)
        if spec.isdigit():
            o = int(spec)
            if o < len(self.chips[0].lines):
                return self.chips[0].lines[o]
            raise ValueError("no line %s on %s" % (spec, self.chips[0].name))
        for chip in self.chips:
            for line in chip.lines:
                if line.name == spec:
                    return line
        raise ValueError("no line named %s" % spec)

    def set_ext(self, line, value, cause):
        line.ext = value
        self.update_level(line, now_ns(), cause)

    def describe(self, line):
        h = line.holder
        if h is None:
            kind, edge, pid = "none", "none", 0
        else:
            kind, pid = h.kind, h.pid
            edge = {0: "none", 1: "rising", 2: "falling", 3: "both"}.get(line.edge_bits(), "none")
        return ("chip=%s offset=%d name=%s level=%d requested=%d kind=%s direction=%s "
                "consumer=%s active_low=%d bias=%s pull=%s source=%s edge=%s pid=%d" % (
                    line.chip.name, line.offset, line.name or "-", line.level(),
                    1 if h is not None else 0, kind,
                    "output" if line.is_out else "input", json.dumps(line.consumer()),
                    1 if line.active_low else 0, line.bias or "as-is", line.pull,
                    line.source(), edge, pid)) + (
                        " events=%d dropped=%d" % (h.delivered, h.dropped)
                        if isinstance(h, Request) and h.kind in ("event", "line") else "") + (
                        " debounce_us=%d" % line.debounce_us if line.debounce_us else "")

    def control_command(self, cmd, done):
        words = cmd.split()
        verb, a = words[0].lower(), words[1:]

        def need(n):
            if len(a) < n:
                raise ValueError("usage: %s" % USAGE.get(verb, verb))

        if verb in ("press", "release", "float"):
            need(1)
            line = self.find_line(a[0])
            self.set_ext(line, 0 if verb == "press" else None, verb)
            extra = ""
            if line.drive is not None:
                extra = " (line is an output driven by %s)" % json.dumps(line.consumer())
            elif line.ext is None and line.pull == "none":
                extra = " (floating: no pull resistor)"
            done("ok level=%d source=%s%s" % (line.level(), line.source(), extra))
        elif verb == "set":
            need(2)
            line = self.find_line(a[0])
            if a[1] not in ("0", "1"):
                raise ValueError("value must be 0 or 1")
            self.set_ext(line, int(a[1]), "set")
            done("ok level=%d source=%s" % (line.level(), line.source()))
        elif verb == "hold":
            need(2)
            line = self.find_line(a[0])
            ms = float(a[1])
            if ms < 0:
                raise ValueError("MS must be >= 0")
            t0 = now_ns()
            self.set_ext(line, 0, "hold")
            t1 = t0 + int(ms * 1e6)
            self.add_timer(t1, lambda: self.set_ext(line, None, "hold-release"))
            done("ok pressed_ns=%d release_ns=%d" % (t0, t1))
        elif verb == "bounce":
            need(4)
            line = self.find_line(a[0])
            n, interval_us, final = int(a[1]), float(a[2]), a[3]
            if n < 0 or interval_us < 0 or final not in ("0", "1"):
                raise ValueError("usage: %s" % USAGE["bounce"])
            self.bounce(line, n, int(interval_us * 1000), int(final), done)
        elif verb == "get":
            need(1)
            done("ok " + self.describe(self.find_line(a[0])))
        elif verb == "wait":
            need(3)
            line = self.find_line(a[0])
            want = int(a[1])
            timeout_ms = float(a[2])
            if line.level() == want:
                done("ok level=%d t_ns=%d" % (want, now_ns()))
                return
            pending = [done]

            def fire(reply):
                if pending:
                    pending.pop()(reply)
            waiter = (want, fire)
            line.waiters.append(waiter)

            def expire(line=line, waiter=waiter):
                if waiter in line.waiters:
                    line.waiters.remove(waiter)
                    fire("error timeout level=%d" % line.level())
            self.add_timer(now_ns() + int(timeout_ms * 1e6), expire)
        elif verb == "log":
            done("ok %s" % (self.args.log or ""))
        elif verb == "now":
            done("ok %d" % now_ns())
        elif verb == "chips":
            done("ok " + " ".join("%s,%s,%d,%d:%d" % (c.name, c.label, len(c.lines),
                                                      c.major, c.minor) for c in self.chips))
        elif verb == "ping":
            done("ok pong")
        elif verb == "help":
            done("ok " + "; ".join(USAGE[k] for k in sorted(USAGE)))
        else:
            raise ValueError("unknown command %s (try help)" % verb)

    def bounce(self, line, n, interval_ns, final, done):
        state = {"edges": 0, "first": None, "last": None}

        def edge(k):
            lvl = line.level()
            if k < n:
                target = 1 - lvl
            else:
                target = final
            if lvl != target:
                t = now_ns()
                line.ext = target
                self.update_level(line, t, "bounce")
                state["edges"] += 1
                state["last"] = t
                if state["first"] is None:
                    state["first"] = t
            else:
                line.ext = target
            if k < n:
                nxt = k + 1
                # relative to the edge just made: a late timer never squeezes
                # the following edges closer than INTERVAL_US
                when = (state["last"] or now_ns()) + interval_ns
                if nxt == n and line.level() == final:
                    finish()
                    return
                self.add_timer(when, lambda: edge(nxt))
            else:
                finish()

        def finish():
            done("ok edges=%d level=%d first_ns=%d last_ns=%d" % (
                state["edges"], line.level(), state["first"] or 0, state["last"] or 0))

        if n == 0:
            lvl, t = line.level(), now_ns()
            line.ext = final
            self.update_level(line, t, "bounce")
            t = t if lvl != line.level() else 0
            done("ok edges=%d level=%d first_ns=%d last_ns=%d" % (
                1 if t else 0, line.level(), t, t))
            return
        edge(0)

    # -- main loop --------------------------------------------------------
    def run_timers(self):
        t = now_ns()
        while self.timers and self.timers[0][0] <= t:
            _, _, fn = heapq.heappop(self.timers)
            try:
                fn()
            except Exception as e:
                sys.stderr.write("gpio-kernel: timer error: %r\n" % (e,))
            t = now_ns()

    def serve(self):
        while self.running:
            timeout = None
            if self.timers:
                delay = (self.timers[0][0] - now_ns()) / 1e9
                if delay <= 0.002:
                    # epoll only has millisecond resolution: sleep precisely
                    if delay > 0:
                        time.sleep(delay)
                    timeout = 0
                else:
                    timeout = delay - 0.0015
            try:
                events = self.sel.select(timeout)
            except InterruptedError:
                events = []
            for key, _mask in events:
                obj = key.data
                try:
                    if isinstance(obj, tuple):
                        self.accept(obj[0], obj[1])
                    elif isinstance(obj, ControlConn):
                        self.control_read(obj)
                    else:
                        self.read_msgs(obj)
                except Exception as e:
                    sys.stderr.write("gpio-kernel: error: %r\n" % (e,))
            self.run_timers()


USAGE = {
    "press": "press LINE",
    "release": "release LINE",
    "float": "float LINE",
    "set": "set LINE 0|1",
    "bounce": "bounce LINE N INTERVAL_US FINAL",
    "hold": "hold LINE MS",
    "get": "get LINE",
    "wait": "wait LINE 0|1 TIMEOUT_MS",
    "log": "log",
    "now": "now",
    "chips": "chips",
    "ping": "ping",
    "help": "help",
}


# ------------------------------------------------------------ chip set-up ---
def free_major():
    used = set()
    try:
        with open("/proc/devices") as f:
            section = None
            for ln in f:
                ln = ln.strip()
                if ln.endswith("devices:"):
                    section = ln
                    continue
                if section and section.startswith("Character") and ln:
                    used.add(int(ln.split()[0]))
    except OSError:
        pass
    # majors reserved for local/experimental use (Documentation/admin-guide/devices.txt)
    for m in list(range(254, 233, -1)) + list(range(120, 128)) + list(range(60, 64)):
        if m not in used:
            return m
    return 254


def chip_spec(name=None, label="pinctrl-bcm2711", n=58, names=None, pull="bcm2711",
              held=None):
    return {"name": name, "label": label, "n": n,
            "names": names if names is not None else ["GPIO%d" % i for i in range(n)],
            "pull": pull, "held": held or [], "input_only": [], "output_only": [],
            "line_pull": {}}


def offsets(val):
    return [int(x) for x in val.split(",") if x.strip()]


def parse_chips(args, major):
    """Turn the ordered chip options into Chip objects."""
    specs = []
    for kind, val in args.chip_opts:
        if kind == "rpi":
            specs.append(chip_spec())
        elif kind == "rpi4":
            specs.append(chip_spec(names=list(RPI4_DT_NAMES), held=[(42, "ACT", True, 0)]))
        elif kind == "chip":
            parts = val.split(",")
            if len(parts) != 3:
                raise SystemExit("gpio-emu: --chip wants NAME,LABEL,NLINES, got %r" % val)
            name, label, n = parts[0].strip(), parts[1].strip(), int(parts[2])
            if n < 1 or n > 4096:
                raise SystemExit("gpio-emu: bad line count %d" % n)
            specs.append(chip_spec(name or None, label, n, names=[], pull="none"))
        else:
            if not specs:
                specs.append(chip_spec())
            cur = specs[-1]
            if kind == "line_names":
                cur["names"] = [x.strip() for x in val.split(",")]
            elif kind == "input_only":
                cur["input_only"] += offsets(val)
            elif kind == "output_only":
                cur["output_only"] += offsets(val)
            elif kind == "pull":
                # up|down|none for every line, or OFFSETS=up|down|none for some
                offs, _, how = val.rpartition("=")
                if how not in ("up", "down", "none"):
                    raise SystemExit("gpio-emu: --pull wants [OFFSET,...=]up|down|none")
                if offs:
                    for o in offsets(offs):
                        cur["line_pull"][o] = how
                else:
                    cur["pull"] = how
                    cur["line_pull"] = {}
            elif kind == "kernel_held":
                # OFFSET:CONSUMER[:out[:VALUE]|:in]
                p = val.split(":")
                off, cons = int(p[0]), (p[1] if len(p) > 1 else "kernel")
                out = len(p) > 2 and p[2] == "out"
                v = int(p[3]) if len(p) > 3 else 0
                cur["held"].append((off, cons, out, v))
    if not specs:
        specs.append(chip_spec())

    taken = set()
    try:
        for e in os.listdir("/dev"):
            if e.startswith("gpiochip"):
                taken.add(e)
        for e in os.listdir("/sys/bus/gpio/devices"):
            taken.add(e)
    except OSError:
        pass
    chips = []
    for sp in specs:
        name = sp["name"]
        if name is None:
            i = 0
            while "gpiochip%d" % i in taken:
                i += 1
            name = "gpiochip%d" % i
        if not name.startswith("gpiochip") or not name[8:].isdigit():
            raise SystemExit("gpio-emu: chip name must be gpiochipN (libgpiod scans /dev/gpiochip*), got %r" % name)
        if name in taken:
            raise SystemExit("gpio-emu: %s already exists here (another emulator?); "
                             "pick another with --chip gpiochipN,LABEL,NLINES" % name)
        taken.add(name)
        chip = Chip(name, sp["label"], sp["n"], major, int(name[8:]))
        for i, line in enumerate(chip.lines):
            if i < len(sp["names"]):
                line.name = sp["names"][i]
            line.pull = bcm2711_reset_pull(i) if sp["pull"] == "bcm2711" else sp["pull"]
            line.pull = sp["line_pull"].get(i, line.pull)
            line.last_level = 1 if line.pull == "up" else 0
        for off in sp["input_only"] + sp["output_only"] + list(sp["line_pull"]) + \
                [h[0] for h in sp["held"]]:
            if not 0 <= off < len(chip.lines):
                raise SystemExit("gpio-emu: %s has no line %d" % (name, off))
        for off in sp["input_only"]:
            chip.lines[off].input_only = True
        for off in sp["output_only"]:
            chip.lines[off].output_only = True
        for off, cons, out, v in sp["held"]:
            ln = chip.lines[off]
            ln.holder = KernelHold(cons)
            if out:
                ln.is_out = True
                ln.drive = v
            ln.last_level = ln.level()
        chips.append(chip)
    return chips


def create_nodes(chips):
    for chip in chips:
        os.makedirs(chip.sysfs_dir, exist_ok=True)
        with open(os.path.join(chip.sysfs_dir, "dev"), "w") as f:
            f.write("%d:%d\n" % (chip.major, chip.minor))
        with open(os.path.join(chip.sysfs_dir, "uevent"), "w") as f:
            f.write("MAJOR=%d\nMINOR=%d\nDEVNAME=%s\n" % (chip.major, chip.minor, chip.name))
        # libgpiod 2.x (gpiod_check_gpiochip_device) wants realpath() of
        # /sys/dev/char/MAJ:MIN/subsystem to be /sys/bus/gpio, as on a real kernel.
        os.symlink("../../../../bus/gpio", os.path.join(chip.sysfs_dir, "subsystem"))
        try:
            os.makedirs("/sys/dev/char", exist_ok=True)
            os.symlink("../../bus/gpio/devices/" + chip.name, chip.sysdev_link)
        except OSError as e:
            sys.stderr.write("gpio-kernel: cannot make %s (%s): libgpiod 2.x will not accept %s "
                             "(run under tools/emu-ns, which mounts a private /sys/dev)\n"
                             % (chip.sysdev_link, e.strerror, chip.node))
        os.mknod(chip.node, 0o660 | stat.S_IFCHR, os.makedev(chip.major, chip.minor))
        os.chmod(chip.node, 0o660)


def remove_nodes(chips):
    for chip in chips:
        for p in (chip.node, os.path.join(chip.sysfs_dir, "dev"),
                  os.path.join(chip.sysfs_dir, "uevent"), os.path.join(chip.sysfs_dir, "subsystem"),
                  chip.sysdev_link):
            try:
                os.unlink(p)
            except OSError:
                pass
        try:
            os.rmdir(chip.sysfs_dir)
        except OSError:
            pass


class ChipOpt(argparse.Action):
    def __call__(self, parser, ns, values, option_string=None):
        lst = getattr(ns, "chip_opts", None) or []
        lst.append((self.dest, values))
        ns.chip_opts = lst


def main():
    ap = argparse.ArgumentParser(description="FallGuard GPIO kernel emulator server")
    ap.add_argument("--listen", required=True, help="Unix socket for the preload")
    ap.add_argument("--control", help="Unix socket for the test control protocol")
    ap.add_argument("--log", help="JSON-lines output log (appended)")
    ap.add_argument("--ready-file", help="written (env lines) once the chips exist")
    ap.add_argument("--major", type=int, default=0)
    ap.add_argument("--release-outputs", choices=("persist", "input"), default="persist")
    ap.add_argument("--verbose", action="store_true")
    ap.set_defaults(chip_opts=[])
    for opt, dest, nargs in (("--chip", "chip", None), ("--line-names", "line_names", None),
                             ("--input-only", "input_only", None),
                             ("--output-only", "output_only", None),
                             ("--pull", "pull", None), ("--kernel-held", "kernel_held", None),
                             ("--rpi", "rpi", 0), ("--rpi4", "rpi4", 0)):
        ap.add_argument(opt, dest=dest, action=ChipOpt, nargs=nargs)
    args = ap.parse_args()

    major = args.major or free_major()
    chips = parse_chips(args, major)
    server = Server(args, chips)

    socks = []
    for path, cls in ((args.listen, OpenConn), (args.control, ControlConn)):
        if not path:
            continue
        try:
            os.unlink(path)
        except OSError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        os.chmod(path, 0o666)
        s.listen(64)
        s.setblocking(False)
        server.sel.register(s, selectors.EVENT_READ, (s, cls))
        socks.append((s, path))

    def stop(_sig, _frm):
        # select() is restarted after signals (PEP 475): leave by exception
        server.running = False
        raise SystemExit(0)
    # SIGINT is left alone: a background job of a non-interactive shell ignores
    # it, so ^C reaches the command under test while the "kernel" stays up.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGHUP, stop)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)

    try:
        create_nodes(chips)
        t = now_ns()
        for chip in chips:
            server.log({"t_ns": t, "chip": chip.name, "event": "chip", "label": chip.label,
                        "lines": len(chip.lines), "dev": "%d:%d" % (chip.major, chip.minor)})
            for ln in chip.lines:
                if isinstance(ln.holder, KernelHold) and ln.is_out:
                    server.log({"t_ns": t, "chip": chip.name, "offset": ln.offset,
                                "name": ln.name, "value": ln.level(),
                                "consumer": ln.consumer(), "event": "level",
                                "cause": "kernel"})
        if args.ready_file:
            tmp = args.ready_file + ".tmp"
            with open(tmp, "w") as f:
                f.write("FAKEGPIO_CHIPS_ADD=%s\n" % ";".join(
                    "%d:%d=%s" % (c.major, c.minor, args.listen) for c in chips))
                f.write("CHIPS=%s\n" % " ".join(c.name for c in chips))
            os.rename(tmp, args.ready_file)
        server.serve()
    finally:
        for conn in [k.data for k in list(server.sel.get_map().values())]:
            if isinstance(conn, Request):
                server.close_conn(conn)
        remove_nodes(chips)
        for s, path in socks:
            s.close()
            try:
                os.unlink(path)
            except OSError:
                pass
        if server.logf:
            server.logf.close()


if __name__ == "__main__":
    main()

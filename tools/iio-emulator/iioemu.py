#!/usr/bin/env python3
"""iioemu: a Linux IIO accelerometer emulator for the unmodified libiio ``local:`` backend.

The machines that run FallGuard's tests have no IIO in their kernel.  libiio's local backend
only reads files under ``/sys/bus/iio/devices`` and the ``/dev/iio:deviceN`` node, so this
module builds a fake sysfs device folder (on the private tmpfs that ``tools/emu-ns`` mounts on
``/sys/bus``) that looks like the one the real Linux driver creates, and plays an accelerometer
recording through it:

* direct mode: the ``in_*_raw`` files are rewritten at the device's sampling frequency
  (temp file + rename, so a reader never sees half a value);
* buffered mode: ``/dev/iio:deviceN`` is a FIFO; while ``buffer/enable`` is 1 the emulator writes
  packed scan records of the enabled channels into it, like the kernel's kfifo buffer.

Writes by the reader to writable attributes (sampling frequency, scale, calibbias, buffer/enable,
scan_elements/*_en, trigger/current_trigger, ...) are noticed with inotify (polling as a
fall-back) and handled like the driver would: the value is parsed with the kernel's rules,
applied, and the file is rewritten with the driver's formatting (rejected values are restored,
since a regular file cannot return EINVAL/EBUSY to the writer).

Models: ``adxl345-direct`` (LTS kernels, direct mode only), ``adxl345-buffered`` (first mainline
driver with the FIFO-backed kfifo buffer, no trigger) and ``mpu6050`` (inv_mpu6050, triggered
buffer with its own ``mpu6050-devN`` trigger), ``mpu6050-direct`` (the same driver without an
interrupt line: it still probes, in direct mode only).  See README.md for the details and the known
differences from real hardware.

Use from Python (inside the emulator namespace, see ``in_emu_namespace``/``reexec_in_namespace``)::

    from iioemu import Emulator
    with Emulator("mpu6050", "walk.csv", write_log="log.csv") as emu:
        ...                       # run the reader
        emu.command("stall 2")    # same text protocol as the control socket
        print(emu.status()["written"])

Only the Python 3 standard library is used.
"""

from __future__ import annotations

import argparse
import bisect
import csv
import ctypes
import ctypes.util
import errno
import fcntl
import heapq
import math
import os
import random
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import termios
import threading
import time

__all__ = [
    "Emulator", "Recording", "KernelError", "MODELS", "FAULTS", "main",
    "in_emu_namespace", "reexec_in_namespace", "parse_fault_spec",
]

GRAVITY = 9.80665
HERE = os.path.dirname(os.path.abspath(__file__))
EMU_NS = os.path.normpath(os.path.join(HERE, "..", "emu-ns"))
DEFAULT_SYSFS = "/sys/bus/iio/devices"
DEFAULT_DEV = "/dev"
# The IIO character-device major is allocated dynamically by the kernel; any value will do.
IIO_CHR_MAJOR = 246
MODELS = ("adxl345-direct", "adxl345-buffered", "mpu6050", "mpu6050-direct")
FAULTS = ("stall", "unplug", "stuck", "saturate", "garbage")
EXIT_SKIP = 77

CLOCKS = {
    "realtime": time.CLOCK_REALTIME,
    "monotonic": time.CLOCK_MONOTONIC,
    "monotonic_raw": getattr(time, "CLOCK_MONOTONIC_RAW", 4),
    "realtime_coarse": 5,
    "monotonic_coarse": 6,
    "boottime": getattr(time, "CLOCK_BOOTTIME", 7),
    "tai": getattr(time, "CLOCK_TAI", 11),
}


_UMASK = os.umask(0o022)
os.umask(_UMASK)


def mono_ns() -> int:
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


# --------------------------------------------------------------------------------------------
# Kernel-style parsing and formatting (lib/kstrtox.c, drivers/iio/industrialio-core.c)
# --------------------------------------------------------------------------------------------

class KernelError(Exception):
    """What the kernel's store() would have returned (an errno)."""

    def __init__(self, err: int, msg: str = ""):
        super().__init__(msg or os.strerror(err))
        self.errno = err


def cstr(data: bytes) -> str:
    """Contents of a sysfs write as the kernel sees it: a C string (libiio appends a NUL)."""
    return data.split(b"\0", 1)[0].decode("utf-8", "replace")


_DIGITS = {8: "01234567", 10: "0123456789", 16: "0123456789abcdefABCDEF"}


def _kstrtoull(s: str, base: int) -> int:
    if s.startswith("+"):
        s = s[1:]
    if base == 0:
        if s[:2] in ("0x", "0X") and len(s) > 2 and s[2] in _DIGITS[16]:
            base, s = 16, s[2:]
        elif s.startswith("0"):
            base = 8
        else:
            base = 10
    elif base == 16 and s[:2] in ("0x", "0X"):
        s = s[2:]
    if s.endswith("\n"):
        s = s[:-1]
    if not s or any(c not in _DIGITS[base] for c in s):
        raise KernelError(errno.EINVAL)
    v = int(s, base)
    if v >= 1 << 64:
        raise KernelError(errno.ERANGE)
    return v


def kstrtoll(s: str, base: int = 0) -> int:
    if s.startswith("-"):
        v = _kstrtoull(s[1:], base)
        if v > 1 << 63:
            raise KernelError(errno.ERANGE)
        return -v
    v = _kstrtoull(s, base)
    if v >= 1 << 63:
        raise KernelError(errno.ERANGE)
    return v


def kstrtoint(s: str, base: int = 0) -> int:
    v = kstrtoll(s, base)
    if not -(1 << 31) <= v < (1 << 31):
        raise KernelError(errno.ERANGE)
    return v


def kstrtouint(s: str, base: int = 0) -> int:
    v = _kstrtoull(s, base)
    if v >= 1 << 32:
        raise KernelError(errno.ERANGE)
    return v


def kstrtobool(s: str) -> bool:
    if s[:1] in ("y", "Y", "t", "T", "1"):
        return True
    if s[:1] in ("n", "N", "f", "F", "0"):
        return False
    if s[:1] in ("o", "O"):
        if s[1:2] in ("n", "N"):
            return True
        if s[1:2] in ("f", "F"):
            return False
    raise KernelError(errno.EINVAL)


def str_to_fixpoint(s: str, fract_mult: int) -> tuple[int, int]:
    """__iio_str_to_fixpoint(): fract_mult 100000 = micro, 100000000 = nano, 0 = integer."""
    if fract_mult == 0:
        return kstrtoint(s, 0), 0
    i = f = 0
    integer_part, negative = True, False
    if s.startswith("-"):
        negative, s = True, s[1:]
    elif s.startswith("+"):
        s = s[1:]
    for pos, c in enumerate(s):
        if "0" <= c <= "9":
            if integer_part:
                i = i * 10 + ord(c) - 48
            else:
                f += fract_mult * (ord(c) - 48)
                fract_mult //= 10
        elif c == "\n":
            if pos == len(s) - 1:
                break
            raise KernelError(errno.EINVAL)
        elif c == "." and integer_part:
            integer_part = False
        else:
            raise KernelError(errno.EINVAL)
    if negative:
        if i:
            i = -i
        else:
            f = -f
    return i, f


def sysfs_streq(a: str, b: str) -> bool:
    """Equal, ignoring one trailing newline on either side."""
    a = a[:-1] if a.endswith("\n") else a
    b = b[:-1] if b.endswith("\n") else b
    return a == b


def same_text(have: str, want: str) -> bool:
    """True if a reader gets the same value from both: sysfs shows "1\\n", libiio writes "1\\0"
    and strips the last byte of what it reads, a shell writes "1\\n"."""
    if have == want:
        return True
    return (len(have) == len(want) and have[:-1] == want[:-1] and have[-1:] in ("\0", "\n")
            and want.endswith("\n"))


def fmt_micro(val: int, val2: int) -> str:
    if val2 < 0:
        return "-%d.%06d\n" % (abs(val), -val2)
    return "%d.%06d\n" % (val, val2)


def fmt_nano(val: int, val2: int) -> str:
    if val2 < 0:
        return "-%d.%09d\n" % (abs(val), -val2)
    return "%d.%09d\n" % (val, val2)


def sext(v: int, bits: int) -> int:
    v &= (1 << bits) - 1
    return v - (1 << bits) if v & (1 << (bits - 1)) else v


def c_div(a: int, b: int) -> int:
    """C integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def round_half_up(x: float) -> int:
    return int(math.floor(x + 0.5))


# --------------------------------------------------------------------------------------------
# Recording
# --------------------------------------------------------------------------------------------

class Recording:
    """An accelerometer recording in g: CSV ``x_g,y_g,z_g`` at ``rate`` Hz, or with a leading
    (or any) ``t_s`` column giving each row's time, and optionally a gyroscope's angular
    velocity ``gx_dps,gy_dps,gz_dps`` (degrees per second about the same axes): then values
    are 6-tuples (``gyro`` is True).  ``value(r)`` interpolates linearly."""

    def __init__(self, path: str, rate: float = 40.0):
        self.path = path
        with open(path, newline="") as fh:
            rows = [r for r in csv.reader(fh) if r and any(c.strip() for c in r)]
        if not rows:
            raise ValueError(f"{path}: empty recording")
        header = [c.strip().lower() for c in rows[0]]

        def numeric(cell):
            try:
                float(cell)
                return True
            except ValueError:
                return False

        if all(numeric(c) for c in rows[0]):
            header = ["t_s", "x_g", "y_g", "z_g"] if len(rows[0]) >= 4 else ["x_g", "y_g", "z_g"]
        else:
            rows = rows[1:]
        try:
            ix, iy, iz = header.index("x_g"), header.index("y_g"), header.index("z_g")
        except ValueError:
            raise ValueError(f"{path}: need columns x_g,y_g,z_g (optional t_s), got {header}")
        it = header.index("t_s") if "t_s" in header else None
        gyro = [header.index(c) for c in ("gx_dps", "gy_dps", "gz_dps") if c in header]
        if gyro and len(gyro) != 3:
            raise ValueError(f"{path}: need all of gx_dps,gy_dps,gz_dps or none, got {header}")
        self.gyro = bool(gyro)
        cols = [ix, iy, iz] + gyro
        self.cols = [[] for _ in cols]
        xs, ys, zs = self.cols[0], self.cols[1], self.cols[2]
        ts = []
        for n, r in enumerate(rows):
            try:
                values = [float(r[i]) for i in cols]
                ts.append(float(r[it]) if it is not None else n / rate)
            except (ValueError, IndexError):
                raise ValueError(f"{path}: bad row {n + 2}: {r}")
            for column, v in zip(self.cols, values):
                column.append(v)
        if not xs:
            raise ValueError(f"{path}: no samples")
        t0 = ts[0]
        ts = [t - t0 for t in ts]
        if any(b < a for a, b in zip(ts, ts[1:])):
            raise ValueError(f"{path}: t_s must not decrease")
        self.t, self.x, self.y, self.z = ts, xs, ys, zs
        self.n = len(ts)
        self.uniform = it is None
        self.rate = rate
        dt = (ts[-1] - ts[-2]) if self.n > 1 else 1.0 / rate
        self.dt_last = dt if dt > 0 else 1.0 / rate
        self.end = ts[-1]                      # time of the last sample
        self.period = ts[-1] + self.dt_last    # loop period
        # rest postures: the mean of the first and of the last second of the recording
        self.pre = self._mean(lambda t: t < 1.0 - 1e-9)
        self.post = self._mean(lambda t: t > self.end - 1.0 + 1e-9)

    def _mean(self, pick):
        idx = [i for i, t in enumerate(self.t) if pick(t)] or [0]
        k = len(idx)
        return tuple(sum(c[i] for i in idx) / k for c in self.cols)

    def _interp(self, i: int, j: int, w: float):
        return tuple(c[i] + (c[j] - c[i]) * w for c in self.cols)

    def value(self, r: float, loop: bool):
        """Acceleration (g), and angular velocity (deg/s) after it in a six-axis recording, at
        recording time r (s) and the phase: pre / play / post."""
        if r < 0:
            return self.pre, "pre"
        if loop:
            r = math.fmod(r, self.period)
        elif r > self.end:
            return self.post, "post"
        if r >= self.end:
            if self.n == 1:
                return tuple(c[0] for c in self.cols), "play"
            # between the last sample and the first one of the next loop
            return self._interp(self.n - 1, 0, (r - self.end) / self.dt_last), "play"
        if self.uniform:
            pos = r * self.rate
            i = min(int(pos), self.n - 2)
            return self._interp(i, i + 1, pos - i), "play"
        i = bisect.bisect_right(self.t, r) - 1
        i = max(0, min(i, self.n - 2))
        span = self.t[i + 1] - self.t[i]
        return self._interp(i, i + 1, (r - self.t[i]) / span if span > 0 else 0.0), "play"


# --------------------------------------------------------------------------------------------
# Channels and scan layout (drivers/iio/industrialio-buffer.c rules)
# --------------------------------------------------------------------------------------------

class Chan:
    def __init__(self, cid: str, index: int, endian: str, sign: str, bits: int, storage: int,
                 shift: int = 0):
        self.id = cid
        self.index = index
        self.endian, self.sign, self.bits, self.storage, self.shift = endian, sign, bits, storage, shift
        self.nbytes = storage // 8
        self.fmt = ("<" if endian == "le" else ">") + {1: "b", 2: "h", 4: "i", 8: "q"}[self.nbytes]
        if sign == "u":
            self.fmt = self.fmt.upper()

    @property
    def prefix(self) -> str:
        return "in_" + self.id

    def type_str(self) -> str:
        return "%s:%s%d/%d>>%d\n" % (self.endian, self.sign, self.bits, self.storage, self.shift)


def scan_layout(chans):
    """[(chan, offset)], record size: each element aligned to its own size, record padded to
    the largest element (iio_compute_scan_bytes / iio_device_get_sample_size)."""
    off, largest, items = 0, 1, []
    for c in sorted(chans, key=lambda c: c.index):
        n = c.nbytes
        if off % n:
            off += n - off % n
        items.append((c, off))
        off += n
        largest = max(largest, n)
    if off % largest:
        off += largest - off % largest
    return items, off


# --------------------------------------------------------------------------------------------
# Device models
# --------------------------------------------------------------------------------------------

class Attr:
    __slots__ = ("path", "show", "store", "raw")

    def __init__(self, path, show=None, store=None, raw=False):
        self.path, self.show, self.store, self.raw = path, show, store, raw


class Model:
    """Driver behaviour: attributes, defaults, conversion of g to raw counts."""
    name = ""
    buffered = False
    needs_trigger = False
    has_timestamp_clock = False
    accel_ids = ("accel_x", "accel_y", "accel_z")

    def __init__(self, emu: "Emulator"):
        self.emu = emu
        self.scan_chans: list[Chan] = []
        self.reset()

    # -- to override
    def reset(self):
        pass

    def store_unsupported(self, s):
        """A write to an info attribute whose write_raw case does not exist (``_raw``,
        ``in_temp_offset``...): the IIO core parses the value (INT_PLUS_MICRO), the driver
        returns EINVAL. The IIO core makes every info attribute 0644 when the driver has a
        write_raw, so these files are writable and the write fails."""
        str_to_fixpoint(s, 100000)
        raise KernelError(errno.EINVAL)

    def rate_hz(self) -> float:
        raise NotImplementedError

    def attrs(self) -> list[Attr]:
        raise NotImplementedError

    def raw_ids(self) -> list[str]:
        return list(self.accel_ids)

    def convert(self, g, rng) -> dict:
        raise NotImplementedError

    def accel_limits(self) -> tuple[int, int]:
        raise NotImplementedError

    def scale_text(self) -> str:
        raise NotImplementedError

    def freeze_raw_when_buffered(self) -> bool:
        return False

    def trigger_name(self):
        return None

    def direct_device(self) -> bool:
        """True when the device registers no character device (no buffer and no events)."""
        return not self.buffered


class Adxl345(Model):
    """drivers/iio/accel/adxl345_core.c.  Direct: the LTS driver (6.1/6.6/6.12: no buffer, no
    trigger).  Buffered: the first mainline FIFO version (kfifo buffer fed by the chip's FIFO
    watermark interrupt, no trigger, no timestamp), which kept the LTS attributes."""
    name = "adxl345"
    BASE_NHZ = 97656250
    USCALE = 38300
    AVAIL = ("0.09765625 0.1953125 0.390625 0.78125 1.5625 3.125 6.25 12.5 25 50 100 200 400 "
             "800 1600 3200\n")

    def __init__(self, emu, buffered: bool):
        self.buffered = buffered
        super().__init__(emu)
        self.scan_chans = [Chan(cid, i, "le", "s", 13, 16) for i, cid in enumerate(self.accel_ids)]

    def reset(self):
        self.odr = 0x0A          # BW_RATE reset value: 100 Hz
        self.ofs = [0, 0, 0]     # OFSX/OFSY/OFSZ registers (u8)

    def rate_hz(self):
        return (self.BASE_NHZ << self.odr) / 1e9

    def scale_text(self):
        return fmt_micro(0, self.USCALE)

    def show_freq(self):
        nhz = self.BASE_NHZ << self.odr
        return fmt_nano(nhz // 1_000_000_000, nhz % 1_000_000_000)   # IIO_VAL_INT_PLUS_NANO

    def store_freq(self, s):
        val, val2 = str_to_fixpoint(s, 100000000)            # write_raw_get_fmt: INT_PLUS_NANO
        n = c_div(val * 1_000_000_000 + val2, self.BASE_NHZ)  # div_s64
        if n < 0:
            code = 15       # ilog2() of a negative s64 seen as u64 is 63, clamped to 15
        elif n == 0:
            code = 0        # ilog2(0) is -1, clamped to 0
        else:
            code = min(15, n.bit_length() - 1)
        self.odr = code

    def store_scale(self, s):
        raise KernelError(errno.EINVAL)

    def show_calibbias(self, i):
        return "%d\n" % (sext(self.ofs[i], 8) * 4)

    def store_calibbias(self, i, s):
        val = kstrtoint(s, 0)                                # IIO_VAL_INT
        self.ofs[i] = c_div(val, 4) & 0xFF                    # regmap_write(OFS, val / 4)

    def attrs(self):
        a = [
            # 0644 like every IIO info attribute of a driver with write_raw; adxl345_write_raw
            # has no case for SCALE (one scale at full resolution): EINVAL.
            Attr("in_accel_scale", lambda: self.scale_text(), self.store_scale),
            Attr("in_accel_sampling_frequency", self.show_freq, self.store_freq),
            Attr("sampling_frequency_available", lambda: self.AVAIL),
        ]
        for i, cid in enumerate(self.accel_ids):
            a.append(Attr(f"in_{cid}_raw", raw=True))
            a.append(Attr(f"in_{cid}_calibbias", (lambda i=i: self.show_calibbias(i)),
                          (lambda s, i=i: self.store_calibbias(i, s))))
        return a

    def accel_limits(self):
        return -4096, 4095       # 13-bit full resolution (+-16 g)

    def convert(self, g, rng):
        lo, hi = self.accel_limits()
        out = {}
        for i, cid in enumerate(self.accel_ids):
            c = round_half_up(g[i] * GRAVITY / (self.USCALE * 1e-6)) + sext(self.ofs[i], 8) * 4
            out[cid] = max(lo, min(hi, c))
        return out



class Mpu6050(Model):
    """drivers/iio/imu/inv_mpu6050 (inv_mpu_core.c, inv_mpu_ring.c, inv_mpu_trigger.c) as in
    the 6.x kernels of Raspberry Pi OS: triggered buffer, trigger ``mpu6050-dev<N>``."""
    name = "mpu6050"
    buffered = True
    needs_trigger = True
    has_timestamp_clock = True
    ACCEL_SCALE = (598, 1196, 2392, 4785)                    # micro (m/s^2)/LSB, +-2/4/8/16 g
    GYRO_SCALE = (133090, 266181, 532362, 1064724)           # nano (rad/s)/LSB, +-250..2000 dps
    GYRO_LSB_PER_DPS = (131.0, 65.5, 32.8, 16.4)
    TEMP_OFFSET = 12420
    TEMP_SCALE = 2941176
    TEMP_RAW = -3920                                         # 25.0 degC
    FACTORY_ACCEL_OFFSET = (-2948, 1512, 1418)               # XA/YA/ZA_OFFS factory trim
    GYRO_BIAS = (3, -2, 1)                                   # counts at rest
    gyro_ids = ("anglvel_x", "anglvel_y", "anglvel_z")

    def __init__(self, emu, mount_matrix=None, buffered=True):
        # Without an interrupt line (no `interrupt=` in the overlay) inv_mpu_core's probe skips
        # the trigger and the triggered buffer: direct mode only, no /dev node.
        self.buffered = buffered
        self.needs_trigger = buffered
        self.mount = mount_matrix or ["1", "0", "0", "0", "1", "0", "0", "0", "1"]
        self.mount_f = [float(v) for v in self.mount]
        m = self.mount_f
        self.mount_det = 1.0 if (m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
                                 + m[2] * (m[3] * m[7] - m[4] * m[6])) >= 0 else -1.0
        super().__init__(emu)
        ch = [Chan(cid, i, "be", "s", 16, 16) for i, cid in enumerate(self.accel_ids)]
        ch.append(Chan("temp", 3, "be", "s", 16, 16))
        ch += [Chan(cid, 4 + i, "be", "s", 16, 16) for i, cid in enumerate(self.gyro_ids)]
        ch.append(Chan("timestamp", 7, "le", "s", 64, 64))
        self.scan_chans = ch

    def reset(self):
        self.divider = 1000 // 50 - 1          # INV_MPU6050_INIT_FIFO_RATE = 50 Hz
        self.accel_fs = 0                      # +-2 g
        self.gyro_fs = 3                       # +-2000 dps
        self.accel_cb = list(self.FACTORY_ACCEL_OFFSET)
        self.gyro_cb = [0, 0, 0]
        self.trigger_set = True                # probe sets indio_dev->trig to its own trigger
        self.clock = "realtime"

    def rate_hz(self):
        return 1000.0 / (self.divider + 1)     # the chip's real rate

    def scale_text(self):
        return fmt_micro(0, self.ACCEL_SCALE[self.accel_fs])

    def trigger_name(self):
        return "%s-dev%d" % (self.name, self.emu.index)

    def freeze_raw_when_buffered(self):
        return True            # read_raw(RAW) claims direct mode: -EBUSY while buffered

    def _claim_direct(self):
        if self.emu.buffer_enabled:
            raise KernelError(errno.EBUSY)

    def show_freq(self):
        return "%u\n" % (1000 // (self.divider + 1))

    def store_freq(self, s):
        rate = kstrtoint(s, 10)
        if rate < 4 or rate > 1000:
            raise KernelError(errno.EINVAL)
        self.divider = 1000 // rate - 1

    def store_accel_scale(self, s):
        val, val2 = str_to_fixpoint(s, 100000)
        self._claim_direct()
        if val != 0 or val2 not in self.ACCEL_SCALE:
            raise KernelError(errno.EINVAL)
        self.accel_fs = self.ACCEL_SCALE.index(val2)

    def store_gyro_scale(self, s):
        val, val2 = str_to_fixpoint(s, 100000000)
        self._claim_direct()
        if val != 0 or val2 not in self.GYRO_SCALE:
            raise KernelError(errno.EINVAL)
        self.gyro_fs = self.GYRO_SCALE.index(val2)

    def store_unsupported(self, s):
        # inv_mpu6050_write_raw claims direct mode first: EBUSY while the buffer is enabled
        str_to_fixpoint(s, 100000)
        self._claim_direct()
        raise KernelError(errno.EINVAL)

    def store_cb(self, table, i, s):
        val, _ = str_to_fixpoint(s, 100000)    # write_raw_get_fmt default: INT_PLUS_MICRO
        self._claim_direct()
        table[i] = sext(val, 16)               # __be16 register pair

    def store_clock(self, s):
        for name in CLOCKS:
            if sysfs_streq(s, name):
                break
        else:
            raise KernelError(errno.EINVAL)
        if self.emu.buffer_enabled:
            raise KernelError(errno.EBUSY)
        self.clock = name

    def show_trigger(self):
        return (self.trigger_name() + "\n") if self.trigger_set else ""

    def store_trigger(self, s):
        if self.emu.buffer_enabled:
            raise KernelError(errno.EBUSY)
        # iio_trigger_acquire_by_name(): an unknown name leaves no trigger, without error
        self.trigger_set = sysfs_streq(s, self.trigger_name())

    def attrs(self):
        mm = "%s, %s, %s; %s, %s, %s; %s, %s, %s\n" % tuple(self.mount)
        a = [
            Attr("in_accel_scale", self.scale_text, self.store_accel_scale),
            Attr("in_accel_scale_available", lambda: "0.000598 0.001196 0.002392 0.004785\n"),
            Attr("in_accel_mount_matrix", lambda: mm),
            Attr("in_accel_matrix", lambda: "0, 0, 0; 0, 0, 0; 0, 0, 0\n"),   # deprecated
            Attr("in_anglvel_scale", lambda: fmt_nano(0, self.GYRO_SCALE[self.gyro_fs]),
                 self.store_gyro_scale),
            Attr("in_anglvel_scale_available",
                 lambda: "0.000133090 0.000266181 0.000532362 0.001064724\n"),
            Attr("in_anglvel_mount_matrix", lambda: mm),
            Attr("in_gyro_matrix", lambda: "0, 0, 0; 0, 0, 0; 0, 0, 0\n"),    # deprecated
            Attr("in_temp_raw", raw=True),
            Attr("in_temp_offset", lambda: "%d\n" % self.TEMP_OFFSET, self.store_unsupported),
            Attr("in_temp_scale", lambda: fmt_micro(self.TEMP_SCALE // 1000000,
                                                    self.TEMP_SCALE % 1000000), self.store_unsupported),
            Attr("sampling_frequency", self.show_freq, self.store_freq),
            Attr("sampling_frequency_available", lambda: "10 20 50 100 200 500\n"),
            Attr("current_timestamp_clock", lambda: self.clock + "\n", self.store_clock),
        ]
        if self.buffered:
            a.append(Attr("trigger/current_trigger", self.show_trigger, self.store_trigger))
        for i, cid in enumerate(self.accel_ids):
            a.append(Attr(f"in_{cid}_raw", raw=True))
            a.append(Attr(f"in_{cid}_calibbias", (lambda i=i: "%d\n" % self.accel_cb[i]),
                          (lambda s, i=i: self.store_cb(self.accel_cb, i, s))))
        for i, cid in enumerate(self.gyro_ids):
            a.append(Attr(f"in_{cid}_raw", raw=True))
            a.append(Attr(f"in_{cid}_calibbias", (lambda i=i: "%d\n" % self.gyro_cb[i]),
                          (lambda s, i=i: self.store_cb(self.gyro_cb, i, s))))
        return a

    def raw_ids(self):
        return list(self.accel_ids) + list(self.gyro_ids) + ["temp"]

    def accel_limits(self):
        return -32768, 32767

    def convert(self, g, rng):
        m = self.mount_f
        # the mount matrix M maps chip axes to board axes (board = M . chip): chip = M^T . board
        chip = [m[0] * g[0] + m[3] * g[1] + m[6] * g[2],
                m[1] * g[0] + m[4] * g[1] + m[7] * g[2],
                m[2] * g[0] + m[5] * g[1] + m[8] * g[2]]
        scale = self.ACCEL_SCALE[self.accel_fs] * 1e-6
        out = {}
        for i, cid in enumerate(self.accel_ids):
            # the offset registers are in +-16 g units (1/2048 g per LSB)
            trim_g = (self.accel_cb[i] - self.FACTORY_ACCEL_OFFSET[i]) / 2048.0
            c = round_half_up((chip[i] + trim_g) * GRAVITY / scale)
            out[cid] = max(-32768, min(32767, c))
        lsb = self.GYRO_LSB_PER_DPS[self.gyro_fs]
        # A six-axis recording's angular velocity (board frame, deg/s) into the chip frame like
        # the acceleration; an axial vector, so a mirroring matrix (det -1) also flips its sense.
        w = (0.0, 0.0, 0.0)
        if len(g) == 6:
            d = self.mount_det
            w = tuple(d * (m[j] * g[3] + m[3 + j] * g[4] + m[6 + j] * g[5]) for j in range(3))
        for i, cid in enumerate(self.gyro_ids):
            # a resting offset of a few counts (the chip's zero-rate output) and the calibbias
            dps = w[i] + (self.GYRO_BIAS[i] / 16.4) + self.gyro_cb[i] / 32.8
            sigma = 1.5 * self.emu.noise          # a few counts at +-2000 dps
            c = round_half_up(dps * lsb + (rng.gauss(0.0, sigma) if sigma > 0 else 0.0))
            out[cid] = max(-32768, min(32767, c))
        out["temp"] = self.TEMP_RAW
        return out


# --------------------------------------------------------------------------------------------
# inotify through ctypes
# --------------------------------------------------------------------------------------------

IN_CLOSE_WRITE = 0x00000008
IN_Q_OVERFLOW = 0x00004000
IN_IGNORED = 0x00008000
_EVENT = struct.Struct("iIII")


class Inotify:
    def __init__(self):
        name = ctypes.util.find_library("c") or "libc.so.6"
        self.libc = ctypes.CDLL(name, use_errno=True)
        fd = self.libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.fd = fd
        self.wds: dict[int, str] = {}

    def add(self, path: str, tag: str):
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(path), IN_CLOSE_WRITE)
        if wd < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch " + path)
        self.wds[wd] = tag

    def read(self):
        """[(tag, name)] for IN_CLOSE_WRITE events; tag None means the queue overflowed."""
        out = []
        while True:
            try:
                buf = os.read(self.fd, 65536)
            except BlockingIOError:
                return out
            off = 0
            while off + _EVENT.size <= len(buf):
                wd, mask, _cookie, ln = _EVENT.unpack_from(buf, off)
                name = buf[off + _EVENT.size: off + _EVENT.size + ln].split(b"\0", 1)[0]
                off += _EVENT.size + ln
                if mask & IN_Q_OVERFLOW:
                    out.append((None, ""))
                elif mask & IN_IGNORED:
                    self.wds.pop(wd, None)
                elif mask & IN_CLOSE_WRITE and wd in self.wds:
                    out.append((self.wds[wd], os.fsdecode(name)))

    def clear(self):
        self.wds.clear()       # watches of removed directories go away by themselves

    def close(self):
        os.close(self.fd)


# --------------------------------------------------------------------------------------------
# Namespace helpers
# --------------------------------------------------------------------------------------------

def in_emu_namespace() -> bool:
    return os.environ.get("FALLGUARD_EMU_NS") == "1"


def reexec_in_namespace(script: str, argv: list[str]):
    """Replace this process with ``tools/emu-ns python3 script argv...`` (exits 77 if that is
    impossible).  Bench scripts call this first, then use Emulator normally."""
    if in_emu_namespace():
        return
    if not os.access(EMU_NS, os.X_OK):
        sys.stderr.write(f"iio-emu: {EMU_NS} not found or not executable\n")
        sys.exit(EXIT_SKIP)
    os.execv(EMU_NS, [EMU_NS, sys.executable, os.path.abspath(script), *argv])


def _mount_fstype(path: str):
    """fstype of the mount that contains path (from /proc/self/mountinfo)."""
    best, fstype = -1, None
    path = os.path.realpath(path)
    try:
        with open("/proc/self/mountinfo") as fh:
            for line in fh:
                parts = line.split()
                mnt = parts[4].replace("\\040", " ")
                sep = parts.index("-")
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) >= best:   # later (stacked) mounts win
                    best, fstype = len(mnt), parts[sep + 1]
    except OSError:
        return None
    return fstype


def parse_fault_spec(spec: str):
    """``KIND@START[:DURATION]`` (seconds of recording time) -> (kind, start, duration|None)."""
    try:
        kind, rest = spec.split("@", 1)
        if ":" in rest:
            start, dur = rest.split(":", 1)
            duration = float(dur)
        else:
            start, duration = rest, None
        kind = kind.strip().lower()
        start = float(start)
    except ValueError:
        raise ValueError(f"bad fault spec {spec!r}: expected KIND@START[:DURATION]")
    if kind not in FAULTS:
        raise ValueError(f"bad fault kind {kind!r}: one of {', '.join(FAULTS)}")
    if start < 0 or (duration is not None and duration <= 0):
        raise ValueError(f"bad fault spec {spec!r}: negative start or non-positive duration")
    return kind, start, duration


def parse_mount_matrix(text: str):
    parts = [p.strip() for p in text.replace(";", ",").split(",") if p.strip()]
    if len(parts) != 9:
        raise ValueError("mount matrix needs 9 values: 'xx, xy, xz; yx, yy, yz; zx, zy, zz'")
    for p in parts:
        float(p)
    return parts


# --------------------------------------------------------------------------------------------
# The emulator
# --------------------------------------------------------------------------------------------

class Emulator:
    """One emulated IIO device.  start() builds it and runs the event loop in a thread."""

    def __init__(self, model: str, recording, *, speed: float = 1.0, loop: bool = False,
                 stop_at_end: bool = False, start_delay: float = 0.0, control: str | None = None,
                 write_log: str | None = None, device_index: int | None = None,
                 noise_counts: float = 1.0, seed: int = 0, faults=(),
                 recording_rate: float = 40.0, mount_matrix=None,
                 sysfs_root: str = DEFAULT_SYSFS, dev_root: str = DEFAULT_DEV,
                 require_namespace: bool = True, verbose: bool = False, stderr=None,
                 direct_max_rate: float = 1000.0, irq_cpu: int | None = 0):
        if model not in MODELS:
            raise ValueError(f"unknown model {model!r}: one of {', '.join(MODELS)}")
        if speed <= 0:
            raise ValueError("speed must be > 0")
        if start_delay < 0:
            raise ValueError("start delay must be >= 0")
        self.model_name = model
        self.rec = recording if isinstance(recording, Recording) else Recording(recording,
                                                                                recording_rate)
        self.speed = float(speed)
        self.loop = loop
        self.stop_at_end = stop_at_end
        self.start_delay = float(start_delay)
        self.control_path = control
        self.write_log_path = write_log
        self.want_index = device_index
        self.noise = float(noise_counts)
        self.seed = seed
        self.rng = random.Random(seed)
        self.fault_specs = [parse_fault_spec(f) if isinstance(f, str) else tuple(f) for f in faults]
        self.sysfs_root = sysfs_root
        self.dev_root = dev_root
        self.require_namespace = require_namespace
        self.verbose = verbose
        self.irq_cpu = irq_cpu
        self.err = stderr or sys.stderr
        if mount_matrix is not None and isinstance(mount_matrix, str):
            mount_matrix = parse_mount_matrix(mount_matrix)
        if model in ("mpu6050", "mpu6050-direct"):
            self.model: Model = Mpu6050(self, mount_matrix, buffered=(model == "mpu6050"))
        else:
            if mount_matrix is not None:
                raise ValueError("the adxl345 driver has no mount matrix")
            self.model = Adxl345(self, buffered=(model == "adxl345-buffered"))

        self.index = -1
        self.trig_index = -1
        self.plugged = False
        self.lock = threading.RLock()
        self._thread = None
        self._stopping = False
        self._started = threading.Event()
        self._start_error = None
        self._queue = []
        self._wake_r, self._wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.inotify = None
        self._poll_stamps = {}
        self._timers = []
        self._timer_seq = 0
        self._clients = {}
        self._listen = None
        self._log = None
        self.fifo_fd = -1
        self._dev_dirfd = -1
        self._tmp_dirfd = -1

        # buffer state (kernel iio_buffer + kfifo)
        self.buffer_enabled = False
        self.buf_length = 2
        self.buf_watermark = 1
        self.scan_en = {}
        self.layout, self.record_bytes = [], 0
        self.kfifo_cap = 0
        self._batch = []
        self._batch_size = 1
        self._occ_upper = 0
        self.superseded = 0
        self._last_direct = -(1 << 62)
        self.direct_min_ns = int(1e9 / direct_max_rate) if direct_max_rate > 0 else 0

        # stream state
        self.seq = 0
        self.written = 0
        self.dropped = 0
        self.overflows = 0
        self.faults = set()
        self.frozen = None
        self.phase = "pre"
        self.ended = False
        self.rendered = {}
        self.raw_text = {}
        self.attr_map = {}
        self.warnings = 0
        self.last_values = None
        self._clk_cache = {}
        self._norm = {}
        self._own_close = {}
        self.crashed = False

    # ---------------------------------------------------------------- public API
    @property
    def device(self) -> str:
        return "iio:device%d" % self.index

    @property
    def devdir(self) -> str:
        return os.path.join(self.sysfs_root, self.device)

    @property
    def node(self) -> str:
        return os.path.join(self.dev_root, self.device)

    def start(self, timeout: float = 10.0):
        """Build the device and start streaming (event loop in a background thread)."""
        self._check_environment()
        self._thread = threading.Thread(target=self._thread_main, name="iio-emu", daemon=True)
        self._thread.start()
        if not self._started.wait(timeout):
            raise RuntimeError("iio-emu: emulator did not start")
        if self._start_error:
            self._thread.join(1)
            raise self._start_error
        return self

    def stop(self):
        """Stop streaming, remove the device, close the log and the control socket."""
        if self._thread is None:
            return
        self._stopping = True
        self._wake()
        self._thread.join(10)
        self._thread = None
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_r = self._wake_w = -1

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def command(self, line: str, timeout: float = 10.0) -> str:
        """Run one control-protocol command (thread-safe); returns the reply line."""
        if self._thread is None or threading.current_thread() is self._thread:
            with self.lock:
                return self._command(line)
        ev, box = threading.Event(), []
        with self.lock:
            self._queue.append((line, ev, box))
        self._wake()
        if not ev.wait(timeout):
            return "error timeout"
        return box[0]

    def status(self) -> dict:
        with self.lock:
            return self._status()

    def wait_for(self, predicate, timeout: float = 10.0, interval: float = 0.01) -> bool:
        """Poll status() until predicate(status) is true (e.g. lambda s: s['buffer'] == 'enabled')."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate(self.status()):
                return True
            time.sleep(interval)
        return False

    # ---------------------------------------------------------------- environment
    def _check_environment(self):
        if self.require_namespace and self.sysfs_root == DEFAULT_SYSFS:
            if not in_emu_namespace():
                raise RuntimeError("iio-emu: not inside tools/emu-ns (FALLGUARD_EMU_NS != 1); "
                                   "refusing to touch the real /sys and /dev")
            if _mount_fstype("/sys/bus") != "tmpfs":
                raise RuntimeError("iio-emu: /sys/bus is not the emulator tmpfs")
            if self.dev_root == DEFAULT_DEV and _mount_fstype("/dev") != "tmpfs":
                raise RuntimeError("iio-emu: /dev is not the private tmpfs of emu-ns")
        if not os.path.isdir(self.sysfs_root):
            raise RuntimeError(f"iio-emu: {self.sysfs_root} does not exist")

    # ---------------------------------------------------------------- logging
    def _say(self, msg: str):
        try:
            self.err.write("iio-emu: %s\n" % msg)
            self.err.flush()
        except Exception:
            pass

    def _debug(self, msg: str):
        if self.verbose:
            self._say(msg)

    def _open_log(self):
        if not self.write_log_path:
            return
        self._log = open(self.write_log_path, "w", buffering=1)
        self._log.write("kind,seq,sched_ns,written_ns,mode,x,y,z,ts,info,gx,gy,gz\n")

    def _log_row(self, kind, seq, sched, written, mode, vals, ts, info):
        """``vals``: accel counts, then the gyroscope's (mpu6050) as written, or None."""
        if self._log is None:
            return
        xs = ",," if vals is None else "%d,%d,%d" % vals[:3]
        gs = "%d,%d,%d" % vals[3:6] if vals is not None and len(vals) == 6 else ",,"
        self._log.write("%s,%d,%d,%d,%s,%s,%s,%s,%s\n" % (
            kind, seq, sched, written, mode, xs, "" if ts is None else ts, info.replace(",", ";"), gs))

    def _event(self, info: str):
        now = mono_ns()
        self._log_row("event", -1, now, now, "-", None, None, info)
        self._debug(info)

    # ---------------------------------------------------------------- files
    def _tmp_name(self) -> str:
        self._tmpseq = getattr(self, "_tmpseq", 0) + 1
        return os.path.join(self.tmp_root, "w%d" % self._tmpseq)

    def _write_atomic(self, full: str, data: bytes, mode: int):
        tmp = self._tmp_name()
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, mode)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        if mode & _UMASK:
            os.chmod(tmp, mode)
        os.replace(tmp, full)
        if self.inotify is None:
            try:
                st = os.stat(full)
                self._poll_stamps[full] = (st.st_ino, st.st_mtime_ns, st.st_size)
            except OSError:
                pass

    # every info attribute of a driver with write_raw is 0644, _raw included (writes: EINVAL)
    RAW_MODE = 0o644

    def _attr_mode(self, attr: Attr) -> int:
        return 0o644 if attr.store is not None else 0o444

    # ---------------------------------------------------------------- building the device
    def _buffer_attrs(self):
        m = self.model
        attrs = []

        def show_en(cid):
            return lambda: "%d\n" % (1 if self.scan_en.get(cid) else 0)

        def store_en(cid):
            def f(s):
                v = kstrtobool(s)
                if self.buffer_enabled:
                    raise KernelError(errno.EBUSY)
                self.scan_en[cid] = v
            return f

        for c in m.scan_chans:
            for d in ("scan_elements", "buffer0"):
                attrs.append(Attr(f"{d}/{c.prefix}_en", show_en(c.id), store_en(c.id)))
                attrs.append(Attr(f"{d}/{c.prefix}_index", (lambda c=c: "%d\n" % c.index)))
                attrs.append(Attr(f"{d}/{c.prefix}_type", c.type_str))
        for d in ("buffer", "buffer0"):
            attrs += [
                Attr(f"{d}/enable", lambda: "%d\n" % int(self.buffer_enabled), self._store_enable),
                Attr(f"{d}/length", lambda: "%d\n" % self.buf_length, self._store_length),
                Attr(f"{d}/watermark", lambda: "%d\n" % self.buf_watermark, self._store_watermark),
                Attr(f"{d}/data_available",
                     lambda: "%d\n" % (self._queued() + len(self._batch))),
                Attr(f"{d}/direction", lambda: "in\n"),
            ]
        return attrs

    def _all_attrs(self):
        m = self.model
        # waiting_for_supplier: the driver core adds it to a device with a firmware node when
        # fw_devlink is on (the default), as for a sensor probed from the device tree
        attrs = [Attr("name", lambda: m.name + "\n"), Attr("waiting_for_supplier", lambda: "0\n")]
        if not m.direct_device():
            attrs.append(Attr("dev", lambda: "%d:%d\n" % (IIO_CHR_MAJOR, self.index)))
            attrs.append(Attr("uevent", lambda: "MAJOR=%d\nMINOR=%d\nDEVNAME=%s\nDEVTYPE=iio_device\n"
                              % (IIO_CHR_MAJOR, self.index, self.device)))
        else:
            attrs.append(Attr("uevent", lambda: "DEVTYPE=iio_device\n"))
        attrs += m.attrs()
        if m.buffered:
            attrs += self._buffer_attrs()
        return attrs

    def _render_all(self, base: str):
        """Write every attribute into the folder base (staging, not yet visible)."""
        self.attr_map = {a.path: a for a in self._all_attrs()}
        self.rendered = {}
        for path, a in self.attr_map.items():
            full = os.path.join(base, path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            if a.raw:
                text = self.raw_text.get(path, "0\n")
            else:
                text = a.show()
            with open(full, "w") as fh:
                fh.write(text)
            os.chmod(full, self.RAW_MODE if a.raw else self._attr_mode(a))
            if a.raw:
                self.raw_text[path] = text
            else:
                self.rendered[path] = text

    def _initial_raw(self):
        g, _ = self.rec.value(self._rec_pos(mono_ns()), self.loop)
        vals = self.model.convert(g, self.rng)
        for cid, v in vals.items():
            self.raw_text["in_%s_raw" % cid] = "%d\n" % v

    def _plug(self):
        """Register the device (and its trigger): like a driver probe."""
        if self.plugged:
            return
        m = self.model
        m.reset()
        self.buffer_enabled = False
        self.buf_length, self.buf_watermark = 2, 1
        self.scan_en = {c.id: False for c in m.scan_chans}
        self.frozen = None
        self._batch = []
        self._norm = {}
        self._own_close = {}
        self._initial_raw()
        candidates = [self.want_index] if self.want_index is not None else (
            ([self.index] if self.index >= 0 else []) + list(range(0, 256)))
        last_err = None
        for n in candidates:
            target = os.path.join(self.sysfs_root, "iio:device%d" % n)
            node = os.path.join(self.dev_root, "iio:device%d" % n)
            if os.path.lexists(target) or os.path.lexists(node):
                last_err = f"iio:device{n} already exists"
                continue
            self.index = n
            stage = os.path.join(self.tmp_root, "stage")
            shutil.rmtree(stage, ignore_errors=True)
            os.makedirs(stage)
            os.chmod(stage, 0o755)
            self._render_all(stage)
            if m.needs_trigger and not self._claim_trigger():
                shutil.rmtree(stage, ignore_errors=True)
                raise RuntimeError("iio-emu: no free triggerN folder")
            node_made = False
            if not m.direct_device():
                try:
                    os.mkfifo(node, 0o600)
                    node_made = True
                except FileExistsError:
                    last_err = f"{node} already exists"
                    self._release_trigger()
                    continue
            try:
                os.rename(stage, target)
            except OSError as e:
                last_err = f"{target}: {e.strerror}"
                if node_made:
                    os.unlink(node)
                self._release_trigger()
                continue
            break
        else:
            raise RuntimeError("iio-emu: cannot create the device: %s" % last_err)
        if not m.direct_device():
            self.fifo_fd = os.open(self.node, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        self._dev_dirfd = os.open(self.devdir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        self.plugged = True
        self._watch()
        self._event("plug %s name=%s trigger=%s rate=%s" % (
            self.device, m.name, self.trigger_dev or "-", self.rendered_rate()))

    def _claim_trigger(self) -> bool:
        name = self.model.trigger_name()
        cands = ([self.trig_index] if self.trig_index >= 0 else []) + list(range(0, 256))
        for t in cands:
            d = os.path.join(self.sysfs_root, "trigger%d" % t)
            if os.path.lexists(d):
                continue
            stage = os.path.join(self.tmp_root, "tstage")
            shutil.rmtree(stage, ignore_errors=True)
            os.makedirs(stage)
            os.chmod(stage, 0o755)
            with open(os.path.join(stage, "name"), "w") as fh:
                fh.write(name + "\n")
            os.chmod(os.path.join(stage, "name"), 0o444)
            try:
                os.rename(stage, d)
            except OSError:
                continue
            self.trig_index = t
            return True
        return False

    def _release_trigger(self):
        if self.trig_index >= 0:
            shutil.rmtree(os.path.join(self.sysfs_root, "trigger%d" % self.trig_index),
                          ignore_errors=True)

    @property
    def trigger_dev(self):
        return ("trigger%d" % self.trig_index) if self.model.needs_trigger and self.trig_index >= 0 \
            else None

    def _watch(self):
        dirs = {"": self.devdir}
        for sub in ("buffer", "buffer0", "scan_elements", "trigger"):
            p = os.path.join(self.devdir, sub)
            if os.path.isdir(p):
                dirs[sub] = p
        if self.trigger_dev:
            dirs["@trigger"] = os.path.join(self.sysfs_root, self.trigger_dev)
        self._watched_dirs = dirs
        if self.inotify is not None:
            for tag, p in dirs.items():
                self.inotify.add(p, tag)
        else:
            self._poll_stamps = {}
            for tag, p in dirs.items():
                for name in os.listdir(p):
                    full = os.path.join(p, name)
                    st = os.stat(full)
                    self._poll_stamps[full] = (st.st_ino, st.st_mtime_ns, st.st_size)

    def _unplug(self):
        """Hot-unplug: the device folder, its trigger and its node disappear."""
        if not self.plugged:
            return
        self.plugged = False
        self._norm = {}
        self._own_close = {}
        self._discard_batch("unplugged")
        self._close_raw_fds(truncate=True)
        if self.buffer_enabled:
            self.buffer_enabled = False
        if self.inotify is not None:
            self.inotify.clear()
        if self._dev_dirfd >= 0:
            os.close(self._dev_dirfd)
            self._dev_dirfd = -1
        shutil.rmtree(self.devdir, ignore_errors=True)
        self._release_trigger()
        if self.fifo_fd >= 0:
            os.close(self.fifo_fd)
            self.fifo_fd = -1
        try:
            os.unlink(self.node)
        except FileNotFoundError:
            pass
        self._event("unplug %s" % self.device)

    def rendered_rate(self) -> str:
        key = "sampling_frequency" if self.model.name == "mpu6050" else "in_accel_sampling_frequency"
        return self.rendered.get(key, "?").strip()

    # ---------------------------------------------------------------- attribute writes
    # How long a written attribute must stay untouched before it is rewritten with the driver's
    # formatting.  Rewriting replaces the file (rename), and a reader that opened the old file
    # just before would lose its write (libiio writes buffer/enable 0, the scan elements, the
    # length, then buffer/enable 1 within a few ms), so the rewrite waits for quiet and is
    # compare-and-swap: see _normalize_due().
    NORMALIZE_DELAY_NS = 15_000_000

    def _sync(self):
        """Re-render every (non-raw) attribute.  Read-only ones that changed are rewritten now;
        writable ones are queued for the deferred, race-checked rewrite."""
        if not self.plugged:
            return
        now = mono_ns()
        for path, a in self.attr_map.items():
            if a.raw:
                continue
            text = a.show()
            if same_text(self.rendered.get(path) or "", text):
                continue
            if a.store is None:
                self._write_atomic(os.path.join(self.devdir, path), text.encode(), 0o444)
                self.rendered[path] = text
            elif path not in self._norm:
                self._norm[path] = (now + self.NORMALIZE_DELAY_NS, self._read_bytes(path))

    def _read_bytes(self, path: str):
        try:
            with open(os.path.join(self.devdir, path), "rb") as fh:
                return fh.read()
        except OSError:
            return None

    def _on_external_write(self, path: str):
        """A reader closed one of our files after writing it (or may have: re-check)."""
        if not self.plugged:
            return
        if path.startswith("@trigger/"):
            base = path.split("/", 1)[1]
            full = os.path.join(self.sysfs_root, self.trigger_dev, base)
            if base != "name":
                self._remove_foreign(full, self.trigger_dev + "/" + base)
                return
            want = self.model.trigger_name() + "\n"
            try:
                with open(full, "rb") as fh:
                    data = fh.read()
            except OSError:
                return
            if data != want.encode():
                self._warn_ro(self.trigger_dev + "/" + base, data)
                self._write_atomic(full, want.encode(), 0o444)
            return
        a = self.attr_map.get(path)
        full = os.path.join(self.devdir, path)
        if a is None:
            self._remove_foreign(full, path)
            return
        data = self._read_bytes(path)
        if data is None:
            return
        if a.raw:
            if data.decode("utf-8", "replace") != self.raw_text.get(path):
                text = cstr(data)
                try:
                    self.model.store_unsupported(text)
                    code = errno.EINVAL
                except KernelError as e:
                    code = e.errno
                self.warnings += 1
                self._say("write %s=%r rejected: the kernel would return %s (%s); value restored"
                          % (path, text, errno.errorcode.get(code, code), os.strerror(code)))
                self._event("write %s=%r rejected %s" % (path, text, errno.errorcode.get(code)))
                self._write_atomic(full, self.raw_text[path].encode(), self.RAW_MODE)
            return
        self._process_write(path, a, data)

    def _process_write(self, path: str, a: Attr, data: bytes):
        if not data:
            # opened with O_TRUNC, not written yet (or never): sysfs calls no store() for that;
            # the writer's own close event follows
            return
        pend = self._norm.get(path)
        if pend is not None:
            if data == pend[1]:
                return                   # already applied, waiting for the rewrite
        elif data.decode("utf-8", "replace") == self.rendered.get(path):
            if self._own_close.get(path):
                self._own_close[path] -= 1
                return                   # our own close (normalising rewrite): nothing was written
            if path.rsplit("/", 1)[-1] in ("enable", "length", "current_trigger"):
                return                   # the kernel returns at once when the value is unchanged
            # else a writer wrote the same text again: sysfs calls store() again (e.g. the
            # ADXL345's in_accel_scale refuses every write with EINVAL, even of its own value)
        now = mono_ns()
        if a.store is None:
            self._warn_ro(path, data)
            self._norm[path] = (now + self.NORMALIZE_DELAY_NS, data)
            return
        text = cstr(data)
        old_rate = self.model.rate_hz()
        # mark it applied first: a store() may pull (and so re-read) other files
        self._norm[path] = (now + self.NORMALIZE_DELAY_NS, data)
        try:
            try:
                a.store(text)
            except KernelError as e:
                if e.errno != errno.EBUSY or not self._pull_enable():
                    raise
                a.store(text)            # the buffer had been disabled already: retry
            self._event("write %s=%r ok" % (path, text))
        except KernelError as e:
            self.warnings += 1
            self._say("write %s=%r rejected: the kernel would return %s (%s); value restored"
                      % (path, text, errno.errorcode.get(e.errno, e.errno), os.strerror(e.errno)))
            self._event("write %s=%r rejected %s" % (path, text, errno.errorcode.get(e.errno)))
        self._norm[path] = (now + self.NORMALIZE_DELAY_NS, data)
        self._sync()
        if self.model.rate_hz() != old_rate:
            self._reschedule("rate %s" % self.rendered_rate())

    def _normalize_due(self):
        """Rewrite quiet, written attributes with the driver's text, in place and only if the
        file still holds what was applied (compare-and-swap)."""
        if not self._norm or not self.plugged:
            return
        now = mono_ns()
        if not any(d <= now for d, _ in self._norm.values()):
            return
        if self.inotify is not None:
            self._on_inotify()          # writes already made come first, in their order
        for path, (deadline, seen) in list(self._norm.items()):
            if deadline > now or path not in self._norm:
                continue
            a = self.attr_map[path]
            full = os.path.join(self.devdir, path)
            text = a.show().encode()
            own = False
            try:
                fd = os.open(full, os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                self._norm.pop(path, None)
                continue
            try:
                cur = os.pread(fd, 65536, 0)
                if not cur and seen:
                    # a writer is between open(O_TRUNC) and write(): wait for it
                    self._norm[path] = (now + self.NORMALIZE_DELAY_NS, seen)
                    continue
                if cur != seen:
                    # written again: the writer's close event follows (or is queued) and is
                    # handled in order; without inotify, apply it now
                    self._norm.pop(path, None)
                    if self.inotify is None:
                        self._process_write(path, a, cur)
                    continue
                if same_text(cur.decode("utf-8", "replace"), text.decode()):
                    # what the reader wrote already reads as the driver's value: leave the
                    # file alone (no rewrite, so no window in which a new write could be lost)
                    self.rendered[path] = cur.decode("utf-8", "replace")
                    self._norm.pop(path, None)
                    own = True
                    continue
                os.pwrite(fd, text, 0)
                if len(cur) > len(text):
                    os.ftruncate(fd, len(text))
                own = True
            finally:
                os.close(fd)
                if own and self.inotify is not None:
                    # this close raises an IN_CLOSE_WRITE of our own
                    self._own_close[path] = self._own_close.get(path, 0) + 1
            self.rendered[path] = text.decode()
            self._norm.pop(path, None)
            if self.inotify is None:
                st = os.stat(full)
                self._poll_stamps[full] = (st.st_ino, st.st_mtime_ns, st.st_size)

    def _remove_foreign(self, full, shown):
        """A reader created a file: sysfs cannot do that (open(O_CREAT) fails with EACCES)."""
        try:
            os.unlink(full)
        except OSError:
            return
        self.warnings += 1
        self._say("a reader created %s, which does not exist in sysfs (the kernel would return "
                  "EACCES); removed" % shown)

    def _warn_ro(self, path, data):
        self.warnings += 1
        self._say("write to read-only attribute %s (%r): the kernel would return EACCES; restored"
                  % (path, cstr(data)))

    def _store_enable(self, s):
        v = kstrtobool(s)
        if v == self.buffer_enabled:
            return
        if v:
            self._buffer_enable()
        else:
            self._buffer_disable()

    def _store_length(self, s):
        v = kstrtouint(s, 10)
        if v == self.buf_length:
            return
        if self.buffer_enabled:
            raise KernelError(errno.EBUSY)
        self.buf_length = max(2, v)                 # iio_set_length_kfifo()
        if self.buf_length < self.buf_watermark:
            self.buf_watermark = self.buf_length

    def _store_watermark(self, s):
        v = kstrtouint(s, 10)
        if not v:
            raise KernelError(errno.EINVAL)
        if self.buffer_enabled:
            raise KernelError(errno.EBUSY)
        if v > self.buf_length:
            self._pull(["buffer/length", "buffer0/length"])   # written just before?
        if v > self.buf_length:
            raise KernelError(errno.EINVAL)
        self.buf_watermark = v

    def _pull(self, paths):
        """Apply writes to these files that were made before the one being handled but whose
        inotify events have not been read yet (contents are read level-triggered)."""
        for path in paths:
            a = self.attr_map.get(path)
            if a is None or a.store is None:
                continue
            data = self._read_bytes(path)
            if data:
                self._process_write(path, a, data)

    def _pull_enable(self) -> bool:
        """Before answering EBUSY: was buffer/enable already set to 0?  True if now disabled."""
        if self.buffer_enabled and self.model.buffered:
            self._pull(["buffer/enable", "buffer0/enable"])
        return not self.buffer_enabled

    def _buffer_enable(self):
        m = self.model
        self._pull([p for p, a in self.attr_map.items()
                    if a.store is not None and not p.endswith("/enable")])
        if m.needs_trigger and not m.trigger_set:
            raise KernelError(errno.EINVAL)          # "Buffer not started: no trigger"
        chans = [c for c in m.scan_chans if self.scan_en.get(c.id)]
        if not chans:
            raise KernelError(errno.EINVAL)
        self.layout, self.record_bytes = scan_layout(chans)
        cap = 1 << max(1, (self.buf_length - 1).bit_length())   # kfifo rounds up to 2^n
        max_bytes = 1 << 20
        if cap * self.record_bytes > max_bytes:
            cap = max_bytes // self.record_bytes
        self.kfifo_cap = cap
        want = max(4096, cap * self.record_bytes)
        try:
            fcntl.fcntl(self.fifo_fd, fcntl.F_SETPIPE_SZ, want)
        except OSError as e:
            self._say("cannot size the FIFO to %d bytes: %s" % (want, e.strerror))
        self._flush_fifo()                           # the kfifo is reset on enable
        self._pull_schedule_back()
        self._batch = []
        self._occ_upper = 0
        self._batch_size = max(1, self.buf_watermark)
        self.buffer_enabled = True
        self._event("buffer enable channels=%s record_bytes=%d length=%d kfifo=%d watermark=%d"
                    % ("+".join(c.id for c, _ in self.layout), self.record_bytes, self.buf_length,
                       cap, self.buf_watermark))

    def _buffer_disable(self):
        self.buffer_enabled = False
        self._discard_batch("disabled")          # fewer than a watermark's worth: never polled
        self._event("buffer disable")

    def _flush_fifo(self):
        if self.fifo_fd < 0:
            return
        while True:
            try:
                if not os.read(self.fifo_fd, 65536):
                    break
            except BlockingIOError:
                break

    def _queued(self) -> int:
        if self.fifo_fd < 0 or not self.record_bytes:
            return 0
        buf = bytearray(4)
        try:
            fcntl.ioctl(self.fifo_fd, termios.FIONREAD, buf)
        except OSError:
            return 0
        return struct.unpack("i", buf)[0] // self.record_bytes

    # ---------------------------------------------------------------- schedule
    def _rec_pos(self, t_ns: int) -> float:
        """Recording time (s) at monotonic time t_ns."""
        return (t_ns - self.t_zero) * self.speed / 1e9

    def _reschedule(self, why: str):
        """New sampling epoch: the first sample one new period from now (absolute schedule)."""
        now = mono_ns()
        self.rate = self.model.rate_hz()
        self.period_ns = 1e9 / (self.rate * self.speed)
        self.t_epoch = now
        self.j = 1
        self.next_t = self.t_epoch + int(round(self.period_ns))
        self._event(why)

    def _add_timer(self, t_ns: int, fn, label: str = ""):
        self._timer_seq += 1
        heapq.heappush(self._timers, (t_ns, self._timer_seq, fn, label))

    def _schedule_faults(self):
        for kind, start, dur in self.fault_specs:
            t0 = self.t_zero + int(start * 1e9 / self.speed)
            # DUR is in recording seconds too; the command takes wall seconds
            self._add_timer(t0, (lambda k=kind, d=dur: self._command(
                "%s %r" % (k, d / self.speed) if d is not None else k, source="cli")), kind)

    # ---------------------------------------------------------------- streaming
    def _t_of(self, j: int) -> int:
        return self.t_epoch + int(round(j * self.period_ns))

    def _emit_due(self):
        now = mono_ns()
        n = 0
        while self.next_t <= now and not self._stopping:
            if not self.buffer_enabled:
                # Direct mode: a polling reader only ever sees the newest value (the register
                # is overwritten every sample), so overdue samples are skipped and the _raw
                # files are rewritten at most every direct_min_ns; skipped samples are counted
                # as superseded (seq numbers still advance), not computed, not logged.
                j_last = max(self.j, int((now - self.t_epoch) // self.period_ns))
                if j_last > self.j:
                    skipped = j_last - self.j
                    self.seq += skipped
                    self.superseded += skipped
                    self.j = j_last
                t = self._t_of(self.j)
                self._emit(t)
                nxt = self.j + 1
                if self.direct_min_ns > self.period_ns:
                    nxt = max(nxt, math.ceil((t + self.direct_min_ns - self.t_epoch)
                                             / self.period_ns))
                self.j += 1
                if nxt > self.j:
                    skipped = nxt - self.j
                    self.seq += skipped
                    self.superseded += skipped
                    self.j = nxt
            else:
                self._emit(self.next_t)
                self.j += 1
            self.next_t = self._t_of(self.j)
            n += 1
            if n > 10000:          # far behind (suspended?): restart the epoch
                self._reschedule("resync after a long pause")
                break

    def _pull_schedule_back(self):
        """Direct mode may sleep past samples it would not write; the buffer needs every sample
        from now on: continue with the first sample after now."""
        now = mono_ns()
        j_now = int((now - self.t_epoch) // self.period_ns) + 1
        if j_now < self.j:
            back = self.j - j_now
            self.seq -= back          # those were counted as superseded in advance
            self.superseded -= back
            self.j = j_now
            self.next_t = self._t_of(self.j)

    def _emit(self, t_sched: int):
        seq = self.seq
        self.seq += 1
        r = self._rec_pos(t_sched)
        g, phase = self.rec.value(r, self.loop)
        self.phase = phase
        if phase == "post" and not self.ended:
            self.ended = True
            self._event("recording ended" + (" (stop-at-end: stalling)" if self.stop_at_end else
                                              " (streaming the rest posture)"))
        m = self.model
        if self.noise > 0:
            one = self._count_g()
            # the accelerometer's noise; the gyroscope's is the model's own (convert)
            g = tuple(v + self.rng.gauss(0.0, self.noise) * one for v in g[:3]) + tuple(g[3:])
        vals = m.convert(g, self.rng)
        lo, hi = m.accel_limits()
        if "saturate" in self.faults:
            for cid in m.accel_ids:
                vals[cid] = hi if vals[cid] >= 0 else lo
        if "stuck" in self.faults:
            if self.frozen is None:
                self.frozen = dict(vals)
            vals = dict(self.frozen)
        accel = tuple(vals[c] for c in m.accel_ids)
        self.last_values = accel
        # what the log shows: the accel counts, then the gyroscope's (mpu6050)
        accel += tuple(vals[c] for c in getattr(m, "gyro_ids", ()))
        garbage = "garbage" in self.faults
        if not self.plugged:
            self._drop(seq, t_sched, accel, "unplugged")
            return
        if "stall" in self.faults or (self.ended and self.stop_at_end):
            self._drop(seq, t_sched, accel, "stall" if "stall" in self.faults else "ended")
            return
        if self.buffer_enabled:
            self._emit_buffer(seq, t_sched, vals, accel, garbage)
            if not m.freeze_raw_when_buffered():
                self._write_raw(vals, garbage)
        else:
            self._write_raw(vals, garbage)
            self._last_direct = t_sched
            self.written += 1
            self._log_row("sample", seq, t_sched, mono_ns(), "direct", accel, None,
                          "garbage" if garbage else "")

    def _count_g(self) -> float:
        """One accelerometer count in g at the current scale."""
        m = self.model
        if isinstance(m, Mpu6050):
            return m.ACCEL_SCALE[m.accel_fs] * 1e-6 / GRAVITY
        return m.USCALE * 1e-6 / GRAVITY

    def _drop(self, seq, t_sched, accel, why):
        self.dropped += 1
        self._log_row("drop", seq, t_sched, mono_ns(), "-", accel, None, why)

    def _write_raw(self, vals, garbage):
        """Per-sample update of the in_*_raw files, in place (pwrite at 0, then truncate), as
        the kernel's sysfs shows a new value to a reader that keeps the file open and preads it
        at offset 0. The files stay open here, so these writes raise no IN_CLOSE_WRITE."""
        accel = self.model.accel_ids
        if getattr(self, "_raw_fds_dir", None) != self._dev_dirfd:
            self._close_raw_fds(truncate=False)
            self._raw_fds_dir = self._dev_dirfd
        for cid in self.model.raw_ids():
            path = "in_%s_raw" % cid
            if garbage and cid in accel:
                text = "".join(self.rng.choice("#$%&*?!@GHJKLMPQRSTUVWXYZ") for _ in range(6)) + "\n"
            else:
                text = "%d\n" % vals[cid]
            old = self.raw_text.get(path)
            if text == old and cid not in accel:
                continue
            fd = self._raw_fds.get(path)
            if fd is None:
                fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC, dir_fd=self._dev_dirfd)
                self._raw_fds[path] = fd
            data = text.encode()
            os.pwrite(fd, data, 0)
            if old is None or len(old.encode()) > len(data):
                os.ftruncate(fd, len(data))
            self.raw_text[path] = text
            if self.inotify is None:
                st = os.stat(path, dir_fd=self._dev_dirfd)
                self._poll_stamps[os.path.join(self.devdir, path)] = (st.st_ino, st.st_mtime_ns,
                                                                      st.st_size)

    def _close_raw_fds(self, truncate: bool):
        """Closes the kept in_*_raw files; on unplug they are emptied first, so that a reader
        still holding one reads 0 bytes (the kernel answers ENODEV for a removed attribute)."""
        for fd in getattr(self, "_raw_fds", {}).values():
            try:
                if truncate:
                    os.ftruncate(fd, 0)
                os.close(fd)
            except OSError:
                pass
        self._raw_fds = {}

    def _clock_offset(self, clock: str) -> int:
        """clock - CLOCK_MONOTONIC in ns, measured with the tightest of a few bracketing reads
        and cached for a few seconds (so timestamps keep the schedule's exact spacing)."""
        now = mono_ns()
        cached = self._clk_cache.get(clock)
        if cached and now - cached[1] < 5_000_000_000:
            return cached[0]
        cid = CLOCKS[clock]
        best = None
        for _ in range(5):
            a = mono_ns()
            c = time.clock_gettime_ns(cid)
            b = mono_ns()
            if best is None or b - a < best[0]:
                best = (b - a, c - (a + b) // 2)
        self._clk_cache[clock] = (best[1], now)
        return best[1]

    def _timestamp(self, t_sched: int) -> int:
        clock = getattr(self.model, "clock", "realtime")
        if clock == "monotonic":
            return t_sched
        return t_sched + self._clock_offset(clock)

    def _emit_buffer(self, seq, t_sched, vals, accel, garbage):
        """Push one scan into the kernel buffer (kfifo).  Records are handed to the FIFO in
        blocks of `watermark`: the kernel's poll() reports POLLIN only once that many samples
        are queued (libiio 0.24 sets watermark = its buffer size, then polls and reads), and
        the ADXL345 FIFO interrupt itself fires every min(watermark, 31) samples."""
        # kfifo full?  (held-back records count; the FIFO's fill only drops as the reader reads)
        if self._occ_upper + len(self._batch) >= self.kfifo_cap:
            self._occ_upper = self._queued()
            if self._occ_upper + len(self._batch) >= self.kfifo_cap:
                self.overflows += 1
                self._drop(seq, t_sched, accel, "overflow")
                return
        ts = None
        rec = bytearray(self.record_bytes)
        for c, off in self.layout:
            if c.id == "timestamp":
                ts = self._timestamp(t_sched)
                v = ts
            else:
                v = vals[c.id]
            struct.pack_into(c.fmt, rec, off, v)
        if garbage:
            rec = bytearray(self.rng.randbytes(self.record_bytes))
            ts = None
        self._batch.append((seq, t_sched, bytes(rec), accel, ts, garbage))
        if len(self._batch) >= self._batch_size:
            self._flush_batch()

    def _flush_batch(self):
        batch, self._batch = self._batch, []
        if not batch:
            return
        data = b"".join(b[2] for b in batch)
        off = 0
        # Taken before the write: a reader woken by it may consume the block before write()
        # even returns here, and a latency must never come out negative.
        written_ns = mono_ns()
        try:
            while off < len(data):
                off += os.write(self.fifo_fd, data[off:])
        except BlockingIOError:
            pass                 # cannot happen: the FIFO is sized for the whole kfifo
        except BrokenPipeError:  # cannot happen while we hold the FIFO open O_RDWR
            os.close(self.fifo_fd)
            self.fifo_fd = os.open(self.node, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        n_ok = off // self.record_bytes
        self._occ_upper += n_ok
        for i, (seq, t_sched, _rec, accel, ts, garbage) in enumerate(batch):
            if i < n_ok:
                self.written += 1
                self._log_row("sample", seq, t_sched, written_ns, "buffer", accel, ts,
                              "garbage" if garbage else "")
            else:
                self.overflows += 1
                self._drop(seq, t_sched, accel, "overflow")

    def _discard_batch(self, why: str):
        batch, self._batch = self._batch, []
        for seq, t_sched, _rec, accel, _ts, _g in batch:
            self._drop(seq, t_sched, accel, why)

    # ---------------------------------------------------------------- commands
    HELP = ("commands: status | now | stall [s] | resume | unplug [s] | replug | stuck [s] | "
            "saturate [s] | garbage [s] | normal | help")

    def _command(self, line: str, source: str = "api") -> str:
        parts = line.strip().split()
        if not parts:
            return "error empty command"
        cmd, args = parts[0].lower(), parts[1:]
        dur = None
        if args and cmd in ("stall", "unplug", "stuck", "saturate", "garbage"):
            try:
                dur = float(args[0])
                if dur <= 0:
                    raise ValueError
            except ValueError:
                return "error bad duration %r" % args[0]
        elif args:
            return "error %s takes no argument" % cmd
        if cmd == "status":
            st = self._status()
            return "ok " + " ".join("%s=%s" % (k, (",".join(v) or "-") if isinstance(v, list) else v)
                                    for k, v in st.items())
        if cmd == "now":
            return "ok %d" % mono_ns()
        if cmd == "help":
            return "ok " + self.HELP
        if cmd in ("stall", "stuck", "saturate", "garbage"):
            self.faults.add(cmd)
            if cmd == "stuck":
                self.frozen = None
            if dur is not None:
                self._add_timer(mono_ns() + int(dur * 1e9), lambda c=cmd: self._clear_fault(c), cmd)
            self._event("fault %s on%s (%s)" % (cmd, "" if dur is None else " for %gs" % dur, source))
            return "ok %s%s" % (cmd, "" if dur is None else " %g" % dur)
        if cmd == "resume":
            self._clear_fault("stall")
            return "ok resume"
        if cmd == "normal":
            for f in list(self.faults):
                self._clear_fault(f)
            return "ok normal"
        if cmd == "unplug":
            if not self.plugged:
                return "error already unplugged"
            self._unplug()
            if dur is not None:
                self._add_timer(mono_ns() + int(dur * 1e9), lambda: self._command("replug", "timer"),
                                "replug")
            return "ok unplugged %s" % self.device
        if cmd == "replug":
            if self.plugged:
                return "error already plugged"
            try:
                self._plug()
                self._reschedule("replug: rate %s" % self.rendered_rate())
            except Exception as e:
                return "error replug failed: %s" % e
            return "ok replugged %s" % self.device
        return "error unknown command %r (%s)" % (cmd, self.HELP)

    def _clear_fault(self, f):
        if f in self.faults:
            self.faults.discard(f)
            if f == "stuck":
                self.frozen = None
            self._event("fault %s off" % f)

    def _status(self) -> dict:
        m = self.model
        chans = [c.id for c, _ in self.layout] if self.buffer_enabled else []
        return {
            "model": self.model_name,
            "device": self.device if self.index >= 0 else "-",
            "trigger": ("%s(%s)" % (self.trigger_dev, m.trigger_name())) if self.trigger_dev else "-",
            "plugged": int(self.plugged),
            "rate_hz": "%g" % m.rate_hz(),
            "sampling_frequency": self.rendered_rate(),
            "scale": m.scale_text().strip(),
            "mode": "buffer" if self.buffer_enabled else "direct",
            "buffer": ("enabled" if self.buffer_enabled else "disabled") if m.buffered else "none",
            "channels": chans,
            "record_bytes": self.record_bytes if self.buffer_enabled else 0,
            "length": self.buf_length,
            "watermark": self.buf_watermark,
            "queued": self._queued() if self.buffer_enabled else 0,
            "generated": self.seq,
            "written": self.written,
            "dropped": self.dropped,
            "overflows": self.overflows,
            "superseded": self.superseded,
            "fault": sorted(self.faults) or ["none"],
            "position_s": "%.3f" % self._rec_pos(mono_ns()),
            "phase": self.phase,
            "ended": int(self.ended),
            "speed": "%g" % self.speed,
            "clock": getattr(m, "clock", "-"),
            "warnings": self.warnings,
        }

    # ---------------------------------------------------------------- control socket
    def _open_control(self):
        if not self.control_path:
            return
        try:
            os.unlink(self.control_path)
        except FileNotFoundError:
            pass
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(self.control_path)
        s.listen(8)
        s.setblocking(False)
        self._listen = s

    def _on_client(self, conn):
        buf = self._clients.get(conn, b"")
        try:
            data = conn.recv(4096)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._drop_client(conn)
            return
        buf += data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            if text.lower() in ("quit", "exit", "close"):
                self._drop_client(conn)
                return
            reply = self._command(text, source="socket")
            try:
                conn.setblocking(True)
                conn.sendall((reply + "\n").encode())
                conn.setblocking(False)
            except OSError:
                self._drop_client(conn)
                return
        self._clients[conn] = buf

    def _drop_client(self, conn):
        self._clients.pop(conn, None)
        try:
            conn.close()
        except OSError:
            pass

    # ---------------------------------------------------------------- event loop
    def _wake(self):
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass

    def _thread_main(self):
        self._pin_to_irq_cpu()
        try:
            with self.lock:
                self._setup()
        except BaseException as e:          # report to start()
            self._start_error = e
            self._teardown()
            self._started.set()
            return
        self._started.set()
        try:
            self._loop()
        except BaseException as e:
            self.crashed = True
            self._say("emulator loop crashed: %r" % e)
            import traceback
            traceback.print_exc(file=self.err)
        finally:
            with self.lock:
                self._teardown()

    def _pin_to_irq_cpu(self):
        """Runs this thread (the one that writes samples) on `irq_cpu`, as the kernel driver's
        interrupt handler runs on the CPU that takes the sensor's interrupt: CPU 0 on a
        Raspberry Pi, whose interrupt controllers deliver device interrupts there unless they
        are moved. Where the reader's threads sit relative to it decides whether each sample's
        wake-up is a local switch or an inter-processor interrupt. Only this thread is pinned
        (sched_setaffinity with pid 0 applies to the calling thread); the command keeps its own
        affinity."""
        if self.irq_cpu is None:
            return
        try:
            os.sched_setaffinity(0, {self.irq_cpu})
        except OSError as e:
            self._say("cannot run on CPU %d (--irq-cpu): %s; running unpinned" % (self.irq_cpu, e.strerror))

    def _setup(self):
        parent = os.path.dirname(self.sysfs_root.rstrip("/"))
        self.tmp_root = os.path.join(parent, ".iioemu-%d-%x" % (os.getpid(), id(self) & 0xffffff))
        os.makedirs(self.tmp_root)
        self._tmp_dirfd = os.open(self.tmp_root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            if os.environ.get("IIOEMU_NO_INOTIFY") == "1":
                raise OSError(errno.ENOSYS, "disabled by IIOEMU_NO_INOTIFY=1")
            self.inotify = Inotify()
        except (OSError, AttributeError) as e:
            self._say("inotify unavailable (%s): polling attribute files every 10 ms" % e)
            self.inotify = None
        self._open_log()
        now = mono_ns()
        self.t_zero = now + int(self.start_delay * 1e9)
        self._event("start model=%s recording=%s samples=%d duration_s=%.3f speed=%g loop=%d "
                    "start_delay=%g noise=%g seed=%s" % (
                        self.model_name, self.rec.path, self.rec.n, self.rec.period, self.speed,
                        int(self.loop), self.start_delay, self.noise, self.seed))
        self._plug()
        self._open_control()
        self._reschedule("stream rate %s" % self.rendered_rate())
        self._schedule_faults()
        self._next_housekeeping = now + 100_000_000

    def _loop(self):
        while not self._stopping:
            now = mono_ns()
            deadline = min(self.next_t, self._timers[0][0] if self._timers else self.next_t,
                           self._next_housekeeping,
                           min((d for d, _ in self._norm.values()), default=self.next_t))
            fds = [self._wake_r]
            if self.inotify is not None:
                fds.append(self.inotify.fd)
            if self._listen is not None:
                fds.append(self._listen)
            fds += list(self._clients)
            timeout = max(0.0, (deadline - now) / 1e9)
            if self.inotify is None:
                timeout = min(timeout, 0.01)
            try:
                ready, _, _ = select.select(fds, [], [], timeout)
            except InterruptedError:
                ready = []
            with self.lock:
                # samples scheduled before this wake-up happened before whatever woke us
                self._emit_due()
                for fd in ready:
                    if fd == self._wake_r:
                        try:
                            os.read(self._wake_r, 4096)
                        except BlockingIOError:
                            pass
                    elif self.inotify is not None and fd == self.inotify.fd:
                        self._on_inotify()
                    elif fd is self._listen:
                        try:
                            conn, _ = self._listen.accept()
                            conn.setblocking(False)
                            self._clients[conn] = b""
                        except BlockingIOError:
                            pass
                    elif fd in self._clients:
                        self._on_client(fd)
                if self.inotify is None:
                    self._poll_files()
                queue, self._queue = self._queue, []
                for line, ev, box in queue:
                    box.append(self._command(line))
                    ev.set()
                now = mono_ns()
                while self._timers and self._timers[0][0] <= now:
                    _, _, fn, _label = heapq.heappop(self._timers)
                    fn()
                self._normalize_due()
                self._emit_due()
                if now >= self._next_housekeeping:
                    self._next_housekeeping = now + 100_000_000
                    if self.plugged and self.model.buffered:
                        self._sync()            # data_available

    def _on_inotify(self):
        events = self.inotify.read()
        paths = []
        for tag, name in events:
            if tag is None:                      # queue overflow: check every writable file
                paths = [p for p, a in self.attr_map.items() if a.store is not None]
                break
            if tag == "@trigger":
                paths.append("@trigger/" + name)
            else:
                paths.append((tag + "/" + name) if tag else name)
        # Each file is handled once, at its first event, with its current content (so possibly
        # a later write than the event's).  Dependencies across files are handled by pulling:
        # enabling the buffer first applies pending scan-element/length/trigger writes, and a
        # write that would get EBUSY first applies a pending buffer/enable 0.
        done = set()
        for path in paths:
            if path not in done:
                done.add(path)
                self._on_external_write(path)

    def _poll_files(self):
        """Fallback without inotify: stat the attribute files every 10 ms."""
        if not self.plugged:
            return
        changed = []
        for tag, d in self._watched_dirs.items():
            try:
                names = os.listdir(d)
            except OSError:
                continue
            for name in names:
                full = os.path.join(d, name)
                try:
                    st = os.stat(full)
                except OSError:
                    continue
                stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
                if self._poll_stamps.get(full) != stamp:
                    self._poll_stamps[full] = stamp
                    path = ("@trigger/" + name) if tag == "@trigger" else \
                        ((tag + "/" + name) if tag else name)
                    changed.append((st.st_mtime_ns, path.endswith("/enable"), path))
        # mtimes are coarse (a tick): apply in write order as far as known, enable last
        for _mt, _last, path in sorted(changed):
            self._on_external_write(path)

    def _teardown(self):
        try:
            if self.plugged:
                self._unplug()
        except Exception as e:
            self._say("teardown: %s" % e)
        for conn in list(self._clients):
            self._drop_client(conn)
        if self._listen is not None:
            self._listen.close()
            self._listen = None
            try:
                os.unlink(self.control_path)
            except OSError:
                pass
        if self._tmp_dirfd >= 0:
            os.close(self._tmp_dirfd)
            self._tmp_dirfd = -1
        if getattr(self, "tmp_root", None):
            shutil.rmtree(self.tmp_root, ignore_errors=True)
        if self.inotify is not None:
            self.inotify.close()
            self.inotify = None
        if self._log is not None:
            try:
                self._event("stop generated=%d written=%d dropped=%d" % (
                    self.seq, self.written, self.dropped))
                self._log.close()
            except Exception:
                pass
            self._log = None


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def _parser(prog="iio-emu"):
    p = argparse.ArgumentParser(
        prog=prog,
        usage="%(prog)s --model MODEL --recording FILE.csv [options] [-- CMD [ARG...]]",
        description="Emulate an IIO accelerometer (ADXL345 or MPU6050) for the unmodified libiio "
                    "local backend, play a recording through it, run CMD, clean up and exit with "
                    "CMD's status.  Without CMD it runs until SIGINT/SIGTERM.")
    p.add_argument("--model", required=True, choices=MODELS)
    p.add_argument("--recording", required=True, metavar="FILE.csv",
                   help="CSV x_g,y_g,z_g (g) at --recording-rate Hz, or with a t_s column")
    p.add_argument("--recording-rate", type=float, default=40.0, metavar="HZ",
                   help="rate of a recording without t_s (default 40)")
    p.add_argument("--speed", type=float, default=1.0, metavar="N",
                   help="play the recording N times faster than real time (default 1)")
    p.add_argument("--loop", action="store_true", help="repeat the recording")
    p.add_argument("--stop-at-end", action="store_true",
                   help="stall after the end instead of streaming the final rest posture")
    p.add_argument("--start-delay", type=float, default=0.0, metavar="S",
                   help="wall seconds of the recording's initial posture before it starts")
    p.add_argument("--control", metavar="SOCKET", help="Unix socket for the text control protocol")
    p.add_argument("--write-log", metavar="FILE", help="CSV log of every sample written")
    p.add_argument("--device-index", type=int, metavar="N",
                   help="N of iio:deviceN (default: the lowest free index)")
    p.add_argument("--noise-counts", type=float, default=1.0, metavar="N",
                   help="gaussian sensor noise, standard deviation in counts (default 1, 0 = off)")
    p.add_argument("--seed", type=int, default=0, help="noise seed (default 0)")
    p.add_argument("--fault", action="append", default=[], metavar="KIND@START[:DUR]",
                   help="timed fault in recording seconds, e.g. stall@10:3; KIND is one of "
                        + ", ".join(FAULTS) + "; repeatable")
    p.add_argument("--mount-matrix", metavar="M",
                   help="mpu6050 only: 'xx, xy, xz; yx, yy, yz; zx, zy, zz' (default identity); "
                        "data are rotated into the chip frame accordingly")
    p.add_argument("--direct-max-rate", type=float, default=1000.0, metavar="HZ",
                   help="direct mode: rewrite the _raw files at most HZ times per wall second "
                        "(default 1000; 0 = every sample); skipped samples are logged as "
                        "superseded")
    p.add_argument("--irq-cpu", type=_irq_cpu, default=0, metavar="N|any",
                   help="CPU of the thread that writes samples, like the sensor's interrupt handler "
                        "(default 0: where a Raspberry Pi takes device interrupts; any = unpinned)")
    p.add_argument("-v", "--verbose", action="store_true", help="log attribute writes and events")
    return p


def _irq_cpu(word: str):
    if word == "any":
        return None
    try:
        n = int(word)
    except ValueError:
        raise argparse.ArgumentTypeError("'%s' is not a CPU: use a CPU number or any" % word)
    if n < 0:
        raise argparse.ArgumentTypeError("CPU %d: must be 0 or more" % n)
    return n


def main(argv=None, script=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    script = script or sys.argv[0]
    if "--" in argv:
        k = argv.index("--")
        opts, cmd = argv[:k], argv[k + 1:]
    else:
        opts, cmd = argv, []
    args = _parser(os.path.basename(script)).parse_args(opts)
    try:
        faults = [parse_fault_spec(f) for f in args.fault]
        mm = parse_mount_matrix(args.mount_matrix) if args.mount_matrix else None
        if mm is not None and args.model != "mpu6050":
            raise ValueError("--mount-matrix is only for the mpu6050 model")
        rec = Recording(args.recording, args.recording_rate)
    except (ValueError, OSError) as e:
        sys.stderr.write("iio-emu: %s\n" % e)
        return 2
    if not in_emu_namespace():
        reexec_in_namespace(script, argv)      # does not return
    emu = Emulator(args.model, rec, speed=args.speed, loop=args.loop, stop_at_end=args.stop_at_end,
                   start_delay=args.start_delay, control=args.control, write_log=args.write_log,
                   device_index=args.device_index, noise_counts=args.noise_counts, seed=args.seed,
                   faults=faults, mount_matrix=mm, verbose=args.verbose,
                   direct_max_rate=args.direct_max_rate, irq_cpu=args.irq_cpu)
    try:
        emu.start()
    except Exception as e:
        sys.stderr.write("%s\n" % e)
        return 1
    env = dict(os.environ)
    env["IIOEMU_DEVICE"] = emu.device
    env["IIOEMU_NAME"] = emu.model.name
    if emu.trigger_dev:
        env["IIOEMU_TRIGGER"] = emu.model.trigger_name()
    if args.control:
        env["IIOEMU_CONTROL"] = os.path.abspath(args.control)
    rc = 0
    stop = threading.Event()
    child = None

    def on_signal(signum, _frame):
        if child is not None and child.poll() is None:
            try:
                child.send_signal(signum)
            except OSError:
                pass
        else:
            stop.set()

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        if cmd:
            try:
                child = subprocess.Popen(cmd, env=env)
            except OSError as e:
                sys.stderr.write("iio-emu: cannot run %s: %s\n" % (cmd[0], e.strerror))
                return 127 if e.errno == errno.ENOENT else 126
            while True:
                try:
                    rc = child.wait()
                    break
                except InterruptedError:
                    continue
            if rc < 0:
                rc = 128 - rc
        else:
            sys.stderr.write("iio-emu: %s (%s) running; stop with SIGINT/SIGTERM\n"
                             % (emu.device, emu.model.name))
            while not stop.wait(0.5):
                pass
    finally:
        emu.stop()
        for s, h in old.items():
            signal.signal(s, h)
    if emu.crashed:
        sys.stderr.write("iio-emu: the emulator failed during the run (see above)\n")
        rc = rc or 1
    return rc


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Register feeder, run INSIDE the guest (after guest-setup.sh): plays a recording into the
data registers of the i2c-stub chip behind the real adxl345 / inv_mpu6050 driver, through
/dev/i2c-N, at the output data rate the driver reports.

    feeder.py --chip adxl345 --recording demo-fall.csv --log fed.csv [--seconds S | --count N]
    feeder.py --chip mpu6050 --fire --recording ... --log fed.csv --count 2000

Recording: CSV with a header naming x_g,y_g,z_g (g, gravity included; any other columns
ignored), rows at --recording-rate Hz (default 40), or with a t_s column giving each row's
time; for the mpu6050 also gx_dps,gy_dps,gz_dps (a six-axis recording: angular velocity in
degrees per second), fed to the gyroscope. It is resampled (linear interpolation) to the
driver's rate, so it plays in real time, converted to counts with the driver's in_accel_scale
(m/s^2 per count) and in_anglvel_scale (rad/s per count) and clipped to the chip's range
(ADXL345: 13-bit -4096..4095, full resolution; MPU6050: int16).

Registers written (i2c-stub answers every read with what was last written):
- adxl345: DATAX0..DATAZ1 0x32..0x37, little-endian, one 6-byte I2C block write per sample.
- mpu6050: ACCEL_XOUT_H..ACCEL_ZOUT_L 0x3b..0x40 and, from a six-axis recording,
  GYRO_XOUT_H..GYRO_ZOUT_L 0x43..0x48, big-endian (the _raw attributes); with --fire also the
  buffered path: FIFO_COUNT_H/L 0x72/0x73 = one datum's bytes, INT_STATUS 0x3a = 1 (DATA_RDY),
  register 0x00 = 1 (Debian 12's 6.1 driver reads the status of an MPU6050 from register 0:
  see README), the datum at FIFO_R_W 0x74.. (a block read of 0x74 returns consecutive
  registers), then one interrupt through /sys/kernel/fg_i2c_devices/fire_mpu6050. The datum
  is what the chip's FIFO holds for the scan elements the reader enabled (read from
  scan_elements/ once the buffer is enabled, else accel, plus gyro from a six-axis
  recording): accel (6 bytes), temp (2), gyro (6), in that order. 0x75 (WHO_AM_I, inside the
  datum) is restored to 0x68 at the end, so a later probe works.

Pacing: samples are written on a drift-free CLOCK_MONOTONIC schedule at the driver's rate
(paced, not lock-step: nothing waits for the reader). --rate overrides the rate read from
the driver (`in_accel_sampling_frequency` or `sampling_frequency`); --wait-buffer waits until
buffer/enable reads 1 (the reader has set the device up) before reading rate and scale.

Log (--log): CSV `seq,t0_ns,t1_ns,x,y,z,polls` (counts; t0/t1: CLOCK_MONOTONIC just before and
just after the sample reached the registers; for --fire, t1 is after the interrupt was raised;
polls: with --follow-polls, how many polls read the previous sample (1, more when this feeder
was late), else -1), and `,gx,gy,gz` (gyroscope counts) from a six-axis recording,
preceded by `# key=value` lines: chip, device, rate_hz, scale, gyro_scale (six-axis), recording. Late writes (the
schedule missed by more than one period) are counted and printed at the end.
"""
import argparse
import ctypes
import math
import fcntl
import os
import re
import signal
import struct
import sys
import time

I2C_SLAVE_FORCE = 0x0706
I2C_SMBUS = 0x0720
I2C_SMBUS_WRITE = 0
I2C_SMBUS_I2C_BLOCK_DATA = 8

CHIPS = {
    "adxl345": {"addr": 0x53, "lo": -4096, "hi": 4095, "rate_attr": "in_accel_sampling_frequency"},
    "mpu6050": {"addr": 0x68, "lo": -32768, "hi": 32767, "rate_attr": "sampling_frequency"},
}
G = 9.80665


class SMBusData(ctypes.Union):
    _fields_ = [("byte", ctypes.c_uint8), ("word", ctypes.c_uint16), ("block", ctypes.c_uint8 * 34)]


class SMBusIoctl(ctypes.Structure):
    _fields_ = [("read_write", ctypes.c_uint8), ("command", ctypes.c_uint8),
                ("size", ctypes.c_uint32), ("data", ctypes.POINTER(SMBusData))]


class Bus:
    def __init__(self, bus, addr):
        self.fd = os.open(f"/dev/i2c-{bus}", os.O_RDWR)
        # the driver owns the address: I2C_SLAVE would say EBUSY
        fcntl.ioctl(self.fd, I2C_SLAVE_FORCE, addr)
        self.d = SMBusData()
        self.arg = SMBusIoctl(I2C_SMBUS_WRITE, 0, I2C_SMBUS_I2C_BLOCK_DATA, ctypes.pointer(self.d))

    def write(self, reg, payload):
        self.d.block[0] = len(payload)
        for i, b in enumerate(payload):
            self.d.block[i + 1] = b
        self.arg.command = reg
        fcntl.ioctl(self.fd, I2C_SMBUS, self.arg)


class Tracer:
    """Waits for the driver's reads of one register, seen through the kernel's i2c trace
    event smbus_read (tracefs), filtered on adapter, address and register."""

    def __init__(self, bus, addr, reg, also=None):
        self.base = "/sys/kernel/tracing"
        if not os.path.exists(self.base + "/events"):
            os.makedirs(self.base, exist_ok=True)
            if os.system(f"mount -t tracefs nodev {self.base}") != 0:
                sys.exit("feeder: --lockstep needs tracefs")
        ev = self.base + "/events/smbus/smbus_read"
        self.ev = ev
        self._w(self.base + "/tracing_on", "0")
        self._w(self.base + "/trace", "")
        regs = f"command == {reg}" + (f" || command == {also}" if also is not None else "")
        self._w(ev + "/filter", f"adapter_nr == {bus} && addr == {addr} && ({regs})")
        self._w(ev + "/enable", "1")
        self._w(self.base + "/tracing_on", "1")
        self.fd = os.open(self.base + "/trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
        self.buf = b""

    @staticmethod
    def _w(path, value):
        with open(path, "w") as f:
            f.write(value)

    def wait(self, timeout):
        import select
        end = time.monotonic() + timeout
        while True:
            if b"\n" in self.buf:
                line, _, self.buf = self.buf.partition(b"\n")
                if b"smbus_read" in line:
                    self.last = line
                    m = re.search(rb" c=([0-9a-f]+)", line)
                    self.command = int(m.group(1), 16) if m else None
                    return True
                continue
            left = max(0.0, end - time.monotonic())
            r, _, _ = select.select([self.fd], [], [], left)
            got = b""
            if r:
                try:
                    got = os.read(self.fd, 65536)
                except BlockingIOError:
                    pass
            self.buf += got
            if not got and time.monotonic() >= end:
                return False

    def pending(self):
        """Counts and forgets the reads already seen (without waiting)."""
        n = 0
        while self.wait(0):
            n += 1
        return n

    def drain(self):
        """Forgets the reads seen so far."""
        while True:
            try:
                if not os.read(self.fd, 65536):
                    break
            except BlockingIOError:
                break
        self.buf = b""

    def close(self):
        self._w(self.ev + "/enable", "0")
        self._w(self.ev + "/filter", "0")
        os.close(self.fd)


def read_env():
    out = {}
    with open("/tmp/fg-rig.env") as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            out[k] = v
    return out


def read_int(path):
    try:
        return int(open(path).read().strip() or 0)
    except (OSError, ValueError):
        return 0


TEMP_RAW = -3920     # in the datum when the reader enables temp: 25.0 degC


def find_device(name):
    base = "/sys/bus/iio/devices"
    for d in sorted(os.listdir(base)):
        try:
            if open(f"{base}/{d}/name").read().strip() == name:
                return f"{base}/{d}"
        except OSError:
            pass
    return None


def load_recording(path, rate):
    with open(path) as f:
        header = f.readline().strip().split(",")
        try:
            ix, iy, iz = (header.index(c) for c in ("x_g", "y_g", "z_g"))
        except ValueError:
            sys.exit(f"{path}: header must name x_g,y_g,z_g, got {header}")
        it = header.index("t_s") if "t_s" in header else None
        gyro = [header.index(c) for c in ("gx_dps", "gy_dps", "gz_dps") if c in header]
        cols = [ix, iy, iz] + (gyro if len(gyro) == 3 else [])
        rows = []
        for n, line in enumerate(f):
            if not line.strip() or line.startswith("#"):
                continue
            c = line.strip().split(",")
            t = float(c[it]) if it is not None else n / rate
            rows.append((t,) + tuple(float(c[i]) for i in cols))
    if len(rows) < 2:
        sys.exit(f"{path}: fewer than 2 rows")
    return rows


def resample(rows, rate, count, loop):
    """Sample the recording at rate Hz (linear interpolation), count samples (looping or
    holding the last row); 3 or 6 values a sample."""
    t0 = rows[0][0]
    span = rows[-1][0] - t0
    out, j = [], 0
    for i in range(count):
        t = i / rate
        if loop and span > 0:
            t = t % span
        t += t0
        if t >= rows[-1][0]:
            out.append(rows[-1][1:])
            continue
        if t < rows[j][0]:
            j = 0
        while rows[j + 1][0] <= t:
            j += 1
        a, b = rows[j], rows[j + 1]
        w = (t - a[0]) / (b[0] - a[0])
        out.append(tuple(a[k] + w * (b[k] - a[k]) for k in range(1, len(a))))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--chip", choices=sorted(CHIPS), required=True)
    p.add_argument("--recording", required=True)
    p.add_argument("--recording-rate", type=float, default=40.0)
    p.add_argument("--rate", type=float, help="feed rate in Hz (default: what the driver reports)")
    p.add_argument("--start", type=float, default=0.0, metavar="S", help="start S seconds into the recording")
    p.add_argument("--seconds", type=float)
    p.add_argument("--count", type=int)
    p.add_argument("--loop", action="store_true", help="repeat the recording (default: hold the last row)")
    p.add_argument("--fire", action="store_true", help="mpu6050: FIFO registers + one interrupt per sample")
    p.add_argument("--lockstep", action="store_true",
                   help="--fire: before the next sample, wait until the driver has read the datum of "
                        "this one (its smbus_read of FIFO_R_W, seen through the i2c trace event)")
    p.add_argument("--follow-polls", action="store_true",
                   help="adxl345: lock-step with a poller: write the next sample right after the driver's "
                        "read of DATAZ0 (the last axis a poll reads, seen through the trace event), so "
                        "each poll reads exactly one new, whole sample; the rate is then the poller's")
    p.add_argument("--wait-buffer", type=float, default=0, metavar="S",
                   help="wait up to S seconds for buffer/enable = 1 before starting")
    p.add_argument("--wait-rate", type=float, metavar="HZ",
                   help="wait (up to 30 s) until the driver reports this rate before starting")
    p.add_argument("--log", help="CSV of every sample written")
    a = p.parse_args()
    chip = CHIPS[a.chip]
    env = read_env()
    dev = find_device(a.chip)
    if not dev:
        sys.exit(f"feeder: no IIO device named {a.chip}")
    if a.fire and a.chip != "mpu6050":
        sys.exit("feeder: --fire is for the mpu6050")
    deadline = time.monotonic() + a.wait_buffer
    while a.wait_buffer and time.monotonic() < deadline:
        try:
            if open(f"{dev}/buffer/enable").read().strip() == "1":
                break
        except OSError:
            pass
        time.sleep(0.02)
    else:
        if a.wait_buffer:
            sys.exit(f"feeder: {dev}/buffer/enable did not become 1 within {a.wait_buffer} s")

    def driver_rate():
        return float(open(f"{dev}/{chip['rate_attr']}").read())
    if a.wait_rate:
        deadline = time.monotonic() + 30
        while abs(driver_rate() - a.wait_rate) > 1e-6:
            if time.monotonic() > deadline:
                sys.exit(f"feeder: the driver still reports {driver_rate()} Hz, not {a.wait_rate}")
            time.sleep(0.02)
    rate = a.rate or driver_rate()
    scale = float(open(f"{dev}/in_accel_scale").read())
    count = a.count if a.count else int(round((a.seconds or 10) * rate))
    rows = load_recording(a.recording, a.recording_rate)
    if a.start:
        rows = [r for r in rows if r[0] >= rows[0][0] + a.start]
    six = a.chip == "mpu6050" and len(rows[0]) == 7
    gscale = float(open(f"{dev}/in_anglvel_scale").read()) if six else None
    samples = []
    for v in resample(rows, rate, count, a.loop):
        counts = tuple(max(chip["lo"], min(chip["hi"], int(round(g * G / scale)))) for g in v[:3])
        if six:   # deg/s -> rad/s -> counts of in_anglvel_scale
            counts += tuple(max(-32768, min(32767, int(round(w * math.pi / 180 / gscale)))) for w in v[3:])
        samples.append(counts)

    bus = Bus(env["FG_I2C_BUS"], chip["addr"])
    fire = None
    datum = ["accel"] + (["gyro"] if six else [])
    if a.fire and a.wait_buffer:
        # what the driver put in the FIFO for the reader's scan (inv_scan_query_mpu6050)
        def on(kind):
            channels = ["temp"] if kind == "temp" else [f"{kind}_{axis}" for axis in "xyz"]
            return any(read_int(f"{dev}/scan_elements/in_{c}_en") for c in channels)
        datum = [s for s in ("accel", "temp", "anglvel") if on(s)]
        datum = ["gyro" if s == "anglvel" else s for s in datum]
        if "gyro" in datum and not six:
            sys.exit("feeder: the reader enabled the gyroscope: give a six-axis recording")
    datum_bytes = sum({"accel": 6, "temp": 2, "gyro": 6}[s] for s in datum)
    if a.fire:
        bus.write(0x72, [0, datum_bytes])
        bus.write(0x3A, [0x01])
        bus.write(0x00, [0x01])
        fire = os.open(f"{env['FG_RIG_SYSFS']}/fire_mpu6050", os.O_WRONLY)
    tracer = Tracer(env["FG_I2C_BUS"], chip["addr"], 0x74) if a.lockstep else None
    follow = Tracer(env["FG_I2C_BUS"], chip["addr"], 0x36, also=0x32) if a.follow_polls else None
    if follow is not None or tracer is not None:
        try:   # a late feeder makes the rig's own timing worse: run ahead of the readers
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(20))
        except OSError:
            pass
    log = open(a.log, "w", buffering=1) if a.log else None
    if log:
        log.write(f"# chip={a.chip}\n# device={os.path.basename(dev)}\n# rate_hz={rate}\n# scale={scale}\n"
                  + (f"# gyro_scale={gscale}\n" if six else "")
                  + f"# recording={a.recording}\n# fire={int(a.fire)}\n# datum={'+'.join(datum)}\n"
                  + "seq,t0_ns,t1_ns,x,y,z,polls" + (",gx,gy,gz" if six else "") + "\n")
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    period = int(round(1e9 / rate))
    start = time.clock_gettime_ns(time.CLOCK_MONOTONIC) + 20_000_000
    late = 0
    written = 0
    timeouts = 0
    try:
        temp = struct.pack(">h", TEMP_RAW)
        for i, v in enumerate(samples):
            x, y, z = v[:3]
            if stop:
                break
            due = start + i * period
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            polls = -1
            if follow is not None:
                if i == 0:
                    follow.drain()
                # wait for the end of a poll (its DATAZ read); polls that came while this
                # feeder was late read the previous sample again; and if the next poll has
                # already begun (its DATAX read seen), let it finish first rather than write
                # between its axes
                polls, started = 0, False
                while True:
                    if not follow.wait(2.0 if polls == 0 or started else 0):
                        if polls == 0 or started:
                            timeouts += 1
                        break
                    if follow.command == 0x36:
                        polls += 1
                        started = False
                    else:
                        started = True
                if polls > 1:
                    late += 1
            elif due > now:
                time.sleep((due - now) / 1e9)
            elif now - due > period:
                late += 1
            t0 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            if a.chip == "adxl345":
                bus.write(0x32, list(struct.pack("<hhh", x, y, z)))
            else:
                accel = struct.pack(">hhh", x, y, z)
                gyro = struct.pack(">hhh", *v[3:]) if six else b""
                bus.write(0x3B, list(accel))
                if six:
                    bus.write(0x43, list(gyro))
                if fire is not None:
                    parts = {"accel": accel, "temp": temp, "gyro": gyro}
                    bus.write(0x74, list(b"".join(parts[s] for s in datum)))
                    os.write(fire, b"1")
                    if tracer and not tracer.wait(1.0):
                        timeouts += 1
            t1 = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            written += 1
            if log:
                log.write(f"{i},{t0},{t1},{x},{y},{z},{polls}" + (",%d,%d,%d" % v[3:] if six else "") + "\n")
    finally:
        if tracer:
            tracer.close()
        if follow:
            follow.close()
        if a.chip == "mpu6050":
            bus.write(0x75, [0x68])     # WHO_AM_I, overwritten by the datum at 0x74..0x79
        if log:
            log.close()
    dt = (time.clock_gettime_ns(time.CLOCK_MONOTONIC) - start) / 1e9
    print(f"feeder: {a.chip} ({os.path.basename(dev)}): wrote {written} samples at {rate:g} Hz "
          f"(scale {scale}" + (f", gyroscope scale {gscale}" if six else "") + f") in {dt:.2f} s, {late} more than a period late"
          + (f", {written} interrupts fired" if fire is not None else "")
          + (f", following the polls: {timeouts} polls not seen within 2 s" if follow else "")
          + (f", lock-step: {timeouts} datum reads not seen within 1 s" if tracer else ""), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

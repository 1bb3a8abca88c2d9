#!/usr/bin/env python3
"""check_capture.py: verify a buffered capture byte for byte against an iio-emu write log.

    check_capture.py --model mpu6050 --channels accel_x,accel_y,accel_z,timestamp \
                     --bin capture.bin --log write-log.csv [--count N] [--rate HZ]

The capture is what a reader got from /dev/iio:deviceN (e.g. ``iio_readdev`` output: packed
scan records of the listed channels, IIO alignment).  Every record is rebuilt from the log's
``sample`` rows (accel x/y/z and the timestamp; padding must be zero; other channels are decoded
but not compared, the log does not hold them) and the capture must equal a contiguous run of
the records written while the buffer was enabled, starting with the first one written after an
enable.  With --rate, the timestamps must also be spaced 1/rate apart (within 1 us).
Exit 0 when it matches; prints what differs otherwise.
"""
import argparse
import csv
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
from iioemu import Adxl345, Mpu6050, scan_layout  # noqa: E402


class _Emu:
    index = 0
    buffer_enabled = False


def model_chans(model):
    m = Mpu6050(_Emu()) if model == "mpu6050" else Adxl345(_Emu(), buffered=True)
    return {c.id: c for c in m.scan_chans}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--channels", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--count", type=int)
    ap.add_argument("--rate", type=float)
    a = ap.parse_args()

    chans = model_chans(a.model)
    try:
        sel = [chans[c] for c in a.channels.split(",")]
    except KeyError as e:
        sys.exit("unknown channel %s" % e)
    layout, size = scan_layout(sel)
    data = open(a.bin, "rb").read()
    if len(data) % size:
        print("FAIL capture is %d bytes, not a multiple of the %d-byte record" % (len(data), size))
        return 1
    n = len(data) // size
    if a.count is not None and n != a.count:
        print("FAIL capture holds %d records, expected %d" % (n, a.count))
        return 1

    # records written to the buffer, grouped into runs that start at a buffer enable
    runs, cur = [], None
    with open(a.log, newline="") as fh:
        for row in csv.DictReader(fh):
            if row["kind"] == "event" and row["info"].startswith("buffer enable"):
                cur = []
                runs.append(cur)
            elif row["kind"] == "sample" and row["mode"] == "buffer" and cur is not None:
                cur.append(row)
    used = set(c.id for c in sel)

    def expected(row):
        rec = bytearray(size)
        vals = {"accel_x": int(row["x"]), "accel_y": int(row["y"]), "accel_z": int(row["z"])}
        if row["ts"]:
            vals["timestamp"] = int(row["ts"])
        for c, off in layout:
            if c.id in vals:
                struct.pack_into(c.fmt, rec, off, vals[c.id])
        return bytes(rec)

    def mask(rec):
        """Zero the bytes of channels the log cannot check (temp, gyro)."""
        rec = bytearray(rec)
        for c, off in layout:
            if c.id not in ("accel_x", "accel_y", "accel_z", "timestamp"):
                rec[off:off + c.nbytes] = bytes(c.nbytes)
        return bytes(rec)

    got = [mask(data[i * size:(i + 1) * size]) for i in range(n)]
    for k, run in enumerate(runs):
        if len(run) < n:
            continue
        want = [expected(r) for r in run[:n]]
        if want == got:
            ts = []
            for rec in got:
                for c, off in layout:
                    if c.id == "timestamp":
                        ts.append(struct.unpack_from(c.fmt, rec, off)[0])
            if a.rate and len(ts) > 1:
                period = 1e9 / a.rate
                worst = max(abs((b - t) - period) for t, b in zip(ts, ts[1:]))
                if worst > 1000:
                    print("FAIL timestamps are not spaced %.0f ns apart (worst error %d ns)"
                          % (period, worst))
                    return 1
            first = run[0]
            print("OK %d records x %d bytes match the write log (buffer run %d, seq %s..%s)%s"
                  % (n, size, k + 1, first["seq"], run[n - 1]["seq"],
                     ", timestamps every %.3f ms" % (1e3 / a.rate) if a.rate and ts else ""))
            return 0
    # explain the first difference against the best candidate
    if not runs:
        print("FAIL the log has no buffer enable")
        return 1
    run = max(runs, key=len)
    for i, rec in enumerate(got):
        if i >= len(run):
            print("FAIL capture record %d beyond the %d logged records" % (i, len(run)))
            return 1
        exp = expected(run[i])
        if exp != rec:
            print("FAIL record %d differs: got %s expected %s (log seq %s)"
                  % (i, rec.hex(), exp.hex(), run[i]["seq"]))
            return 1
    print("FAIL no match")
    return 1


if __name__ == "__main__":
    sys.exit(main())

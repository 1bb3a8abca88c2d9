#!/usr/bin/env python3
"""Feasibility probe, run INSIDE the guest (after guest-setup.sh, with FG_RIG_MPU_IRQ=1):

    tools/kernel-rig/run-guest.sh 6.12 -- tools/kernel-rig/mpu6050-buffer-demo.py [N]

Drives the real inv_mpu6050 buffered path: enables accel x/y/z + timestamp with the
driver's own trigger, then for each of N samples writes the sample into i2c-stub's
registers where the driver's FIFO read lands (FIFO_COUNT_H/L 0x72/0x73 = 6,
FIFO_R_W 0x74..0x79 = accel x/y/z big-endian, INT_STATUS 0x3a and (for 6.1) 0x00 = 1: i2c-stub answers a block read of 0x74
with consecutive registers, so one datum per interrupt), fires the interrupt through
fg_i2c_devices and reads the scan back from /dev/iio:deviceN. Prints "N passed, N failed".
"""
import ctypes
import fcntl
import os
import select
import struct
import sys
import time

I2C_SLAVE_FORCE = 0x0706
I2C_SMBUS = 0x0720
I2C_SMBUS_WRITE = 0
I2C_SMBUS_I2C_BLOCK_DATA = 8


class SMBusData(ctypes.Union):
    _fields_ = [("byte", ctypes.c_uint8), ("word", ctypes.c_uint16), ("block", ctypes.c_uint8 * 34)]


class SMBusIoctl(ctypes.Structure):
    _fields_ = [("read_write", ctypes.c_uint8), ("command", ctypes.c_uint8),
                ("size", ctypes.c_uint32), ("data", ctypes.POINTER(SMBusData))]


def block_write(fd, reg, payload):
    d = SMBusData()
    d.block[0] = len(payload)
    for i, b in enumerate(payload):
        d.block[i + 1] = b
    arg = SMBusIoctl(I2C_SMBUS_WRITE, reg, I2C_SMBUS_I2C_BLOCK_DATA, ctypes.pointer(d))
    fcntl.ioctl(fd, I2C_SMBUS, arg)


def env():
    out = {}
    with open("/tmp/fg-rig.env") as f:
        for line in f:
            k, _, v = line.strip().partition("=")
            out[k] = v
    return out


def write(path, value):
    with open(path, "w") as f:
        f.write(value)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    e = env()
    dev = e["FG_IIO_MPU6050"]
    rig = e["FG_RIG_SYSFS"]
    name = os.path.basename(dev)
    trig = next(open(f"/sys/bus/iio/devices/{t}/name").read().strip()
                for t in os.listdir("/sys/bus/iio/devices") if t.startswith("trigger"))
    for ch in ("in_accel_x_en", "in_accel_y_en", "in_accel_z_en", "in_timestamp_en"):
        write(f"{dev}/scan_elements/{ch}", "1")
    for ch in ("in_anglvel_x_en", "in_anglvel_y_en", "in_anglvel_z_en", "in_temp_en"):
        write(f"{dev}/scan_elements/{ch}", "0")
    print("scan types:", [open(f"{dev}/scan_elements/in_accel_x_type").read().strip(),
                          open(f"{dev}/scan_elements/in_timestamp_type").read().strip()])
    write(f"{dev}/trigger/current_trigger", trig)
    write(f"{dev}/buffer/length", "256")
    write(f"{dev}/buffer/enable", "1")

    i2c = os.open(f"/dev/i2c-{e['FG_I2C_BUS']}", os.O_RDWR)
    fcntl.ioctl(i2c, I2C_SLAVE_FORCE, 0x68)
    block_write(i2c, 0x72, [0, 6])          # FIFO_COUNT = one datum of accel x/y/z
    block_write(i2c, 0x3A, [0x01])          # INT_STATUS DATA_RDY (i2c-stub never clears it)
    # Debian 12's 6.1 driver has no int_status in its MPU6050 register map, so its FIFO
    # handler reads register 0x00 instead and drops the interrupt unless bit 0 is set
    # (6.12 no longer reads a status on the MPU6050). Set it so 6.1 reads the FIFO too.
    block_write(i2c, 0x00, [0x01])
    iio = os.open(f"/dev/{name}", os.O_RDONLY | os.O_NONBLOCK)
    fired0 = int(open(f"{rig}/fired_mpu6050").read())
    sent, got, lost, bad = [], [], 0, 0
    t0 = time.monotonic()
    for i in range(n):
        x, y, z = (i * 37) % 65536 - 32768, -i, 1000 + i
        sent.append((x, y, z))
        block_write(i2c, 0x74, list(struct.pack(">hhh", x, y, z)))
        write(f"{rig}/fire_mpu6050", "1")
        r, _, _ = select.select([iio], [], [], 1.0)
        if not r:
            lost += 1
            if lost >= 5 and not got:
                print("no scan after 5 interrupts: giving up")
                break
            continue
        rec = os.read(iio, 16)               # be:s16 x3, 2 bytes pad, le:s64 timestamp
        sx, sy, sz = struct.unpack(">hhh", rec[:6])
        (ts,) = struct.unpack("<q", rec[8:16])
        got.append((sx, sy, sz, ts))
        if (sx, sy, sz) != (x, y, z):
            bad += 1
    dt = time.monotonic() - t0
    write(f"{dev}/buffer/enable", "0")
    fired = int(open(f"{rig}/fired_mpu6050").read()) - fired0
    ts = [g[3] for g in got]
    mono = all(b > a for a, b in zip(ts, ts[1:]))
    print(f"fired {fired}, read {len(got)} scans, lost {lost}, mismatched {bad}, "
          f"{n / dt:.1f} samples/s, timestamps increasing: {mono}")
    if got:
        print("first scans:", got[:3])
    passed = sum([fired == n, len(got) == n, lost == 0, bad == 0, mono])
    print(f"mpu6050-buffer: {passed} passed, {5 - passed} failed")
    return 0 if passed == 5 else 1


if __name__ == "__main__":
    sys.exit(main())

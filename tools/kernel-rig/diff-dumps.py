#!/usr/bin/env python3
"""Compares a dump of the real drivers (dump-attrs.py in the guest) with the same dump of the
project's emulators (emulator-dumps.sh on the host) and fails on any difference that matters.

    diff-dumps.py REAL.json EMULATED.json [--label NAME]

Every difference is printed: `DIFF` (fails) or `ignored` with the reason. What is ignored,
and why (nothing else is):
- values that are data, not behaviour: `*_raw` (what is in the chip's registers: i2c-stub's
  zeros or the feeder's samples in the rig, the recording in the emulator), `in_temp_raw`,
  `buffer*/data_available`; only their form is compared (an integer, or the same errno);
- the MPU6050's `in_{accel,anglvel}_{x,y,z}_calibbias`: the chip's factory trim registers,
  all 0 in i2c-stub (the emulator shows a real chip's non-zero trims); again integer form;
- a `_raw` read while the buffer is enabled: the driver returns EBUSY, the emulator's file
  (a regular file cannot fail a read) holds the last value, frozen (its README says so);
  fallguard never polls a device whose buffer it enabled. Compared: EBUSY vs an integer;
- a value that differs only by a trailing NUL byte: Debian 12's 6.1 IIO core returns
  `current_timestamp_clock` as sizeof("realtime\n") bytes, NUL included (6.12 does not); C
  string readers (libiio, fallguard) never see it;
- `uevent` (MAJOR/MINOR/DEVNAME/OF_* lines differ by construction: the emulator has no
  device tree node and a node of its own) and `dev` (major:minor of the node);
- the kernel's 6.1 and 6.12 both checked against the same emulator: a difference between
  kernels is a difference of one of them, and shows.
"""
import argparse
import json
import re
import sys

DATA = [(re.compile(r"(^|/)in_(accel|anglvel)_[xyz]_raw$"), "sample data (registers vs recording)"),
        (re.compile(r"(^|/)in_temp_raw$"), "sample data (registers vs recording)"),
        (re.compile(r"(^|/)data_available$"), "how many samples are queued right now")]
CHIP = {"mpu6050": [(re.compile(r"(^|/)in_(accel|anglvel)_[xyz]_calibbias$"),
                     "factory trim registers: 0 in i2c-stub, a real chip's values in the emulator")]}
IGNORED_NAMES = {"uevent": "uevent lines (MAJOR/MINOR, OF_*) differ by construction",
                 "dev": "major:minor of the node"}

diffs, ignored = [], []


def is_int(v):
    return v is not None and re.fullmatch(r"-?\d+", v) is not None


def rule(chip, attr):
    for rx, why in DATA + CHIP.get(chip, []):
        if rx.search(attr):
            return why
    return None


def same_read(chip, attr, r, e, where):
    """Compares two read results ({"value": ..} or {"errno": ..})."""
    if r == e:
        return
    if "value" in r and "value" in e and r["value"] != e["value"] and \
            r["value"].rstrip("\0").rstrip("\n") == e["value"].rstrip("\0").rstrip("\n"):
        ignored.append(f"{where}: {r['value']!r} vs {e['value']!r} (a trailing NUL byte: 6.1's IIO core "
                       f"returns sizeof(\"realtime\\n\") bytes for current_timestamp_clock; libiio reads C strings)")
        return
    why = rule(chip, attr)
    if why and "value" in r and "value" in e and is_int(r["value"]) and is_int(e["value"]):
        ignored.append(f"{where}: {r['value']!r} vs {e['value']!r} ({why})")
        return
    diffs.append(f"{where}: real {json.dumps(r)} vs emulator {json.dumps(e)}")


def iio(real, emu):
    rd, ed = real["devices"], emu["devices"]
    for k in sorted(set(rd) | set(ed)):
        if k not in ed:
            diffs.append(f"{k}: a device the emulator does not make")
            continue
        if k not in rd:
            diffs.append(f"{k}: the emulator makes a device the driver does not")
            continue
        r, e = rd[k], ed[k]
        chip = r["name"]
        ra, ea = r["attributes"], e["attributes"]
        for a in sorted(set(ra) | set(ea)):
            base = a.split("/")[-1]
            if base in IGNORED_NAMES:
                ignored.append(f"{k} {a}: {IGNORED_NAMES[base]}" + ("" if a in ra and a in ea else f" (only in the {'driver' if a in ra else 'emulator'})"))
                continue
            if a not in ea:
                diffs.append(f"{k} {a}: missing in the emulator (driver: {json.dumps(ra[a])})")
                continue
            if a not in ra:
                diffs.append(f"{k} {a}: not made by the driver (emulator: {json.dumps(ea[a])})")
                continue
            if ra[a]["perm"] != ea[a]["perm"]:
                diffs.append(f"{k} {a}: permissions {ra[a]['perm']} (driver) vs {ea[a]['perm']} (emulator)")
            same_read(chip, a, {x: ra[a][x] for x in ("value", "errno") if x in ra[a]},
                      {x: ea[a][x] for x in ("value", "errno") if x in ea[a]}, f"{k} {a}")
        rw, ew = r["writes"], e["writes"]
        for i in range(max(len(rw), len(ew))):
            x = rw[i] if i < len(rw) else None
            y = ew[i] if i < len(ew) else None
            if x is None or y is None:
                diffs.append(f"{k} write probe {i}: only in the {'emulator' if x is None else 'driver'} dump")
                continue
            if "read" in x:
                if re.search(r"_raw$", x["read"]) and x.get("errno") == "EBUSY" and is_int(y.get("value")):
                    ignored.append(f"{k} read {x['read']} (buffer enabled): EBUSY vs the frozen value "
                                   f"{y['value']} (a regular file cannot fail a read)")
                    continue
                same_read(chip, x["read"], {z: x[z] for z in ("value", "errno") if z in x},
                          {z: y[z] for z in ("value", "errno") if z in y}, f"{k} read {x['read']} (buffer enabled)")
                continue
            where = f"{k} write {x.get('attribute')}={x.get('wrote')!r}"
            if x.get("missing") or y.get("missing"):
                if x.get("missing") != y.get("missing"):
                    diffs.append(f"{where}: attribute missing in the {'driver' if x.get('missing') else 'emulator'}")
                continue
            if x["errno"] != y["errno"]:
                diffs.append(f"{where}: the driver returns {x['errno'] or 'success'}, the emulator {y['errno'] or 'success'}")
            same_read(chip, x["attribute"], x["reads"], y["reads"], where + " then reads")


def walk(path, r, e):
    if isinstance(r, dict) and isinstance(e, dict):
        for k in sorted(set(r) | set(e), key=str):
            if k not in r or k not in e:
                diffs.append(f"{path}/{k}: only in the {'driver' if k in r else 'emulator'} dump")
            else:
                walk(f"{path}/{k}", r[k], e[k])
    elif r != e:
        diffs.append(f"{path}: real {json.dumps(r)} vs emulator {json.dumps(e)}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("real")
    p.add_argument("emulated")
    p.add_argument("--label", default="")
    a = p.parse_args()
    real, emu = json.load(open(a.real)), json.load(open(a.emulated))
    if real["kind"] != emu["kind"]:
        sys.exit(f"diff-dumps: {a.real} is {real['kind']}, {a.emulated} is {emu['kind']}")
    if real["kind"] == "iio":
        iio(real, emu)
    else:
        walk("gpio", real["probes"], emu["probes"])
    label = a.label or f"{real['kind']} {real['source']} vs {emu['source']}"
    for d in ignored:
        print(f"ignored: {d}")
    for d in diffs:
        print(f"DIFF: {d}")
    print(f"diff-dumps: {label}: {len(diffs)} differences that matter, {len(ignored)} ignored")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())

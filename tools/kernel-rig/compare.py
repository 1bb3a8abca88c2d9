#!/usr/bin/env python3
"""Compares what fallguard captured with what feeder.py wrote into the chip's registers.

    compare.py arrivals FED.csv ARRIVALS.txt [--max-lsb 1] [--min-samples N] [--lost-ok N]
    compare.py record   FED.csv RECORD.csv   [--max-lsb 1] [--min-samples N] [--lost-ok N]

FED.csv is feeder.py's log (counts, CLOCK_MONOTONIC times, `# scale=` and `# rate_hz=`).
Captured values in g are turned back into counts with the scale the feeder read from the
driver (count = g * 9.80665 / scale): a wrong scale, axis, sign or byte order shows as a
difference of many counts.

Six axes (the MPU6050 fed from a six-axis recording: the feeder's log has gx,gy,gz and
`# gyro_scale=`): the captured angular velocity (°/s) is turned back into counts the same
way (count = °/s * pi/180 / gyro_scale) and compared on the same samples, with its own bar
(--gyro-max-lsb, default --max-lsb); a capture without the gyroscope's values fails.

arrivals: `fallguard watch --arrival-log` (ns,x,y,z in g[,gx,gy,gz in °/s]: every raw sample as it reached the
  pipeline, before resampling). Alignment: the first captured sample is located in the fed
  sequence by value (the unique best match among the first fed samples); from there every
  captured sample must be the next fed sample (buffered: lock-free FIFO order) or, polled,
  the same or a later one (a poll may read a sample twice or miss one if the two clocks
  drift; counted). Reported: captured, fed in the window, lost (fed samples in the window
  never captured), repeated, max |difference| in counts over all axes, rate from the
  captured times. The window ends at the last captured sample (a reader that stops with a
  partial batch unread has not lost it).
record: `fallguard record` (t_s,x_g,y_g,z_g[,gx_dps,gy_dps,gz_dps] at 40 Hz). When the fed rate is 40 Hz the
  recorder passes samples through: same check as buffered arrivals. Otherwise (the
  ADXL345 at 50 Hz) each row is the recorder's linear interpolation between two polled
  samples: the row must lie, within --max-lsb on every axis, on the segment between two
  consecutive fed samples k, k+1, with one weight w in [0, 1] common to the three axes, and k
  must advance by rate/40 per row (alignment once, by value, at the first rows).
Exit 0 when every sample is within --max-lsb and lost <= --lost-ok; prints one summary line
starting with `compare:` and a JSON line starting with `figures:`.
"""
import argparse
import json
import math
import sys

G = 9.80665


def read_fed(path):
    meta, rows = {}, []
    for line in open(path):
        if line.startswith("#"):
            k, _, v = line[1:].strip().partition("=")
            meta[k] = v
        elif line[0].isdigit():
            c = line.strip().split(",")
            # (t0, t1, x, y, z, polls[, gx, gy, gz])
            rows.append((int(c[1]), int(c[2]), int(c[3]), int(c[4]), int(c[5]), int(c[6]) if len(c) > 6 else -1)
                        + tuple(int(v) for v in c[7:10]))
    return meta, rows


def read_arrivals(path, k, kg):
    """(ns, x, y, z[, gx, gy, gz]) in counts."""
    out = []
    for line in open(path):
        if line.strip():
            v = line.strip().split(",")
            out.append((int(v[0]),) + tuple(float(a) * k for a in v[1:4]) + tuple(float(w) * kg for w in v[4:7]))
    return out


def read_record(path, k, kg):
    out = []
    lines = open(path).read().split("\n")
    if lines[0] not in ("t_s,x_g,y_g,z_g", "t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps"):
        sys.exit(f"compare: {path}: header {lines[0]!r}")
    for line in lines[1:]:
        if line.strip():
            v = [float(a) for a in line.split(",")]
            out.append((v[0],) + tuple(a * k for a in v[1:4]) + tuple(w * kg for w in v[4:7]))
    return out


def gyro_check(fed, cap, idx, max_lsb):
    """The gyroscope's counts of each captured sample against the fed sample it was matched
    to (idx: fed index per captured sample, None outside the window)."""
    worst, bad, compared, missing = 0.0, 0, 0, 0
    for c, k in zip(cap, idx):
        if k is None:
            continue
        if len(c) < 7:
            missing += 1
            continue
        d = max(abs(c[4 + i] - fed[k][6 + i]) for i in range(3))
        worst = max(worst, d)
        compared += 1
        if d > max_lsb:
            bad += 1
    return {"gyro_compared": compared, "gyro_max_lsb": round(worst, 6), "gyro_over_bar": bad, "gyro_missing": missing}


def diff(a, b):
    return max(abs(a[i] - b[i]) for i in range(3))


def locate(cap, fed, n=8, search=None):
    """Index in fed of cap[0], by the best sum of differences over the first n samples."""
    n = min(n, len(cap))
    best, at = None, None
    last = len(fed) - n if search is None else min(search, len(fed) - n)
    for k in range(0, max(0, last) + 1):
        d = sum(diff(cap[j][1:], fed[k + j][2:]) for j in range(n))
        if best is None or d < best:
            best, at = d, k
    return at


def sequence(fed, cap, polled, max_lsb):
    """Walks the captured samples through the fed sequence."""
    k = locate(cap, fed)
    worst, lost, repeated, bad, idx = 0.0, 0, 0, 0, []
    for j, c in enumerate(cap):
        if j:
            # next fed sample; polled: the same or a later one, whichever matches
            cands = [k + 1] if not polled else [k + 1, k, k + 2]
            best = min((c2 for c2 in cands if c2 < len(fed)), key=lambda c2: diff(c[1:], fed[c2][2:]), default=None)
            if best is None:
                bad += 1
                break
            if best == k:
                repeated += 1
            elif best > k + 1:
                lost += best - k - 1
            k = best
        d = diff(c[1:], fed[k][2:])
        worst = max(worst, d)
        if d > max_lsb:
            bad += 1
        idx.append(k)
    return {"first_fed": idx[0] if idx else None, "last_fed": idx[-1] if idx else None,
            "fed_in_window": (idx[-1] - idx[0] + 1) if idx else 0,
            "lost": lost, "repeated": repeated, "max_lsb": round(worst, 3), "over_bar": bad, "idx": idx}


def polled(fed, cap, max_lsb, period_ns):
    """Arrivals of a polled device, matched by time. The arrival stamp is taken when the
    sample reaches the pipeline, after the three _raw reads, and the reads of one poll came
    after the previous arrival: so the poll read a sample that was in the registers between
    the previous arrival (less a period) and this one, and polls read samples in order.
    Candidates are those samples (each poll must equal one within max_lsb, on every axis);
    axes read from two consecutive candidates (a write between the three _raw reads) count as
    torn. Arrivals before the first write or more than a period after the last one are
    outside the window."""
    import bisect
    t1 = [f[1] for f in fed]
    worst, bad, torn, used, idx = 0.0, 0, 0, set(), []
    prev_t, last_k = None, 0
    for c in cap:
        if c[0] < t1[0] or c[0] > t1[-1] + period_ns:
            prev_t = c[0]
            continue
        hi = bisect.bisect_right(t1, c[0]) - 1
        lo = bisect.bisect_right(t1, (prev_t if prev_t is not None else c[0]) - period_ns) - 1
        lo = max(0, min(lo, hi), last_k)
        hi = max(hi, lo)
        cands = range(lo, min(hi + 2, len(fed)))   # +1: a write that raced the stamp
        d, kk = min((diff(c[1:], fed[k][2:]), k) for k in cands)
        if d > max_lsb:
            # torn: each axis from k or k+1
            for k in cands:
                if k + 1 < len(fed):
                    dt = max(min(abs(c[1 + i] - fed[k][2 + i]), abs(c[1 + i] - fed[k + 1][2 + i])) for i in range(3))
                    if dt <= max_lsb:
                        torn += 1
                        d, kk = dt, k
                        break
        worst = max(worst, d)
        if d > max_lsb:
            bad += 1
        used.add(kk)
        idx.append(kk)
        last_k = kk
        prev_t = c[0]
    if not idx:
        return {"first_fed": None, "last_fed": None, "fed_in_window": 0, "lost": 0, "repeated": 0,
                "max_lsb": None, "over_bar": 1, "in_window": 0, "torn": 0}
    window = idx[-1] - idx[0] + 1
    return {"first_fed": idx[0], "last_fed": idx[-1], "fed_in_window": window,
            "lost": window - len(used), "repeated": len(idx) - len(used), "max_lsb": round(worst, 3),
            "over_bar": bad, "torn": torn, "in_window": len(idx)}


def interpolated(fed, cap, step, max_lsb):
    """Rows of a resampled record against the fed samples, when each poll read the next fed
    sample (feeder.py --follow-polls): row j (time j/40 s) is the recorder's linear
    interpolation between polls i and i+1 with i = floor(j * rate/40), so it must lie, within
    max_lsb on every axis and with one weight w common to the three axes, on the segment
    between fed samples k and k+1, with k + w within one sample of k0 + j * rate/40.
    Alignment (j0, k0): the first row and fed sample that put 8 consecutive rows on their
    segments best; rows before j0 (before the feeder started) and after the last fed sample
    are outside the window."""
    def on(j, expect):
        cands = [int(expect) - 1, int(expect), int(expect) + 1]
        scored = [(seg(cap[j][1:], fed[k][2:], fed[k + 1][2:]), k) for k in cands if 0 <= k < len(fed) - 1]
        if not scored:
            return ((1e9, 0.0), 0)
        # where the signal is flat several segments fit: the best one on schedule, else the
        # best fit (then counted off schedule)
        near = [s for s in scored if abs(s[1] + s[0][1] - expect) <= 1.0]
        return min(near or scored, key=lambda s: s[0][0])
    best = None
    for j0 in range(0, max(1, min(len(cap) - 8, 1500))):
        for k0 in range(0, 3):
            e = sum(min(on(j0 + j, k0 + j * step)[0][0], 50) for j in range(8))
            if best is None or e < best[0] - 1e-9:
                best = (e, j0, k0)
        if best[0] <= 0.5 * 8 and j0 > best[1] + 3:
            break
    _, j0, k0 = best

    def walk(base):
        out = []
        for j in range(j0, len(cap)):
            expect = base + (j - j0) * step
            if expect >= len(fed) - 2:
                break
            (d, w), k = on(j, expect)
            out.append((d, k, w, expect))
        return out
    # the phase of the 40 Hz rows against the polls: centre the schedule on the rows' median
    # position (the first rows alone may fit a neighbouring alignment where the signal is flat)
    first = walk(float(k0))
    if first:
        devs = sorted(k + w - e for _, k, w, e in first)
        rows_ = walk(k0 + devs[len(devs) // 2])
    else:
        rows_ = first
    # Each row is one of: on its segment and on schedule (within one fed sample); late (on a
    # segment within STALL samples of the schedule: the emulated CPU stalled a poll, so its
    # time stamp, and the rows interpolated from it, slipped); torn (every axis within the
    # range of the fed samples around it, not on one segment: the feeder wrote between two
    # axes' reads of one poll, which sysfs reads separately); or wrong. A wrong scale, swapped
    # axes or a dropped sample makes wrong rows, or more irregular rows than IRREGULAR_OK allows.
    late, torn, wrong, worst = 0, 0, 0, 0.0
    for j, (d, k, w, e) in zip(range(j0, j0 + len(rows_)), rows_):
        if d <= max_lsb and abs(k + w - e) <= 1.0:
            worst = max(worst, d)
            continue
        lo, hi = max(0, int(e) - STALL), min(len(fed) - 1, int(e) + STALL + 1)
        slipped = min((seg(cap[j][1:], fed[i][2:], fed[i + 1][2:])[0] for i in range(lo, hi)), default=1e9)
        if slipped <= max_lsb:
            late += 1
            continue
        within = all(min(f[2 + a] for f in fed[lo:hi + 1]) - max_lsb <= cap[j][1 + a]
                     <= max(f[2 + a] for f in fed[lo:hi + 1]) + max_lsb for a in range(3))
        if within:
            torn += 1
        else:
            wrong += 1
            worst = max(worst, d)
    allowed = max(3, int(0.02 * len(rows_)))
    last = rows_[-1][1] + 1 if rows_ else k0
    return {"first_row": j0, "first_fed": k0, "last_fed": last, "fed_in_window": last - k0 + 1, "lost": 0,
            "repeated": 0, "rows_in_window": len(rows_), "max_lsb": round(worst, 3), "over_bar": wrong,
            "late_rows": late, "torn_rows": torn, "irregular_ok": allowed,
            "off_schedule": max(0, late + torn - allowed)}


STALL = 2          # fed samples (40 ms at 50 Hz) a stalled poll may slip the rows
def seg(p, a, b):
    """Distance (max over axes, counts) of p from the segment a-b with one common weight."""
    num = sum((p[i] - a[i]) * (b[i] - a[i]) for i in range(3))
    den = sum((b[i] - a[i]) ** 2 for i in range(3))
    w = 0.0 if den == 0 else max(0.0, min(1.0, num / den))
    # the best common weight under the max-norm lies near the least-squares one; refine
    best = (max(abs(p[i] - (a[i] + w * (b[i] - a[i]))) for i in range(3)), w)
    for dw in (-0.05, -0.02, -0.01, 0.01, 0.02, 0.05):
        w2 = max(0.0, min(1.0, w + dw))
        e = max(abs(p[i] - (a[i] + w2 * (b[i] - a[i]))) for i in range(3))
        if e < best[0]:
            best = (e, w2)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kind", choices=["arrivals", "record"])
    p.add_argument("fed")
    p.add_argument("captured")
    p.add_argument("--max-lsb", type=float, default=1.0)
    p.add_argument("--gyro-max-lsb", type=float, help="bar for the gyroscope (default: --max-lsb)")
    p.add_argument("--min-samples", type=int, default=1)
    p.add_argument("--lost-ok", type=int, default=0)
    p.add_argument("--polled", action="store_true", help="arrivals of a polled device")
    p.add_argument("--label", default="")
    a = p.parse_args()
    meta, fed = read_fed(a.fed)
    scale, rate = float(meta["scale"]), float(meta["rate_hz"])
    k = G / scale   # counts per g
    gyro_scale = float(meta["gyro_scale"]) if "gyro_scale" in meta else None
    kg = math.pi / 180 / gyro_scale if gyro_scale else 0.0   # counts per °/s
    if a.kind == "arrivals":
        cap = read_arrivals(a.captured, k, kg)
        times = [c[0] * 1e-9 for c in cap]
    else:
        cap = read_record(a.captured, k, kg)
        times = [c[0] for c in cap]
    if len(cap) < 2 or not fed:
        print(f"compare: {a.label} FAIL: captured {len(cap)} samples, fed {len(fed)}")
        return 1
    if a.kind == "record" and abs(rate - 40) > 0.4:
        # fed with --follow-polls: the sequence the polls read (a sample read twice when the
        # feeder was late is in it twice)
        reads = fed
        if fed[-1][5] >= 1:
            reads = [f for prev, cur in zip(fed, fed[1:]) for f in [prev] * cur[5]] + [fed[-1]]
        r = interpolated(reads, cap, rate / 40.0, a.max_lsb)
        r["polls_reading_a_sample_twice"] = len(reads) - len(fed)
    elif a.polled:
        r = polled(fed, cap, a.max_lsb, 1e9 / rate)
    else:
        r = sequence(fed, cap, False, a.max_lsb)
    idx = r.pop("idx", None)
    if gyro_scale:
        if idx is None:
            sys.exit("compare: the gyroscope is compared on buffered arrivals and 40 Hz records only")
        r.update(gyro_check(fed, cap, idx, a.gyro_max_lsb if a.gyro_max_lsb is not None else a.max_lsb))
        r["gyro_scale"] = gyro_scale
    r.update(label=a.label, kind=a.kind, captured=len(cap), fed=len(fed), fed_rate_hz=rate, scale=scale,
             captured_rate_hz=round((len(cap) - 1) / (times[-1] - times[0]), 3) if times[-1] > times[0] else None)
    lost_ok = a.lost_ok if not a.polled else 10**9   # polled: reported, not a bar (two free-running clocks)
    n = r.get("rows_in_window", r.get("in_window", len(cap)))
    ok = r["over_bar"] == 0 and r["lost"] <= lost_ok and n >= a.min_samples and not r.get("off_schedule")
    if gyro_scale:
        ok = ok and r["gyro_over_bar"] == 0 and r["gyro_missing"] == 0 and r["gyro_compared"] >= a.min_samples
    print(f"compare: {a.label} {'PASS' if ok else 'FAIL'}: captured {r['captured']} of {r['fed_in_window']} fed in the "
          f"window (fed {r['fed']} at {rate:g} Hz, captured at {r['captured_rate_hz']} Hz), lost {r['lost']}, "
          f"repeated {r['repeated']}, max difference {r['max_lsb']} LSB (bar {a.max_lsb:g}), {r['over_bar']} over the bar"
          + (f", {r['late_rows']} rows late and {r['torn_rows']} torn (at most {r['irregular_ok']} together)"
             if r.get("late_rows") or r.get("torn_rows") else "")
          + (f", {r['off_schedule']} rows off schedule" if r.get("off_schedule") else "")
          + (f", {r['torn']} torn reads, {r['in_window']} polls in the window" if "torn" in r else "")
          + (f", {r['rows_in_window']} rows in the window" if "rows_in_window" in r else "")
          + (f"; gyroscope: {r['gyro_compared']} samples compared, max difference {r['gyro_max_lsb']} LSB "
             f"(bar {a.gyro_max_lsb if a.gyro_max_lsb is not None else a.max_lsb:g}), {r['gyro_over_bar']} over the bar, "
             f"{r['gyro_missing']} without it" if gyro_scale else "")
          + (f"; fewer than {a.min_samples} samples in the window" if n < a.min_samples else ""))
    print("figures: " + json.dumps(r))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

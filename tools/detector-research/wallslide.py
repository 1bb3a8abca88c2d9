"""Issue 35, the faint sliding down a wall (FallAllD F35): how far did the hip go down?

usage: python3 wallslide.py [all|segments|rule] [SISFALL_CODES]   (output: wallslide_output.txt)

Strapdown inertial navigation over one event, as pedestrian dead reckoning does it, no fitted
constants:
  * anchors (as `segment_drop` and the Swift port, HipDrop.swift, take them): A, the last still
    second before the event and B, the first still second after it, each within 8 s (still: std
    |a| < 0.02 g and |w| < 15 deg/s throughout);
  * the gyroscope's zero-rate offset is its mean over A and B (the wearer is still in both);
  * attitude: gravity's direction = A's mean acceleration; the gyroscope (minus offset) carries the
    body-to-world rotation sample by sample from A's start to B's end (Rodrigues);
  * each acceleration is rotated into the world frame, its vertical part minus g (g going linearly
    from |a| at rest over A to |a| over B: a per-axis scale or offset error) is integrated to velocity, a linear drift
    removed so that the mean velocity over A and over B is zero (zero-velocity updates at both
    ends), and integrated again: drop = height at A's end - height at B's start (m);
  * the gyroscope's tilt error at B (where it carries gravity against where the accelerometer sees
    it) is spread linearly over the movement and the integration redone (WALLSLIDE_CORRECT=0: not).
WALLSLIDE_ACC=1: the accelerometer alone (an ADXL345; HipDrop.measure(count:accelerometer:)): the
vertical acceleration is |a| - g to first order whatever the attitude (the horizontal part enters
squared); a still second also needs the acceleration vector's std under WALLSLIDE_ACC_VSTD (0.02 g,
as MultiphaseDetector; 0: std |a| alone, which takes the slow part of a slide for rest); no
gyroscope, no tilt correction (wallslide_acc_output.txt).
`segments`: every still-to-still movement of >= 15 deg per code (the method's check: sitting down,
lying down, HAPT's labelled transitions); `rule`: the detector's soft candidates (sixaxis.py's
tables) that end neither upright nor lying, with their drop: what a "dropped >= X m" rule would add.
"""
import sys, os, collections
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sixaxis import load_trials, load_hapt, Table  # Table: sixaxis tables pickled from __main__

FS = 40.0
G = 9.80665
W = 40                # anchor window, 1 s


def rolling_std(m, w=W):
    c1 = np.concatenate([[0], np.cumsum(m)]); c2 = np.concatenate([[0], np.cumsum(m * m)])
    n = len(m) - w + 1
    if n <= 0:
        return np.zeros(0)
    mu = (c1[w:] - c1[:-w]) / w
    return np.sqrt(np.maximum((c2[w:] - c2[:-w]) / w - mu * mu, 0))   # std of window starting at i


def still_periods(rec, thr=0.02, wthr=15.0):
    """Still periods [s, e) (samples): every 1 s window inside has |a| std < thr g and |w| < wthr deg/s."""
    a = rec[:, :3]; m = np.sqrt((a * a).sum(1))
    wm = np.sqrt((rec[:, 3:6] ** 2).sum(1))
    sd = rolling_std(m); wx = sliding_window_view(wm, W).max(1) if len(wm) >= W else np.zeros(0)
    ok = (sd < thr) & ((wx < wthr) | ACC)
    if ACC and ACC_VSTD > 0:
        # accelerometer only: the direction must hold too (a turn at constant |a| is no rest):
        # the std of the vector (per-axis variances summed) over the second
        v = sum(rolling_std(a[:, i]) ** 2 for i in range(3)) ** 0.5
        ok &= v < ACC_VSTD
    out = []; i = 0
    while i < len(ok):
        if ok[i]:
            j = i
            while j < len(ok) and ok[j]:
                j += 1
            out.append((i, j - 1 + W)); i = j
        else:
            i += 1
    return out


def _rot(v):
    """The rotation matrix of the rotation vector v (rad), Rodrigues."""
    th = np.linalg.norm(v)
    if th == 0:
        return np.eye(3)
    k = v / th
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * (K @ K)


def _vertical(a, w, bias, up, g, a0, a1, b0, b1, fix=None):
    """Vertical acceleration (m/s^2) in the world frame from a0 to b1 and the final attitude;
    `fix`, a world-frame rotation vector, is applied in proportion from a1 (none) to b0 (all)."""
    R = np.eye(3); out = np.zeros(b1 - a0)
    for k in range(a0, b1):
        C = np.eye(3) if fix is None else _rot(fix * min(1.0, max(0.0, (k - a1) / max(1, b0 - a1))))
        gk = g if np.isscalar(g) else g[0] + (g[1] - g[0]) * min(1.0, max(0.0, (k - a1) / max(1, b0 - a1)))
        out[k - a0] = ((C @ R @ a[k]) @ up - gk) * G
        R = R @ _rot((w[k] - bias) / FS)
    return out, R


def segment_drop(rec, A, B, correct=True):
    """Drop (m) from still period A to still period B (the last 1 s of A, the first 1 s of B)."""
    a = rec[:, :3]; w = np.radians(rec[:, 3:6])
    a0, a1 = A[1] - W, A[1]; b0, b1 = B[0], B[0] + W
    bias = 0.5 * (w[a0:a1].mean(0) + w[b0:b1].mean(0))
    m = np.sqrt((a * a).sum(1))
    # |a| at rest before and after (a per-axis scale or offset error makes them differ when the
    # device turns): the g subtracted goes from one to the other over the movement
    g = (m[a0:a1].mean(), m[b0:b1].mean()) if GSTEP else 0.5 * (m[a0:a1].mean() + m[b0:b1].mean())
    up = a[a0:a1].mean(0); up /= np.linalg.norm(up)
    gb = a[b0:b1].mean(0); gb /= np.linalg.norm(gb)
    if ACC:
        # accelerometer only: the vertical acceleration to first order is |a| - g (the linear
        # acceleration's horizontal part enters squared: |g + a| = g + a.up + |a_h|^2 / 2g)
        f = np.clip((np.arange(a0, b1) - a1) / max(1, b0 - a1), 0, 1)
        gk = g[0] + (g[1] - g[0]) * f if not np.isscalar(g) else g
        if ACC_LP:
            # the vertical from the direction of the 1 s centred mean of a (a low-pass gravity)
            aa = a[a0:b1]; cs = np.concatenate([np.zeros((1, 3)), np.cumsum(aa, 0)])
            n = len(aa); lo = np.clip(np.arange(n) - ACC_LP // 2, 0, n); hi = np.clip(np.arange(n) + ACC_LP // 2 + 1, 0, n)
            lp = (cs[hi] - cs[lo]); lp /= np.linalg.norm(lp, axis=1, keepdims=True)
            az = ((aa * lp).sum(1) - gk) * G
        else:
            az = (m[a0:b1] - gk) * G
        correct = False; gw = gb; R = np.eye(3)
    else:
        az, R = _vertical(a, w, bias, up, g, a0, a1, b0, b1)
        gw = R @ gb                      # where the gyroscope says gravity ends, in the world frame
    err = np.degrees(np.arccos(np.clip(gw @ up, -1, 1)))
    ax = np.cross(gw, up)
    if correct and np.linalg.norm(ax) > 1e-9:
        # the accelerometer sees where gravity ends at B: spread the gyroscope's tilt error over
        # the movement linearly in time (a constant rate error in the world frame) and redo it
        az, _ = _vertical(a, w, bias, up, g, a0, a1, b0, b1,
                          fix=ax / np.linalg.norm(ax) * np.arctan2(np.linalg.norm(ax), gw @ up))
    dt = 1 / FS
    v = np.cumsum(az) * dt
    t = np.arange(len(v)) * dt
    tA, tB = t[:W].mean(), t[b0 - a0:].mean()
    vA, vB = v[:W].mean(), v[b0 - a0:].mean()
    v = v - (vA + (vB - vA) * (t - tA) / (tB - tA))      # zero-velocity updates at A and B
    z = np.cumsum(v) * dt
    tilt = np.degrees(np.arccos(np.clip(up @ gb, -1, 1)))
    return dict(drop=z[W - 1] - z[b0 - a0], dur=(b0 - a1) / FS, tilt=tilt, err=err, a1=a1, b0=b0)


CORRECT = os.environ.get("WALLSLIDE_CORRECT", "1") == "1"
ACC = os.environ.get("WALLSLIDE_ACC", "0") == "1"
ACC_LP = int(os.environ.get("WALLSLIDE_ACC_LP", "0"))
ACC_VSTD = float(os.environ.get("WALLSLIDE_ACC_VSTD", "0.02"))   # with ACC: still also needs the vector's std under this (g; 0: |a| alone)   # with ACC: project on the direction of this many samples' centred mean   # accelerometer only: |a| - g, no gyroscope
GSTEP = os.environ.get("WALLSLIDE_GSTEP", "1") == "1"
CAP = 1.2   # m: the waist cannot go down further than its height when standing (~1.0-1.1 m)


def segments(rec, maxgap=8.0, min_tilt=15.0):
    """Every movement between two still periods (each >= 1 s, 0.25-8 s apart) whose posture
    changes by >= min_tilt deg, with its drop."""
    P = still_periods(rec)
    out = []
    for A, B in zip(P, P[1:]):
        if A[1] - A[0] >= W and B[1] - B[0] >= W and 0.25 <= (B[0] - A[1]) / FS <= maxgap:
            ga, gb = rec[A[1] - W:A[1], :3].mean(0), rec[B[0]:B[0] + W, :3].mean(0)
            if np.degrees(np.arccos(np.clip(ga @ gb / np.linalg.norm(ga) / np.linalg.norm(gb), -1, 1))) >= min_tilt:
                out.append(segment_drop(rec, A, B, CORRECT))
    return out


def hapt_transitions():
    """HAPT's labelled posture transitions: the drop of the still-to-still segment that overlaps each."""
    print("== hapt-6axis-dev-50hz: labelled transitions, drop of the overlapping still-to-still segment (m)")
    res = collections.defaultdict(list)
    for ss in load_hapt():
        rec = ss["a"]
        for sg in segments(rec):
            t1, t2 = sg["a1"] / FS + ss["t0"], sg["b0"] / FS + ss["t0"]
            best, ov = "none", 0.0
            for s, e, what in ss["activities"]:
                o = min(e, t2) - max(s, t1)
                if o > ov:
                    best, ov = what, o
            res[best].append(sg["drop"])
    for k in sorted(res):
        v = np.array(res[k])
        print("%-14s %3d  p10 %5.2f  median %5.2f  p90 %5.2f  min %5.2f  max %5.2f  >=0.6 m: %d" % (
            k, len(v), *np.percentile(v, [10, 50, 90]), v.min(), v.max(), (v >= 0.6).sum()))
    return res


def seg_summary(which, codes):
    T = load_trials(which)
    print("== %s: still-to-still movements with a posture change >= 15 deg: largest drop and largest rise per trial (m)" % which)
    print("code   n  with  drop p10/med/p90 (largest per trial)    rise p10/med/p90 (most negative)  gyro tilt error at B, median deg")
    res = collections.defaultdict(list)
    for d, code, subj, r in zip(T["data"], T["code"], T["subj"], T["trial"]):
        if codes and code not in codes:
            continue
        S = segments(d)
        res[code].append((subj, r, S))
    for code in sorted(res):
        ds = [max(s["drop"] for s in S) for _, _, S in res[code] if S]
        rs = [min(s["drop"] for s in S) for _, _, S in res[code] if S]
        er = [s["err"] for _, _, S in res[code] for s in S]
        if not ds:
            print(code, len(res[code]), 0); continue
        p = lambda v: "%5.2f %5.2f %5.2f" % tuple(np.percentile(v, [10, 50, 90]))
        print("%s %3d %3d   %s   %s   %5.1f" % (code, len(res[code]), len(ds), p(ds), p(rs), np.median(er)))
    return res


def candidate_drop(rec, c):
    """The drop of the still-to-still movement around candidate impact c: A = the still period
    that ends last before c, B = the first that starts after c (within 8 s each side)."""
    P = [p for p in still_periods(rec) if p[1] - p[0] >= W]
    A = [p for p in P if p[1] <= c and c - p[1] <= 8 * FS]
    B = [p for p in P if p[0] > c and p[0] - c <= 8 * FS]
    if not A or not B:
        return None
    return segment_drop(rec, A[-1], B[0], CORRECT)


def rule_table():
    """Every soft candidate of sixaxis.py's tables (smoothed peak >= 1.4 g, still <= 0.40 g after,
    posture change 20-60 deg: it ends neither upright nor lying) with its drop."""
    import pickle
    from sixaxis import tables
    cache = "/tmp/wallslide_rule_%d%s.pkl" % (CORRECT, ("_acc%g" % ACC_VSTD) if ACC else "")
    if os.path.exists(cache):
        return pickle.load(open(cache, "rb"))
    T = tables(); out = {}
    for name in ("fallalld", "sisfall", "hapt"):
        meta, t = T[name]
        recs = meta["data"] if name != "hapt" else [h["a"] for h in meta]
        sel = np.nonzero((t.s >= 1.4) & (t.still <= 0.40) & (t.ang >= 20) & (t.ang < 60))[0]
        rows = []
        for i in sel:
            r = candidate_drop(recs[t.t[i]], int(t.c[i]))
            rows.append((int(t.t[i]), int(t.c[i]), float(t.s[i]), float(t.ang[i]), float(t.still[i]),
                         None if r is None else r["drop"], None if r is None else r["dur"]))
        out[name] = rows
    pickle.dump(out, open(cache, "wb"))
    return out


def rule_report():
    from sixaxis import tables
    T = tables(); R = rule_table()
    print("== soft candidates (1.4 g <= smoothed peak, still <= 0.40 g, posture 20-60 deg) and their drop")
    for name in ("fallalld", "sisfall"):
        meta = T[name][0]
        per = collections.defaultdict(dict)
        for q, c, s, ang, still, d, dur in R[name]:
            if d is not None:
                per[meta["code"][q]][q] = max(per[meta["code"][q]].get(q, -9), d)
        print("-- %s: trials per code with a candidate whose drop >= X (of trials with a measured candidate)" % name)
        print("code  measured  >=0.4  >=0.5  >=0.6  >=0.7  >=0.8   drops")
        for code in sorted(per):
            v = np.array(list(per[code].values()))
            print("%s  %4d  %5d  %5d  %5d  %5d  %5d   %s" % (code, len(v), *[(v >= x).sum() for x in (0.4, 0.5, 0.6, 0.7, 0.8)],
                  " ".join("%.2f" % x for x in sorted(v)[-6:])))
    print("-- added to the shipped six-axis detector (late.py's rules, bed rule off) by 'a soft candidate above that ends")
    print("   neither upright nor lying, dropped >= X m, is a fall': falls newly found / activity trials newly alarmed")
    import bed, recovered
    sys.modules["__main__"].XTable = recovered.XTable   # recovered.py's tables are pickled from its __main__
    RT = recovered.tables()
    for name in ("fallalld", "sisfall"):
        meta, t = RT[name]
        D, A, P = bed.counts(t, None, {})
        fall = np.array([c[0] == "F" for c in meta["code"]])
        for x, cap in ((0.4, 99), (0.5, 99), (0.6, 99), (0.7, 99), (0.8, 99), (1.0, 99), (0.5, CAP), (0.6, CAP), (0.65, CAP), (0.7, CAP)):
            fire = np.zeros(len(fall), bool)
            for q, c, s, ang, still, d, dur in R[name]:
                if d is not None and x <= d <= cap:
                    fire[q] = True
            nf = fire & fall & ~D; na = fire & ~fall & ~A
            print("   %-8s X %.2f m%s: +%d falls %s, +%d activity alarms %s" % (name, x, "" if cap > 9 else ", at most %.1f m" % cap, nf.sum(),
                  dict(collections.Counter(meta["code"][q] for q in np.nonzero(nf)[0])), na.sum(),
                  dict(collections.Counter(meta["code"][q] for q in np.nonzero(na)[0]))))
    meta = T["hapt"][0]
    v = [(meta[q]["name"], c / FS, d) for q, c, s, ang, still, d, dur in R["hapt"] if d is not None]
    print("-- hapt: %d measured soft candidates, >= 0.5 m: %d, >= 0.6 m: %d, 0.6-%.1f m: %d: %s" % (len(v), sum(x[2] >= 0.5 for x in v), sum(x[2] >= 0.6 for x in v),
          CAP, sum(0.6 <= x[2] <= CAP for x in v),
          ", ".join("%s %.0f s %.2f m" % x for x in v if x[2] >= 0.4)))
    print("-- every measured soft candidate with drop >= 0.5 m: descent (s between the still periods), peak, posture, still")
    for name in ("fallalld", "sisfall", "hapt"):
        meta = T[name][0]
        for q, c, s, ang, still, d, dur in sorted(R[name], key=lambda r: -9 if r[5] is None else -r[5]):
            if d is not None and d >= 0.5:
                lbl = meta[q]["name"] if name == "hapt" else "%s %s R%02d" % (meta["code"][q], meta["subj"][q], meta["trial"][q])
                print("  %-8s %-16s drop %5.2f m  descent %4.1f s  peak %.2f g  posture %2.0f deg  still %.3f g" % (name, lbl, d, dur, s, ang, still))


def loso():
    """Leave one subject out (SisFall and FallAllD subjects; HAPT is always training): in each fold
    the smallest X (safety first) in 0.50-0.80 m (cap 1.2 m) whose training cost is within the bars
    (SisFall activities +1, FallAllD activities +1, HAPT 0), applied to the held-out subject."""
    import bed, recovered
    sys.modules["__main__"].XTable = recovered.XTable
    R = rule_table(); RT = recovered.tables()
    fires, info = {}, {}
    grid = [0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80]
    for name in ("fallalld", "sisfall"):
        meta, t = RT[name]
        D, A, P = bed.counts(t, None, {})
        fall = np.array([c[0] == "F" for c in meta["code"]])
        for x in grid:
            f = np.zeros(len(fall), bool)
            for q, c, s, ang, still, d, dur in R[name]:
                if d is not None and x <= d <= CAP:
                    f[q] = True
            fires[name, x] = (f & fall & ~D, f & ~fall & ~A)
        info[name] = np.array(meta["subj"])
    hapt = {x: sum(1 for r in R["hapt"] if r[5] is not None and x <= r[5] <= CAP) for x in grid}
    tot = collections.Counter(); chosen = collections.Counter(); held = collections.defaultdict(list)
    for name in ("fallalld", "sisfall"):
        for subj in sorted(set(info[name])):
            def cost(x, keep):
                return {n: (fires[n, x][0] & keep[n]).sum() for n in keep}, {n: (fires[n, x][1] & keep[n]).sum() for n in keep}
            train = {n: info[n] != subj for n in info}
            pick = None
            for x in grid:
                nf, na = cost(x, train)
                if na["sisfall"] <= 1 and na["fallalld"] <= 1 and hapt[x] == 0:
                    pick = x; break
            chosen[pick] += 1
            if pick is None:
                continue
            test = {name: info[name] == subj}
            nf, na = fires[name, pick][0] & test[name], fires[name, pick][1] & test[name]
            tot[name, "falls"] += nf.sum(); tot[name, "acts"] += na.sum()
            if nf.sum() or na.sum():
                held[name].append("%s (X %.2f): +%d falls, +%d activities" % (subj, pick, nf.sum(), na.sum()))
    print("== leave one subject out, X chosen per fold:", dict(chosen))
    for name in ("fallalld", "sisfall"):
        print("   %s held out: +%d falls, +%d activity alarms; %s" % (name, tot[name, "falls"], tot[name, "acts"], "; ".join(held[name])))


def port(x=0.6, cap=CAP):
    """The trials the rule (X..cap) adds to the shipped six-axis rules, one per line with the
    largest firing drop (`bench/wallslide-port.sh` compares them with the Swift detector's)."""
    import bed, recovered
    sys.modules["__main__"].XTable = recovered.XTable
    R = rule_table(); RT = recovered.tables(); T = __import__("sixaxis").tables()
    for name in ("fallalld", "sisfall"):
        meta, t = RT[name]
        D, A, P = bed.counts(t, None, {})
        fall = np.array([c[0] == "F" for c in meta["code"]])
        best = {}
        for q, c, s, ang, still, d, dur in R[name]:
            if d is not None and x <= d <= cap:
                best[q] = max(best.get(q, 0), d)
        for q in sorted(best):
            if (fall[q] and not D[q]) or (not fall[q] and not A[q]):
                print("emulation %s %s %.3f" % (name, os.path.basename(meta["path"][q]), best[q]))
    meta = T["hapt"][0]
    for q, c, s, ang, still, d, dur in R["hapt"]:
        if d is not None and x <= d <= cap:
            print("emulation hapt %s@%.1f %.3f" % (meta[q]["name"], c / FS, d))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "port":
        port(*(float(v) for v in sys.argv[2:4]))
        sys.exit()
    what = sys.argv[1] if len(sys.argv) > 1 else "all"
    if what in ("segments", "all"):
        seg_summary("sisfall", set(sys.argv[2].split(",")) if len(sys.argv) > 2 else None)
        r = seg_summary("fallalld", None)
        hapt_transitions()
        for code in ("F35", "D13", "D16"):
            for s, t, S in r[code]:
                print(code, s, t, " ".join("%.2f m/%.1f s/%.0f deg" % (x["drop"], x["dur"], x["tilt"]) for x in S))
    if what in ("rule", "all"):
        rule_report()
        loso()

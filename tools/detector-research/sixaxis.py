"""Issue 35: rotation from the gyroscope, what it adds to the multiphase detector.

usage: python3 sixaxis.py [features|grid [FILTER]|compare|loso|simulate]
(outputs: compare_output.txt, loso_output.txt)

Data (40 Hz, t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps):
  sisfall-6axis-40hz-dev  (SisFall's ITG3200, trial files, subjects SA/SE)
  fallalld-waist-6axis-40hz-dev  (FallAllD's LSM9DS1 at the waist, subjects AD)
  hapt-6axis-dev-50hz  (continuous daily living, resampled to 40 Hz as the daemon does)

For every candidate impact (the multiphase detector's: the 125 ms mean of |a| a local maximum
over +-1 s at >= 1.2 g) it computes the accelerometer features of MultiphaseDetector.swift
(impact, posture change, stillness, free fall, pre-impact activity, the 0.5 s turn of mean
vectors, the look's half seconds) and the gyroscope's:
  wpeak   largest |w| (deg/s) from 1 s before to 250 ms after the impact
  grot    largest net rotation |sum w dt| over any 0.5 s ending in that span (deg)
  grot1   the same over 1 s
and emulates the detector with the look's rotation gate taken from either.
"""
import sys, os, gzip, pickle, hashlib, collections
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hapt import read_activities, activity_at
from softlook import _angle

ROOT = os.environ.get("DATASETS", "/work/shared/datasets")
SETS = {"sisfall": "sisfall-6axis-40hz-dev", "fallalld": "fallalld-waist-6axis-40hz-dev"}
HAPT = "hapt-6axis-dev-50hz"
FLOOR = 1.2
NB = 12   # half-second blocks after c+1 s (7 s)


def _read(path):
    with gzip.open(path, "rt") as fh:
        return np.loadtxt(fh, delimiter=",", skiprows=1, dtype=np.float64, ndmin=2)


def load_trials(which):
    root = os.path.join(ROOT, SETS[which])
    files = []
    for s in sorted(os.listdir(root)):
        d = os.path.join(root, s)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.endswith(".csv.gz"):
                    code, _, r = f[:-7].split("_")
                    files.append((os.path.join(d, f), code, s, int(r[1:])))
    cache = "/tmp/sixaxis_%s.pkl" % which
    key = hashlib.md5("\n".join(f[0] for f in files).encode()).hexdigest()
    if os.path.exists(cache):
        c = pickle.load(open(cache, "rb"))
        if c["key"] == key:
            return c
    data = [_read(f[0])[:, 1:7] for f in files]
    c = dict(key=key, data=data, code=[f[1] for f in files], subj=[f[2] for f in files],
             trial=[f[3] for f in files], path=[f[0] for f in files])
    pickle.dump(c, open(cache, "wb"), protocol=pickle.HIGHEST_PROTOCOL)
    return c


def load_hapt():
    root = os.path.join(ROOT, HAPT)
    names = sorted(f[:-7] for f in os.listdir(root) if f.endswith(".csv.gz"))
    cache = "/tmp/sixaxis_hapt.pkl"
    key = hashlib.md5("\n".join(names).encode()).hexdigest()
    if os.path.exists(cache):
        c = pickle.load(open(cache, "rb"))
        if c["key"] == key:
            return c["sessions"]
    out = []
    for nm in names:
        raw = _read(os.path.join(root, nm + ".csv.gz"))
        t = raw[:, 0]
        grid = t[0] + np.arange(int((t[-1] - t[0]) * 40) + 1) / 40
        a = np.stack([np.interp(grid, t, raw[:, k]) for k in range(1, 7)], 1)
        out.append(dict(name=nm, a=a, t0=t[0], activities=read_activities(os.path.join(root, nm + ".activities.csv"))))
    pickle.dump(dict(key=key, sessions=out), open(cache, "wb"), protocol=pickle.HIGHEST_PROTOCOL)
    return out


def activity(session, c):
    return activity_at(session, c / 40)


def candidates(rec):
    a = rec[:, :3]; w = rec[:, 3:6]
    n = len(a)
    m = np.sqrt((a * a).sum(1))
    wm = np.sqrt((w * w).sum(1))
    s = np.zeros(n)
    if n >= 5:
        s[4:] = (m[0:n-4] + m[1:n-3] + m[2:n-2] + m[3:n-1] + m[4:]) / 5
    cw = np.vstack([np.zeros((1, 3)), np.cumsum(w, 0)]) / 40.0   # integrated w, deg
    ca = np.vstack([np.zeros((1, 3)), np.cumsum(a, 0)])
    # per window end t1: the accelerometer's turn (250 ms mean vectors 0.5 s apart) and the
    # gyroscope's net rotation over 0.5 s and 1 s
    idx = np.arange(n)
    turn_at = np.zeros(n); grot_at = np.zeros(n); grot1_at = np.zeros(n)
    k = idx[idx >= 29]
    late = ca[k + 1] - ca[k - 9]; early = ca[k - 19] - ca[k - 29]
    nn = np.linalg.norm(late, axis=1) * np.linalg.norm(early, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cosv = np.where(nn > 0, (late * early).sum(1) / nn, 1.0)
    turn_at[k] = np.degrees(np.arccos(np.clip(cosv, -1, 1)))
    k = idx[idx >= 19]; grot_at[k] = np.linalg.norm(cw[k + 1] - cw[k - 19], axis=1)
    k = idx[idx >= 39]; grot1_at[k] = np.linalg.norm(cw[k + 1] - cw[k - 39], axis=1)
    out = []
    for c in np.nonzero(s >= FLOOR)[0]:
        c = int(c)
        lo = max(0, c - 40)
        if c > lo and s[lo:c].max() >= s[c]:
            continue
        if c + 100 > n or s[c + 1:c + 41].max() > s[c]:
            continue
        p0, p1 = max(0, c - 80), c - 20
        if p1 <= p0:
            continue
        g0 = a[p0:p1].sum(0)
        ang = _angle(g0, a[c + 40:c + 100].sum(0))
        still = float(m[c + 40:c + 100].std())
        ff = float(s[max(0, c - 40):c + 1].min())
        preact = float(m[p0:p1].std())
        last = min(c + 10, n - 1)
        turn = float(turn_at[max(c - 40, 29):last + 1].max())
        wpeak = float(wm[max(0, c - 40):last + 1].max())
        grot = float(grot_at[max(c - 40, 0):last + 1].max())
        grot1 = float(grot1_at[max(c - 40, 0):last + 1].max())
        bstd = np.full(NB, np.nan); bang = np.full(NB, np.nan)
        for b in range(NB):
            i0 = c + 40 + 20 * b; i1 = i0 + 20
            if i1 > n:
                break
            bstd[b] = m[i0:i1].std(); bang[b] = _angle(g0, a[i0:i1].sum(0))
        out.append(dict(c=c, s=float(s[c]), ang=ang, still=still, ff=ff, preact=preact, turn=turn,
                        wpeak=wpeak, grot=grot, grot1=grot1, bstd=bstd, bang=bang, n=n))
    return out


class Table:
    KEYS = ("c", "s", "ang", "still", "ff", "preact", "turn", "wpeak", "grot", "grot1", "n")

    def __init__(self, recs, cands=None):
        """`cands(rec)`: the candidates with their features (default `candidates`)."""
        rows = []
        for t, r in enumerate(recs):
            for x in (cands or candidates)(r):
                x["t"] = t; rows.append(x)
        self.N = len(recs)
        self.t = np.array([r["t"] for r in rows], int)
        for k in self.KEYS:
            setattr(self, k, np.array([r[k] for r in rows], float))
        self.bstd = np.array([r["bstd"] for r in rows]).reshape(-1, NB)
        self.bang = np.array([r["bang"] for r in rows]).reshape(-1, NB)
        for k, width in getattr(self, "SERIES", {}).items():   # a subclass's per-candidate series
            setattr(self, k, np.array([r[k] for r in rows]).reshape(-1, width))

    def decide(self, p):
        """Per candidate: fired by the fast rule, fired by the look, the look still open at the end."""
        with np.errstate(invalid="ignore"):
            s, ang, still = self.s, self.ang, self.still
            hard = (s >= 2.0) & (still <= 0.40) & ((ang >= 40) | ((s >= 2.6) & (ang >= 20) & (self.ff <= 0.85)))
            gate = getattr(self, p["gate"]) >= p["rot"]
            if p.get("wpeak"):
                gate &= self.wpeak >= p["wpeak"]
            opens = ~hard & (s >= p["soft"]) & (still <= 0.40) & gate
            nb = (int(round(p["look"] * 40)) - 40) // 20
            bs, ba = self.bstd[:, :nb], self.bang[:, :nb]
            avail = ~np.isnan(bs)
            calm = (self.preact <= 0.10)[:, None]
            tilt = np.where(calm, p.get("calm_posture", 30), p.get("look_posture", 35))
            ok = ((bs <= p.get("look_still", 0.08)) | (np.arange(nb) < 2)) & (ba >= tilt)
            bad = (avail & ~ok).any(1)
            look = opens & avail.all(1) & ~bad
            pending = opens & ~avail.all(1) & ~bad
        return hard, look, pending

    def trials(self, p):
        hard, look, pend = self.decide(p)
        F = np.zeros(self.N, bool); np.logical_or.at(F, self.t, hard | look)
        P = np.zeros(self.N, bool); np.logical_or.at(P, self.t, pend)
        return F, P & ~F

    def alarms(self, p):
        """Detections with a 10 s refractory period (continuous recordings), as (t, c) pairs."""
        hard, look, _ = self.decide(p)
        dec = np.where(hard, self.c + 99, self.c + int(round(p["look"] * 40)) - 1)
        out = []
        last = {}
        for i in np.argsort(dec, kind="stable"):
            if not (hard[i] or look[i]):
                continue
            t = self.t[i]
            if t in last and dec[i] < last[t] + 400:
                continue
            last[t] = dec[i]; out.append((int(t), int(self.c[i]), i))
        return out


MULTIPHASE = dict(gate="turn", rot=55, soft=1.4, look=6.0)


def tables():
    cache = "/tmp/sixaxis_tables.pkl"
    if os.path.exists(cache):
        return pickle.load(open(cache, "rb"))
    sis = load_trials("sisfall"); fal = load_trials("fallalld"); hapt = load_hapt()
    T = dict(sisfall=(sis, Table(sis["data"])), fallalld=(fal, Table(fal["data"])),
             hapt=(hapt, Table([h["a"] for h in hapt])))
    pickle.dump(T, open(cache, "wb"), protocol=pickle.HIGHEST_PROTOCOL)
    return T


def score(meta, T, p, mask=None):
    F, P = T.trials(p)
    fall = np.array([c[0] == "F" for c in meta["code"]])
    j = ~P if mask is None else (~P & mask)
    return (F & fall & j).sum(), (fall & j).sum(), (F & ~fall & j).sum(), (~fall & j).sum(), P.sum()


def fmt(r):
    tp, nf, fp, na, pend = r
    return "sens %6.2f %% (%d/%d)  spec %6.2f %% (%d/%d)  too short %d" % (
        100 * tp / max(nf, 1), tp, nf, 100 * (na - fp) / max(na, 1), na - fp, na, pend)


def features():
    T = tables()
    for name in ("sisfall", "fallalld"):
        meta, t = T[name]
        code = np.array(meta["code"])[t.t]
        print("==", name, "candidates whose look is not rejected by the posture/stillness blocks")
        hard, look, _ = t.decide(dict(gate="turn", rot=0, soft=1.2, look=6.0))
        for grp in sorted(set(code)):
            m = (code == grp) & look
            if m.sum() == 0:
                continue
            q = lambda v: "%4.0f/%4.0f/%4.0f" % tuple(np.percentile(v[m], [10, 50, 90]))
            print("%s n=%3d  turn %s  grot %s  grot1 %s  wpeak %s  s %.2f" % (grp, m.sum(), q(t.turn), q(t.grot), q(t.grot1), q(t.wpeak), np.median(t.s[m])))
    meta, t = T["hapt"]
    hard, look, _ = t.decide(dict(gate="turn", rot=0, soft=1.2, look=6.0))
    print("== hapt looks that would fire without any rotation gate (soft 1.2 g)")
    for i in np.nonzero(look)[0]:
        print("%s %6.1fs %-18s s %.2f turn %3.0f grot %3.0f grot1 %3.0f wpeak %3.0f ang %3.0f" % (
            meta[t.t[i]]["name"], t.c[i] / 40, activity(meta[t.t[i]], t.c[i]), t.s[i], t.turn[i], t.grot[i], t.grot1[i], t.wpeak[i], t.ang[i]))


def grid_eval():
    T = tables()
    print("%-44s %-62s %-62s %s" % ("setting", "sisfall", "fallalld", "hapt FA (2.95 h)"))
    settings = [("multiphase", MULTIPHASE), ("multiphase soft 1.3", dict(MULTIPHASE, soft=1.3))]
    for gate, rots in (("grot", (45, 55, 65, 75)), ("grot1", (60, 70, 80, 90, 100)), ("wpeak", (150, 200, 250, 300))):
        for rot in rots:
            for soft in (1.2, 1.3, 1.4):
                settings.append(("%s>=%d soft %.1f" % (gate, rot, soft), dict(gate=gate, rot=rot, soft=soft, look=6.0)))
    for w in (150, 200, 250):
        for rot in (50, 60, 70, 80):
            for soft in (1.3, 1.4):
                settings.append(("wpeak>=%d & grot1>=%d soft %.1f" % (w, rot, soft), dict(gate="grot1", rot=rot, wpeak=w, soft=soft, look=6.0)))
    if len(sys.argv) > 2:
        settings = [x for x in settings if sys.argv[2] in x[0] or x[0] == "multiphase"]
    for nm, p in settings:
        sis = score(T["sisfall"][0], T["sisfall"][1], p)
        fal = score(T["fallalld"][0], T["fallalld"][1], p)
        fa = T["hapt"][1].alarms(p)
        print("%-44s %-62s %-62s %d" % (nm, fmt(sis), fmt(fal), len(fa)))




def stretch(rec, k, before=1.5):
    """The same fall, slower: the `before` seconds up to the largest |a| played k times slower
    (angular velocity divided by k, the orientation path kept), the rest unchanged."""
    m = np.sqrt((rec[:, :3] ** 2).sum(1))
    i = int(np.argmax(m)); j = max(0, i - int(before * 40))
    seg = rec[j:i + 1]
    L = len(seg); L2 = int(round((L - 1) * k)) + 1
    x = np.linspace(0, L - 1, L2)
    new = np.stack([np.interp(x, np.arange(L), seg[:, q]) for q in range(6)], 1)
    new[:, 3:] /= k
    return np.vstack([rec[:j], new[:-1], rec[i:]])


SLOW_CODES = ("F06", "F07", "F10", "F11", "F12", "F13", "F14", "F15")


def soften(rec, target):
    """The impact attenuated: within 0.75 s of the largest |a| the acceleration's deviation from
    its 1 s centred mean is scaled down until the 125 ms mean of |a| peaks at `target` g (as
    softlook.py does); the gyroscope is left as it is."""
    a = rec[:, :3]; n = len(a)
    m = np.sqrt((a ** 2).sum(1)); i = int(np.argmax(m))
    lo, hi = max(0, i - 30), min(n, i + 31)
    ker = np.ones(41) / 41
    lp = np.stack([np.convolve(np.pad(a[:, q], 20, mode="edge"), ker, mode="valid") for q in range(3)], 1)

    def peak(f):
        b = a.copy(); b[lo:hi] = lp[lo:hi] + (a[lo:hi] - lp[lo:hi]) * f
        mm = np.sqrt((b ** 2).sum(1)); sm = np.convolve(mm, np.ones(5) / 5, mode="full")[:n]
        return b, sm[max(0, lo - 40):min(n, hi + 40)].max()
    f0, f1 = 0.0, 1.0
    for _ in range(25):
        f = (f0 + f1) / 2
        if peak(f)[1] > target:
            f1 = f
        else:
            f0 = f
    b, _ = peak(f0)
    out = rec.copy(); out[:, :3] = b
    return out


def simulate():
    sis = load_trials("sisfall")
    pick = [q for q, c in enumerate(sis["code"]) if c in SLOW_CODES]
    print("slowed falls: SisFall young F06, F07, F10-F15 (%d trials); the 1.5 s before the impact played k times slower" % len(pick))
    gates = [("multiphase (accelerometer turn >= 55 in 0.5 s)", MULTIPHASE),
             ("wpeak>=200 & grot1>=60", dict(gate="grot1", rot=60, wpeak=200, soft=1.4, look=6.0)),
             ("grot1>=60", dict(gate="grot1", rot=60, soft=1.4, look=6.0)),
             ("grot>=55", dict(gate="grot", rot=55, soft=1.4, look=6.0)),
             ("wpeak>=150 & grot1>=60", dict(gate="grot1", rot=60, wpeak=150, soft=1.4, look=6.0))]
    rng = np.random.default_rng(35)
    targets = rng.uniform(1.45, 1.9, len(pick))
    print("soft: the impact attenuated to a 125 ms mean of U(1.45, 1.9) g, so the long look decides")
    for k in (1.0, 1.5, 2.0):
        recs = [soften(stretch(sis["data"][q], k), tg) for q, tg in zip(pick, targets)]
        T = Table(recs)
        for nm, p in gates:
            F, P = T.trials(p)
            print("soft k=%.1f %-48s detected %4d / %4d judged (%.1f %%), too short %d" % (k, nm, F[~P].sum(), (~P).sum(), 100 * F[~P].mean(), P.sum()))


def loso():
    """Leave one subject out over SisFall and FallAllD dev subjects together: each held-out
    subject is judged with the setting that maximises sensitivity + specificity on the others'
    trials of the same dataset, among the settings with no false alarm in hapt-6axis-dev-50hz
    (the <= 0.1 per hour bar on 2.95 h)."""
    T = tables()
    fams = {
        "accelerometer turn (multiphase)": [dict(gate="turn", rot=r, soft=sf, look=6.0) for r in (45, 50, 55, 60, 65) for sf in (1.3, 1.4, 1.5)],
        "gyroscope: peak |w| and 1 s rotation": [dict(gate="grot1", rot=r, wpeak=w, soft=sf, look=6.0)
                                                 for r in (40, 50, 60, 70, 80) for w in (0, 150, 200, 250) for sf in (1.3, 1.4, 1.5)],
    }
    for fam, grid in fams.items():
        grid = [p for p in grid if len(T["hapt"][1].alarms(p)) == 0]
        print("==", fam, "(%d settings without a HAPT false alarm)" % len(grid))
        for name in ("sisfall", "fallalld"):
            meta, t = T[name]
            subj = np.array(meta["subj"]); fall = np.array([c[0] == "F" for c in meta["code"]])
            res = [t.trials(p) for p in grid]
            pooled = np.zeros(4, int); picks = collections.Counter()
            for s in sorted(set(subj)):
                tr = subj != s; best = None
                for gi, (F, P) in enumerate(res):
                    j = tr & ~P
                    sens = (F & fall & j).sum() / max((fall & j).sum(), 1); spec = 1 - (F & ~fall & j).sum() / max((~fall & j).sum(), 1)
                    if best is None or sens + spec > best[0]:
                        best = (sens + spec, gi)
                F, P = res[best[1]]; j = (subj == s) & ~P
                pooled += [(F & fall & j).sum(), (fall & j).sum(), (F & ~fall & j).sum(), (~fall & j).sum()]
                picks[str(sorted(grid[best[1]].items()))] += 1
            tp, nf, fp, na = pooled
            print("  %-9s LOSO sens %6.2f %% (%d/%d)  spec %6.2f %% (%d/%d)" % (name, 100 * tp / nf, tp, nf, 100 * (na - fp) / na, na - fp, na))
            for k, v in picks.most_common(2):
                print("            chosen %2d x %s" % (v, k))


def compare():
    """The gates side by side: dev figures (in-sample, no choice), HAPT false alarms, and the
    softened and slowed falls of simulate()."""
    T = tables()
    cache = "/tmp/sixaxis_sim_tables.pkl"
    if os.path.exists(cache):
        sims = pickle.load(open(cache, "rb"))
    else:
        sis = T["sisfall"][0]
        pick = [q for q, c in enumerate(sis["code"]) if c in SLOW_CODES]
        rng = np.random.default_rng(35)
        targets = rng.uniform(1.45, 1.9, len(pick))
        sims = {k: Table([soften(stretch(sis["data"][q], k), tg) for q, tg in zip(pick, targets)]) for k in (1.0, 1.5, 2.0)}
        pickle.dump(sims, open(cache, "wb"), protocol=pickle.HIGHEST_PROTOCOL)
    gates = [("multiphase: accelerometer turn >= 55", MULTIPHASE)]
    for w in (0, 150, 175, 200):
        for r in (40, 50, 60, 70, 80, 90):
            gates.append(("gyro: peak >= %3d, 1 s rotation >= %2d" % (w, r), dict(gate="grot1", rot=r, wpeak=w, soft=1.4, look=6.0)))
    print("%-40s %-22s %-22s %-5s %s" % ("gate (soft-impact 1.4 g)", "SisFall sens/spec", "FallAllD sens/spec", "HAPT", "soft falls slowed x1 / x1.5 / x2"))
    for nm, p in gates:
        a = score(T["sisfall"][0], T["sisfall"][1], p); b = score(T["fallalld"][0], T["fallalld"][1], p)
        fa = len(T["hapt"][1].alarms(p))
        sim = []
        for k in (1.0, 1.5, 2.0):
            F, P = sims[k].trials(p); sim.append("%5.1f" % (100 * F[~P].mean()))
        print("%-40s %6.2f / %6.2f        %6.2f / %6.2f        %-5d %s" % (nm, 100 * a[0] / a[1], 100 * (a[3] - a[2]) / a[3], 100 * b[0] / b[1], 100 * (b[3] - b[2]) / b[3], fa, " / ".join(sim)))


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "features"
    {"features": features, "grid": grid_eval, "simulate": simulate, "loso": loso, "compare": compare}[what]()

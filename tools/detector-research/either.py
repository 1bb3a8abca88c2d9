"""Issue 35: the gyroscope beside the accelerometer in the shipped detector.

usage: python3 either.py [report|loso]   (output: either_output.txt)

The shipped rules of recovered.py (fast rule, long look with the slow turn, moving rule, the
recovery watch) with the look's and the moving rule's turn taken from
  acc     the accelerometer's 0.5 s turn >= 55 (MultiphaseDetector without a gyroscope)
  gyro    the gyroscope alone: net rotation in 1 s >= 50 and peak |w| >= 200 (`sixaxis`)
  either  acc or gyro (MultiphaseDetector with a gyroscope, shipped)
on the six-axis dev folders and the simulated older faller (sixaxis.py: young SisFall falls
softened and played 1, 1.5 and 2 times slower). `loso` picks gyro-rotation and gyro-peak for
`either` by leave-one-subject-out among the settings without a HAPT detection.
"""
import sys, os, collections
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recovered
from recovered import tables, sims, up_again, per_trial, MULTIPHASE


def rules(t, fast):
    """recovered.rules with the turn given per candidate."""
    t.combo = np.where(fast | ((t.turn1 >= 50) & (t.ang >= 65)), 999, 0)
    hard, look, pend = t.decide(dict(MULTIPHASE, gate="combo", rot=1))
    with np.errstate(invalid="ignore"):
        mv = (t.s >= 1.6) & (t.ff <= 0.85) & fast & ((t.tilt[:, :10] >= 60).sum(1) >= 4) & ~hard & ~look
    return hard | look | mv, np.where(look, int(round(MULTIPHASE["look"] * 40)) - 1, 99), pend


def fast(t, kind, rot=50, peak=200):
    gyro = (t.grot1 >= rot) & (t.wpeak >= peak)
    return {"acc": t.turn >= 55, "gyro": gyro, "either": gyro | (t.turn >= 55)}[kind]


def counts(meta, t, f):
    det, dec, pend = rules(t, f)
    rec = up_again(t, dec) & det
    D, A = per_trial(t, det), per_trial(t, det & ~rec)
    P = per_trial(t, pend) & ~D
    return D, A, P


def pooled_loso(subj, fall, res):
    """Leave one subject out: each held-out subject is judged with the result (D, A, P per trial)
    whose training sensitivity + specificity is best (the first on a tie). Returns the pooled
    (falls detected, falls, ADL alarms, ADLs) and the index chosen in each fold."""
    pooled = np.zeros(4, int); chosen = []
    for s_ in sorted(set(subj)):
        tr = subj != s_; best = None
        for gi, (D, A, P) in enumerate(res):
            j = tr & ~P
            sc = (D & fall & j).sum() / max((fall & j).sum(), 1) + 1 - (A & ~fall & j).sum() / max((~fall & j).sum(), 1)
            if best is None or sc > best[0] + 1e-12:
                best = (sc, gi)
        D, A, P = res[best[1]]; j = (subj == s_) & ~P
        pooled += [(D & fall & j).sum(), (fall & j).sum(), (A & ~fall & j).sum(), (~fall & j).sum()]
        chosen.append(best[1])
    return pooled, chosen


def report():
    T = tables(); S = sims()
    print("%-8s %-42s %-42s %-6s %s" % ("turn", "SisFall falls / ADL alarms (+reports)", "FallAllD falls / ADL alarms (+reports)", "HAPT", "older faller x1 / x1.5 / x2"))
    for kind in ("acc", "gyro", "either"):
        cells = []
        for name in ("sisfall", "fallalld"):
            meta, t = T[name]
            D, A, P = counts(meta, t, fast(t, kind))
            fall = np.array([c[0] == "F" for c in meta["code"]]); j = ~P
            cells.append("%d/%d %.2f %%, %d/%d (+%d)" % ((D & fall & j).sum(), (fall & j).sum(), 100 * (D & fall & j).sum() / (fall & j).sum(),
                                                        (A & ~fall & j).sum(), (~fall & j).sum(), (D & ~A & ~fall & j).sum()))
        th = T["hapt"][1]
        cells.append("%d" % rules(th, fast(th, kind))[0].sum())
        sim = []
        for k, (codes, st) in S.items():
            D, A, P = counts(None, st, fast(st, kind))
            sim.append("%5.1f" % (100 * D[~P].mean()))
        print("%-8s %-42s %-42s %-6s %s" % (kind, cells[0], cells[1], cells[2], " / ".join(sim)))


def loso():
    T = tables(); S = sims()
    grid = [dict(rot=r, peak=p) for r in (40, 50, 60, 70) for p in (150, 200, 250)]
    th = T["hapt"][1]
    ok = [g for g in grid if not rules(th, fast(th, "either", **g))[0].any()]
    print("%d of %d settings without a HAPT detection" % (len(ok), len(grid)))
    for name in ("sisfall", "fallalld"):
        meta, t = T[name]
        subj = np.array(meta["subj"]); fall = np.array([c[0] == "F" for c in meta["code"]])
        res = [counts(meta, t, fast(t, "either", **g)) for g in ok]
        (tp, nf, fp, na), chosen = pooled_loso(subj, fall, res)
        picks = collections.Counter("rot %(rot)d peak %(peak)d" % ok[gi] for gi in chosen)
        print("  %-9s LOSO sens %6.2f %% (%d/%d)  spec %6.2f %% (%d/%d)  chosen %s" % (
            name, 100 * tp / nf, tp, nf, 100 * (na - fp) / na, na - fp, na, picks.most_common(2)))
    for g in ok:
        sim = []
        for k, (codes, st) in S.items():
            D, A, P = counts(None, st, fast(st, "either", **g))
            sim.append("%5.1f" % (100 * D[~P].mean()))
        print("  rot %(rot)d peak %(peak)d: older faller " % g + " / ".join(sim))


if __name__ == "__main__":
    sys.modules["__main__"].XTable = recovered.XTable   # the cached tables were pickled from recovered.py
    {"report": report, "loso": loso}[sys.argv[1] if len(sys.argv) > 1 else "report"]()

"""Issue 35, FallAllD: which falls are missed and which activities alarm, per code, and the late
look (a hard impact after a descent whose wearer rolls on before lying still).

usage: python3 late.py [table|report|loso|dropped]   (output: late_output.txt)

  table    per FallAllD code (six axes, shipped `multiphase` with its gyroscope): the missed falls
           and the activities that alarm, with the rule and the features of the deciding candidate
  report   the shipped rules (either.py, gate 40 deg / 200 deg/s) with and without the late look,
           six axes and accelerometer only: SisFall, FallAllD, HAPT, the simulated older faller
  loso     leave one subject out over the late look's settings (and moving-impact), among the
           settings without a HAPT detection; ties go to the late look (safety first)
  dropped  what was tried for the bed's activities and dropped: a cap on the look's posture
           change, and the gyroscope's yaw about the pre-impact vertical, rotation after the
           impact and rotation path

The late look: impact >= `impact` (2.0 g), the 125 ms mean of |a| down to <= `strong-free-fall`
(0.85 g) in the second before it, the fast rule, the look and the moving rule did not fire, and
the look's last `late-down` (2 s: 4 half seconds) half seconds are each tilted >= `moving-tilt`
(60 deg) from the pre-impact gravity with std |a| <= `look-stillness` (0.08 g).
"""
import sys, os, collections
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import recovered
from recovered import tables, sims, up_again, per_trial, MULTIPHASE
import either

LATE = dict(late_ff=0.85, late_k=4, late_tilt=60)


def late_ok(t, K, tilt, still=0.08, nb=10):
    """The last K (or more) half seconds of the look (blocks 0..nb-1 from +1 s) down and still."""
    with np.errstate(invalid="ignore"):
        ok = (t.bstd[:, :nb] <= still) & (t.bang[:, :nb] >= tilt)
    run = np.zeros(len(ok), int); alive = np.ones(len(ok), bool)
    for b in range(nb - 1, -1, -1):
        alive &= ok[:, b]; run += alive
    return (run >= K) & ~np.isnan(t.bstd[:, :nb]).any(1)


def rules(t, p):
    """either.rules (the shipped rules) plus the late look and an optional cap on the look's posture change."""
    f = either.fast(t, p.get("kind", "either"), rot=40, peak=200)
    t.combo = np.where(f | ((t.turn1 >= 50) & (t.ang >= 65)), 999, 0)
    hard, look, pend = t.decide(dict(MULTIPHASE, gate="combo", rot=1))
    if p.get("cap"):
        look = look & (t.ang <= p["cap"]); pend = pend & (t.ang <= p["cap"])
    with np.errstate(invalid="ignore"):
        mv = (t.s >= p.get("mv", 1.6)) & (t.ff <= 0.85) & f & ((t.tilt[:, :10] >= 60).sum(1) >= 4) & ~hard & ~look
        late = np.zeros_like(hard)
        if p.get("late"):
            late = (t.s >= 2.0) & (t.ff <= p["late_ff"]) & late_ok(t, p["late_k"], p["late_tilt"]) & ~hard & ~look & ~mv
    det = hard | look | mv | late
    return det, np.where(look | late, 239, 99), pend, dict(hard=hard, look=look, moving=mv, late=late)


def counts(t, p):
    det, dec, pend, _ = rules(t, p)
    rec = up_again(t, dec) & det
    D, A = per_trial(t, det), per_trial(t, det & ~rec)
    P = per_trial(t, pend) & ~D
    return D, A, P


def line(T, S, p):
    out = []
    for name in ("sisfall", "fallalld"):
        meta, t = T[name]
        D, A, P = counts(t, p)
        fall = np.array([c[0] == "F" for c in meta["code"]]); j = ~P
        tp, nf, fp, na = (D & fall & j).sum(), (fall & j).sum(), (A & ~fall & j).sum(), (~fall & j).sum()
        out.append("%d/%d %.2f %%, %d/%d %.2f %% (+%d)" % (tp, nf, 100 * tp / nf, na - fp, na, 100 * (na - fp) / na, (D & ~A & ~fall & j).sum()))
    out.append("%d" % rules(T["hapt"][1], p)[0].sum())
    sim = []
    for k, (codes, st) in S.items():
        D, A, P = counts(st, p); sim.append("%.1f" % (100 * D[~P].mean()))
    out.append(" / ".join(sim))
    return out


def table():
    T = tables(); meta, t = T["fallalld"]
    det, dec, pend, why = rules(t, dict(kind="either"))
    rec = up_again(t, dec) & det
    codes = np.array(meta["code"]); subj = np.array(meta["subj"]); trial = np.array(meta["trial"])
    D, A, P = per_trial(t, det), per_trial(t, det & ~rec), per_trial(t, pend) & ~per_trial(t, det)
    gyro = (t.grot1 >= 40) & (t.wpeak >= 200)
    def feat(i):
        rule = next((k for k in ("hard", "look", "moving", "late") if why[k][i]), "-")
        return "%s: s %.2f g, ff %.2f, posture %.0f, still %.2f, turn %.0f/%.0f (0.5/1 s), gyro %.0f deg at %.0f dps%s" % (
            rule, t.s[i], t.ff[i], t.ang[i], t.still[i], t.turn[i], t.turn1[i], t.grot1[i], t.wpeak[i], " (gate)" if gyro[i] else "")
    print("FallAllD dev, six axes, shipped multiphase (before the late look): the deciding candidate, or the largest")
    for q in range(t.N):
        idx = np.nonzero(t.t == q)[0]
        if P[q]:
            continue
        if codes[q][0] == "F" and not D[q]:
            cand = [i for i in idx if t.s[i] >= 1.4]
            i = max(cand, key=lambda i: t.s[i]) if cand else None
            print("missed %s %s R%02d  %s" % (codes[q], subj[q], trial[q], feat(i) if i is not None else "no impact >= 1.4 g"))
        if codes[q][0] == "D" and A[q]:
            i = idx[(det[idx] & ~rec[idx])][0]
            print("alarm  %s %s R%02d  %s" % (codes[q], subj[q], trial[q], feat(i)))


def report():
    T = tables(); S = sims()
    print("%-34s %-36s %-36s %-5s %s" % ("rules", "SisFall falls, ADLs quiet (+rec.)", "FallAllD falls, ADLs quiet (+rec.)", "HAPT", "older faller x1 / x1.5 / x2"))
    for kind, nm in (("either", "six axes"), ("acc", "accelerometer only")):
        for lbl, p in (("shipped", dict(kind=kind)), ("+ late look (shipped now)", dict(kind=kind, late=True, **LATE)),
                       ("+ late look, moving-impact 1.5", dict(kind=kind, late=True, mv=1.5, **LATE))):
            print("%-34s %-36s %-36s %-5s %s" % ((nm + " " + lbl)[:34], *line(T, S, p)))


def loso():
    T = tables()
    for kind in ("either", "acc"):
        grid = [dict(kind=kind, mv=mv, late=True, late_ff=ff, late_k=K, late_tilt=tl)
                for mv in (1.5, 1.6, 1.8) for ff in (0.5, 0.7, 0.85) for K in (3, 4, 6) for tl in (45, 60)]
        grid += [dict(kind=kind, mv=mv) for mv in (1.5, 1.6, 1.8)]   # after: ties go to the late look
        grid = [g for g in grid if not rules(T["hapt"][1], g)[0].any()]
        for label, gs in (("shipped (no choice)", [g for g in grid if not g.get("late") and g["mv"] == 1.6]),
                          ("late look (moving-impact 1.6)", [g for g in grid if g["mv"] == 1.6]),
                          ("late look and moving-impact", grid)):
            for name in ("sisfall", "fallalld"):
                meta, t = T[name]
                subj = np.array(meta["subj"]); fall = np.array([c[0] == "F" for c in meta["code"]])
                (tp, nf, fp, na), chosen = either.pooled_loso(subj, fall, [counts(t, g) for g in gs])
                picks = collections.Counter("mv %.1f %s" % (gs[gi]["mv"], "late" if gs[gi].get("late") else "no late") for gi in chosen)
                print("%-6s %-30s %-9s LOSO falls %6.2f %% (%d/%d)  ADLs quiet %6.2f %% (%d/%d)  %s" % (
                    kind, label, name, 100 * tp / nf, tp, nf, 100 * (na - fp) / na, na - fp, na, dict(picks)))


def dropped():
    T = tables(); S = sims()
    print("cap on the look's posture change (a trunk that ends > cap from where it was did not start upright):")
    for cap in (None, 150, 130, 120, 110):
        print("  cap %-5s %s" % (cap, "  ".join(line(T, S, dict(kind="either", late=True, cap=cap, **LATE)))))
    print("the gyroscope around the deciding candidate of the looks that fire (10th/50th/90th percentiles):")
    print("  yaw: rotation about the pre-impact vertical (tracked with the gyroscope) from 0.5 s before to 1 s after;")
    print("  post: net rotation in the second after the impact; path: the rotation's path length over the same span")
    for name in ("fallalld", "sisfall"):
        meta, t = T[name]
        det, dec, pend, why = rules(t, dict(kind="either"))
        codes = np.array(meta["code"]); rows = collections.defaultdict(list)
        for i in np.nonzero(why["look"])[0]:
            rec = meta["data"][t.t[i]]; c = int(t.c[i])
            a = rec[:, :3]; w = np.radians(rec[:, 3:6])
            g = a[max(0, c - 80):c - 20].mean(0); g /= np.linalg.norm(g)
            yaw = tot = 0.0
            for j in range(c - 20, min(len(a), c + 40)):
                yaw += w[j] @ g / 40; tot += np.linalg.norm(w[j]) / 40
                g = g - np.cross(w[j], g) / 40; g /= np.linalg.norm(g)
            post = np.linalg.norm(np.degrees(w[c:c + 40].sum(0) / 40))
            grp = codes[t.t[i]] if codes[t.t[i]][0] == "D" else "falls"
            rows[grp].append((abs(np.degrees(yaw)), post, np.degrees(tot)))
        for grp in sorted(rows):
            r = np.array(rows[grp])
            print("  %-8s %-5s n=%3d  yaw %s  post %s  path %s" % (name, grp, len(r), *("%3.0f/%3.0f/%3.0f" % tuple(np.percentile(r[:, k], [10, 50, 90])) for k in range(3))))


if __name__ == "__main__":
    sys.modules["__main__"].XTable = recovered.XTable   # the cached tables were pickled from recovered.py
    {"table": table, "report": report, "loso": loso, "dropped": dropped}[sys.argv[1] if len(sys.argv) > 1 else "report"]()

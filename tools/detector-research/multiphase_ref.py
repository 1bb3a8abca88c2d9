"""FallGuard multiphase fall detector -- reference specification (Python).

This file IS the spec to port.  `MultiphaseDetector` is the streaming,
sample-by-sample implementation; `candidates()` + `decide()` are a vectorised
equivalent used for the parameter search (verified to give identical trial
decisions, see cv.py --verify).

Signal model: tri-axial accelerometer, 40 Hz, units g, gravity included.

Phases (all three must pass for an event):
  1. IMPACT   : s[c] = mean of |a| over the 5 samples c-4..c (125 ms) is a local
                maximum of s over c-1 s..c+1 s and s[c] >= T_IMPACT.
  2. POSTURE  : angle between the mean acceleration vector of the pre-impact
                window [c-2.0 s, c-0.5 s) and of the post-impact window
                [c+1.0 s, c+2.5 s) is >= T_ANGLE degrees, or, for a strong
                impact (s[c] >= T_IMPACT_STRONG), >= T_ANGLE_STRONG degrees.
  3. STILLNESS: population std of |a| over the post-impact window is
                <= T_STILL g.
The decision for a candidate peak at sample c is taken when sample
c + POST_END - 1 arrives (decision delay 99 samples = 2.475 s).
"""
import math

FS = 40.0  # Hz (all window lengths below are in samples at 40 Hz)

# ---- structural constants (fixed, not tuned by CV) -------------------------
SMOOTH_N = 5        # samples, moving-average length of |a| (125 ms)
PEAK_HALF = 40      # samples, local-max half window (1.0 s)
PRE_START = 80      # samples before c: pre window starts at c-80 (2.0 s)
PRE_END = 20        # samples before c: pre window ends (exclusive) at c-20 (0.5 s)
POST_START = 40     # samples after c: post window starts at c+40 (1.0 s)
POST_END = 100      # samples after c: post window ends (exclusive) at c+100 (2.5 s)
REFRACTORY = 400    # samples (10 s) after a firing during which nothing fires
RING = 256          # ring-buffer length (power of two >= PRE_START+POST_END)

# ---- tuned thresholds (defaults = result of the subject-wise CV) -----------
DEFAULTS = dict(
    t_impact=1.65,  # g      smoothed-magnitude peak must be >= this
    t_angle=40.0,   # deg    orientation change must be >= this
    t_still=0.40,   # g      std of |a| in post window must be <= this
    t_impact_strong=2.6,   # g    a peak this strong needs only t_angle_strong
    t_angle_strong=20.0,   # deg  reduced orientation change for strong impacts
)


def _angle_deg(ax, ay, az, bx, by, bz):
    na = math.sqrt(ax * ax + ay * ay + az * az)
    nb = math.sqrt(bx * bx + by * by + bz * bz)
    if na <= 0.0 or nb <= 0.0:
        return 0.0
    c = (ax * bx + ay * by + az * bz) / (na * nb)
    c = max(-1.0, min(1.0, c))
    return math.degrees(math.acos(c))


class MultiphaseDetector:
    """Streaming detector.  feed(x, y, z) -> None or event dict.

    Memory: five ring buffers of RING floats (x, y, z, |a|, smoothed |a|).
    Work per sample: O(1) (smoothing by running sum) plus, only when the
    sample 99 steps back is a >= t_impact peak candidate, a bounded pass over
    <= 180 buffered samples.
    """

    def __init__(self, t_impact=DEFAULTS["t_impact"], t_angle=DEFAULTS["t_angle"],
                 t_still=DEFAULTS["t_still"], t_impact_strong=DEFAULTS["t_impact_strong"],
                 t_angle_strong=DEFAULTS["t_angle_strong"]):
        self.t_impact = float(t_impact)
        self.t_angle = float(t_angle)
        self.t_still = float(t_still)
        self.t_impact_strong = float(t_impact_strong)
        self.t_angle_strong = float(t_angle_strong)
        self.bx = [0.0] * RING
        self.by = [0.0] * RING
        self.bz = [0.0] * RING
        self.bm = [0.0] * RING   # |a|
        self.bs = [0.0] * RING   # smoothed |a| (0.0 while fewer than SMOOTH_N samples seen)
        self.n = 0               # number of samples fed so far; current sample index = n-1
        self.refractory_until = -1  # no event may fire while t < refractory_until

    def reset(self):
        self.__init__(self.t_impact, self.t_angle, self.t_still,
                      self.t_impact_strong, self.t_angle_strong)

    # ---- helpers on absolute sample indices (valid for idx in [n-RING, n-1]) --
    def _m(self, i):
        return self.bm[i & (RING - 1)]

    def _s(self, i):
        return self.bs[i & (RING - 1)]

    def feed(self, x, y, z):
        t = self.n
        k = t & (RING - 1)
        m = math.sqrt(x * x + y * y + z * z)
        self.bx[k] = x
        self.by[k] = y
        self.bz[k] = z
        self.bm[k] = m
        # smoothed magnitude: mean of the last SMOOTH_N magnitudes, 0.0 before that.
        # (A running sum is fine in a port; here it is summed directly so the
        # result is bit-identical to the vectorised version.)
        if t >= SMOOTH_N - 1:
            acc = 0.0
            for j in range(t - SMOOTH_N + 1, t + 1):
                acc += self._m(j)
            self.bs[k] = acc / SMOOTH_N
        else:
            self.bs[k] = 0.0
        self.n = t + 1

        # candidate impact sample whose decision is due now
        c = t - (POST_END - 1)
        if c < 0:
            return None
        if t < self.refractory_until:
            return None
        return self._evaluate(c, t)

    def _evaluate(self, c, t):
        sc = self._s(c)
        # phase 1: impact ------------------------------------------------------
        if not (sc >= self.t_impact):
            return None
        # strict local maximum to the left, non-strict to the right (first of ties wins)
        for j in range(max(0, c - PEAK_HALF), c):
            if self._s(j) >= sc:
                return None
        for j in range(c + 1, c + PEAK_HALF + 1):
            if self._s(j) > sc:
                return None
        # pre window [max(0, c-PRE_START), c-PRE_END); needs >= 1 sample
        p0 = max(0, c - PRE_START)
        p1 = c - PRE_END
        if p1 <= p0:
            return None  # start-up: impact within the first 0.525 s cannot be judged
        gx0 = gy0 = gz0 = 0.0
        for j in range(p0, p1):
            q = j & (RING - 1)
            gx0 += self.bx[q]; gy0 += self.by[q]; gz0 += self.bz[q]
        # post window [c+POST_START, c+POST_END)
        gx1 = gy1 = gz1 = 0.0
        msum = 0.0
        for j in range(c + POST_START, c + POST_END):
            q = j & (RING - 1)
            gx1 += self.bx[q]; gy1 += self.by[q]; gz1 += self.bz[q]
            msum += self.bm[q]
        npost = POST_END - POST_START
        mmean = msum / npost
        var = 0.0
        for j in range(c + POST_START, c + POST_END):
            dlt = self._m(j) - mmean
            var += dlt * dlt
        still = math.sqrt(var / npost)
        angle = _angle_deg(gx0, gy0, gz0, gx1, gy1, gz1)
        # phases 2 and 3 -------------------------------------------------------
        strong = sc >= self.t_impact_strong
        posture_ok = (angle >= self.t_angle) or (strong and angle >= self.t_angle_strong)
        still_ok = still <= self.t_still
        if not (posture_ok and still_ok):
            return None
        # ---- fire --------------------------------------------------------------
        self.refractory_until = t + REFRACTORY
        # informational features (not used in the decision)
        lo = max(0, c - PEAK_HALF)
        ffmin = min(self._s(j) for j in range(lo, c + 1)) if c >= SMOOTH_N - 1 else float("nan")
        raw_peak = max(self._m(j) for j in range(max(0, c - SMOOTH_N + 1), c + 1))
        pre_mean = sum(self._m(j) for j in range(p0, p1)) / (p1 - p0)
        pre_act = math.sqrt(sum((self._m(j) - pre_mean) ** 2 for j in range(p0, p1)) / (p1 - p0))
        return dict(
            impact_index=c,                  # sample index of the smoothed-magnitude peak
            fire_index=t,                    # sample index at which the event was emitted
            peak_smoothed_g=sc,              # 125 ms mean |a| at the peak
            peak_raw_g=raw_peak,             # max raw |a| among the 5 samples of the peak
            angle_deg=angle,                 # orientation change pre -> post
            still_std_g=still,               # std of |a| over c+1.0 s .. c+2.5 s
            freefall_min_g=ffmin,            # min smoothed |a| in the 1 s up to the peak
            pre_activity_std_g=pre_act,      # std of |a| over c-2.0 s .. c-0.5 s
            phases=dict(impact=True, strong_impact=strong, posture=posture_ok, stillness=still_ok,
                        freefall=bool(ffmin < 0.6)),  # freefall: informational only
        )


# ============================================================================
# Vectorised equivalent (for the parameter search)
# ============================================================================
def candidates(a, floor=1.3):
    """All impact candidates of one recording with smoothed peak >= floor.

    a: (n,3) array in g.  Returns (k,5) float64 array with columns
    [c, s_peak, angle_deg, still_std, decision_index]; only candidates whose
    decision time c+POST_END-1 lies inside the recording and that pass the
    start-up rule are returned.  Formulas mirror MultiphaseDetector exactly.
    """
    import numpy as np
    a = np.asarray(a, dtype=np.float64)
    n = len(a)
    out = []
    if n < POST_END:
        return np.zeros((0, 5))
    m = np.sqrt(a[:, 0] * a[:, 0] + a[:, 1] * a[:, 1] + a[:, 2] * a[:, 2])
    s = np.zeros(n)
    if n >= SMOOTH_N:
        acc = np.zeros(n - SMOOTH_N + 1)
        for j in range(SMOOTH_N):        # same summation order as the streaming loop
            acc = acc + m[j:n - SMOOTH_N + 1 + j]
        s[SMOOTH_N - 1:] = acc / SMOOTH_N
    last_c = n - POST_END
    for c in np.nonzero(s[:last_c + 1] >= floor)[0]:
        c = int(c)
        sc = s[c]
        lo = max(0, c - PEAK_HALF)
        if c > lo and s[lo:c].max() >= sc:
            continue
        if s[c + 1:c + PEAK_HALF + 1].max() > sc:
            continue
        p0 = max(0, c - PRE_START); p1 = c - PRE_END
        if p1 <= p0:
            continue
        g0 = [0.0, 0.0, 0.0]
        for j in range(p0, p1):
            g0[0] += a[j, 0]; g0[1] += a[j, 1]; g0[2] += a[j, 2]
        g1 = [0.0, 0.0, 0.0]; msum = 0.0
        for j in range(c + POST_START, c + POST_END):
            g1[0] += a[j, 0]; g1[1] += a[j, 1]; g1[2] += a[j, 2]; msum += m[j]
        npost = POST_END - POST_START
        mmean = msum / npost
        var = 0.0
        for j in range(c + POST_START, c + POST_END):
            dl = m[j] - mmean
            var += dl * dl
        still = math.sqrt(var / npost)
        ang = _angle_deg(g0[0], g0[1], g0[2], g1[0], g1[1], g1[2])
        out.append((c, sc, ang, still, c + POST_END - 1))
    return np.array(out, dtype=np.float64).reshape(-1, 5)


def decide(cands, t_impact, t_angle, t_still, t_impact_strong, t_angle_strong):
    """Boolean mask of candidates that fire (ignoring refractory, which cannot
    change whether a trial fires at least once)."""
    s, ang, st = cands[:, 1], cands[:, 2], cands[:, 3]
    posture = (ang >= t_angle) | ((s >= t_impact_strong) & (ang >= t_angle_strong))
    return (s >= t_impact) & posture & (st <= t_still)


def run_stream(a, **params):
    """Feed a whole recording through the streaming detector; list of events."""
    det = MultiphaseDetector(**params)
    ev = []
    for x, y, z in a.tolist():
        e = det.feed(x, y, z)
        if e is not None:
            ev.append(e)
    return ev

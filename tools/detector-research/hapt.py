"""Loader for hapt-dev-50hz: continuous daily living (no falls), resampled to 40 Hz as the
daemon's Resampler does at 50 Hz (averaging length round(50/40) = 1, so linear interpolation
onto the 40 Hz grid from the first sample's time).

load() -> list of dict(name, person, a (n,3) float64 at 40 Hz, t0, activities [(start,end,name)])
"""
import os, gzip, pickle, hashlib
import numpy as np

ROOT = os.environ.get("HAPT_DIR", "/work/shared/datasets/hapt-dev-50hz")
CACHE = "/tmp/hapt40_cache.pkl"


def _resample(t, a, rate=40.0):
    grid = t[0] + np.arange(int((t[-1] - t[0]) * rate) + 1) / rate
    return np.stack([np.interp(grid, t, a[:, k]) for k in range(3)], 1)


def read_activities(path):
    """An activities sidecar (start_s,end_s,activity) as [(start, end, name)]."""
    acts = []
    with open(path) as fh:
        next(fh)
        for line in fh:
            s, e, what = line.strip().split(",")
            acts.append((float(s), float(e), what))
    return acts


def load(use_cache=True):
    names = sorted(f[:-7] for f in os.listdir(ROOT) if f.endswith(".csv.gz"))
    key = hashlib.md5("\n".join(names).encode()).hexdigest()
    if use_cache and os.path.exists(CACHE):
        with open(CACHE, "rb") as fh:
            c = pickle.load(fh)
        if c["key"] == key:
            return c["sessions"]
    out = []
    for nm in names:
        with gzip.open(os.path.join(ROOT, nm + ".csv.gz"), "rt") as fh:
            raw = np.loadtxt(fh, delimiter=",", skiprows=1)
        out.append(dict(name=nm, person=nm.split("-")[0], a=_resample(raw[:, 0], raw[:, 1:4]),
                        t0=raw[0, 0], activities=read_activities(os.path.join(ROOT, nm + ".activities.csv"))))
    if use_cache:
        with open(CACHE, "wb") as fh:
            pickle.dump(dict(key=key, sessions=out), fh)
    return out


def activity_at(session, t):
    """The activity label at stream time t (seconds from the session's first sample)."""
    ts = t + session["t0"]
    for s, e, what in session["activities"]:
        if s <= ts < e:
            return what
    return "unlabelled"


if __name__ == "__main__":
    ss = load()
    print(len(ss), "sessions", sum(len(s["a"]) for s in ss) / 40 / 3600, "h")

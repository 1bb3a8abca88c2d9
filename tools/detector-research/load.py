"""Fast loader for the SisFall 40 Hz dev folder.

load() -> dict with
  data   : list of float32 arrays (n,3) in g  (x,y,z)
  subj   : list of subject ids = the FOLDER name ('SA01', 'SE05', ...).
           (Quirk: SA15/ holds D17_SE15_R01..05; the SA15 folder has only 74
           other ADLs vs 79 for every other SA subject, so these are SA15's D17
           trials with a mislabelled file name; they are attributed to SA15.)
  fsubj  : subject id as written in the file name
  code   : list of activity codes ('D01'..'D19', 'F01'..'F15')
  trial  : list of int trial numbers
  isfall : bool numpy array
Cached as a pickle in /tmp (invalidated when the file list changes).
"""
import os, re, pickle, hashlib
import numpy as np

ROOT = os.environ.get("SISFALL40_DIR", "/work/shared/datasets/sisfall-40hz-dev")
CACHE = "/tmp/sisfall40_cache.pkl"
FS = 40.0
PAT = re.compile(r"^([DF]\d\d)_(S[AE]\d\d)_R(\d+)\.csv$")


def _list():
    out = []
    for s in sorted(os.listdir(ROOT)):
        d = os.path.join(ROOT, s)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            m = PAT.match(f)
            if m:
                out.append((os.path.join(d, f), m.group(1), s, int(m.group(3)), m.group(2)))
    return out


def load(use_cache=True):
    files = _list()
    key = hashlib.md5(("v2\n" + "\n".join(f[0] for f in files)).encode()).hexdigest()
    if use_cache and os.path.exists(CACHE):
        with open(CACHE, "rb") as fh:
            c = pickle.load(fh)
        if c.get("key") == key:
            return c
    data, subj, code, trial, fsubj = [], [], [], [], []
    for path, c_, s_, r_, fs_ in files:
        a = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.float32, ndmin=2)
        data.append(a)
        subj.append(s_); code.append(c_); trial.append(r_); fsubj.append(fs_)
    c = dict(key=key, data=data, subj=subj, fsubj=fsubj, code=code, trial=trial,
             isfall=np.array([x[0] == "F" for x in code]))
    if use_cache:
        with open(CACHE, "wb") as fh:
            pickle.dump(c, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return c


if __name__ == "__main__":
    import time, collections
    t = time.time(); d = load(); print("loaded in %.1fs" % (time.time() - t))
    n = len(d["data"]); nf = int(d["isfall"].sum())
    print(n, "trials,", nf, "falls,", n - nf, "ADL,", sum(len(a) for a in d["data"]), "samples")
    L = collections.defaultdict(list)
    for a, c in zip(d["data"], d["code"]):
        L[c].append(len(a) / FS)
    for c in sorted(L):
        print(c, len(L[c]), "len s min/max %.1f/%.1f" % (min(L[c]), max(L[c])))

"""Sensitivity of the LOSO result to the fixed structural constants.

For each variant, candidates are recomputed with the changed constant and the
full LOSO selection of cv.py (same grid, same criterion) is re-run; prints the
pooled held-out sensitivity / specificity and the all-data selection.
Run: python3 struct_sweep.py   (~1-2 min, single process)
"""
import sys, os
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from load import load
import multiphase_ref as M
import cv

BASE = dict(SMOOTH_N=M.SMOOTH_N, PEAK_HALF=M.PEAK_HALF, PRE_START=M.PRE_START, PRE_END=M.PRE_END,
            POST_START=M.POST_START, POST_END=M.POST_END)
VARIANTS = [
    {},
    dict(SMOOTH_N=1), dict(SMOOTH_N=3), dict(SMOOTH_N=7), dict(SMOOTH_N=9),
    dict(PEAK_HALF=20), dict(PEAK_HALF=60),
    dict(PRE_START=60), dict(PRE_START=120), dict(PRE_END=10), dict(PRE_END=40),
    dict(POST_START=20), dict(POST_START=60), dict(POST_END=80), dict(POST_END=110),
]


def loso(fired, isfall, subj):
    held = np.zeros(len(isfall), bool)
    for s in sorted(set(subj)):
        tr = subj != s
        se, sp = cv.rates(fired, isfall, tr)
        ix = cv.choose(se, sp)
        held[~tr] = fired[~tr][(slice(None),) + ix]
    se, sp = cv.rates(fired, isfall, np.ones(len(isfall), bool))
    ix = cv.choose(se, sp)
    return held, ix, fired[(slice(None),) + ix]


def main():
    d = load()
    isfall = d["isfall"]; subj = np.array(d["subj"])
    for v in VARIANTS:
        for k, val in BASE.items():
            setattr(M, k, v.get(k, val))
        C = [M.candidates(a) for a in d["data"]]
        fired = cv.fire_table(C)
        held, ix, pred = loso(fired, isfall, subj)
        name = ", ".join("%s=%d" % kv for kv in v.items()) or "baseline (defaults)"
        print("%-26s LOSO held-out sens %.2f spec %.2f | all-data pick: %s -> %.2f/%.2f" % (
            name, 100 * held[isfall].mean(), 100 * (1 - held[~isfall].mean()),
            cv.pstr(cv.params_of(ix)), 100 * pred[isfall].mean(), 100 * (1 - pred[~isfall].mean())), flush=True)


if __name__ == "__main__":
    main()

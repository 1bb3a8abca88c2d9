"""The simulated older faller as recordings, so the Swift detector itself is judged on it.

usage: python3 older_faller.py OUT_DIR

Writes OUT_DIR/x1, x1.5 and x2, each a folder in the dev folders' layout (SUBJECT/CODE_SUBJECT_Rnn.csv.gz,
`t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps`): the young SisFall falls F06, F07 and F10-F15 of
`sisfall-6axis-40hz-dev`, each softened (sixaxis.soften: the impact's 125 ms mean of |a| brought
to U(1.45, 1.9) g, seed 35) and the 1.5 s before the impact played 1, 1.5 and 2 times slower
(sixaxis.stretch: angular velocity divided by the factor), and 10 s added at the end (the
last 2 s repeated: the faller lies on as the trial ended), so every long look is decided. The same trials and targets as
recovered.sims(), so `fallguard evaluate OUT_DIR/x1` measures what the emulation's "older faller"
columns estimate. `fallguard evaluate --accelerometer-only` judges the same files as an ADXL345.
"""
import sys, os, gzip
import numpy as np
PAD = 5   # the last 2 s repeated 5 times: 10 s more, so every look is decided
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sixaxis import load_trials, soften, stretch, SLOW_CODES


def main(out):
    sis = load_trials("sisfall")
    pick = [q for q, c in enumerate(sis["code"]) if c in SLOW_CODES]
    rng = np.random.default_rng(35)
    targets = rng.uniform(1.45, 1.9, len(pick))
    for k, name in ((1.0, "x1"), (1.5, "x1.5"), (2.0, "x2")):
        for q, tg in zip(pick, targets):
            rec = soften(stretch(sis["data"][q], k), tg)
            rec = np.vstack([rec] + [rec[-80:]] * PAD)   # the faller lies on as the trial ends
            subj, code, r = sis["subj"][q], sis["code"][q], sis["trial"][q]
            d = os.path.join(out, name, subj)
            os.makedirs(d, exist_ok=True)
            with gzip.open(os.path.join(d, "%s_%s_R%02d.csv.gz" % (code, subj, r)), "wt") as f:
                f.write("t_s,x_g,y_g,z_g,gx_dps,gy_dps,gz_dps\n")
                for i, s in enumerate(rec):
                    f.write("%.3f,%.4f,%.4f,%.4f,%.2f,%.2f,%.2f\n" % ((i / 40.0,) + tuple(s)))
        print(name, len(pick), "trials")


if __name__ == "__main__":
    main(sys.argv[1])

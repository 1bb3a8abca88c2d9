#!/usr/bin/env bash
# A resting gyroscope's offset (issue 35, hardware-notes: "a resting gyro reads a few °/s of
# offset"), measured on the dev data's own gyroscopes: every 2 s window where the wearer is
# still (|a| within 0.03 g of its mean and each gyro axis within 1 °/s of its mean, i.e. no
# turning) gives the mean angular velocity as that sensor's zero-rate output. Prints its
# distribution per dataset, and what it adds to the detector's gyroscope features over the 1 s
# the net rotation is integrated (degrees) and to peak |ω| (°/s), at the median and the largest.
# Usage: bench/gyro-offset.sh [DATASET_DIR...] (default: sisfall-6axis-40hz-dev, hapt-6axis-dev-50hz)
set -euo pipefail
cd "$(dirname "$0")/.."
DIRS=("$@")
[ ${#DIRS[@]} -gt 0 ] || DIRS=(../shared/datasets/sisfall-6axis-40hz-dev ../shared/datasets/hapt-6axis-dev-50hz)
python3 - "${DIRS[@]}" <<'PY'
import csv, glob, gzip, io, math, os, statistics, sys
for d in sys.argv[1:]:
    files = sorted(glob.glob(os.path.join(d, "**", "*.csv.gz"), recursive=True) + glob.glob(os.path.join(d, "**", "*.csv"), recursive=True))
    files = [f for f in files if not f.endswith((".labels.csv", ".activities.csv"))]
    offsets, per_file = [], {}
    for f in files:
        text = gzip.open(f, "rt") if f.endswith(".gz") else open(f)
        rows = [r for r in csv.reader(text) if r and not r[0].startswith("#")]
        head, rows = rows[0], rows[1:]
        if "gx_dps" not in head:
            continue
        ix = [head.index(c) for c in ("x_g", "y_g", "z_g", "gx_dps", "gy_dps", "gz_dps")]
        v = [[float(r[i]) for i in ix] for r in rows]
        t = [float(r[head.index("t_s")]) for r in rows] if "t_s" in head else None
        rate = round((len(t) - 1) / (t[-1] - t[0])) if t and t[-1] > t[0] else 40
        n = 2 * rate
        best = None
        for s in range(0, len(v) - n, n // 2):
            w = v[s:s + n]
            mag = [math.sqrt(a[0] ** 2 + a[1] ** 2 + a[2] ** 2) for a in w]
            m = statistics.fmean(mag)
            if max(abs(x - m) for x in mag) > 0.03:
                continue
            g = [statistics.fmean(a[3 + k] for a in w) for k in range(3)]
            if any(max(abs(a[3 + k] - g[k]) for a in w) > 1.0 for k in range(3)):
                continue
            norm = math.sqrt(sum(x * x for x in g))
            offsets.append(norm)
            best = norm if best is None else min(best, norm)
        if best is not None:
            per_file[f] = best
    if not offsets:
        print(f"{d}: no still window"); continue
    o = sorted(offsets)
    q = lambda p: o[min(len(o) - 1, int(p * len(o)))]
    print(f"{os.path.basename(d.rstrip('/'))}: {len(o)} still 2 s windows in {len(per_file)} of {len(files)} files; "
          f"resting |offset| median {q(0.5):.2f} °/s, p95 {q(0.95):.2f}, max {o[-1]:.2f}; "
          f"left in, the median offset adds at most {q(0.5):.2f}° to a 1 s net rotation and "
          f"{q(0.5):.2f} °/s to peak |ω| (the largest {o[-1]:.2f})")
PY

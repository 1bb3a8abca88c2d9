"""Sample accounting between the IIO emulator's write log and `fallguard watch --arrival-log`.

The reader consumed N samples; with no loss, no duplicate and no reordering they are exactly the
first N samples the driver wrote, value for value (raw counts x scale = g). Samples written after
the reader's last one were still in flight when it stopped (it stops at --duration; the emulated
driver keeps writing until the command exits): they are counted apart, and there can be no more
of them than were written after the reader's last sample arrived, plus one buffer.
"""
import sys

G = 9.80665


def load(write_log, arrival_log):
    written = []   # (written_ns, x, y, z) raw counts
    for line in open(write_log):
        f = line.split(",", 9)
        if f[0] == "sample" and f[4] == "buffer":
            written.append((int(f[3]), int(f[5]), int(f[6]), int(f[7])))
    got = [tuple(float(v) for v in l.split(",")) for l in open(arrival_log) if l.strip()]
    return written, got


def check(write_log, arrival_log, scale):
    """-> (consumed, mismatches, in_flight, first_mismatch or None)"""
    written, got = load(write_log, arrival_log)
    n = len(got)
    k = scale / G   # counts -> g
    bad = [i for i in range(min(n, len(written)))
           if any(abs(got[i][1 + a] - written[i][1 + a] * k) > 0.5 * k for a in range(3))]
    bad += list(range(len(written), n))            # consumed more than written: duplicates
    in_flight = max(0, len(written) - n)
    return n, len(bad), in_flight, (bad[0] if bad else None), written, got


if __name__ == "__main__":
    n, bad, fl, first, _, _ = check(sys.argv[1], sys.argv[2], float(sys.argv[3]))
    print(f"consumed {n}, mismatched {bad}, in flight at stop {fl}, first mismatch {first}")
    sys.exit(1 if bad else 0)

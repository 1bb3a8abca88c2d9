#!/usr/bin/env bash
# Every attack class found so far, replayed against running daemons on loopback, one line each
# (REFUSED or GOT IN with its evidence) and a summary:
#   issue 28's 14 (an independent attack on 7ed8bef): bench/attack-page.sh (attacks 1-6 and the
#     unknown incident's label: the page) and bench/attack-files.sh (7-14: secrets, the
#     credentials file, acknowledgements, files, incident ids, input sizes); no secret in any
#     output, nothing written outside the state directories, daemon memory below 100 MB;
#   issue 40's 15 (the station, the site link, many bridges on one broker): bench/attack-mqtt.sh
#     (1-2: one oversized message) and bench/attack-station.sh (3-15).
# FALLGUARD_BIN=.build/debug/fallguard skips the release build, as in each script.
# Usage: bench/attacks.sh   (attack-files.sh needs root)
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
bench/attack-page.sh 2>&1 | tee "$out/page.txt"; page=${PIPESTATUS[0]}
bench/attack-files.sh 2>&1 | tee "$out/files.txt"; files=${PIPESTATUS[0]}
bench/attack-mqtt.sh 2>&1 | tee "$out/mqtt.txt"; mqtt=${PIPESTATUS[0]}
bench/attack-station.sh 2>&1 | tee "$out/station.txt"; station=${PIPESTATUS[0]}
python3 - "$out" "$page" "$files" "$mqtt" "$station" <<'PY'
import re, sys
out = sys.argv[1]
def read(name): return open(f"{out}/{name}.txt").read().splitlines()
def verdicts(lines):
    v, evidence = {}, {}
    for l in lines:
        m = re.match(r"attack (\d+): (refused|GOT[ -]IN|NOT RUN) ?(.*)", l)
        if m:
            n = int(m.group(1))
            # an attack with several lines (9: acknowledgements, then the client id) is refused only if all are
            v[n] = v.get(n, True) and m.group(2) == "refused"
            evidence.setdefault(n, []).append(m.group(3))
    return v, evidence
ok_all = True
for issue, names, total in (("28", ("page", "files"), 14), ("40", ("mqtt", "station"), 15)):
    v, evidence = verdicts(sum((read(n) for n in names), []))
    print(f"issue {issue}:")
    for n in range(1, total + 1):
        word = "NOT RUN" if n not in v else "REFUSED" if v[n] else "GOT IN"
        print(f"  {issue}.{n}: {word} {' / '.join(evidence.get(n, []))[:300]}")
    refused = sum(1 for n in range(1, total + 1) if v.get(n))
    ok_all &= refused == total
    print(f"  issue {issue}: {refused} of {total} refused")
for l in sum((read(n) for n in ("page", "files")), []):
    if l.startswith(("secrets:", "written outside", "daemon peak")): print(l)
codes = dict(zip(("page", "files", "mqtt", "station"), sys.argv[2:]))
ok_all &= all(c == "0" for c in codes.values())
print("bar: every class refused%s; script exits %s: %s" % ("" if ok_all else " NOT", codes, "MET" if ok_all else "NOT MET"))
sys.exit(0 if ok_all else 1)
PY
rc=$?
rm -rf "$out"
exit $rc

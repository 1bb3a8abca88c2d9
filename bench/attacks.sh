#!/usr/bin/env bash
# Bar (issue 28): the 14 attacks of the independent attack on 7ed8bef, replayed against running
# daemons on loopback, 14 of 14 refused; no secret in any output, nothing written outside the
# state directories, daemon memory below 100 MB. Runs bench/attack-page.sh (attacks 1-6 and the
# unknown incident's label: the page) and bench/attack-files.sh (attacks 7-14: secrets, the
# credentials file, acknowledgements, files, incident ids, input sizes), then counts.
# FALLGUARD_BIN=.build/debug/fallguard skips the release build, as in each script.
# Usage: bench/attacks.sh
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
bench/attack-page.sh 2>&1 | tee "$out/page.txt"; page=${PIPESTATUS[0]}
bench/attack-files.sh 2>&1 | tee "$out/files.txt"; files=${PIPESTATUS[0]}
python3 - "$out/page.txt" "$out/files.txt" "$page" "$files" <<'PY'
import re, sys
lines = open(sys.argv[1]).read().splitlines() + open(sys.argv[2]).read().splitlines()
verdict = {}
for l in lines:
    m = re.match(r"attack (\d+): (refused|GOT[ -]IN)", l)
    if m:
        n = int(m.group(1))
        # an attack with several lines (9: acknowledgements, then the client id) is refused only if all are
        verdict[n] = verdict.get(n, True) and m.group(2) == "refused"
refused = sorted(n for n, ok in verdict.items() if ok)
missing = sorted(set(range(1, 15)) - set(verdict))
got = sorted(n for n, ok in verdict.items() if not ok)
others = [l for l in lines if l.startswith(("secrets:", "written outside", "daemon peak"))]
for l in others: print(l)
ok = len(refused) == 14 and sys.argv[3] == "0" and sys.argv[4] == "0"
print("bar: %d of 14 attacks refused%s%s; page script exit %s, files script exit %s: %s" % (
    len(refused), ", got in: %s" % got if got else "", ", not run: %s" % missing if missing else "",
    sys.argv[3], sys.argv[4], "MET" if ok else "NOT MET"))
sys.exit(0 if ok else 1)
PY
rc=$?
rm -rf "$out"
exit $rc

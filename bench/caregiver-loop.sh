#!/usr/bin/env bash
# Bars (issue 18): the caregiver loop against a Twilio-compatible server on loopback
# (tools/notify-receiver), RUNS times (default 5):
#  (a) the primary's call ends no-answer: the next contact's SMS and call go out within 15 s of
#      that status being visible at the provider;
#  (b) a reply "OK" from the second contact is an acknowledgement within two polling intervals
#      (2 s each here), escalation stops, and nothing is polled once nothing is open;
#  (c) a reply to an earlier incident does not acknowledge a new one;
#  (d) in the whole daemon with the GPIO emulator (root): the buzzer plays the delivered pattern
#      and then the help-coming tones, and the others get "Ben (SMS reply) is handling …".
# It runs the tests that measure them (CaregiverFollowUpTests, CaregiverLoopEndToEndTests) and
# prints every figure they measured, with the worst of each.
# Usage: bench/caregiver-loop.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
RUNS=${1:-5}
swift build --build-tests >/dev/null
log=$(mktemp); figures=$(mktemp); trap 'rm -f "$log" "$figures"' EXIT
failed=0
for i in $(seq 1 "$RUNS"); do
    swift test --skip-build --filter 'CaregiverFollowUpTests|CaregiverLoopEndToEndTests' >"$log" 2>&1 || failed=$((failed + 1))
    grep -hE '^(no-answer visible|SMS reply|reply "OK"|buzzer pulses)' "$log" | sed "s/^/run $i: /" | tee -a "$figures"
done
python3 - "$RUNS" "$failed" "$figures" <<'PY'
import re, sys
runs, failed, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
worst = {}
for line in open(path):
    m = re.match(r"run \d+: (.*?): ([0-9.]+) s \((.*)\)", line.strip())
    if m: worst.setdefault((m.group(1), m.group(3)), []).append(float(m.group(2)))
for (what, limit), values in worst.items():
    print(f"{what}: worst {max(values):.2f} s, median {sorted(values)[len(values) // 2]:.2f} s over {len(values)} ({limit})")
print(f"{runs} runs, {failed} with a failing test")
PY
[ "$failed" = 0 ]

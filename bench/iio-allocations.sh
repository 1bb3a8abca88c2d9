#!/usr/bin/env bash
# Allocations per sample on the capture path (issue 35: a six-axis sample through the ring
# without a new allocation per sample): `fallguard watch` on the emulated MPU6050 (six axes,
# buffered and polled) under an LD_PRELOAD that counts malloc calls, for two durations; the
# difference divided by the difference in samples is the cost of one more sample (start-up
# cancels out). Bar: < 0.1 malloc per sample (a per-sample allocation would give >= 1; one per
# buffered batch of 16 gives 0.06).
# Usage: bench/iio-allocations.sh  (root: the emulator's mount namespace)
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
need_root; build_release; make_tmp
cat > "$OUT/mc.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
static atomic_long calls;
static void *(*real_malloc)(size_t);
void *malloc(size_t n) {
    if (!real_malloc) real_malloc = dlsym(RTLD_NEXT, "malloc");
    atomic_fetch_add(&calls, 1);
    return real_malloc(n);
}
__attribute__((destructor)) static void report(void) {
    const char *out = getenv("MC_OUT");
    FILE *f = out ? fopen(out, "w") : NULL;
    if (f) { fprintf(f, "%ld\n", (long)calls); fclose(f); }
}
C
cc -shared -fPIC -O2 -o "$OUT/mc.so" "$OUT/mc.c" -ldl
REC=Tests/FallGuardFieldTestTests/Fixtures/sixaxis/F15_SA01_R01.csv
fail=0
for model in mpu6050 mpu6050-direct; do
    for d in 8 20; do
        tools/iio-emulator/iio-emu --model "$model" --recording "$REC" --loop -- \
            env LD_PRELOAD="$OUT/mc.so" MC_OUT="$OUT/$model-$d.count" "$B" watch --json --duration "$d" \
            > "$OUT/$model-$d.jsonl" 2>/dev/null
    done
    python3 - "$OUT" "$model" <<'PY' || fail=1
import json, sys
out, model = sys.argv[1:]
def run(d):
    calls = int(open(f"{out}/{model}-{d}.count").read())
    s = [json.loads(l) for l in open(f"{out}/{model}-{d}.jsonl") if '"summary"' in l][-1]
    opened = [json.loads(l) for l in open(f"{out}/{model}-{d}.jsonl") if '"opened"' in l][0]
    return calls, s["raw_samples"], opened
(c1, n1, o), (c2, n2, _) = run(8), run(20)
per = (c2 - c1) / (n2 - n1)
ok = per < 0.1 and o.get("gyroscope") is True
print(f"{model} ({o['mode']}, gyroscope {o.get('gyroscope')}): {c2 - c1} more mallocs for {n2 - n1} more samples "
      f"= {per:.3f} per sample (bar < 0.1): {'MET' if ok else 'NOT MET'}")
sys.exit(0 if ok else 1)
PY
done
exit $fail

#!/usr/bin/env bash
# Exact sums per segment on the GPU (issues 26 and 28, decision 55), in one run of under 4
# minutes: tests/segment_exact.rs (its seeded sample, then the full matrix under a time limit:
# every adversarial pattern per segment, bit for bit against the host, under every plan, layout
# and type), then the exact/plain ratio per segment shape at 2^24 and 2^28 through
# examples/segment_bench.rs (SEGBENCH_EXACT=1: each plan deterministic, then exact; 256
# results per case checked bit for bit against the host's correctly rounded sum).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/segment_exact.sh        (carry .gpu)
# Env: DEV (NVIDIA), PLANS (auto: the plans the bench runs, SEGBENCH_PLANS), REPS (10).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp}
DEV=${DEV:-NVIDIA}
PLANS=${PLANS:-auto}
REPS=${REPS:-10}
T="scripts/gpu/test_of.sh segment_exact"
keep() { grep -E "^SUMMARY|^FAIL|^SKIP|^SAMPLE|test result|panicked|error" ; }

t0=$SECONDS
echo "== tests: sample"
CLREDUCE_FULL_MATRIX=0 timeout 45 bash $T --test-threads=4 > "$out/segexact-tests-sample.txt" 2>&1; echo "rc=$?"
keep < "$out/segexact-tests-sample.txt"
echo "== tests: full matrix (75 s limit; rc=124 means cut short)"
CLREDUCE_FULL_MATRIX=1 timeout 75 bash $T --test-threads=4 > "$out/segexact-tests-full.txt" 2>&1; echo "rc=$?"
keep < "$out/segexact-tests-full.txt"
echo "== tests took $((SECONDS - t0)) s"
for lg in 24 28; do
  t1=$SECONDS
  echo "== bench 2^$lg, plans $PLANS"
  SEGBENCH_EXACT=1 SEGBENCH_PLANS=$PLANS timeout $([ $lg = 28 ] && echo 85 || echo 30) \
    .gpu/segment_bench "$DEV" $lg "$REPS" 2>&1 | tee "$out/segexact-bench-$lg.txt"
  echo "== bench 2^$lg took $((SECONDS - t1)) s"
done
echo "== total $((SECONDS - t0)) s"

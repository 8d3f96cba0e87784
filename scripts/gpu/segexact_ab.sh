#!/usr/bin/env bash
# Exact sums per segment on the GPU, this build against the kernels of an older one (decision
# 67, lazy limbs), in one run of under 4 minutes: tests/segment_exact.rs (its seeded sample, then
# the full matrix under a time limit), then examples/segment_bench.rs at 2^LG (SEGBENCH_EXACT=1:
# each plan deterministic, then exact, 256 results per case checked bit for bit against the
# host's correctly rounded sum) twice per round: with this build's kernels ("new") and with
# CLREDUCE_KERNELS=$OLD ("old": the kernels/ of the base commit, which the bundle carries in
# .gpu/old-kernels; the codegen is this build's), alternating for ROUNDS rounds.
# Built here with `bash scripts/gpu.sh build` and
#   git archive BASE kernels | tar -x -C .gpu/old-kernels --strip-components=1
# run there with  bash scripts/gpu.sh run cmd bash scripts/gpu/segexact_ab.sh   (carry .gpu)
# Env: DEV (NVIDIA), PLANS (auto), REPS (10), LG (28), ROUNDS (1), TESTS (1: run the tests),
# CASES (the bench's default shapes), TYPE (f32).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp}
DEV=${DEV:-NVIDIA}
PLANS=${PLANS:-auto}
REPS=${REPS:-10}
LG=${LG:-28}
ROUNDS=${ROUNDS:-1}
TESTS=${TESTS:-1}
TYPE=${TYPE:-f32}
OLD=${OLD:-$PWD/.gpu/old-kernels}
T="scripts/gpu/test_of.sh segment_exact"
keep() { grep -E "^SUMMARY|^FAIL|^SKIP|^SAMPLE|test result|panicked|error" ; }

t0=$SECONDS
if [ "$TESTS" = 1 ]; then
  echo "== tests: sample"
  CLREDUCE_FULL_MATRIX=0 timeout 45 bash $T --test-threads=4 > "$out/segexact-tests-sample.txt" 2>&1; echo "rc=$?"
  keep < "$out/segexact-tests-sample.txt" | tail -n 30
  echo "== tests: full matrix (60 s limit; rc=124 means cut short)"
  CLREDUCE_FULL_MATRIX=1 timeout 60 bash $T --test-threads=4 > "$out/segexact-tests-full.txt" 2>&1; echo "rc=$?"
  keep < "$out/segexact-tests-full.txt" | tail -n 30
  echo "== tests took $((SECONDS - t0)) s"
fi
[ -d "$OLD" ] || { echo "no old kernels at $OLD"; exit 1; }
short() { grep -E "^(rows|cols|ragged)" | sed -E 's/ +results [0-9]+//; s/  +/ /g'; }
for r in $(seq "$ROUNDS"); do
  for v in new old; do
    t1=$SECONDS
    echo "== round $r $v 2^$LG $TYPE plans $PLANS"
    if [ $v = old ]; then export CLREDUCE_KERNELS="$OLD"; else unset CLREDUCE_KERNELS; fi
    SEGBENCH_TYPE=$TYPE SEGBENCH_EXACT=1 SEGBENCH_PLANS=$PLANS timeout 100 \
      .gpu/segment_bench "$DEV" "$LG" "$REPS" ${CASES:-} > "$out/segexact-$v-$r.txt" 2>&1
    echo "rc=$? took $((SECONDS - t1)) s"
    short < "$out/segexact-$v-$r.txt"
  done
done
unset CLREDUCE_KERNELS
echo "== total $((SECONDS - t0)) s"

#!/usr/bin/env bash
# Exact sums per segment on the GPU, this build against other kernel variants (decision 67,
# lazy limbs), in one run of under 4 minutes: tests/segment_exact.rs (its seeded sample; FULL=1
# adds the full matrix under a 60 s limit), then examples/segment_bench.rs at 2^LG
# (SEGBENCH_EXACT=1: each plan deterministic, then exact, 256 results per case checked bit for
# bit against the host's correctly rounded sum) once per variant per round, alternating.
# A variant is "new" (the kernels this build embeds) or NAME: CLREDUCE_KERNELS=.gpu/k-NAME (a
# kernels/ folder the bundle carries, for example the base commit's, put there after the build:
#   mkdir -p .gpu/k-old && git archive BASE kernels | tar -x -C .gpu/k-old --strip-components=1
# the codegen is this build's). PTX=1 (default) then writes each variant's segment programs to
# $OUT/progs-NAME (CLREDUCE_PROGRAM_CACHE: the PTX) and prints ptxas's registers, stack and
# spills per program where a ptxas is found (the Python packages' triton ships one).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/segexact_ab.sh   (carry .gpu)
# Env: DEV (NVIDIA), PLANS (auto), REPS (10), LG (28), ROUNDS (1), TESTS (1), FULL (0),
# VARIANTS ("new old"), TESTK (the variant the tests run: new), CASES (the bench's default
# shapes), TYPE (f32), PTX (1).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp}
DEV=${DEV:-NVIDIA}
PLANS=${PLANS:-auto}
REPS=${REPS:-10}
LG=${LG:-28}
ROUNDS=${ROUNDS:-1}
TESTS=${TESTS:-1}
FULL=${FULL:-0}
TYPE=${TYPE:-f32}
VARIANTS=${VARIANTS:-new old}
T="scripts/gpu/test_of.sh segment_exact"
keep() { grep -E "^SUMMARY|^FAIL|^SKIP|^SAMPLE|test result|panicked|error" ; }
kdir() { [ "$1" = new ] || echo "$PWD/.gpu/k-$1"; }

t0=$SECONDS
if [ "$TESTS" = 1 ]; then
  if [ "${TESTK:-new}" = new ]; then unset CLREDUCE_KERNELS; else export CLREDUCE_KERNELS="$(kdir "$TESTK")"; fi
  echo "== tests with the kernels of variant ${TESTK:-new}"
  echo "== tests: sample"
  CLREDUCE_FULL_MATRIX=0 timeout 60 bash $T --test-threads=4 > "$out/segexact-tests-sample.txt" 2>&1; echo "rc=$?"
  keep < "$out/segexact-tests-sample.txt" | tail -n 30
  if [ "$FULL" = 1 ]; then
    echo "== tests: full matrix (60 s limit; rc=124 means cut short)"
    CLREDUCE_FULL_MATRIX=1 timeout 60 bash $T --test-threads=4 > "$out/segexact-tests-full.txt" 2>&1; echo "rc=$?"
    keep < "$out/segexact-tests-full.txt" | tail -n 30
  fi
  echo "== tests took $((SECONDS - t0)) s"
  unset CLREDUCE_KERNELS
fi
for v in $VARIANTS; do
  [ "$v" = new ] || [ -d "$(kdir "$v")" ] || { echo "no kernels for variant $v at $(kdir "$v")"; exit 1; }
done
short() { grep -E "^(rows|cols|ragged)" | grep -v profile | sed -E 's/ +results [0-9]+//; s/  +/ /g; s/ in\+out//'; }
for r in $(seq "$ROUNDS"); do
  for v in $VARIANTS; do
    t1=$SECONDS
    echo "== round $r $v 2^$LG $TYPE plans $PLANS"
    if [ "$v" = new ]; then unset CLREDUCE_KERNELS; else export CLREDUCE_KERNELS="$(kdir "$v")"; fi
    SEGBENCH_TYPE=$TYPE SEGBENCH_EXACT=1 SEGBENCH_PLANS=$PLANS timeout 100 \
      .gpu/segment_bench "$DEV" "$LG" "$REPS" ${CASES:-} > "$out/segexact-$v-$r.txt" 2>&1
    echo "rc=$? took $((SECONDS - t1)) s"
    short < "$out/segexact-$v-$r.txt"
  done
done
if [ "${PTX:-1}" = 1 ]; then
  P=$(command -v ptxas || find / -name ptxas -type f 2>/dev/null | head -n 1)
  echo "== PTX per variant (ptxas: ${P:-none})"
  for v in $VARIANTS; do
    if [ "$v" = new ]; then unset CLREDUCE_KERNELS; else export CLREDUCE_KERNELS="$(kdir "$v")"; fi
    CLREDUCE_PROGRAM_CACHE="$out/progs-$v" SEGBENCH_TYPE=$TYPE SEGBENCH_EXACT=1 SEGBENCH_PLANS=auto \
      timeout 60 .gpu/segment_bench "$DEV" 20 1 rows-2^0x2^20 rows-2^12x2^8 cols-2^12x2^8 rows-2^18x2^2 > /dev/null 2>&1
    for f in "$out/progs-$v"/*; do
      [ -f "$f" ] || continue
      grep -aq "CLR_XST_CARRIED" "$f" || continue
      algo=$(grep -ao "CLR_SEG_ALGO=CLR_SEG_[A-Z]*" "$f" | head -n 1 | sed 's/.*CLR_SEG_//')
      lines=$(sed -n '/^\.version/,$p' "$f" | wc -l)
      echo "-- $v $algo: $lines PTX lines"
      if [ -n "$P" ]; then
        sed -n '/^\.version/,$p' "$f" > /tmp/segx.ptx
        "$P" -arch=sm_90 -v /tmp/segx.ptx -o /tmp/segx.cubin 2>&1 | grep -E "registers|stack|spill" | sed 's/^ptxas info *: *//' | head -n 6
      fi
    done
  done
  unset CLREDUCE_KERNELS
fi
echo "== total $((SECONDS - t0)) s"

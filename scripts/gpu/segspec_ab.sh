#!/usr/bin/env bash
# Exact sums per segment on the GPU, decision 80 (the block pre-sum and the strided loops'
# accumulators) against today's kernels, in one run: tests/segment_exact.rs's sample and
# tests/segment_exact_blocks.rs with this build's kernels, then examples/segment_bench.rs at
# 2^LG (SEGBENCH_EXACT=1: each plan deterministic, then exact, up to 256 results per case checked
# bit for bit against the host's correctly rounded sum) once per variant, in turn. A variant is
# NAME=KERNELS,TUNE,EXTRA: KERNELS "new" (the kernels this build embeds) or a folder .gpu/k-X
# (made after the build: mkdir -p .gpu/k-old && git archive BASE kernels | tar -x -C .gpu/k-old
# --strip-components=1, plus empty files for the plan files the split added, so that the old
# segment.cl's kernels are the only ones); TUNE for CLREDUCE_SEGMENT_TUNE ("-": none); EXTRA
# for CLREDUCE_EXTRA_OPTIONS ("-": none).
# Run there with: bash scripts/gpu.sh run cmd bash scripts/gpu/segspec_ab.sh   (carry .gpu)
# Env: DEV (NVIDIA), REPS (10), LG (28), TESTS (1), TYPES (f32), F64V (the variants also run with
# f64 data), VARIANTS (below), CASES (the bench's default shapes).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp}
DEV=${DEV:-NVIDIA}
REPS=${REPS:-10}
LG=${LG:-28}
TESTS=${TESTS:-1}
VARIANTS=${VARIANTS:-"old=k-old,unroll=1,- blk=new,unroll=1,- unr=new,-,-DCLR_XS_BLK=0 both=new,-,-"}
F64V=${F64V:-"both"}
# Variants are skipped once the run has taken BUDGET seconds (the call's limit less a margin).
BUDGET=${BUDGET:-390}
keep() { grep -E "^SUMMARY|^FAIL|^SKIP|^SAMPLE|test result|panicked|error" ; }
t0=$SECONDS
if [ "$TESTS" = 1 ]; then
  for m in segment_exact segment_exact_blocks; do
    echo "== tests: $m (sample)"
    CLREDUCE_FULL_MATRIX=0 timeout 60 bash scripts/gpu/test_of.sh $m --test-threads=4 > "$out/tests-$m.txt" 2>&1; echo "rc=$?"
    keep < "$out/tests-$m.txt" | tail -n 20
  done
  echo "== tests took $((SECONDS - t0)) s"
fi
short() { grep -E "^(f32-sum|f64-sum|rows|cols|ragged)" | grep -v profile | sed -E 's/ +results [0-9]+//; s/  +/ /g; s/ in\+out//'; }
run_variant() {  # name spec type
  local name=$1 spec=$2 ty=$3
  IFS=, read -r k tune extra <<< "$spec"
  if [ "$k" = new ]; then unset CLREDUCE_KERNELS; else export CLREDUCE_KERNELS="$PWD/.gpu/$k"; fi
  if [ "$tune" = - ]; then unset CLREDUCE_SEGMENT_TUNE; else export CLREDUCE_SEGMENT_TUNE="$tune"; fi
  if [ "$extra" = - ]; then unset CLREDUCE_EXTRA_OPTIONS; else export CLREDUCE_EXTRA_OPTIONS="$extra"; fi
  local t1=$SECONDS
  if [ $((SECONDS - t0)) -gt "$BUDGET" ]; then echo "== $name $ty skipped: $((SECONDS - t0)) s spent"; return; fi
  echo "== $name ($spec) 2^$LG $ty"
  SEGBENCH_TYPE=$ty SEGBENCH_EXACT=1 SEGBENCH_PLANS=auto timeout 110 \
    .gpu/segment_bench "$DEV" "$LG" "$REPS" ${CASES:-} > "$out/segspec-$name-$ty.txt" 2>&1
  echo "rc=$? took $((SECONDS - t1)) s"
  short < "$out/segspec-$name-$ty.txt"
  unset CLREDUCE_KERNELS CLREDUCE_SEGMENT_TUNE CLREDUCE_EXTRA_OPTIONS
}
for v in $VARIANTS; do run_variant "${v%%=*}" "${v#*=}" f32; done
for v in $VARIANTS; do
  n=${v%%=*}
  case " $F64V " in *" $n "*) run_variant "$n" "${v#*=}" f64 ;; esac
done
echo "== total $((SECONDS - t0)) s"

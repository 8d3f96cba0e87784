#!/usr/bin/env bash
# Issue 29 on the H200 (design/decisions.md section 49), one device session, under 5 minutes:
#   1. read paths (CLREDUCE_READ_PATH, src/runtime/readpath.rs): queue.sum(&x) and the general
#      path, call to result, every path interleaved round by round (examples/read_path_ab.rs),
#      between two runs of torch's x.sum().item() (benches/peers/torch_item_latency.py);
#   2. f16/bf16 sums at 2^27 and 2^28 against the f32 sum, per vector width (CLREDUCE_VEC=N,
#      which the library reads; auto is the device's default) and, for f16, per load mode (CLR_F16_LD=1|2|3 through
#      CLREDUCE_EXTRA_OPTIONS: vloada_halfN, a ushortN load + vload_halfN, PTX cvt.f32.f16);
#   3. the f16 tests (tests/half.rs: the vector step at every width, forced) on the GPU.
# Here:  bash scripts/gpu.sh build
# There: bash scripts/gpu.sh run cmd bash scripts/gpu/f16_latency_ab.sh   (carry .gpu)
set -u
GPU="${GPU_DEV:-NVIDIA}"
out="${OUT:-/tmp/out}"; mkdir -p "$out"
B=.gpu/clreduce
REPS="${REPS:-500}"
SIZES="${SIZES:-2^27,2^28}"

echo "== 1. read paths: torch, read_path_ab ($REPS rounds), torch, read_path_ab again"
{
  python3 .gpu/peers/torch_item_latency.py "$REPS"
  .gpu/read_path_ab "$GPU" "$REPS" 1024 1048576
  python3 .gpu/peers/torch_item_latency.py "$REPS"
  .gpu/read_path_ab "$GPU" "$REPS" 1024 1048576
} 2>&1 | tee "$out/read-paths.txt"

echo "== 2. f16/bf16 widths and load modes: bench --strategies auto, device time (median of 20)"
row() { grep -E "^(f32|f16|bf16)-sum +auto|error" | sed "s/^/[$1] /"; }
for vec in auto 1 2 4 8; do
  if [ "$vec" = auto ]; then unset CLREDUCE_VEC; else export CLREDUCE_VEC="$vec"; fi
  cases=f16-sum,bf16-sum; [ "$vec" = auto ] && cases=f32-sum,f16-sum,bf16-sum
  $B bench --device "$GPU" --cases "$cases" --sizes "$SIZES" --strategies auto --no-native 2>&1 | row "vec=$vec"
done 2>&1 | tee "$out/f16-widths.txt"
unset CLREDUCE_VEC
for mode in 2 3; do
  for vec in 2 4 8; do
    CLREDUCE_EXTRA_OPTIONS="-DCLR_F16_LD=$mode" CLREDUCE_VEC="$vec" \
      $B bench --device "$GPU" --cases f16-sum --sizes "$SIZES" --strategies auto --no-native 2>&1 | row "f16-ld=$mode vec=$vec"
  done
done 2>&1 | tee "$out/f16-modes.txt"
# The f32 reference once more at the end (the same session's drift).
$B bench --device "$GPU" --cases f32-sum,f16-sum --sizes "$SIZES" --strategies auto --no-native 2>&1 | row "end" | tee -a "$out/f16-widths.txt"

echo "== 3. the plans and results of the f16 vector step (clreduce reduce checks on the host)"
for vec in 1 2 4 8; do
  CLREDUCE_VEC=$vec $B reduce --type f16 --op sum,argmin --n 1000003 --device "$GPU" 2>&1 | grep -E "geometry|^PASS|^FAIL|error" | sed "s/^/[vec=$vec] /"
done 2>&1 | tee "$out/f16-plans.txt"

echo "== 4. tests/half.rs on the GPU"
bash scripts/gpu/test_of.sh half --test-threads=1 2>&1 | tail -n 25 | tee "$out/test-half.txt"

#!/usr/bin/env bash
# Issue 29 on the H200, run 2 (design/decisions.md section 49): the defaults chosen from run 1.
#   1. read paths across sizes: the NVIDIA default (spin-polled reads into pinned memory, a
#      flush after launches of >= 65536 work-items, no wait) and each part turned off, and the
#      path before session 9, interleaved (examples/read_path_ab.rs), between two runs of
#      torch's x.sum().item() at the same sizes; then examples/shortcut_latency.rs (sum, min,
#      argmax against the general path);
#   2. f32/f16/bf16 sums with the default plans (vector step of 2, CLR_F16_LD=2) at 2^20..2^28;
#   3. tests/half.rs and tests/queues.rs (every read path through the CLI) on the GPU.
# Here:  bash scripts/gpu.sh build
# There: bash scripts/gpu.sh run cmd bash scripts/gpu/f16_latency_ab2.sh   (carry .gpu)
set -u
GPU="${GPU_DEV:-NVIDIA}"
out="${OUT:-/tmp/out}"; mkdir -p "$out"
B=.gpu/clreduce
REPS="${REPS:-500}"
SIZES="1024 16384 65536 262144 1048576 4194304"

echo "== 1. read paths across sizes"
{
  python3 .gpu/peers/torch_item_latency.py "$REPS" $SIZES
  .gpu/read_path_ab "$GPU" "$REPS" $SIZES
  python3 .gpu/peers/torch_item_latency.py "$REPS" $SIZES
  .gpu/shortcut_latency "$GPU" "$REPS"
} 2>&1 | tee "$out/read-paths-2.txt"

echo "== 2. f32/f16/bf16 sums, default plans"
$B bench --device "$GPU" --cases f32-sum,f16-sum,bf16-sum --sizes 2^20,2^24,2^27,2^28 --strategies auto --no-native 2>&1 |
  grep -E "^(f32|f16|bf16)-sum +auto|error" | tee "$out/f16-default.txt"

echo "== 3. tests/half.rs and tests/queues.rs on the GPU"
for t in half queues; do bash scripts/gpu/test_of.sh $t --test-threads=1 2>&1 | grep -E "^test |test result|FAIL|panicked" ; done 2>&1 | tee "$out/tests-2.txt"

#!/usr/bin/env bash
# Issue 29 on the H200, session 10 (design/decisions.md section 56): a scalar result back on the
# host with no read command? Run twice, torch's x.sum().item() between the variants:
#   a. examples/read_path_ab.rs: queue.sum and the general path on the NVIDIA default read path
#      (spin-polled reads into pinned memory, flush after >= 65536 work-items), the path before
#      session 9, and the flush turned off / on for every launch;
#   b. examples/mailbox_probe.rs, one process per mode (a wrong address faults the context):
#      the same sum kernel read back by a blocking read, by the pinned spin-polled read, and
#      through a mailbox in host memory (value, membar.sys, sequence number; the host spins),
#      the mailbox in pinned (ALLOC_HOST_PTR mapped), USE_HOST_PTR and plain heap memory;
# then the plans of the 2^10 and 2^20 sums (one launch each?), examples/shortcut_latency.rs,
# and tests/queues.rs on the GPU.
# Here:  bash scripts/gpu.sh build
# There: bash scripts/gpu.sh run cmd bash scripts/gpu/latency_ab3.sh   (carry .gpu)
set -u
GPU="${GPU_DEV:-NVIDIA}"
out="${OUT:-/tmp/out}"; mkdir -p "$out"
REPS="${REPS:-500}"
SIZES="1024 16384 65536 1048576"
export READ_PATHS="default;wait=1,poll=0,pinned=0,flush=0;flush=0;flush_min=0"

for run in 1 2; do
  echo "== run $run"
  {
    python3 .gpu/peers/torch_item_latency.py "$REPS" $SIZES
    timeout 120 .gpu/read_path_ab "$GPU" "$REPS" $SIZES
    python3 .gpu/peers/torch_item_latency.py "$REPS" $SIZES
    for mode in pinned usehost heap; do
      timeout 60 .gpu/mailbox_probe "$GPU" "$mode" "$REPS" $SIZES || echo "mailbox_probe $mode: exit $?"
    done
    python3 .gpu/peers/torch_item_latency.py "$REPS" $SIZES
  } 2>&1 | tee "$out/latency-ab3-run$run.txt"
done

echo "== plans, shortcuts, tests"
{
  for n in 1024 1048576; do .gpu/clreduce explain --device "$GPU" --n $n --init-identity 2>&1 | grep -E "^plan|geometry:|cross-group step|launch\(es\)"; done
  .gpu/shortcut_latency "$GPU" "$REPS"
  .gpu/test-queues --test-threads=1 2>&1 | grep -E "^test |test result|FAIL|panicked"
} 2>&1 | tee "$out/latency-ab3-rest.txt"

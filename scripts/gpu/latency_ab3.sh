#!/usr/bin/env bash
# Issue 29 on the H200, session 10 (design/decisions.md section 56): a scalar result back on the
# host with no read command.
# PART=probe (run 1): examples/mailbox_probe.rs, one process per mode (a wrong address faults
#   the context): the same sum kernel read back by a blocking read, by the pinned spin-polled
#   read, and through a mailbox in host memory (value, membar.sys, sequence number; the host
#   spins), the mailbox in pinned (ALLOC_HOST_PTR mapped), USE_HOST_PTR and plain heap memory;
#   examples/read_path_ab.rs on the session-9 paths; torch's x.sum().item() between them.
# PART=library (run 2, the default): the library's host mailbox (Workarounds::host_mailbox):
#   examples/read_path_ab.rs with the NVIDIA default (mailbox on), mailbox=0 (session 9's path),
#   the path before session 9, and flush=0; twice, torch's x.sum().item() between them; then
#   examples/shortcut_latency.rs, the plans, and tests/mailbox.rs + tests/queues.rs on the GPU.
# Here:  bash scripts/gpu.sh build
# There: bash scripts/gpu.sh run cmd bash scripts/gpu/latency_ab3.sh   (carry .gpu)
set -u
GPU="${GPU_DEV:-NVIDIA}"
out="${OUT:-/tmp/out}"; mkdir -p "$out"
REPS="${REPS:-500}"
SIZES="1024 16384 65536 1048576"
torch() { python3 .gpu/peers/torch_item_latency.py "$REPS" $SIZES; }

if [ "${PART:-library}" = probe ]; then
  export READ_PATHS="default;wait=1,poll=0,pinned=0,flush=0;flush=0;flush_min=0"
  for run in 1 2; do
    echo "== run $run"
    {
      torch
      timeout 120 .gpu/read_path_ab "$GPU" "$REPS" $SIZES
      torch
      for mode in pinned usehost heap; do
        timeout 60 .gpu/mailbox_probe "$GPU" "$mode" "$REPS" $SIZES || echo "mailbox_probe $mode: exit $?"
      done
      torch
    } 2>&1 | tee "$out/latency-ab3-run$run.txt"
  done
else
  export READ_PATHS="default;mailbox=0;wait=1,poll=0,pinned=0,flush=0,mailbox=0;flush=0"
  for run in 1 2; do
    echo "== run $run"
    {
      torch
      timeout 120 .gpu/read_path_ab "$GPU" "$REPS" $SIZES
      torch
      timeout 60 .gpu/mailbox_probe "$GPU" pinned "$REPS" 1024 1048576 || echo "mailbox_probe pinned: exit $?"
      torch
    } 2>&1 | tee "$out/latency-ab3-lib-run$run.txt"
  done
fi

echo "== plans, shortcuts, tests"
{
  for n in 1024 1048576; do .gpu/clreduce explain --device "$GPU" --n $n --init-identity 2>&1 | grep -E "^plan|geometry:|cross-group step|launch\(es\)"; done
  .gpu/shortcut_latency "$GPU" "$REPS"
  torch
  for t in mailbox queues; do bash scripts/gpu/test_of.sh $t --test-threads=1 --nocapture 2>&1 | grep -E "^test |test result|FAIL|SKIP|SUMMARY|panicked"; done
} 2>&1 | tee "$out/latency-ab3-rest.txt"

#!/usr/bin/env bash
# Session 20 (decision 92): a segmented launch of two passes behind a gate (an OpenCL user event,
# src/runtime/gate.rs) against the backup copies of every result taken before it (CLREDUCE_GATE=0),
# whose copies are now part of the launch's device time. First the tests that cover the gate
# and the fault after the main kernel (device_time::, faults::, segment_check::), then
# `clreduce bench` (device time from profiling events and wall time to the host result, medians,
# every result checked on the host) at 2^28 f32 for the two-pass segmented shapes, the two
# variants alternating, one process each, two rounds.
# Run there with: bash scripts/gpu.sh run cmd bash scripts/gpu/gate_ab.sh   (carry .gpu)
# Env: REPS (10), ROUNDS (2), CASES.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp}
REPS=${REPS:-10}
ROUNDS=${ROUNDS:-2}
CASES=${CASES:-f32-ragged-16,f32-ragged-64,f32-ragged-256,f32-rows-16777216x16,f32-cols-16384x16384}
for m in device_time faults segment_check; do
  timeout 150 bash scripts/gpu/test_of.sh "$m" --test-threads=4 > "$out/t-$m.txt" 2>&1
  echo "== tests $m rc=$?"
  grep -E "test result|panicked|FAIL" "$out/t-$m.txt" | head -n 6
done
for r in $(seq 1 "$ROUNDS"); do
  for g in 1 0; do
    echo "== CLREDUCE_GATE=$g round $r"
    CLREDUCE_GATE=$g .gpu/clreduce bench --device NVIDIA --cases "$CASES" --sizes 2^28 \
      --strategies auto --reps "$REPS" --warmup 2 --no-native 2>&1 |
      grep -E "^f32-[a-z]+-[0-9x]+ |error|panicked|did not match" | tee -a "$out/gate-$g.txt"
  done
done

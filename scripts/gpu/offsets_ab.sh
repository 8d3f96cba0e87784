#!/usr/bin/env bash
# Session 19 (issue 26, decision 89): CSR offsets checked on the device (kernels/segment_check.cl)
# against the host read of every offset before each launch (CLREDUCE_OFFSETS_CHECK=host), on
# the H200: `clreduce bench` of ragged cases (heavy-tailed CSR segments) at 2^24 and 2^28, the
# two paths alternating in rounds, one process each; the device time (profiling queue) and the
# wall time (launch call to the results on the host, default queue) of the automatic plan.
# Lines:  MODE-rROUND | CASE n dev_us wall_us
# Run there with  bash scripts/gpu.sh run cmd bash scripts/gpu/offsets_ab.sh
# Env: DEV (NVIDIA), CASES, SIZES (2^24,2^28), ROUNDS (2), REPS (20).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out="${OUT:-/tmp/out}/offsets_ab.txt"
mkdir -p "$(dirname "$out")"
CASES=${CASES:-f32-ragged-16,f32-ragged-256,f32-ragged-4096}
SIZES=${SIZES:-2^24,2^28}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$out"
for r in $(seq 1 "${ROUNDS:-2}"); do
  modes="host auto"
  [ $((r % 2)) = 0 ] && modes="auto host"
  for m in $modes; do
    CLREDUCE_OFFSETS_CHECK=$m .gpu/clreduce bench --device "${DEV:-NVIDIA}" --cases "$CASES" \
      --sizes "$SIZES" --strategies auto --reps "${REPS:-20}" --no-native 2>&1 |
      awk -v tag="$m-r$r" '$2 == "auto" && $1 ~ /ragged/ {
          # case strategy plan... n input cache... dev_us dev_min..max wall_us GB/s ...
          for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+\.\.[0-9.]+$/) { d = $(i - 1); w = $(i + 1); ck = $NF }
          for (i = 1; i <= NF; i++) if ($i ~ /^2\^/) n = $i
          printf "%s | %s %s dev %s us wall %s us %s\n", tag, $1, n, d, w, ck }
        /panicked|error|mismatch|FAIL/ { print tag " | " $0 }' | tee -a "$out"
  done
done

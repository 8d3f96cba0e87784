#!/usr/bin/env bash
# Session 17: CSR `runs` above mean 1024 with 64 work-items (decision 78's untried point) against
# the rule's 128, forced through CLREDUCE_SEGMENT_TUNE=local=N, alternating for ROUNDS rounds;
# 2^28 f32 heavy-tailed CSR, device time, every result checked by the bench.
# Run there with: bash scripts/gpu.sh run cmd bash scripts/gpu/csr_wi_probe.sh   (carry .gpu)
# Env: ROUNDS (2), MEANS (1024 2048 4096 16384).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS=${ROUNDS:-2}
MEANS=${MEANS:-"1024 2048 4096 16384"}
cases=$(for m in $MEANS; do printf "f32-ragged-%s," "$m"; done)
for r in $(seq 1 "$ROUNDS"); do
  for v in rule local=64 local=256; do
    if [ "$v" = rule ]; then unset CLREDUCE_SEGMENT_TUNE; else export CLREDUCE_SEGMENT_TUNE="$v"; fi
    timeout 120 .gpu/clreduce bench --device NVIDIA --cases "f32-sum,${cases%,}" --sizes 2^28 --reps 20 --strategies auto 2>&1 |
      awk -v v="$v" -v r="$r" '$2 == "auto" || $2 == "plain" {print v, "r" r, "|", $0} /error|panicked|wrong [1-9]/ {print v, "r" r, "!", $0}' |
      sed -E 's/  +/ /g' | cut -c1-200
  done
done
unset CLREDUCE_SEGMENT_TUNE

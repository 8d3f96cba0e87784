#!/usr/bin/env bash
# Session 17 (decision 80): large f64 sum spans on the GPU with limb-major superaccumulators
# (this build, "new") against element-major ones (the kernels of the commit before, "old":
#   mkdir -p .gpu/k-old && git archive BASE kernels | tar -x -C .gpu/k-old --strip-components=1
# after `bash scripts/gpu.sh build`), alternating for ROUNDS rounds, then torch index_add_ once
# (scripts/gpu/f64span_probe.sh's cases and peer). Run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/f64span_ab.sh      (carry .gpu)
# Env: LG (24), ROUNDS (2), CASES (the f64 spans).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
export CASES=${CASES:-f64-hist65536,f64-hist65536-exact,f64-hist1048576,f64-hist1048576-exact}
ROUNDS=${ROUNDS:-2}
for r in $(seq 1 "$ROUNDS"); do
  for v in new old; do
    echo "== round $r, kernels $v"
    if [ "$v" = old ]; then export CLREDUCE_KERNELS="$PWD/.gpu/k-old"; else unset CLREDUCE_KERNELS; fi
    NO_TORCH=1 bash scripts/gpu/f64span_probe.sh
  done
done
unset CLREDUCE_KERNELS
CASES=f64-sum bash scripts/gpu/f64span_probe.sh

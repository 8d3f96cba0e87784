#!/usr/bin/env bash
# Session 19 (issue 28, decision 88), the lead's re-run of x29's last rule: a single f64 exact
# sum from 2^26 on GPUs at unroll 8, 2 work-groups per SM, the bound checked once per block of
# 4 steps (the default now, one round in x29's call 2) against blocks of 2 (steps=2, x29's
# four-run figure) and the old geometry (unroll 4, 4 per SM, blocks of 2), at 2^26 and 2^28,
# three rounds in rotating order. Lines as exact_ab.sh's: VARIANT | CASE n EXACT_us PLAIN_us RATIOx
# (the plain sum of the same process; a forced geometry applies to it too, so compare EXACT_us).
# Run there with  bash scripts/gpu.sh run cmd bash scripts/gpu/x29_ab3.sh
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^26,2^28}
OUT_NAME=x29_ab3.txt
V_CASES="f64-sum,f64-sum-exact"
V_KEEP='panicked|FAIL|mismatch|error'
. scripts/gpu/exact_ab_lib.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | tee -a "$out"
for r in $(seq 1 "${ROUNDS:-3}"); do
  case $((r % 3)) in
  1) order="def s2 old" ;;
  2) order="s2 old def" ;;
  0) order="old def s2" ;;
  esac
  for x in $order; do
    case $x in
    def) v "def-r$r" "" "" ;;
    s2) v "s2-r$r" "steps=2" "" ;;
    old) v "old-r$r" "unroll=4,groups_per_cu=4,steps=2" "" ;;
    esac
  done
done
echo "written: $out"

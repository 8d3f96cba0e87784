#!/usr/bin/env bash
# Session 18 (issue 28, decision 85): the exact single sum's fixed cost on the H200. The last
# work-group's rounding of the limbs by every work-item (-DCLR_XPROUND=3, the kernels' default
# here) against work-item 0's serial walk (0), at 2^20 and 2^24 in alternating rounds, once at
# 2^28 (the loop must not change), f64 only (2) and f32 only (1); the last step skipped
# (CLR_XDIAG 8: wrong results by design) for the floor; then the exact tests on the GPU.
# One `clreduce bench` process per variant, lines as exact_ab.sh's:
#   VARIANT | CASE n EXACT_us PLAIN_us RATIOx
# RATIO: the exact case's median device time over the plain case's of the same process.
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/x28_ab.sh
# Env: DEV (NVIDIA), SIZES (2^20,2^24), ONLY (a grep -E on variant labels), ROUNDS (4), TESTS (1).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24}
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
OUT_NAME=x28_ab.txt
V_CASES="$F2"
V_KEEP='panicked|FAIL|mismatch|error'
. scripts/gpu/exact_ab_lib.sh

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | tee -a "$out"
for r in $(seq 1 "${ROUNDS:-4}"); do
  if [ $((r % 2)) = 1 ]; then
    v "pr3-r$r" "" "-DCLR_XPROUND=3"
    v "pr0-r$r" "" "-DCLR_XPROUND=0"
  else
    v "pr0-r$r" "" "-DCLR_XPROUND=0"
    v "pr3-r$r" "" "-DCLR_XPROUND=3"
  fi
done
v pr3-big "" "-DCLR_XPROUND=3" "$F2" "2^28"
v pr0-big "" "-DCLR_XPROUND=0" "$F2" "2^28"
v pr3-g4 "groups_per_cu=4" "-DCLR_XPROUND=3" "$F2" "2^20"
V_KEEP='panicked'
v diag-nolast "" "-DCLR_XDIAG=8" "$F2"
if [ "${TESTS:-1}" = 1 ] && echo tests | grep -Eq "$ONLY"; then
  t0=$SECONDS
  timeout 150 .gpu/test-suite --test-threads=2 exact_tail:: exact_spec::hot_loop_is_exact 2>&1 |
    grep -E "^SUMMARY|^FAIL|panicked|test result" | sed "s/^/tests | /" | tee -a "$out"
  echo "tests | $((SECONDS - t0)) s" | tee -a "$out"
fi
echo "written: $out"

#!/usr/bin/env bash
# Session 18 (issue 28, decision 85), call 2: the defaults after call 1 (-DCLR_XPROUND=2: the
# work-group rounds f64 results, work-item 0 f32 ones) against the warp merge tried without
# deposits (-DCLR_XMTRY=1, kernels/var_exact_finish.cl clr_xwarp_try) and against work-item 0
# rounding both (-DCLR_XPROUND=0), rotating at 2^20 and 2^24, then 2^28; then the exact tests
# with the defaults and with CLR_XMTRY 1, and twice with mutated kernels (CLREDUCE_KERNELS,
# .gpu/k-mut-*: the try's redo removed; the carry scan skipped), which must fail (call 2 ran
# them without the kernels: the assignment was not a word env saw, fixed since; to run only
# them: ONLY=tests-mut bash scripts/gpu.sh run cmd bash scripts/gpu/x28_ab2.sh, after making
# .gpu/k-mut-mtry and .gpu/k-mut-scan as design/decisions.md 85 says).
# Lines as exact_ab.sh's: VARIANT | CASE n EXACT_us PLAIN_us RATIOx. Run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/x28_ab2.sh
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24}
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
OUT_NAME=x28_ab2.txt
V_CASES="$F2"
V_KEEP='panicked|FAIL|mismatch|error'
. scripts/gpu/exact_ab_lib.sh

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 | tee -a "$out"
for r in 1 2 3 4; do
  case $((r % 3)) in
  1) v "def-r$r" "" ""; v "mtry-r$r" "" "-DCLR_XMTRY=1"; [ $r -le 2 ] && v "pr0-r$r" "" "-DCLR_XPROUND=0" ;;
  2) v "mtry-r$r" "" "-DCLR_XMTRY=1"; [ $r -le 2 ] && v "pr0-r$r" "" "-DCLR_XPROUND=0"; v "def-r$r" "" "" ;;
  0) v "pr0-r$r" "" "-DCLR_XPROUND=0"; v "def-r$r" "" ""; v "mtry-r$r" "" "-DCLR_XMTRY=1" ;;
  esac
done
v def-big "" "" "$F2" "2^28"
v mtry-big "" "-DCLR_XMTRY=1" "$F2" "2^28"
T="exact_tail:: exact_spec::hot_loop_is_exact"
t() {
  local label="$1" opts="$2" kdir="$3" t0=$SECONDS
  echo "$label" | grep -Eq "$ONLY" || return 0
  env CLREDUCE_EXTRA_OPTIONS="$opts" ${kdir:+CLREDUCE_KERNELS=$PWD/$kdir} timeout 100 .gpu/test-suite --test-threads=2 $T 2>&1 |
    grep -E "^SUMMARY.*NVIDIA|test result|^FAIL.*NVIDIA" | sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (options [$opts] kernels [$kdir]) $((SECONDS - t0)) s" | tee -a "$out"
}
if [ "${TESTS:-1}" = 1 ]; then
  t tests-def "" ""
  t tests-mtry "-DCLR_XMTRY=1" ""
  t tests-mut-mtry "-DCLR_XMTRY=1" .gpu/k-mut-mtry
  t tests-mut-scan "" .gpu/k-mut-scan
fi
echo "written: $out"

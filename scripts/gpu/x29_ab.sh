#!/usr/bin/env bash
# Session 19 (issue 28, decision 88), call 1. First the exact tests that decide whether the warp
# merge tried without deposits (-DCLR_XMTRY=1, kernels/var_exact_finish.cl clr_xwarp_try) may
# become the default: with the try and its redo (must pass), and with a COMPLETE kernels copy
# whose redo is removed (.gpu/k-mut-mtry, through CLREDUCE_KERNELS as one word env sees: must
# fail, above all exact_tail::warp_merges_keep_their_residues). Then, rotating in rounds, the
# defaults against CLR_XMTRY=1 at 2^20 and 2^24; f64's loop at 2^24 and 2^28 under CLR_XMTRY=1
# with the unroll and work-groups per SM of CLREDUCE_TUNE (it sets the plain sum's geometry as
# well, so only the exact times of those rows count); f32 2^24's work-groups per SM.
# Make the mutated copy first (after `bash scripts/gpu.sh build`, which empties .gpu/):
#   mkdir -p .gpu/k-mut-mtry && cp kernels/* .gpu/k-mut-mtry/ && sed -i \
#     's/return any ? VAR(clr_xwarp)(v, s, first) : m;/return m;/' .gpu/k-mut-mtry/var_exact_finish.cl
# Lines as exact_ab.sh's: VARIANT | CASE n EXACT_us PLAIN_us RATIOx. Run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/x29_ab.sh
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24}
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
F64="f64-sum,f64-sum-exact"
F32="f32-sum,f32-sum-exact"
OUT_NAME=x29_ab.txt
V_CASES="$F2"
V_KEEP='panicked|FAIL|mismatch|error'
. scripts/gpu/exact_ab_lib.sh
M="-DCLR_XMTRY=1"

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 | tee -a "$out"
grep -c 'return m;' .gpu/k-mut-mtry/var_exact_finish.cl 2>&1 | sed 's/^/mutated redo lines: /' | tee -a "$out"
t() {
  local label="$1" opts="$2" kdir="$3" t0=$SECONDS
  shift 3
  echo "$label" | grep -Eq "$ONLY" || return 0
  env CLREDUCE_EXTRA_OPTIONS="$opts" ${kdir:+CLREDUCE_KERNELS=$PWD/$kdir} timeout 120 .gpu/test-suite --test-threads=2 "$@" 2>&1 |
    grep -E "^SUMMARY.*NVIDIA|test result|^FAIL.*NVIDIA" | head -40 | sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (options [$opts] kernels [$kdir] tests [$*]) $((SECONDS - t0)) s" | tee -a "$out"
}
if [ "${TESTS:-1}" = 1 ]; then
  t tests-mut-mtry "$M" .gpu/k-mut-mtry exact_tail::warp_merges exact_tail::group_rounding exact_tail::lazy_finish exact_spec::hot_loop_is_exact
  t tests-mtry "$M" "" exact_tail:: exact_spec::hot_loop_is_exact
fi
for r in 1 2 3; do
  case $((r % 2)) in
  1) v "def-r$r" "" ""; v "mtry-r$r" "" "$M" ;;
  0) v "mtry-r$r" "" "$M"; v "def-r$r" "" "" ;;
  esac
  for g in 4 6 8; do v "f32-g$g-r$r" "groups_per_cu=$g" "$M" "$F32" "2^24"; done
done
v def-big "" "$M" "$F2" "2^28"
for r in 1 2; do
  for ug in 4:4 8:2 8:3 4:3; do
    v "f64-u${ug%:*}g${ug#*:}-r$r" "unroll=${ug%:*},groups_per_cu=${ug#*:}" "$M" "$F64" "2^24,2^28"
  done
done
echo "written: $out"

#!/usr/bin/env bash
# Session 19 (issue 28, decision 88), call 2, with call 1's outcome built in (CLR_XMTRY 1 by
# default; a single f64 exact sum on a GPU at unroll 8, 2 work-groups per SM from 2^26): the
# defaults against -DCLR_XMTRY=0 at 2^20 and 2^24; the speculative loop's chunk (CLR_SPEC_CHUNK,
# kernels/reduce.cl, default 16 steps between flag checks; the standalone kit ran f64 at 531 us
# with 64 against 554 with 16) for f32 at 2^24 and 2^28; f64 at 2^24, 2^26 and 2^28: the new
# default against the old geometry forced (CLREDUCE_TUNE unroll=4,groups_per_cu=4: it sets the
# plain sum's geometry too, so only that row's exact times count), the try's residue flag by
# bits (-DCLR_XRBITS=1), blocks of 4 steps at unroll 8 and chunks of 64; then the exact tests
# with the new defaults.
# Lines as exact_ab.sh's: VARIANT | CASE n EXACT_us PLAIN_us RATIOx. Run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/x29_ab2.sh
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24}
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
F64="f64-sum,f64-sum-exact"
F32="f32-sum,f32-sum-exact"
OUT_NAME=x29_ab2.txt
V_CASES="$F2"
V_KEEP='panicked|FAIL|mismatch|error'
. scripts/gpu/exact_ab_lib.sh

nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 | tee -a "$out"
for r in 1 2; do
  case $((r % 2)) in
  1) v "def-r$r" "" ""; v "mt0-r$r" "" "-DCLR_XMTRY=0" ;;
  0) v "mt0-r$r" "" "-DCLR_XMTRY=0"; v "def-r$r" "" "" ;;
  esac
  for c in 16 64; do v "f32-c$c-r$r" "" "-DCLR_SPEC_CHUNK=${c}u" "$F32" "2^24"; done
done
v f32-c16-big "" "" "$F32" "2^28"
v f32-c64-big "" "-DCLR_SPEC_CHUNK=64u" "$F32" "2^28"
S3="2^24,2^26,2^28"
for r in 1 2; do
  v "f64-def-r$r" "" "" "$F64" "$S3"
  v "f64-u4g4-r$r" "unroll=4,groups_per_cu=4" "" "$F64" "$S3"
  v "f64-rbits-r$r" "" "-DCLR_XRBITS=1" "$F64" "$S3"
  if [ $r = 1 ]; then v "f64-s4-r$r" "unroll=8,groups_per_cu=2,steps=4" "" "$F64" "$S3"; else v "f64-c64-r$r" "" "-DCLR_SPEC_CHUNK=64u" "$F64" "$S3"; fi
done
t() {
  local label="$1" opts="$2" lim="$3" t0=$SECONDS
  shift 3
  echo "$label" | grep -Eq "$ONLY" || return 0
  env CLREDUCE_EXTRA_OPTIONS="$opts" timeout "$lim" .gpu/test-suite --test-threads=2 "$@" 2>&1 |
    grep -E "^SUMMARY.*NVIDIA|test result|^FAIL.*NVIDIA" | head -40 | sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (options [$opts] tests [$*]) $((SECONDS - t0)) s" | tee -a "$out"
}
if [ "${TESTS:-1}" = 1 ]; then
  t tests-def "" 100 exact_tail:: exact_spec::hot_loop_is_exact exact_spec::hot_loop_steps_are_exact
fi
echo "written: $out"

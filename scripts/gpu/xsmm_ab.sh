#!/usr/bin/env bash
# Session 16 (issue 28, decision 76): exact sum + min + max on the GPU, the several-variable
# launch's hot loop against the single exact sum's, and f64's loop. One `clreduce bench`
# process per variant (programs are built per process; CLREDUCE_PROGRAM_CACHE=off), lines as
# exact_ab.sh's:
#   VARIANT | CASE n EXACT_us PLAIN_us RATIOx
# RATIO: the exact case's median device time (20 launches) over the plain case's of the same
# process. Every variant's CLREDUCE_TUNE applies to the plain launch of its process too, so the
# exact times are compared with the base runs' plain lines. `base` runs first and last (its two
# runs give the spread between processes). Then the register counts of clr_main per variant
# (NVIDIA's build log, -cl-nv-verbose) and the exact tests.
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/xsmm_ab.sh        (carry .gpu)
# Env: DEV (NVIDIA), SIZES (2^20,2^24,2^28), ONLY (a grep -E on variant labels), REGS (1),
# TESTS (1: exact_tail::, exact_spec::, exact::several_variables_in_one_launch and
# exact::masked_fallbacks_are_exact).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24,2^28}
SMM="f32-sum-min-max,f32-sum-min-max-exact"
F64="f64-sum,f64-sum-exact"
OUT_NAME=xsmm_ab.txt
V_CASES="$SMM"
V_KEEP='panicked|MISMATCH|mismatch|wrong'
. scripts/gpu/exact_ab_lib.sh
# The device and driver line.
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1 | tee -a "$out"

# regs LABEL TUNE OPTIONS: clr_main's registers for exact f32 sum + min + max.
regs() {
  local label="$1" tune="$2" opts="$3" r
  echo "$label" | grep -Eq "$ONLY" || return 0
  r=$(CLREDUCE_LOG=debug CLREDUCE_EXTRA_OPTIONS="-cl-nv-verbose $opts" CLREDUCE_TUNE="$tune" timeout 60 \
    "$B" reduce --op sum,min,max --type f32 --determinism exact --n 1048576 --device "$DEV" 2>&1 |
    grep -ioE "(function properties for clr_[a-z_]+|[0-9]+ bytes stack frame|used [0-9]+ registers|^(PASS|FAIL).*)" |
    sed -E 's/function properties for //' | tr '\n' ' ')
  echo "regs $label | $r" | tee -a "$out"
}

# Round 1. The several-variable launch runs the shared hot loop at unroll 4 with 6 work-groups
# per SM (decision 70: its 40 registers leave 6 of 256 resident); min and max keep an
# accumulator per unrolled step. The single exact f32 sum runs unroll 8 at 32 registers, 8 per
# SM (1.03x at 2^28). Variants: the other variables in one accumulator (CLR_SPEC_ONE, the
# generated glue's A/B define: fewer registers) at unroll 4 and 8, 6-8 work-groups per SM.
# f64: the default (steps 2, unroll 4, 4 per SM, chunks of 16 steps) against chunks of 64
# steps (fewer saves and renormalizations per element), and the try's residue flag by an
# integer OR of its bits instead of a double compare (CLR_XRBITS, kernels/var_exact.cl: one
# op less per element on the FP64 pipe).
ONE="-DCLR_SPEC_ONE=1"
# Round 1 (design/bench/2026-11-25-h200-session16-xsmm.txt) ran base, one-g8, one-u8-g8,
# one-u8-g7, one-u8-g6, f64-base, f64-c64, f64-rbits and base2 (the same -D and CLREDUCE_TUNE
# as below): one-u8-g6 took 2^28 in 266.8 us against base's 317.4-318.4 (40 registers, as
# base's; with an accumulator per step unroll 8 took 48); f64 chunks of 64 and the residue's
# bits were within the spread. Since then the planner gives the several-variable launch
# unroll 8, one accumulator for the others and 6 work-groups per SM (Plan::spec_one,
# CLREDUCE_TUNE=one=0|1). Round 2 (ROUND=2, the default): that default (base) against the old
# one (old), then the exact tests on the GPU.
R=${ROUND:-2}
if [ "$R" = 1 ]; then
  v base "" ""
  v one-g8 "groups_per_cu=8" "$ONE"
  v one-u8-g8 "unroll=8,groups_per_cu=8" "$ONE"
  v one-u8-g7 "unroll=8,groups_per_cu=7" "$ONE"
  v one-u8-g6 "unroll=8,groups_per_cu=6" "$ONE"
  v f64-base "" "" "$F64" "2^20,2^24,2^28"
  v f64-c64 "" "-DCLR_SPEC_CHUNK=64u" "$F64" "2^24,2^28"
  v f64-rbits "" "-DCLR_XRBITS=1" "$F64" "2^20,2^24,2^28"
  v base2 "" ""
elif [ "$R" = 2 ]; then
  v base "" ""
  v old "unroll=4,one=0" ""
else
  # Round 3: f64 at 2^20, where the loop is short and the tail most of the cost: the lazy
  # finish (tail=3, decision 74: about 1 us faster there in session 15, within the spread;
  # slower loops from 2^24) against the default Lean, alternating, three processes each.
  for k in 1 2 3; do
    v "f64-lean-$k" "" "" "$F64" "2^20"
    v "f64-lazy-$k" "tail=3" "" "$F64" "2^20"
  done
fi
if [ "${REGS:-1}" = 1 ] && [ "$R" = 1 ]; then
  regs base "" ""
  regs one-g8 "groups_per_cu=8" "$ONE"
  regs one-u8-g8 "unroll=8,groups_per_cu=8" "$ONE"
  regs u8-g8 "unroll=8,groups_per_cu=8" ""
elif [ "${REGS:-1}" = 1 ]; then
  regs base "" ""
fi
if [ "${TESTS:-1}" = 1 ] && echo tests | grep -Eq "$ONLY"; then
  t0=$SECONDS
  timeout 110 .gpu/test-suite --test-threads=4 ${TESTS_NAMES:-exact_tail:: exact_spec:: exact::several exact::masked} 2>&1 |
    grep -E "^SUMMARY|^FAIL|panicked|test result" | sed "s/^/tests | /" | tee -a "$out"
  echo "tests | $((SECONDS - t0)) s" | tee -a "$out"
fi
echo "written: $out"

#!/usr/bin/env bash
# A/B of the exact sum's loops on the GPU (issue 28, decision 57, design/exact.md "The hot
# loop"). Each variant runs `clreduce bench` in its own process (programs are cached per
# process) with its CLREDUCE_TUNE / CLREDUCE_EXTRA_OPTIONS, and prints one line per exact case:
#   VARIANT | CASE n EXACT_us PLAIN_us RATIOx
# with RATIO the exact case's median device time over its plain case's in the same run (the
# bench's table "exact sums against the plain case of the same run"; auto plans; every result
# checked, the exact ones bit for bit: a wrong one is printed as an error line). Then the
# register counts of each loop (NVIDIA's build log, -cl-nv-verbose) and the exact tests with the
# hot loop forced (bits checked against the host).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/exact_ab.sh        (carry .gpu)
# Env: DEV (NVIDIA), SIZES (2^20,2^24,2^28), ONLY (a grep -E on variant labels), REGS (1: the
# register counts), TESTS (1: the exact tests named by TESTS_NAMES, default exact_tail:: exact_spec::hot_loop; session
# 11 ran exact::hot_loop exact::speculative_loop_beside, since session 14 in exact_spec::).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24,2^28}
CASES=${CASES:-f32-sum,f32-sum-exact,f64-sum,f64-sum-exact,f32-sum-min-max,f32-sum-min-max-exact}
OUT_NAME=exact_ab.txt
V_CASES="$CASES"
V_KEEP='error|panicked|MISMATCH|mismatch|wrong'
. scripts/gpu/exact_ab_lib.sh

# Round 1 (design/bench/2026-11-24-h200-session11-exact.txt) ran base, hot, hot-u8, hot-u16,
# lanes, hot-u8-c64 and hot-u8-g4: every CLREDUCE_TUNE variant measured the default plan,
# because the bench ignored CLREDUCE_TUNE (fixed since); the register counts showed f64's
# clr_main at 128 registers (the last group's 71-limb rounding), f32's at 40 (32 with unroll 8),
# the plain sum's at 32. Round 2: the hot loop as the bench now plans it, and a register cap
# (-cl-nv-maxrregcount, NVIDIA's compiler option; it changed no count). Since round 2 the
# default on GPUs is the shared hot loop with unroll 8 for a single exact sum (decision 57), so
# `base` is that, `hot` its unroll-4 form, and `hot=0` the speculative loop before it.
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
SMM="f32-sum-min-max,f32-sum-min-max-exact"
# Session 12 (decision 61, design/exact.md "The tail"): the tail forms, CLREDUCE_TUNE=tail=0|1|2
# (0 private: session 11's; 1 local: the last step's limbs in local memory, a limb per
# work-item, rounded there, and warp 0's merge in as many levels as warps; 2 lean: also no
# normalization per work-group), and exact sum + min + max at unroll 8 (the plain launch at
# unroll 8 too in that process: its ratio compares unroll 8 with unroll 8; the base line gives
# the plain launch at its own unroll).
F64="f64-sum,f64-sum-exact"
# Rounds 1 and 2 are in design/bench/2026-11-25-h200-session12-exact.txt (decision 61: the
# defaults since then are Lean for f32 and f64 up to 2^20, Private for larger f64 sums, so
# `base` now runs Lean for f32). Round 1: tail2 (lean) cut f64 2^20 from
# 27.6 to 18.1 us and kept f32 at 2^24-2^28, but f64's loop at 2^24-2^28 went from 111 / 870 us
# (base) to 108 / 1317 us with 108 registers and no stack (base: 254 registers, 1136 bytes:
# the private rounding's refactor, undone for round 2); exact sum + min + max at unroll 8 was
# slower than at 4 from 2^24 (the plain launch too: 395 against 258 us at 2^28). Round 2: base
# (session 11's private rounding again), the tails, and f64's loop under tail 1 and 2 with
# unroll 4 and chunks of 64.
# Session 13 (decision 64): why f64's loop runs at half speed under the local tails and slower
# than the standalone kit's b_spec_f64d (531 us at 2^28, 4 expansions, chunks of 64, 1056 x
# 256) at any tail; scripts/gpu/exact_sass.sh reads the PTX and SASS of the same variants.
# Round 1: the kit's shape through the planner (unroll 4, the per-element window test hot=0,
# 8 work-groups per SM, chunks of 64), whole blocks per bound check (CLR_SPEC_WHOLE with
# CLR_XBLK steps: more loads per basic block), and a register cap.
W="-DCLR_SPEC_WHOLE=1 -DCLR_XBLK=2"
# Round 1 (design/bench/2026-11-25-h200-session13-xf64.txt) ran base, tail2-f64, tail2-u4-f64,
# kit-tail2-f64 (the kit's shape through the planner: 748 us at 2^28), kit-tail0-f64,
# kit-hot-tail2-f64, whole-u4-tail2-f64 (54.5 us at 2^24, the best), whole-u8-tail2-f64 (573 us
# at 2^28: blocks of 2 steps cured the lean tail's half speed), whole-u8-tail0-f64,
# r80-tail2-f64, whole-f32 and whole-smm (both slower). Since then the planner runs a single
# f64 exact sum in blocks of 2 steps (CLREDUCE_TUNE=steps=1|2|4, kernels/reduce.cl
# CLR_SPEC_WHOLE), at unroll 4, 4 work-groups per SM (one wave: 64 registers leave 4 resident;
# 8 ran as two waves) and the lean tail. Round 2: that default (base), the old one (steps=1,
# unroll 8, the private tail above 2^20), and the new one's parts one at a time.
v base "" ""
v old-f64 "steps=1,unroll=8,groups_per_cu=8" "" "$F64"
v g8-f64 "groups_per_cu=8" "" "$F64"
v u8g2-f64 "unroll=8,groups_per_cu=2" "" "$F64" "2^24,2^28"
v s4-f64 "steps=4" "" "$F64" "2^24"
# Session 14: exact sum + min + max (1.49-1.57x; 40-48 registers against the plain launch's 30,
# the default geometry of a several-variable launch). Work-groups per SM and accumulators per
# work-item; each process runs its plain launch under the same CLREDUCE_TUNE, so compare the
# exact times with base's plain line. Round 1 (design/bench/2026-11-25-h200-session14-smm.txt)
# ran smm-g4, -g6, -g16, -u2, -u8g4, -l512 and -l128: at 2^28 6 work-groups per SM took the exact
# launch from 399 to 321 us (one wave: 40 registers leave 6 of 256 resident), every other
# variant 334-424 us. Since then the planner gives it 6 (plan/exact.rs hot_geometry); round 2:
# base (that default), the old 8 and the neighbours.
# Round 2 ran smm-g8 (395.3 us at 2^28), smm-g5 (341.4) and smm-g7 (433.7) against base's 315.7.
# Round 3: the other variables in one accumulator in the speculative loop (CLR_SPEC_ONE, an A/B
# define in the generated glue: fewer registers), at 6, 7 and 8 work-groups per SM.
v smm-one "" "-DCLR_SPEC_ONE=1" "$SMM"
v smm-one-g7 "groups_per_cu=7" "-DCLR_SPEC_ONE=1" "$SMM"
v smm-one-g8 "groups_per_cu=8" "-DCLR_SPEC_ONE=1" "$SMM"

# The standalone kit's bench (tests/exact_kit/bench.rs) in the same round: plain, b_spec_f64d
# (chunks of 64) and b_blk_f32d, device time, minimum of 9.
if [ "${KIT:-1}" = 1 ] && echo kit | grep -Eq "$ONLY"; then
  for l in ${KIT_LOG2N:-24}; do
    EXACT_KIT_BENCH_GPB=${KIT_GPB:-4} EXACT_KIT_OPTS="-DCHI=64u" EXACT_KIT_BENCH_LOG2N=$l timeout 150 .gpu/test-exact_kit --ignored bench --nocapture 2>&1 |
      grep -E "^BENCH .* random .*(plain|b_spec_f64d|b_blk_f32d|b_try_f64d)" | sed -E 's/^BENCH //; s/; result exact.*/ (exact)/' |
      sed "s/^/kit 2^$l gpb ${KIT_GPB:-4} | /" | tee -a "$out"
  done
fi

# 3. Register counts and stack frames of clr_main per tail (f32, f64, exact sum + min + max).
regs() {
  local label="$1" tune="$2"; shift 2
  local r
  local extra=""
  case "$label" in *"chunk 64"*) extra=" -DCLR_SPEC_CHUNK=64u" ;; *noinline*) extra=" -DCLR_XTAIL_NOINLINE=1" ;; esac
  r=$(CLREDUCE_LOG=debug CLREDUCE_EXTRA_OPTIONS="-cl-nv-verbose$extra" CLREDUCE_TUNE="$tune" timeout 60 \
    "$B" reduce "$@" --n 1048576 --device "$DEV" 2>&1 |
    grep -ioE "(function properties for clr_main|[0-9]+ bytes stack frame|used [0-9]+ registers)" | tr '\n' ' ')
  echo "regs $label [$tune] | $r" | tee -a "$out"
}
if [ "${REGS:-1}" = 1 ] && echo regs | grep -Eq "$ONLY"; then
  regs "exact f64" "" --type f64 --determinism exact
  regs "exact f64" "unroll=8" --type f64 --determinism exact
  regs "exact f64" "steps=4" --type f64 --determinism exact
fi

# 4. The exact tests with the hot loop forced (and the speculative loop), bits checked.
if [ "${TESTS:-1}" = 1 ] && echo tests | grep -Eq "$ONLY"; then
  timeout 150 .gpu/test-suite --test-threads=2 ${TESTS_NAMES:-exact_tail:: exact_spec::hot_loop} 2>&1 |
    grep -E "SUMMARY|FAIL|panicked|test result" | sed "s/^/tests | /" | tee -a "$out"
fi
echo "written: $out"

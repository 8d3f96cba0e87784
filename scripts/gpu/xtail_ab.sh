#!/usr/bin/env bash
# Session 15 (issue 28, decision 74): the exact sum's fixed tail on the GPU at 2^20 and 2^24,
# where it goes and the lazy finish against it. One `clreduce bench` process per variant
# (programs are built per process; CLREDUCE_PROGRAM_CACHE=off), lines as exact_ab.sh's:
#   VARIANT | CASE n EXACT_us PLAIN_us RATIOx
# RATIO: the exact case's median device time over the plain case's of the same process.
# Variants named diag-* compile CLR_XDIAG (kernels/var_exact.cl), a mask of tail parts skipped:
# their exact results are wrong (the bench prints the check), the time says what the parts cost:
# 1 the work-group's merge of expansions, 2 the flush into the work-group's superaccumulator,
# 4 the publication (global atomics), 8 the last work-group's sum and rounding, 16 the
# work-item's fold of its accumulators.
# Built here with `bash scripts/gpu.sh build`; run there with
#   ONLY='REGEX' bash scripts/gpu.sh run cmd bash scripts/gpu/xtail_ab.sh
# Env: DEV (NVIDIA), SIZES (2^20,2^24), ONLY (a grep -E on variant labels), TESTS (1: the exact
# tests exact_tail:: and exact_spec::hot_loop after the variants).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SIZES=${SIZES:-2^20,2^24}
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
SMM="f32-sum-min-max,f32-sum-min-max-exact"
OUT_NAME=xtail_ab.txt
V_CASES="$F2"
V_KEEP='panicked'
. scripts/gpu/exact_ab_lib.sh

# Round 1 (design/bench/2026-11-25-h200-session15-xtail.txt) ran base, diag-nofold (16),
# diag-nomerge (1), diag-noflush (2), diag-nopub (4), diag-nolast (8), diag-nopub-nolast (12),
# diag-noflush-nopub-nolast (14), diag-notail (31), g4, g2, g2-notail and base2 (-DCLR_XDIAG=N
# through CLREDUCE_EXTRA_OPTIONS; g = groups_per_cu) at 2^20 and 2^24: the whole tail was
# 4.9 / 5.0 us (f32 2^20 / 2^24) and 6.5 / 6.9 us (f64), flush + publish + last step 2.2 and
# 3.7 us at 2^20.
# Round 2: the lazy finish (tail=3, the default since decision 74) against Lean (tail=2, the
# default before) at 2^20 and 2^24 twice, exact sum + min + max too, and at 2^28 (Lean's 2^28:
# f64 here, the rest in session 14's records); the fold of untouched
# accumulators kept (CLR_XFOLD_LIVE, default 1) against the merges of zeros (0); fewer
# work-groups at 2^20; then the exact tests on the GPU.
S2="2^20,2^24"
v r2-lazy "" "" "$F2,$SMM" "2^20,2^24,2^28"
v r2-lean "tail=2" "" "$F2,$SMM" "$S2"
v r2-lean-f64 "tail=2" "" "f64-sum,f64-sum-exact" "2^28"
v r2-lazy-fold0 "" "-DCLR_XFOLD_LIVE=0" "f32-sum,f32-sum-exact" "$S2"
v r2-lazy-g4 "groups_per_cu=4" "" "$F2" "2^20"
v r2-lazy-g2 "groups_per_cu=2" "" "$F2" "2^20"
v r2-lean-b "tail=2" "" "$F2,$SMM" "$S2"
v r2-lazy-b "" "" "$F2,$SMM" "$S2"
if [ "${TESTS:-1}" = 1 ] && echo tests | grep -Eq "$ONLY"; then
  t0=$SECONDS
  timeout 70 .gpu/test-suite --test-threads=2 exact_tail::lazy exact_tail::tail_forms_are_exact exact_spec::hot_loop_is_exact 2>&1 |
    grep -E "^SUMMARY|^FAIL|panicked|test result" | sed "s/^/tests | /" | tee -a "$out"
  echo "tests | $((SECONDS - t0)) s" | tee -a "$out"
fi
echo "written: $out"

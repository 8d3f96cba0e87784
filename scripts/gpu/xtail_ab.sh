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
# Env: DEV (NVIDIA), SIZES (2^20,2^24), ONLY (a grep -E on variant labels), REPS (bench reps).
set -u
export CLREDUCE_PROGRAM_CACHE=off
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${CLREDUCE:-.gpu/clreduce}
DEV=${DEV:-NVIDIA}
SIZES=${SIZES:-2^20,2^24}
ONLY=${ONLY:-.}
F2="f32-sum,f32-sum-exact,f64-sum,f64-sum-exact"
SMM="f32-sum-min-max,f32-sum-min-max-exact"
out=${OUT:-/tmp}/xtail_ab.txt
: > "$out"

# v LABEL TUNE OPTIONS [CASES [SIZES]]
v() {
  local label="$1" tune="$2" opts="$3" cases="${4:-$F2}" sizes="${5:-$SIZES}"
  echo "$label" | grep -Eq "$ONLY" || return 0
  local t0=$SECONDS
  CLREDUCE_TUNE="$tune" CLREDUCE_EXTRA_OPTIONS="$opts" timeout 120 "$B" bench --device "$DEV" \
    --cases "$cases" --sizes "$sizes" --strategies auto 2>&1 |
    awk '/exact sums against/ {t = 1; next} t && /-exact / {print; next} /panicked/ {print}' |
    sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (tune [$tune] options [$opts]) $((SECONDS - t0)) s" | tee -a "$out"
}

# Round 1: where the fixed tail goes (the default plans; each diag variant skips parts).
v base "" "" "$F2,$SMM"
v diag-nofold "" "-DCLR_XDIAG=16"
v diag-nomerge "" "-DCLR_XDIAG=1"
v diag-noflush "" "-DCLR_XDIAG=2"
v diag-nopub "" "-DCLR_XDIAG=4"
v diag-nolast "" "-DCLR_XDIAG=8"
v diag-nopub-nolast "" "-DCLR_XDIAG=12"
v diag-noflush-nopub-nolast "" "-DCLR_XDIAG=14"
v diag-notail "" "-DCLR_XDIAG=31" "$F2,$SMM"
# Fewer work-groups (a shorter tail, fewer loads in flight) at 2^20.
v g4 "groups_per_cu=4" "" "$F2" "2^20"
v g2 "groups_per_cu=2" "" "$F2" "2^20"
v g2-notail "groups_per_cu=2" "-DCLR_XDIAG=31" "$F2" "2^20"
v base2 "" "" "$F2"
echo "written: $out"

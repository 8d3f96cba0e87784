#!/usr/bin/env bash
# Session 18, helper csr5 (issue 26, decision 84): heavy-tailed CSR segmented sums on the H200,
# the rules against runs' register scan kernel (kernels/segment_scan.cl:
# CLREDUCE_SEGMENT_TUNE=wscan=1; each warp of 32 its own range, every element combined once in
# registers, the offsets read in order, the runs joined by a shfl.sync segmented scan) and its
# geometry. Call 1 first dumps the SASS of the kernels at mean 16 (scripts/gpu/csr_sass.sh).
# Compact lines (the device tool keeps only the last 12,000 characters):
#   VARIANT rROUND | CASE PLAN TIME_us RATIOx wrong N   (RATIO: over the plain sum of the process)
# then a table of medians over the rounds per variant and case. Every result is checked
# against a float64 host reference (integers exactly): "wrong N" counts the misses.
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/csr5_ab.sh
# Env: DEV (NVIDIA), LG (28), REPS (20), ROUNDS (2), ONLY (grep -E on variant labels),
# STOP_AT (seconds; later variants are skipped past it, 360), CSR5_CALL (1 or 2), SASS (1),
# K_OLD (call 2: the first form's kernels, `git archive ac6b8f8 kernels` into .gpu/k-old).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS=${ROUNDS:-2}
STOP_AT=${STOP_AT:-360}
CALL=${CSR5_CALL:-1}
K_OLD=${K_OLD:-$PWD/.gpu/k-old}
OUT_NAME=csr5_ab.txt
SUM_NAME=csr5_sum.txt
. scripts/gpu/seg_ab_lib.sh

if [ "${SASS:-1}" = 1 ]; then
  bash scripts/gpu/csr_sass.sh 2>&1 | tee -a "$out"
fi
# A first check through the CLI (every result checked on the host): several variables, types
# and odd geometries, so that a kernel that does not build or joins wrongly says so first.
smoke() {
  local t="$1"; shift
  CLREDUCE_SEGMENT=runs CLREDUCE_SEGMENT_TUNE=$t timeout 60 "${CLREDUCE:-.gpu/clreduce}" reduce --device "$DEV" "$@" 2>&1 |
    grep -E "results checked|wrong|rror|panick" | sed -E 's/^ +//; s/checksum [^ ]+ //' | cut -c1-90 |
    paste -sd' ' | sed "s/^/smoke $t $* | /" | tee -a "$out"
}
for t in wscan=1 wscan=1,checks=0 wscan=1,per_item=32; do
  smoke $t --ragged 16 --n 1000003 --op sum,max,argmin
  smoke $t --ragged 3000 --n 1000003 --type i32 --op sum,min
  smoke $t --ragged 200000 --n 3000017 --type f64 --op sum,argmax
done

R5="ragged-16 ragged-64 ragged-256 ragged-1024 ragged-4096"
for round in $(seq 1 "$ROUNDS"); do
  if [ "$CALL" = 1 ]; then
    vs base SEGBENCH_PLANS=auto -- $R5
    vs ws SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1 -- $R5
    vs wsx SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1,checks=0 -- ragged-16 ragged-64 ragged-256 ragged-1024
    vs wsE32 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1,per_item=32 -- ragged-16 ragged-64 ragged-256 ragged-1024
    vs wsE8 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1,per_item=8 -- ragged-16 ragged-64
    vs wsL256 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1,local=256 -- ragged-16 ragged-64 ragged-256
    vs wsL64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1,local=64 -- ragged-16 ragged-64 ragged-256
  fi
  if [ "$CALL" = 2 ]; then
    # The rule after call 1 (the scan kernel's second form: the segments that end in their
    # run stored after the walk by their markers; 64 work-items; the checks below mean 256)
    # against the same rule with call 1's kernel (K_OLD, kernels of ac6b8f8), the rules before
    # (wscan=0), 128 work-items, and the checks the other way.
    vs new SEGBENCH_PLANS=auto -- $R5
    vs v1 SEGBENCH_PLANS=auto CLREDUCE_KERNELS=$K_OLD -- $R5
    vs old SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=0 -- $R5
    vs new128 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=128 -- ragged-16 ragged-256 ragged-1024 ragged-4096
    vs newck1 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=1 -- ragged-256 ragged-1024 ragged-4096
    vs newck0 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0 -- ragged-16 ragged-64
  fi
done
round=1
if [ "$CALL" = 1 ]; then
  # i32 and f64 (2^27, the same bytes): the rules against the scan kernel.
  vs i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256
  vs i32-ws SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1 -- ragged-16 ragged-64 ragged-256
  VLG=$((LG - 1)) vs f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256
  VLG=$((LG - 1)) vs f64-ws SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1 -- ragged-16 ragged-64 ragged-256
fi
if [ "$CALL" = 2 ]; then
  # Past the rule (16384: runs, 65536: its plan) and rows: the scan kernel forced, and the
  # rules before, so that nothing else moved.
  vs far-new SEGBENCH_PLANS=auto -- ragged-16384 ragged-65536 rows-2^24x16
  vs far-old SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=0 -- ragged-16384 ragged-65536 rows-2^24x16
  vs far-ws SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=1 -- ragged-16384 ragged-65536
  vs i32-new SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256
  vs i32-old SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=0 -- ragged-16 ragged-64 ragged-256
  VLG=$((LG - 1)) vs f64-new SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256
  VLG=$((LG - 1)) vs f64-old SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=wscan=0 -- ragged-16 ragged-64 ragged-256
fi
medians
echo "written: $out"

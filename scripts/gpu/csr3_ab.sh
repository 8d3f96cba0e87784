#!/usr/bin/env bash
# Session 16, helper csr3 (issue 26, decision 78): heavy-tailed CSR segmented sums of means 16
# to 1024 on the GPU, the rules against the knobs that were untried or half-tried. Compact
# lines (the device tool keeps only the last 12,000 characters):
#   VARIANT rROUND | CASE PLAN TIME_us RATIOx wrong N   (RATIO: over the plain sum of the process)
# then a table of medians over the rounds per variant and case. Every result is checked
# against a float64 host reference (integers exactly): "wrong N" counts the misses.
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/csr3_ab.sh
# Env: DEV (NVIDIA), LG (28), REPS (20), ROUNDS (2), ONLY (grep -E on variant labels),
# STOP_AT (seconds; later variants are skipped past it, 250).
# Round 1 (CSR3_CALL=1): the variants below interleaved over ROUNDS rounds.
# Round 2 (CSR3_CALL=2, about 110 s: nothing starts past STOP_AT_2=105 s): the automatic plans
# of decision 78 against session 15's rules (forced through CLREDUCE_SEGMENT_TUNE: checks=0,
# local=128, pre as its rule had it), f32 ragged-16/64/256/1024 and the plain sum, f64 once:
#   bash scripts/gpu.sh run cmd bash -c 'CSR3_CALL=2 bash scripts/gpu/csr3_ab.sh'
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS=${ROUNDS:-2}
STOP_AT=${STOP_AT:-250}
[ "${CSR3_CALL:-1}" = 2 ] && STOP_AT=${STOP_AT_2:-105}
CALL=${CSR3_CALL:-1}
OUT_NAME=csr3_ab.txt
SUM_NAME=csr3_sum.txt
. scripts/gpu/seg_ab_lib.sh

R4="ragged-16 ragged-64 ragged-256 ragged-1024"
for round in $(seq 1 "$ROUNDS"); do
  if [ "$CALL" = 1 ]; then
    # The rules (runs; the lean kernel at 16), the start checks on every element (SPLIT=0,
    # both kernels), 64 work-items (one wave: 32 work-groups per SM, the resident limit; with the
    # early loads, and with runs of 32 and the early loads).
    vs base SEGBENCH_PLANS=auto -- $R4
    vs nosplit SEGBENCH_PLANS=auto CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- $R4
    vs l64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=64 -- $R4
    vs l64pre SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=64,pre=1 -- ragged-64 ragged-256 ragged-1024
    vs l64e32pre SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=64,per_item=32,pre=1 -- ragged-256 ragged-1024
    # The lean kernel at 64 with the start checks on every element.
    vs lean64ns SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=1 CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-64
  fi
  if [ "$CALL" = 2 ]; then
    # The rules of decision 78 (auto: the start checks on every load at means 17..255, 64
    # work-items with the early loads at 256..1024) against session 15's (old-a below 1024,
    # old-b at 1024: 128 work-items, no checks, the early loads from 1024), and the checks
    # with the early loads and 64 work-items together (ck64, not measured in call 1).
    vs new SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256 ragged-1024
    vs old-a SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0,local=128,pre=0 -- ragged-64 ragged-256
    vs old-b SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0,local=128,pre=1 -- ragged-1024
    vs ck64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=1 -- ragged-256 ragged-1024
  fi
done
# After the rounds (once each; round 1 prints their geometry):
round=1
if [ "$CALL" = 1 ]; then
  # i32 (the lean kernel at 16) and f64 (2^27, the same bytes) with and without SPLIT=0.
  vs i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  vs i32-nosplit SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64-nosplit SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-16 ragged-256
  # Single data points: a few lanes or a work-group per segment (heavy tails unbalance them).
  vs lanes-group SEGBENCH_PLANS=lanes,group -- ragged-64 ragged-256 ragged-1024
fi
if [ "$CALL" = 2 ]; then
  # f64 (2^27, the same bytes): the new rules against session 15's.
  VLG=$((LG - 1)) v f64-new SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64-old SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0,local=128,pre=0 -- ragged-16 ragged-256
fi

medians
echo "written: $out"

#!/usr/bin/env bash
# Session 13 (issue 26, decision 65): CSR segmented sums on the GPU, where the time goes and
# the candidates. Lines as scripts/gpu/segment_ab.sh's:
#   VARIANT | CASE PLAN TIME us RATIOx plan ... GB/s in+out wrong N
# RATIO: the device time over the plain f32 sum of the same 2^LG elements in the same process.
# Built here with `bash scripts/gpu.sh build`; run there with
#   ONLY='REGEX' bash scripts/gpu.sh run cmd bash scripts/gpu/csr_ab.sh
# Env: DEV (NVIDIA), LG (28), REPS (20), ONLY (a grep -E on variant labels).
# Variants marked "diag" compile A/B-only switches that skip work (results wrong; the time
# says what the skipped part costs): CLR_DIAG_NOFINISH (no second pass), CLR_RUNS_DIAG=1 (runs
# without the joins' folds), =2 (also without the marks).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
OUT_NAME=csr_ab.txt
# The plain sum's own line and the profile lines are left out here.
V_DROP="f32-sum  *plain|profile:"
. scripts/gpu/seg_ab_lib.sh

R6="ragged-16 ragged-256 ragged-1024 ragged-4096 ragged-16384 ragged-65536"
# 1. Where the time goes (round 1).
v c13-base SEGBENCH_PLANS=auto,tiles -- $R6
v c13-nofinish SEGBENCH_PLANS=runs,tiles CLREDUCE_EXTRA_OPTIONS=-DCLR_DIAG_NOFINISH -- ragged-16 ragged-256 ragged-65536
for d in 1 2; do v c13-runsdiag$d SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_DIAG=$d -- ragged-16 ragged-256 ragged-65536; done
regs c13-regs SEGBENCH_PLANS=runs,tiles CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose -- ragged-256
regs c13-regs-scan SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS="-cl-nv-verbose -DCLR_RUNS_SCAN=1" -- ragged-256
regs c13-regs-tvec SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=4 CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose -- ragged-256
# Registers per work-item capped (NVIDIA's -cl-nv-maxrregcount): more work-groups resident.
for r in 32 48 64; do v c13-runs-rr$r SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS=-cl-nv-maxrregcount=$r -- ragged-16 ragged-256; done
for r in 32 40; do v c13-tiles-rr$r SEGBENCH_PLANS=tiles CLREDUCE_EXTRA_OPTIONS=-cl-nv-maxrregcount=$r -- ragged-65536; done
# 2. runs: the heads joined by a segmented scan over the work-group (always, or in tiles with
# a join over more than MIN runs), its work-group size and run length.
v c13-scan1 SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SCAN=1 -- $R6
for m in 4 8 16; do v c13-scan2-m$m SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS="-DCLR_RUNS_SCAN=2 -DCLR_RUNS_SCAN_MIN=$m" -- ragged-16 ragged-256 ragged-1024 ragged-4096; done
v c13-scan1-l256 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=local=256 CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SCAN=1 -- ragged-16 ragged-256 ragged-4096
v c13-scan1-e8 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=per_item=8 CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SCAN=1 -- ragged-16 ragged-256
# 3. tiles with vector loads in the work-group pieces (mean 65536; 16384 and 4096 beside).
v c13-tvec4 SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=4 -- ragged-65536 ragged-16384 ragged-4096
for u in 2 4 16; do v c13-tvec4-u$u SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=4,unroll=$u -- ragged-65536; done
v c13-tvec2 SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=2 -- ragged-65536
for r in 1 4; do v c13-tvec4-r$r SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=4,rounds=$r -- ragged-65536; done
for g in 4 16; do v c13-tvec4-g$g SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=4,groups_per_cu=$g -- ragged-65536; done
v c13-tvec4-l512 SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=vec=4,local=512 -- ragged-65536
v c13-tiles-g16r1 SEGBENCH_PLANS=tiles CLREDUCE_SEGMENT_TUNE=groups_per_cu=16,rounds=1 -- ragged-65536
# 4. Round 2 (ONLY='^c13b'): the rules of decision 65 (runs: the scan from mean 64; tiles:
# vector loads, a finish with one search per tile), the scan's crossover, and runs with a whole
# run's loads issued before the marks (CLR_RUNS_PRE, an A/B define).
v c13b-auto SEGBENCH_PLANS=auto -- ragged-16 ragged-64 $R6
for sc in 0 1; do v c13b-scan$sc SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=scan=$sc -- ragged-32 ragged-64 ragged-128; done
v c13b-tiles SEGBENCH_PLANS=tiles -- ragged-65536 ragged-16384
v c13b-tiles-nofinish SEGBENCH_PLANS=tiles CLREDUCE_EXTRA_OPTIONS=-DCLR_DIAG_NOFINISH -- ragged-65536
v c13b-pre SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_PRE=1 -- ragged-16 ragged-64 ragged-256 ragged-1024 ragged-4096 ragged-16384
for e in 8 32; do v c13b-pre-e$e SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=per_item=$e CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_PRE=1 -- ragged-16 ragged-256; done
for l in 64 256; do v c13b-pre-l$l SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=local=$l CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_PRE=1 -- ragged-16 ragged-256; done
# f64 (2^27, the same bytes) and i32 under the automatic plans, and runs with the early loads.
LG=$((LG - 1)) v c13b-f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-256 ragged-65536
LG=$((LG - 1)) v c13b-f64-pre SEGBENCH_TYPE=f64 SEGBENCH_PLANS=runs CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_PRE=1 -- ragged-16 ragged-256
v c13b-i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-256 ragged-65536
# 5. Round 3 compared CLR_RUNS_CARRY (pieces cut between a work-group's tiles joined in the
# first pass; commit 04ca39e, removed after losing: decision 65).
# 6. Session 15 (issue 26, decision 72; design/bench/2026-11-25-h200-session15-csr.txt). Round 1
# (ONLY='^c15-') and round 2 (ONLY='^c15b') compared A/B kernels since removed or folded in:
# CLR_RUNS_PIPE (two start masks by turns, the joins' bounds from the mask) and CLR_RUNS_PF
# (the next tile's offsets read ahead) lost (decision 72 describes them); the lean kernel
# (CLR_RUNS_LEAN, now SegmentPlan::lean) won at mean 16 in its last form (the running value
# stored before every element, run r's slots at r * 17). diag 3 (no stores from the walk) and 4
# (no starts in the walk) stay. Now (ONLY='^c15c'): the rules (lean at mean 16 and less on
# GPUs, 4-byte accumulators) against lean=0 and lean=1 forced, f64 and i32 beside.
v c15c-auto SEGBENCH_PLANS=runs -- ragged-16 ragged-64 ragged-256
v c15c-lean0 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=0 -- ragged-16
v c15c-lean1 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=1 -- ragged-64 ragged-256
for d in 3 4; do v c15c-diag$d SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=0 CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_DIAG=$d -- ragged-16; done
for l in 0 1; do LG=$((LG - 1)) v c15c-f64-lean$l SEGBENCH_TYPE=f64 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=$l -- ragged-16; done
for l in 0 1; do v c15c-i32-lean$l SEGBENCH_TYPE=i32 SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=$l -- ragged-16; done
echo "written: $out"

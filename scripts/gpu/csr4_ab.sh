#!/usr/bin/env bash
# Session 17, helper csr4 (issue 26, decision 81): heavy-tailed CSR segmented sums of means 16
# to 4096 on the H200, the rules against runs' warp kernel (kernels/segment_warp.cl:
# CLREDUCE_SEGMENT_TUNE=warp=1, each warp of 32 on its own with PTX bar.warp.sync; warp=2 the
# same kernel with work-group barriers) and its geometry. Compact lines (the device tool keeps
# only the last 12,000 characters):
#   VARIANT rROUND | CASE PLAN TIME_us RATIOx wrong N   (RATIO: over the plain sum of the process)
# then a table of medians over the rounds per variant and case. Every result is checked
# against a float64 host reference (integers exactly): "wrong N" counts the misses.
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/csr4_ab.sh
# Env: DEV (NVIDIA), LG (28), REPS (20), ROUNDS (2), ONLY (grep -E on variant labels),
# STOP_AT (seconds; later variants are skipped past it, 380), CSR4_CALL (1 or 2):
#   bash scripts/gpu.sh run cmd bash -c 'CSR4_CALL=2 ROUNDS=3 bash scripts/gpu/csr4_ab.sh'
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS=${ROUNDS:-2}
STOP_AT=${STOP_AT:-380}
CALL=${CSR4_CALL:-1}
OUT_NAME=csr4_ab.txt
SUM_NAME=csr4_sum.txt
. scripts/gpu/seg_ab_lib.sh

# A first check through the CLI (every result checked on the host), so that a kernel that
# does not build says why before the timed runs.
for t in warp=1 warp=2; do
  for m in 16 3000; do
    CLREDUCE_SEGMENT=runs CLREDUCE_SEGMENT_TUNE=$t timeout 60 .gpu/clreduce reduce --device "$DEV" \
      --ragged $m --n 1000003 --init-identity 2>&1 | grep -E "plan|results checked|wrong|rror|panick" | head -4 |
      sed "s/^/smoke $t ragged-$m | /"
  done
done

R5="ragged-16 ragged-64 ragged-256 ragged-1024 ragged-4096"
for round in $(seq 1 "$ROUNDS"); do
  if [ "$CALL" = 1 ]; then
    # The rules against the warp kernel (warps of 32, 128 work-items, runs of 16), the same
    # kernel with work-group barriers (w2: what the warps' own barriers give), with the start
    # checks on every load, runs of 32, one wave (4 work-groups per compute unit) and 256 or 64
    # work-items.
    vs base SEGBENCH_PLANS=auto -- $R5
    vs w1 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1 -- $R5
    vs w2 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=2 -- ragged-16 ragged-64 ragged-256
    vs w1ck SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,checks=1 -- ragged-16 ragged-64 ragged-256
    vs w1e32 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,per_item=32 -- ragged-16 ragged-64 ragged-256 ragged-1024
    vs w1g4 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,groups_per_cu=4 -- ragged-16 ragged-64 ragged-256
    vs w1l256 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,local=256 -- ragged-16 ragged-64 ragged-256
    vs w1l64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,local=64 -- ragged-16 ragged-64
  fi
  if [ "$CALL" = 2 ]; then
    # The rule after call 1 (the warp kernel with the start checks at means up to 64) against
    # the rules before it (warp=0), and the warp kernel's untried neighbours: the work-group's
    # barriers with the checks, the early loads (with and without the checks), 256 work-items.
    vs new SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256
    vs old SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=0 -- ragged-16 ragged-64 ragged-256
    vs w2ck SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=2,checks=1 -- ragged-16 ragged-64
    vs w1ckpre SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,checks=1,pre=1 -- ragged-16 ragged-64
    vs w1pre SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,pre=1 -- ragged-16 ragged-64
    vs w1ck256 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1,checks=1,local=256 -- ragged-16 ragged-64
  fi
done
# After the rounds (once each; round 1 prints their geometry):
round=1
if [ "$CALL" = 1 ]; then
  # i32 and f64 (2^27, the same bytes): the rules against the warp kernel.
  vs i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  vs i32-w1 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1 -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64-w1 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=1 -- ragged-16 ragged-256
fi
if [ "$CALL" = 2 ]; then
  vs i32-new SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-64
  vs i32-old SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=0 -- ragged-16 ragged-64
  VLG=$((LG - 1)) v f64-new SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-64
  VLG=$((LG - 1)) v f64-old SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=warp=0 -- ragged-16 ragged-64
fi

# Registers and spills of clr_main (ptxas -v, sm_90) of runs at mean 16: the lean kernel
# (warp=0), the warp kernel with the checks (the rule) and with the work-group's barriers.
. scripts/gpu/ptx_lib.sh
PTXAS=$(tool ptxas)
regs() {
  local d=/tmp/csr4_regs/$1 f
  rm -rf "$d"; mkdir -p "$d"
  CLREDUCE_PROGRAM_CACHE="$d" CLREDUCE_SEGMENT=runs CLREDUCE_SEGMENT_TUNE="$2" timeout 60 \
    .gpu/clreduce reduce --device "$DEV" --ragged 16 --n 1000003 --init-identity > /dev/null 2>&1
  for f in "$d"/*.bin; do
    [ -f "$f" ] || continue
    cache_ptx "$f" "$f.ptx"
    grep -q "clr_main" "$f.ptx" || continue
    ptxas_sm90 "$PTXAS" "$f.ptx" "$f.cubin" "$f.txt" > /dev/null
    grep -A4 "entry function 'clr_main'" "$f.txt" | grep -Eo "Used [0-9]+ registers|[0-9]+ bytes spill (stores|loads)" |
      paste -sd' ' | sed "s/^/regs $1 ($2) | /"
  done
}
if [ -n "$PTXAS" ] && [ "$SECONDS" -lt "$STOP_AT" ]; then
  regs lean warp=0
  regs warp-ck warp=1,checks=1
  regs warp2-ck warp=2,checks=1
  regs warp-ck-pre warp=1,checks=1,pre=1
else
  echo "regs: no ptxas (${PTXAS:-none}) or past STOP_AT"
fi

medians
echo "written: $out"

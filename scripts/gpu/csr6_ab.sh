#!/usr/bin/env bash
# Session 18, helper csr6 (issue 26, decision 86): runs' register scan kernel (kernels/
# segment_scan.cl, the rule on NVIDIA up to mean 4096) with the next sub-tile's offsets loaded
# before this one's walk (the A/B define CLR_WS_PRE through CLREDUCE_EXTRA_OPTIONS: 1 the next
# batch of CLR_WS offsets, 2 the two next batches) against the current kernel (CLR_WS_PRE 0),
# alternated in 2 rounds at means 16 / 64 / 256 (f32 2^28), and mean 16 f64 (2^27) and i32.
# Call 1 ran it at 8ae51ba (default 0; design/bench/2026-11-25-h200-session18-csr6.txt). Since
# decision 86 the kernel's default is 1 and form 2 is gone: base passes -DCLR_WS_PRE=0 and the
# two-batch variant is left out (-DCLR_WS_PRE=2 now builds form 1).
# Compact lines (the device tool keeps only the last 12,000 characters):
#   VARIANT rROUND | CASE PLAN TIME_us RATIOx wrong N   (RATIO: over the plain sum of the process)
# then a table of medians over the rounds per variant and case. Every result is checked
# against a float64 host reference (integers exactly): "wrong N" counts the misses. At most 4
# files under $OUT (csr6_ab.txt, csr6_sum.txt).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/csr6_ab.sh
# Env: DEV (NVIDIA), LG (28), REPS (20), ROUNDS (2), ONLY (grep -E on variant labels),
# STOP_AT (seconds; later variants are skipped past it, 200), SUITE (1: then
# .gpu/test-suite segment_scan:: with the kernel's default and with CLR_WS_PRE=0).
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS=${ROUNDS:-2}
STOP_AT=${STOP_AT:-200}
OUT_NAME=csr6_ab.txt
SUM_NAME=csr6_sum.txt
. scripts/gpu/seg_ab_lib.sh
P0=CLREDUCE_EXTRA_OPTIONS=-DCLR_WS_PRE=0
P1=CLREDUCE_EXTRA_OPTIONS=-DCLR_WS_PRE=1

# Registers and spills of each form at mean 16 (f32; the build log of -cl-nv-verbose).
for p in 0 1; do
  regs "regs-pre$p" CLREDUCE_EXTRA_OPTIONS="-cl-nv-verbose -DCLR_WS_PRE=$p" -- ragged-16
done
# A first check through the CLI (every result checked on the host): several variables, types
# and odd geometries, so that a kernel that does not build or joins wrongly says so first.
smoke() {
  local p="$1"; shift
  CLREDUCE_EXTRA_OPTIONS=-DCLR_WS_PRE=$p CLREDUCE_SEGMENT=runs timeout 60 "${CLREDUCE:-.gpu/clreduce}" reduce --device "$DEV" "$@" 2>&1 |
    grep -E "results checked|wrong|rror|panick" | sed -E 's/^ +//; s/checksum [^ ]+ //' | cut -c1-90 |
    paste -sd' ' | sed "s/^/smoke pre$p $* | /" | tee -a "$out"
}
for p in 0 1; do
  smoke $p --ragged 16 --n 1000003 --op sum,max,argmin
  smoke $p --ragged 40 --n 3000017 --type i32 --op sum,min
  smoke $p --ragged 3000 --n 3000017 --type f64 --op sum,argmax
done

F3="ragged-16 ragged-64 ragged-256"
for round in $(seq 1 "$ROUNDS"); do
  vs base SEGBENCH_PLANS=auto $P0 -- $F3
  vs pre1 SEGBENCH_PLANS=auto $P1 -- $F3
  VLG=$((LG - 1)) vs f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto $P0 -- ragged-16
  VLG=$((LG - 1)) vs f64-pre1 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto $P1 -- ragged-16
  vs i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto $P0 -- ragged-16
  vs i32-pre1 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto $P1 -- ragged-16
done
medians
if [ "${SUITE:-1}" = 1 ]; then
  echo "== test-suite segment_scan:: (the kernel's default)"
  timeout 60 .gpu/test-suite segment_scan:: 2>&1 | grep -E "test result|FAILED|panicked|fail " | head -8
  echo "== test-suite segment_scan:: (CLR_WS_PRE=0)"
  CLREDUCE_EXTRA_OPTIONS=-DCLR_WS_PRE=0 timeout 60 .gpu/test-suite segment_scan:: 2>&1 |
    grep -E "test result|FAILED|panicked|fail " | head -8
fi
echo "written: $out"

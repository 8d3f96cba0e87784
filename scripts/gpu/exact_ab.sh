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
# register counts), TESTS (1: .gpu/test-exact hot_loop speculative_loop_beside).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${CLREDUCE:-.gpu/clreduce}
DEV=${DEV:-NVIDIA}
SIZES=${SIZES:-2^20,2^24,2^28}
ONLY=${ONLY:-.}
CASES=${CASES:-f32-sum,f32-sum-exact,f64-sum,f64-sum-exact,f32-sum-min-max,f32-sum-min-max-exact}
out=${OUT:-/tmp}/exact_ab.txt
: > "$out"

# v LABEL TUNE OPTIONS
v() {
  local label="$1" tune="$2" opts="$3"
  echo "$label" | grep -Eq "$ONLY" || return 0
  local t0=$SECONDS
  CLREDUCE_TUNE="$tune" CLREDUCE_EXTRA_OPTIONS="$opts" timeout 120 "$B" bench --device "$DEV" \
    --cases "$CASES" --sizes "$SIZES" --strategies auto 2>&1 |
    awk '/exact sums against/ {t = 1; next} t && /-exact / {print; next} /error|panicked|MISMATCH|mismatch|wrong/ {print}' |
    sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (tune [$tune] options [$opts]) $((SECONDS - t0)) s" | tee -a "$out"
}

# 1. Today's loop (the speculative loop, f32 blocks of one unrolled step; its best switch
# -DCLR_XBLK=2 measured 1.58x at 2^28 in session 8).
v base "" ""
# 2. The hot loop (hot=1: range checks once per chunk, f32 blocks into one expansion): its
# unroll (the block's size and the loads in flight), chunk length and work-groups per SM; the
# lanes form (hot=2: a block of 8 steps per accumulator, each into its own expansion).
v hot "hot=1" ""
v hot-u8 "hot=1,unroll=8" ""
v hot-u16 "hot=1,unroll=16" ""
v lanes "hot=2" ""
v hot-u8-c64 "hot=1,unroll=8" "-DCLR_SPEC_CHUNK=64u"
v hot-u8-g4 "hot=1,unroll=8,groups_per_cu=4" ""

# The same with the rounding out of clr_main (its cross-group step forced to the extra pass:
# clr_finish rounds), to see whether the last group's rounding code costs the loop registers:
# the bench's own lines (case, strategy, n, median us), auto and forced, for every case.
x() {
  local label="$1" tune="$2"
  echo "$label" | grep -Eq "$ONLY" || return 0
  local t0=$SECONDS
  CLREDUCE_TUNE="$tune" timeout 150 "$B" bench --device "$DEV" --cases "$CASES" --sizes "$SIZES" \
    --strategies auto,sg-reduce+extra-pass 2>&1 |
    awk '($2 == "auto" || $2 ~ /extra-pass/) && $1 ~ /-sum/ {
      n = ""; t = ""
      for (i = 2; i <= NF; i++) { if ($i ~ /^2\^[0-9]+$/ && n == "") n = $i; if ($i ~ /^[0-9.]+\.\.[0-9.]+$/ && t == "") t = $(i - 1) }
      if (n != "" && t != "") print $1, ($2 == "auto" ? "auto " $3 : $2), n, t, "us" }' |
    sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (tune [$tune] strategies auto,sg-reduce+extra-pass) $((SECONDS - t0)) s" | tee -a "$out"
}
x xpass-hot-u8 "hot=1,unroll=8"

# 3. Register counts and stack frames of each loop's clr_main (f32, f64, sum+min+max).
if [ "${REGS:-1}" = 1 ] && echo regs | grep -Eq "$ONLY"; then
  for t in "" "hot=1" "hot=1,unroll=8" "hot=2"; do
    for c in "--type f32" "--type f64"; do
      r=$(CLREDUCE_LOG=debug CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose CLREDUCE_TUNE="$t" timeout 60 \
        "$B" reduce $c --determinism exact --n 1048576 --device "$DEV" 2>&1 |
        grep -ioE "(function properties for clr_main|[0-9]+ bytes stack frame|used [0-9]+ registers)" | tr '\n' ' ')
      echo "regs [$t] [$c] | $r" | tee -a "$out"
    done
  done
  r=$(CLREDUCE_LOG=debug CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose timeout 60 "$B" reduce --type f32 \
    --n 1048576 --device "$DEV" 2>&1 | grep -ioE "(function properties for clr_main|[0-9]+ bytes stack frame|used [0-9]+ registers)" | tr '\n' ' ')
  echo "regs plain f32 sum | $r" | tee -a "$out"
fi

# 4. The exact tests with the hot loop forced (and the speculative loop), bits checked.
if [ "${TESTS:-1}" = 1 ] && echo tests | grep -Eq "$ONLY" && [ -x .gpu/test-exact ]; then
  timeout 120 .gpu/test-exact --test-threads=2 hot_loop speculative_loop_beside 2>&1 |
    grep -E "SUMMARY|FAIL|panicked|test result" | sed "s/^/tests | /" | tee -a "$out"
fi
echo "written: $out"

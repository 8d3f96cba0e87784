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
export CLREDUCE_PROGRAM_CACHE=off
B=${SEGBENCH:-.gpu/segment_bench}
DEV=${DEV:-NVIDIA}
LG=${LG:-28}
REPS=${REPS:-20}
ROUNDS=${ROUNDS:-2}
ONLY=${ONLY:-.}
STOP_AT=${STOP_AT:-250}
[ "${CSR3_CALL:-1}" = 2 ] && STOP_AT=${STOP_AT_2:-105}
CALL=${CSR3_CALL:-1}
out=${OUT:-/tmp}/csr3_ab.txt
: > "$out"
sum=${OUT:-/tmp}/csr3_sum.txt
: > "$sum"

# v LABEL [ENV=VALUE ...] -- CASE...: one bench process; its timed lines, compacted.
v() {
  local label="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "$label" | grep -Eq "$ONLY" || return 0
  if [ "$SECONDS" -ge "$STOP_AT" ]; then echo "$label r$round | skipped (${SECONDS} s)"; return 0; fi
  local t0=$SECONDS
  env "${envs[@]}" timeout 60 "$B" "$DEV" "${VLG:-$LG}" "$REPS" "$@" 2>&1 | tee -a "$out" |
    awk -v l="$label r$round" -v r="$round" -v first="$([ -s "$sum" ] && echo 0 || echo 1)" '
      /^device:/ && first { print "# " $0 }
      / us / && !/profile:/ {
        w = "?"; for (i = 1; i <= NF; i++) if ($i == "wrong") w = $(i + 1)
        p = ""; if (r == 1 && match($0, /plan [a-z]+ \([^)]*\)/)) p = " " substr($0, RSTART + 5, RLENGTH - 5)
        printf "%s | %s %s %s %s wrong %s%s\n", l, $1, $2, $3, $5, w, p
      }
      /error|panicked/ { print l " | " $0 }' | tee -a "$sum"
  echo "$label r$round | $((SECONDS - t0)) s"
}

R4="ragged-16 ragged-64 ragged-256 ragged-1024"
for round in $(seq 1 "$ROUNDS"); do
  if [ "$CALL" = 1 ]; then
    # The rules (runs; the lean kernel at 16), the start checks on every element (SPLIT=0,
    # both kernels), 64 work-items (one wave: 32 work-groups per SM, the resident limit; with the
    # early loads, and with runs of 32 and the early loads).
    v base SEGBENCH_PLANS=auto -- $R4
    v nosplit SEGBENCH_PLANS=auto CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- $R4
    v l64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=64 -- $R4
    v l64pre SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=64,pre=1 -- ragged-64 ragged-256 ragged-1024
    v l64e32pre SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=local=64,per_item=32,pre=1 -- ragged-256 ragged-1024
    # The lean kernel at 64 with the start checks on every element.
    v lean64ns SEGBENCH_PLANS=runs CLREDUCE_SEGMENT_TUNE=lean=1 CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-64
  fi
  if [ "$CALL" = 2 ]; then
    # The rules of decision 78 (auto: the start checks on every load at means 17..255, 64
    # work-items with the early loads at 256..1024) against session 15's (old-a below 1024,
    # old-b at 1024: 128 work-items, no checks, the early loads from 1024), and the checks
    # with the early loads and 64 work-items together (ck64, not measured in call 1).
    v new SEGBENCH_PLANS=auto -- ragged-16 ragged-64 ragged-256 ragged-1024
    v old-a SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0,local=128,pre=0 -- ragged-64 ragged-256
    v old-b SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0,local=128,pre=1 -- ragged-1024
    v ck64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=1 -- ragged-256 ragged-1024
  fi
done
# After the rounds (once each; round 1 prints their geometry):
round=1
if [ "$CALL" = 1 ]; then
  # i32 (the lean kernel at 16) and f64 (2^27, the same bytes) with and without SPLIT=0.
  v i32 SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  v i32-nosplit SEGBENCH_TYPE=i32 SEGBENCH_PLANS=auto CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64 SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64-nosplit SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_EXTRA_OPTIONS=-DCLR_RUNS_SPLIT=0 -- ragged-16 ragged-256
  # Single data points: a few lanes or a work-group per segment (heavy tails unbalance them).
  v lanes-group SEGBENCH_PLANS=lanes,group -- ragged-64 ragged-256 ragged-1024
fi
if [ "$CALL" = 2 ]; then
  # f64 (2^27, the same bytes): the new rules against session 15's.
  VLG=$((LG - 1)) v f64-new SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto -- ragged-16 ragged-256
  VLG=$((LG - 1)) v f64-old SEGBENCH_TYPE=f64 SEGBENCH_PLANS=auto CLREDUCE_SEGMENT_TUNE=checks=0,local=128,pre=0 -- ragged-16 ragged-256
fi

# Medians over the rounds per variant and case (time in us, ratio to the plain sum).
echo "# medians: variant case plan us ratio (rounds)"
awk -F' [|] ' '
  NF == 2 && $2 ~ / wrong / {
    split($1, a, " "); split($2, b, " ")
    k = a[1] " " b[1] " " b[2]; t[k] = t[k] " " b[3]; r[k] = r[k] " " b[4]; n[k]++
  }
  function med(s,   x, m, i, j, y) {
    m = split(s, x, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] + 0 < x[i] + 0) { y = x[i]; x[i] = x[j]; x[j] = y }
    return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
  }
  END { for (k in t) printf "%s %.1f %.2fx (%d)\n", k, med(t[k]), med(r[k]), n[k] }' \
  < "$sum" | sort
echo "written: $out"

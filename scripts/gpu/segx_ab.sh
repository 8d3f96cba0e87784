#!/usr/bin/env bash
# Exact sums per segment: the speculative loop in `group` and `lanes` (decision 90) against the
# push loop, in one run. First the exact per-segment suite modules (tests/segment_exact.rs's
# sample, segment_exact_blocks.rs, segment_exact_spec.rs) with this build, then
# examples/segment_bench.rs (SEGBENCH_EXACT=1, auto plans: each plan deterministic, then exact,
# up to 256 results per case checked bit for bit against the host's correctly rounded sum) once
# per variant and round, the variants alternating, one process each, medians at the end.
# A variant is NAME=TUNE,EXTRA: TUNE for CLREDUCE_SEGMENT_TUNE, EXTRA for
# CLREDUCE_EXTRA_OPTIONS ("-": none; "+" stands for a space inside EXTRA).
# Run there with: bash scripts/gpu.sh run cmd bash scripts/gpu/segx_ab.sh   (carry .gpu)
# Env: DEV (NVIDIA), REPS (10), LG (28), ROUNDS (3), TESTS (1), VARIANTS, F64V (variants also
# run with f64 data, ROUNDS64 rounds), CASES, BUDGET (seconds after which nothing new starts).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
out=${OUT:-/tmp}
DEV=${DEV:-NVIDIA}
REPS=${REPS:-10}
LG=${LG:-28}
ROUNDS=${ROUNDS:-3}
ROUNDS64=${ROUNDS64:-2}
TESTS=${TESTS:-1}
VARIANTS=${VARIANTS:-"push=xspec=0,- spec=xspec=1,- s4=xspec=1,-DCLR_SEGX_STEP=4 c4=xspec=1,-DCLR_SEGX_CHUNK=4"}
F64V=${F64V:-"push spec"}
CASES=${CASES:-"rows-2^14x2^14 rows-2^20x256 rows-1x2^28"}
BUDGET=${BUDGET:-400}
keep() { grep -E "^SUMMARY|^FAIL|^SKIP|^SAMPLE|test result|panicked|error" ; }
t0=$SECONDS
if [ "$TESTS" = 1 ]; then
  for m in segment_exact segment_exact_blocks segment_exact_spec; do
    echo "== tests: $m (sample)"
    CLREDUCE_FULL_MATRIX=0 timeout 70 bash scripts/gpu/test_of.sh $m --test-threads=4 > "$out/tests-$m.txt" 2>&1; echo "rc=$?"
    keep < "$out/tests-$m.txt" | tail -n 20
  done
  echo "== tests took $((SECONDS - t0)) s"
fi
sum="$out/segx-sum.txt"
: > "$sum"
run_variant() {  # name spec type round
  local name=$1 spec=$2 ty=$3 round=$4
  local tune=${spec%%,*} extra=${spec#*,}
  if [ $((SECONDS - t0)) -gt "$BUDGET" ]; then echo "== $name $ty r$round skipped: $((SECONDS - t0)) s spent"; return; fi
  if [ "$tune" = - ]; then unset CLREDUCE_SEGMENT_TUNE; else export CLREDUCE_SEGMENT_TUNE="$tune"; fi
  if [ "$extra" = - ]; then unset CLREDUCE_EXTRA_OPTIONS; else export CLREDUCE_EXTRA_OPTIONS="${extra//+/ }"; fi
  local t1=$SECONDS f="$out/segx-$name-$ty-r$round.txt"
  # shellcheck disable=SC2086
  SEGBENCH_TYPE=$ty SEGBENCH_EXACT=1 SEGBENCH_PLANS=auto timeout 90 \
    .gpu/segment_bench "$DEV" "$LG" "$REPS" $CASES > "$f" 2>&1
  echo "== $name ($spec) $ty r$round rc=$? $((SECONDS - t1)) s"
  grep -E "error|panicked" "$f" | head -n 3
  # name type case plan kind us ratio-to-det bits-off
  awk -v n="$name" -v t="$ty" '
    / us / && !/profile:/ {
      k = ($0 ~ / exact, /) ? "exact" : "det"; off = "-"; det = "-"; p = $2
      for (i = 1; i <= NF; i++) {
        if ($i == "bits-off" || $i == "wrong") off = $(i + 1)
        if ($i == "same" && k == "exact") det = $(i - 2)
        if ($i == "plan") p = $(i + 1)
      }
      print n, t, $1, p, k, $3, det, off
    }' "$f" | tee -a "$sum"
  unset CLREDUCE_SEGMENT_TUNE CLREDUCE_EXTRA_OPTIONS
}
for r in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do run_variant "${v%%=*}" "${v#*=}" f32 "$r"; done
done
for r in $(seq 1 "$ROUNDS64"); do
  for v in $VARIANTS; do
    n=${v%%=*}
    case " $F64V " in *" $n "*) run_variant "$n" "${v#*=}" f64 "$r" ;; esac
  done
done
echo "== medians: variant type case plan kind us (rounds) ratio-to-det bits-off(max)"
awk '{
    k = $1 " " $2 " " $3 " " $4 " " $5; t[k] = t[k] " " $6; n[k]++; d[k] = d[k] " " $7
    o = ($8 == "-") ? 0 : $8 + 0; if (o > off[k]) off[k] = o
  }
  function med(s,   x, m, i, j, y) {
    m = split(s, x, " ")
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (x[j] + 0 < x[i] + 0) { y = x[i]; x[i] = x[j]; x[j] = y }
    return m % 2 ? x[(m + 1) / 2] : (x[m / 2] + x[m / 2 + 1]) / 2
  }
  END { for (k in t) printf "%s %.1f (%d) %s %d\n", k, med(t[k]), n[k], med(d[k]), off[k] }' "$sum" | sort -k3,3 -k2,2 -k5,5 -k1,1
echo "== total $((SECONDS - t0)) s"

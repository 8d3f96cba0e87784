#!/usr/bin/env bash
# A/B of span reductions (histograms) on the GPU (issue 26, decision 59). Prints one line per
# (case, variant):
#   span | CASE VARIANT PLAN  DEV us  x plain  check
# with "x plain" the median device time over the plain sum of the same input bytes (u32-sum for
# u32-histN, f32-sum for f32-histN) at the same n in the same process, then the peers of the
# same run (torch.bincount / torch.histc / cupy.bincount for u32-histN; torch index_add_ and
# its deterministic form for f32-histN) with the same ratio. Every clreduce result is checked
# against the host (counts exactly; f32 sums within the bound, exact sums bit for bit).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/span_ab.sh        (carry .gpu)
# Env: DEV (NVIDIA), LG (28: n = 2^LG), REPS (10), ONLY (a grep -E on variant labels; round 2
# of session 11 ran ONLY='counts2|weighted2').
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${CLREDUCE:-.gpu/clreduce}
DEV=${DEV:-NVIDIA}
LG=${LG:-28}
REPS=${REPS:-10}
ONLY=${ONLY:-.}
out=${OUT:-/tmp}
peers=$(ls -d .gpu/peers benches/peers 2>/dev/null | head -n 1)
# The GPU's L2 (NVIDIA's OpenCL under-reports it) for the bench's cache rule, as gpu.sh does.
llc=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).L2_cache_size)' 2>/dev/null || true)

# v LABEL LG [ENV=VALUE ...] -- BENCH ARGS...: one bench run, its JSON summarized.
v() {
  local label="$1" lg="$2"; shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "$label" | grep -Eq "$ONLY" || return 0
  local t0=$SECONDS json="$out/span-$label.json"
  env "${envs[@]}" timeout 300 "$B" bench --device "$DEV" --sizes "2^$lg" --reps "$REPS" \
    --strategies auto ${llc:+--llc $llc} --json "$json" "$@" > "$out/span-$label.log" 2>&1 ||
    { echo "span | $label: bench failed:"; grep -E "error|panicked" "$out/span-$label.log" | head -n 5; }
  python3 - "$json" "$label" <<'PY'
import json, sys
path, label = sys.argv[1], sys.argv[2]
try:
    d = json.load(open(path))
except Exception as e:  # noqa: BLE001
    print(f"span | {label}: no JSON ({e})"); sys.exit(0)
pts = d.get("points", [])
plain = {(p["case"], p["n"]): p["device_ns"]["median"] for p in pts if p["case"].endswith("-sum")}
def base(case, n):
    ty = case.split("-")[0]
    return plain.get((f"{ty}-sum", n))
for p in pts:
    b = base(p["case"], p["n"])
    us = p["device_ns"]["median"] / 1e3
    x = f"{p['device_ns']['median'] / b:6.2f}x" if b else "     -"
    print(f"span | {p['case']:<24} {label:<12} {p['plan']:<44} {us:10.1f} us {x} plain  {p['check'][:60]}")
for q in d.get("peers", []):
    b = base(q.get("case") or "f32-sum", q["n"])
    x = f"{q['device_time_us'] * 1e3 / b:6.2f}x" if b else "     -"
    print(f"span | {q.get('case') or '?':<24} {q['lib'] + ' ' + (q.get('op') or ''):<57} {q['device_time_us']:10.1f} us {x} plain")
PY
  echo "span | $label (${envs[*]}) $((SECONDS - t0)) s"
}

U_SMALL="u32-hist16,u32-hist256,u32-hist4096,u32-hist8192"
U_LARGE="u32-hist16384,u32-hist65536,u32-hist1048576,u32-hist16777216"
# 1. Counts: every bin count, auto plans, with the peers (torch.bincount, histc, cupy.bincount).
v counts "$LG" -- --cases "u32-sum,$U_SMALL,$U_LARGE" --peers
# 2. Weighted f32 histograms (deterministic auto plan) and the exact span, with torch index_add_.
v weighted "$LG" -- --cases "f32-sum,f32-hist256,f32-hist1048576-exact" --peers
# 3. Round 1's only: the old deterministic large f32 span (global-private, which shrinks the
#    launch to fit its scratch) at 2^20, to show its cost; since decision 59 no plan takes it.
v gprivate 20 -- --cases "f32-sum,f32-hist65536"
# 4. Decision 59 (round 2): integer spans beyond local memory on copies (global-copies) against
#    round 1's global-atomic figures, and the deterministic f32 spans on exact digits
#    (global-digits) against torch index_add_ (float atomics) and its deterministic form.
v counts2 "$LG" -- --cases "u32-sum,u32-hist8192,u32-hist16384,u32-hist65536,u32-hist262144,u32-hist1048576"
v weighted2 "$LG" -- --cases "f32-sum,f32-hist4096,f32-hist65536,f32-hist1048576,f32-hist16777216,f32-hist1048576-exact" --peers
echo "span | done"

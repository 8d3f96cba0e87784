#!/usr/bin/env bash
# What NVIDIA's compiler makes of the exact sum's loops (issue 28, design/exact.md "The hot
# loop"): the PTX of the library's programs (through the program cache on disk, decision 63:
# a cache file is a text header, a line `binary LEN SUM`, then NVIDIA's binary, PTX text) and of
# the standalone kit's bench program (tests/exact_kit.rs EXACT_KIT_BINARY), then, where the
# machine has ptxas (CUDA, or Triton's copy), their SASS for sm_90 with the register counts,
# spills and, per loop, the global loads, local-memory traffic and double additions
# (scripts/gpu/exact_sass.py). Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/exact_sass.sh        (carry .gpu)
# Env: VARIANTS (a grep -E on the labels below), KIT (1: the kit's program too).
# The files land in $OUT itself (the device tool brings back no nested folders): sass-LABEL.ptx,
# .sass, .ptxas.txt; the summary goes to stdout.
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${CLREDUCE:-.gpu/clreduce}
O=/tmp/exact_sass
mkdir -p "$O"
R=${OUT:-/tmp}
ONLY=${VARIANTS:-.}

. scripts/gpu/ptx_lib.sh
PTXAS=$(tool ptxas find)
CUOBJ=$(tool cuobjdump find)
NVDIS=$(tool nvdisasm find)
echo "tools: ptxas [${PTXAS}] cuobjdump [${CUOBJ}] nvdisasm [${NVDIS}]"
[ -n "$PTXAS" ] && "$PTXAS" --version 2>&1 | tail -1

# sass DIR NAME: NAME.ptx in DIR to NAME.cubin (ptxas -v into NAME.ptxas.txt) and NAME.sass,
# then the summaries. A PTX ISA newer than this ptxas knows is retried with older .version lines.
sass() {
  local d="$1" n="$2" v ok=0
  python3 scripts/gpu/exact_sass.py "$d/$n.ptx" clr_main | head -n 4
  [ -n "$PTXAS" ] || return 0
  cp "$d/$n.ptx" "$d/$n.v.ptx"
  v=$(ptxas_sm90 "$PTXAS" "$d/$n.v.ptx" "$d/$n.cubin" "$d/$n.ptxas.txt") && ok=1
  if [ $ok = 0 ]; then echo "ptxas failed: $(head -c 300 "$d/$n.ptxas.txt")"; return 0; fi
  [ -n "$v" ] && echo "(ptxas with .version $v)"
  grep -E "Compiling entry|registers|spill|stack" "$d/$n.ptxas.txt" | tr -s ' ' | paste -sd' ' | head -c 900; echo
  if [ -n "$CUOBJ" ]; then "$CUOBJ" -sass "$d/$n.cubin" > "$d/$n.sass" 2>&1
  elif [ -n "$NVDIS" ]; then "$NVDIS" "$d/$n.cubin" > "$d/$n.sass" 2>&1; fi
  [ -s "$d/$n.sass" ] && python3 scripts/gpu/exact_sass.py "$d/$n.sass" clr_main | head -n 6
}

# lib LABEL TUNE OPTIONS ARGS...: one `clreduce reduce` with its own program cache folder.
lib() {
  local label="$1" tune="$2" opts="$3"; shift 3
  echo "$label" | grep -Eq "$ONLY" || return 0
  local d="$O/$label" f k=0
  rm -rf "$d"; mkdir -p "$d"
  CLREDUCE_PROGRAM_CACHE="$d" CLREDUCE_TUNE="$tune" CLREDUCE_EXTRA_OPTIONS="$opts" timeout 60 \
    "$B" reduce "$@" --device NVIDIA 2>&1 | grep -E "plan|error|mismatch|exact|us" | head -n 4
  for f in "$d"/*.bin; do
    [ -f "$f" ] || continue
    cache_ptx "$f" "$d/p$k.ptx"
    if grep -q "clr_main" "$d/p$k.ptx"; then
      echo "== $label [tune $tune] [options $opts] $* : $(wc -c < "$d/p$k.ptx") bytes of PTX"
      sass "$d" "p$k"
      for x in ptx sass ptxas.txt; do [ -f "$d/p$k.$x" ] && cp "$d/p$k.$x" "$R/sass-$label.$x"; done
    fi
    k=$((k + 1))
  done
}

N24=16777216
# Round 2: the old default (a bound check per step, unroll 8) under the private and the lean
# tail (575 against 1315 us at 2^28), the new default (blocks of 2 steps, unroll 4, lean), and
# the old loop with blocks of 2 steps under the lean tail at unroll 8 (573 us).
lib f64-old-tail0 "steps=1,unroll=8,tail=0" "" --type f64 --determinism exact --n $N24
lib f64-old-tail2 "steps=1,unroll=8,tail=2" "" --type f64 --determinism exact --n $N24
lib f64-new "" "" --type f64 --determinism exact --n $N24
lib f64-u8-steps2 "unroll=8,tail=2" "" --type f64 --determinism exact --n $N24

if [ "${KIT:-1}" = 1 ] && echo kit | grep -Eq "$ONLY"; then
  d="$O/kit"; mkdir -p "$d"
  for chi in ${KIT_CHI:-64}; do
    EXACT_KIT_BINARY="$d/kit$chi.bin" EXACT_KIT_OPTS="-DCHI=${chi}u" EXACT_KIT_BENCH_LOG2N=20 \
      timeout 90 .gpu/test-exact_kit --ignored bench --nocapture > "$d/bench$chi.txt" 2>&1
    [ -f "$d/kit$chi.bin" ] && tr -d '\000' < "$d/kit$chi.bin" > "$d/kit$chi.ptx"
    if [ -s "$d/kit$chi.ptx" ]; then
      echo "== kit CHI $chi: $(wc -c < "$d/kit$chi.ptx") bytes of PTX"
      python3 scripts/gpu/exact_sass.py "$d/kit$chi.ptx" b_spec_f64d | head -n 6
      python3 scripts/gpu/exact_sass.py "$d/kit$chi.ptx" b_plain_f64 | head -n 3
      if [ -n "$PTXAS" ]; then
        sass "$d" "kit$chi" > /dev/null
        grep -A2 -E "Compiling entry.*b_(spec_f64d|plain_f64|blk_f32d)" "$d/kit$chi.ptxas.txt" | grep -E "entry|registers|spill" | tr -s ' ' | paste -sd' ' | head -c 900; echo
        [ -s "$d/kit$chi.sass" ] && python3 scripts/gpu/exact_sass.py "$d/kit$chi.sass" b_spec_f64d | head -n 8
        for x in sass ptxas.txt; do [ -f "$d/kit$chi.$x" ] && cp "$d/kit$chi.$x" "$R/sass-kit$chi.$x"; done
      fi
    else
      echo "kit CHI $chi: no binary; $(tail -n 3 "$d/bench$chi.txt")"
    fi
  done
fi
echo "written: $R/sass-*"

#!/usr/bin/env bash
# What NVIDIA's compiler makes of the `runs` kernels at mean length 16 (issue 26, decision 84):
# each variant's program through the program cache on disk (decision 63; the PTX after the
# `binary LEN SUM` line), then Triton's (or CUDA's) ptxas for sm_90 (registers, spills) and its
# SASS, summarized per loop by scripts/gpu/csr_sass.py (instructions per element of a run).
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/csr_sass.sh
# Env: DEV (NVIDIA), MEAN (16), VARIANTS (a grep -Ex on the labels: whole labels). Files: $OUT/csr-sass-LABEL.*
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
DEV=${DEV:-NVIDIA}
MEAN=${MEAN:-16}
ONLY=${VARIANTS:-.*}
R=${OUT:-/tmp}
O=/tmp/csr_sass
. scripts/gpu/ptx_lib.sh
PTXAS=$(tool ptxas)
CUOBJ=$(tool cuobjdump)
[ -n "$CUOBJ" ] || CUOBJ=$(tool nvdisasm)
echo "tools: ptxas [${PTXAS}] disassembler [${CUOBJ}]"

# one LABEL TUNE E: the runs plan at MEAN with CLREDUCE_SEGMENT_TUNE=TUNE (E: its run length).
one() {
  local label="$1" tune="$2" e="$3" d f
  echo "$label" | grep -Exq "$ONLY" || return 0
  d="$O/$label"; rm -rf "$d"; mkdir -p "$d"
  CLREDUCE_PROGRAM_CACHE="$d" CLREDUCE_SEGMENT=runs CLREDUCE_SEGMENT_TUNE="$tune" timeout 60 \
    "${CLREDUCE:-.gpu/clreduce}" reduce --device "$DEV" --ragged "$MEAN" --n 1000003 --init-identity 2>&1 |
    grep -E "results checked|wrong|rror" | head -2 | sed "s/^/$label | /"
  for f in "$d"/*.bin; do
    [ -f "$f" ] || continue
    cache_ptx "$f" "$f.ptx"
    grep -q "clr_main" "$f.ptx" || continue
    [ -n "$PTXAS" ] || { echo "$label | no ptxas"; return 0; }
    ptxas_sm90 "$PTXAS" "$f.ptx" "$f.cubin" "$f.txt" > /dev/null
    grep -A4 "entry function 'clr_main'" "$f.txt" | grep -Eo "Used [0-9]+ registers|[0-9]+ bytes spill (stores|loads)|[0-9]+ bytes smem" |
      paste -sd' ' | sed "s/^/$label ($tune) | /"
    case "$CUOBJ" in
      *cuobjdump) "$CUOBJ" -sass "$f.cubin" > "$f.sass" 2>&1 ;;
      ?*) "$CUOBJ" "$f.cubin" > "$f.sass" 2>&1 ;;
    esac
    [ -s "$f.sass" ] && python3 scripts/gpu/csr_sass.py "$f.sass" "$e" clr_main | sed "s/^/$label | /"
    cp "$f.ptx" "$R/csr-sass-$label.ptx"; [ -s "$f.sass" ] && cp "$f.sass" "$R/csr-sass-$label.sass"
  done
}

one lean warp=0,wscan=0 16
one warp warp=1,checks=1,wscan=0 16
one wscan wscan=1,checks=1 16
one wscan-split wscan=1,checks=0 16

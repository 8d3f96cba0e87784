# Sourced by the GPU scripts that read what NVIDIA's OpenCL compiler made of a program
# (exact_sass.sh, csr_sass.sh, csr4_ab.sh), from the repository root:
#   tool NAME [find]          the path of a CUDA tool (PATH, /usr/local/cuda*/bin, Triton's copy;
#                             with `find`, a search of / last), or nothing
#   cache_ptx BIN PTX         the PTX text of a program-cache file (decision 63: a text header, a
#                             line `binary LEN SUM`, then NVIDIA's binary: the PTX and a
#                             terminating NUL, which ptxas stops at: "Unexpected EOF")
#   ptxas_sm90 PTXAS PTX CUBIN LOG
#                             ptxas -arch=sm_90 -O3 -v, retried with older .version lines where
#                             the PTX ISA is newer than this ptxas knows (PTX edited in place);
#                             prints the .version it took (nothing: the PTX's own); status 1 when
#                             every try failed

tool() {
  local t
  t=$(command -v "$1" 2>/dev/null) && { echo "$t"; return; }
  for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do [ -x "$d/$1" ] && { echo "$d/$1"; return; }; done
  t=$(python3 -c "import triton,os;print(os.path.join(os.path.dirname(triton.__file__),'backends/nvidia/bin/$1'))" 2>/dev/null)
  [ -n "$t" ] && [ -x "$t" ] && { echo "$t"; return; }
  [ "${2:-}" = find ] && find / -xdev -name "$1" -type f -perm -u+x 2>/dev/null | head -1
  return 0
}

cache_ptx() {
  awk 'p {print} /^binary [0-9]+ [0-9a-f]+$/ {p = 1}' "$1" | tr -d '\000' > "$2"
}

ptxas_sm90() {
  local v
  for v in "" 8.8 8.7 8.5 8.4 8.0; do
    [ -n "$v" ] && sed -i -E "s/^\.version [0-9.]+/.version $v/" "$2"
    if "$1" -arch=sm_90 -O3 -v "$2" -o "$3" > "$4" 2>&1; then echo "$v"; return 0; fi
  done
  return 1
}

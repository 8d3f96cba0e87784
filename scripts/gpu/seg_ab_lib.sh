# Sourced by scripts/gpu/segment_ab.sh and csr_ab.sh (the segmented A/B scripts): the settings
# from the environment and the two line makers. Set OUT_NAME before sourcing; optional
# V_DROP, a grep -E of bench lines to leave out (default none).
# Env: DEV (NVIDIA), LG (28), REPS (20), ONLY (a grep -E on variant labels, to run a subset),
# SEGBENCH (the bench binary, .gpu/segment_bench).
set -u
# Register counts come from build logs, which a program loaded from the program cache on disk
# does not print (decision 63): every build here compiles from source.
export CLREDUCE_PROGRAM_CACHE=off
B=${SEGBENCH:-.gpu/segment_bench}
DEV=${DEV:-NVIDIA}
LG=${LG:-28}
REPS=${REPS:-20}
ONLY=${ONLY:-.}
out=${OUT:-/tmp}/$OUT_NAME
: > "$out"

# v LABEL [ENV=VALUE ...] -- CASE...: one bench process, its timed lines prefixed by LABEL.
v() {
  local label="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "$label" | grep -Eq "$ONLY" || return 0
  local t0=$SECONDS
  env "${envs[@]}" timeout 150 "$B" "$DEV" "$LG" "$REPS" "$@" 2>&1 |
    grep -E " us |error|panicked|profile:" | { if [ -n "${V_DROP:-}" ]; then grep -Ev "$V_DROP"; else cat; fi; } |
    sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (${envs[*]}) $((SECONDS - t0)) s" | tee -a "$out"
}

# regs LABEL [ENV=VALUE ...] -- CASE...: register counts and spills of the programs built
# (NVIDIA's build log at debug level; pass CLREDUCE_EXTRA_OPTIONS=-cl-nv-verbose).
regs() {
  local label="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "$label" | grep -Eq "$ONLY" || return 0
  env "${envs[@]}" CLREDUCE_LOG=debug timeout 60 "$B" "$DEV" 20 2 "$@" 2>&1 |
    grep -ioE "(function properties for clr_[a-z]+|[0-9]+ bytes stack frame[^\\]*|used [0-9]+ registers[^\\]*)" |
    sed "s/^/$label | /" | tee -a "$out"
}

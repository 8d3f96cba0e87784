# Sourced by scripts/gpu/exact_ab.sh, xtail_ab.sh and xsmm_ab.sh (the exact-sum A/B scripts),
# from the repository root: the settings from the environment and the line maker `v`. Set
# before sourcing OUT_NAME (the record under $OUT), V_CASES (v's default cases) and V_KEEP (an
# awk regex of the bench's other lines to keep: errors and failed checks, or only panics where
# a variant's results are wrong by design).
# Env: DEV (NVIDIA), ONLY (a grep -E on variant labels), CLREDUCE (the CLI, .gpu/clreduce).
set -u
# Register counts come from build logs, which a program loaded from the program cache on disk
# does not print (decision 63): every build here compiles from source.
export CLREDUCE_PROGRAM_CACHE=off
B=${CLREDUCE:-.gpu/clreduce}
DEV=${DEV:-NVIDIA}
ONLY=${ONLY:-.}
out=${OUT:-/tmp}/$OUT_NAME
: > "$out"

# v LABEL TUNE OPTIONS [CASES [SIZES]]: one `clreduce bench` process with CLREDUCE_TUNE and
# CLREDUCE_EXTRA_OPTIONS, the rows of its table "exact sums against the plain case of the same
# run" (VARIANT | CASE n EXACT_us PLAIN_us RATIOx) and the lines V_KEEP matches.
v() {
  local label="$1" tune="$2" opts="$3" cases="${4:-$V_CASES}" sizes="${5:-$SIZES}"
  echo "$label" | grep -Eq "$ONLY" || return 0
  local t0=$SECONDS
  CLREDUCE_TUNE="$tune" CLREDUCE_EXTRA_OPTIONS="$opts" timeout 120 "$B" bench --device "$DEV" \
    --cases "$cases" --sizes "$sizes" --strategies auto 2>&1 |
    awk -v keep="$V_KEEP" '/exact sums against/ {t = 1; next} t && /-exact / {print; next} $0 ~ keep {print}' |
    sed "s/^/$label | /" | tee -a "$out"
  echo "$label | (tune [$tune] options [$opts]) $((SECONDS - t0)) s" | tee -a "$out"
}

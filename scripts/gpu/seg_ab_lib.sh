# Sourced by scripts/gpu/segment_ab.sh, csr_ab.sh, csr3_ab.sh and csr4_ab.sh (the segmented A/B
# scripts): the settings from the environment and the line makers. Set OUT_NAME before
# sourcing; optional V_DROP, a grep -E of bench lines to leave out (default none), and
# SUM_NAME, the file of `vs`'s compact lines that `medians` reads.
# Env: DEV (NVIDIA), LG (28), REPS (20), ONLY (a grep -E on variant labels, to run a subset),
# SEGBENCH (the bench binary, .gpu/segment_bench), STOP_AT (seconds: `vs` starts nothing past
# it; default no limit), VLG (`vs`'s size, default LG).
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
if [ -n "${SUM_NAME:-}" ]; then
  sum=${OUT:-/tmp}/$SUM_NAME
  : > "$sum"
fi

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

# vs LABEL [ENV=VALUE ...] -- CASE...: one bench process of round $round (the caller's loop
# variable), its whole output to $out and its timed lines, compacted, to $sum and stdout:
#   LABEL rROUND | CASE PLAN TIME_us RATIOx wrong N [the plan's geometry, round 1]
vs() {
  local label="$1"; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  echo "$label" | grep -Eq "$ONLY" || return 0
  if [ "$SECONDS" -ge "${STOP_AT:-999999}" ]; then echo "$label r$round | skipped (${SECONDS} s)"; return 0; fi
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

# medians: the median time and ratio over the rounds per variant and case of $sum's lines.
medians() {
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
}

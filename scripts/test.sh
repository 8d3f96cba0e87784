#!/usr/bin/env bash
# The test suite, on every OpenCL device found (PoCL, Intel CPU runtime, Oclgrind here).
# Installs the devices first when they are missing (scripts/setup.sh is idempotent).
#
# Without arguments: builds every test target (`cargo test --release --no-run`), then runs the
# jobs CLREDUCE_TEST_JOBS at a time (default 2), the slowest first, and the doc tests last. A
# job is a test binary, or a group of the modules of tests/suite.rs (most test files are
# modules of that one binary, decision 60), run as one process with those tests' exact names
# (scripts/suite_jobs.py). PoCL builds one program at a time per process, so one process
# building its kernels leaves the second core idle; two at once use both (decision 52).
# memory.rs fills device memory and runs alone. Each job's output is printed whole when it
# ends, with its time; the exit status is 1 if any job or the doc tests failed, and the failed
# ones are named at the end. The large matrices take a seeded sample (tests/common/sample.rs);
# CLREDUCE_FULL_MATRIX=1 runs all of them.
#
# With arguments: `cargo test --release ARGS` (one binary, a filter, --doc, ...).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
source scripts/env.sh
if [ $# -gt 0 ]; then
  exec cargo test --release "$@"
fi
jobs="${CLREDUCE_TEST_JOBS:-2}"
# The jobs that took longest here (decision 52), started first so the two lanes end together.
slow="suite:matrix suite:segment suite:exact suite:segment_plans ui multi_segments suite:segment_exact suite:race exact_kit reliability"
# The binaries that must run alone (memory.rs fills device memory, host memory on CPU devices).
alone="memory"

cargo test --release --no-run
# name<TAB>executable<TAB>package folder of every test binary (the library's and the CLI's unit
# tests included; the macro crate has none, its ui test is a test target).
bins="$(cargo test --release --no-run --message-format=json 2>/dev/null |
  python3 -c 'import sys, json
for l in sys.stdin:
    try: m = json.loads(l)
    except Exception: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m.get("profile", {}).get("test"):
        t = m["target"]
        kind = t["kind"][0]
        name = t["name"] if kind == "test" else kind + ":" + t["name"]
        print(name + "\t" + m["executable"] + "\t" + m["manifest_path"].rsplit("/", 1)[0])')"
[ -n "$bins" ] || { echo "scripts/test.sh: cargo listed no test binary" >&2; exit 1; }
# name<TAB>executable<TAB>package folder<TAB>arguments of every job: the suite binary becomes one job per group of
# its modules (`--exact` and the group's test names), every other binary one job.
list=""
while IFS=$'\t' read -r name exe dir; do
  if [ "$name" = suite ]; then
    jobs_of_suite="$(python3 scripts/suite_jobs.py "$exe")"
    while IFS=$'\t' read -r label names; do
      list+="$label"$'\t'"$exe"$'\t'"$dir"$'\t'"--exact $names"$'\n'
    done <<< "$jobs_of_suite"
  else
    list+="$name"$'\t'"$exe"$'\t'"$dir"$'\t'$'\n'
  fi
done <<< "$bins"
list="${list%$'\n'}"

# The run order: the slow ones first, then the rest as listed; the lone ones apart.
ordered=() lone=()
for s in $slow; do
  while IFS= read -r e; do [ "${e%%$'\t'*}" = "$s" ] && ordered+=("$e"); done <<< "$list"
done
while IFS= read -r e; do
  name="${e%%$'\t'*}"
  case " $slow " in *" $name "*) continue ;; esac
  case " $alone " in *" $name "*) lone+=("$e"); continue ;; esac
  ordered+=("$e")
done <<< "$list"

logs="$(mktemp -d "${TMPDIR:-/tmp}/clreduce-test.XXXXXX")"
# run_one "NAME<TAB>EXE<TAB>DIR<TAB>ARGS": runs EXE ARGS in the package folder DIR with
# CARGO_MANIFEST_DIR set to it, as cargo runs test binaries (trybuild reads it), keeping its
# output and "exit-status seconds CPU-seconds" under $logs (ARGS: test names, no spaces).
run_one() {
  local t0=$SECONDS rc=0 name exe dir args TIMEFORMAT="%U %S"
  IFS=$'\t' read -r name exe dir args <<< "$1"
  # (The log's redirection inside the subshell, and no exec there: either way time prints nothing.)
  # shellcheck disable=SC2086
  { time (cd "$dir" && CARGO_MANIFEST_DIR="$dir" "$exe" $args > "$logs/$name.log" 2>&1) || rc=$?; } 2> "$logs/$name.cpu"
  echo "$rc $((SECONDS - t0)) $(awk '{printf "%.0f", $1 + $2}' "$logs/$name.cpu")" > "$logs/$name.rc"
}
# show NAME: prints a finished binary's output and verdict once.
shown=" "
show() {
  case "$shown" in *" $1 "*) return ;; esac
  shown="$shown$1 "
  local rc secs cpu
  read -r rc secs cpu < "$logs/$1.rc"
  echo "     Running $1 ($secs s, CPU $cpu s, exit status $rc)"
  cat "$logs/$1.log"
}
show_finished() {
  local f
  for f in "$logs"/*.rc; do [ -e "$f" ] && show "$(basename "$f" .rc)"; done
  return 0
}

t_all=$SECONDS
running=0
for e in "${ordered[@]}"; do
  run_one "$e" &
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then
    wait -n || true
    running=$((running - 1))
    show_finished
  fi
done
wait || true
show_finished
for e in "${lone[@]}"; do
  run_one "$e"
  show_finished
done

failed=()
for f in "$logs"/*.rc; do
  read -r rc _ < "$f"
  [ "$rc" = 0 ] || failed+=("$(basename "$f" .rc)")
done
echo "test jobs: $(ls "$logs"/*.rc | wc -l) in $((SECONDS - t_all)) s, $jobs at a time; ${#failed[@]} failed"
doc=0
cargo test --release --doc || doc=$?
[ "$doc" = 0 ] || failed+=("doc tests")
rm -rf "$logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "scripts/test.sh: every test binary and the doc tests passed"

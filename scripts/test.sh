#!/usr/bin/env bash
# The test suite, on every OpenCL device found (PoCL, Intel CPU runtime, Oclgrind here).
# Installs the devices first when they are missing (scripts/setup.sh is idempotent).
#
# Without arguments: builds every test target (`cargo test --release --no-run`), then runs the
# test binaries CLREDUCE_TEST_JOBS at a time (default 2), the slowest first, and the doc tests
# last. PoCL builds one program at a time per process, so one test binary building its kernels
# leaves the second core idle; two binaries at once use both (decision 52). memory.rs fills
# device memory and runs alone. Each binary's output is printed whole when it ends, with its
# time; the exit status is 1 if any binary or the doc tests failed, and the failed ones are
# named at the end. The large matrices take a seeded sample (tests/common/sample.rs);
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
# The binaries that took longest here (decision 52), started first so the two lanes end together.
slow="matrix segment_plans race exact segment exact_kit tune reliability hostile closures"
# The binaries that must run alone (memory.rs fills device memory, host memory on CPU devices).
alone="memory"

cargo test --release --no-run
# name<TAB>executable of every test binary (the library's and the CLI's unit tests included).
list="$(cargo test --release --no-run --message-format=json 2>/dev/null |
  python3 -c 'import sys, json
for l in sys.stdin:
    try: m = json.loads(l)
    except Exception: continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m.get("profile", {}).get("test"):
        t = m["target"]
        kind = t["kind"][0]
        name = t["name"] if kind == "test" else kind + ":" + t["name"]
        print(name + "\t" + m["executable"])')"
[ -n "$list" ] || { echo "scripts/test.sh: cargo listed no test binary" >&2; exit 1; }

# The run order: the slow ones first, then the rest as cargo listed them; the lone ones apart.
ordered=() lone=()
for s in $slow; do
  while IFS=$'\t' read -r name exe; do [ "$name" = "$s" ] && ordered+=("$name"$'\t'"$exe"); done <<< "$list"
done
while IFS=$'\t' read -r name exe; do
  case " $slow " in *" $name "*) continue ;; esac
  case " $alone " in *" $name "*) lone+=("$name"$'\t'"$exe"); continue ;; esac
  ordered+=("$name"$'\t'"$exe")
done <<< "$list"

logs="$(mktemp -d "${TMPDIR:-/tmp}/clreduce-test.XXXXXX")"
# cargo runs test binaries from the package root with these set; some tests (trybuild) read them.
export CARGO_MANIFEST_DIR="$PWD" CARGO_PKG_NAME=clreduce
# run_one NAME EXE: runs it, keeping its output and "exit-status seconds" under $logs.
run_one() {
  local t0=$SECONDS rc=0
  "$2" > "$logs/$1.log" 2>&1 || rc=$?
  echo "$rc $((SECONDS - t0))" > "$logs/$1.rc"
}
# show NAME: prints a finished binary's output and verdict once.
shown=" "
show() {
  case "$shown" in *" $1 "*) return ;; esac
  shown="$shown$1 "
  local rc secs
  read -r rc secs < "$logs/$1.rc"
  echo "     Running $1 ($secs s, exit status $rc)"
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
  run_one "${e%%$'\t'*}" "${e#*$'\t'}" &
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
  run_one "${e%%$'\t'*}" "${e#*$'\t'}"
  show_finished
done

failed=()
for f in "$logs"/*.rc; do
  read -r rc _ < "$f"
  [ "$rc" = 0 ] || failed+=("$(basename "$f" .rc)")
done
echo "test binaries: $(ls "$logs"/*.rc | wc -l) in $((SECONDS - t_all)) s, $jobs at a time; ${#failed[@]} failed"
doc=0
cargo test --release --doc || doc=$?
[ "$doc" = 0 ] || failed+=("doc tests")
rm -rf "$logs"
if [ ${#failed[@]} -gt 0 ]; then
  echo "FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "scripts/test.sh: every test binary and the doc tests passed"

#!/usr/bin/env bash
# GPU runs through the device tool, in two halves of one script:
#   here:   bash scripts/gpu.sh build      builds the release binary and the test binaries into .gpu/ (packed as .gpu/bundle.tar.xz, which run unpacks)
#   there:  bash scripts/gpu.sh run [what]  registers NVIDIA's OpenCL (and the machine's PoCL) in a
#           private vendors folder and runs: devices, the test binaries, the bench; what = all|tests|bench|ladder|latency|shortcut-latency|tune|scaleout|devices|cmd ...
#   there:  bash scripts/gpu.sh run tests [--repeat K] [--jobs J] [--only a,b] [-- test args]
#           runs the whole suite (or the binaries --only names, e.g. reliability,faults) K times:
#           up to J runs at once (default: K) of every binary but those that exhaust device
#           memory (test-memory), which then run K times alone. Every failed run is reported
#           (binary, run, exit status, its FAIL/panicked lines) and its log kept under
#           $OUT/repeat/; the summary is $OUT/repeat/summary.txt; exit status 1 if any failed.
# The device tool call is then:  run(command="bash scripts/gpu.sh run all", carry=[".gpu", ".whl"])
# (.whl: PyOpenCL wheels for the peer/ladder scripts, downloaded as the device README describes).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# Test binaries that exhaust (or try to exhaust) device memory: never run beside another run.
EXCLUSIVE_TESTS="test-memory"

# repeat_tests OUT [--repeat K] [--jobs J] [--only a,b] [--] [test args...]
# A job is a separate test binary (.gpu/test-NAME) or one module of the suite binary
# (.gpu/test-suite, tests/suite.rs: `SUITE --exact` its test names, scripts/suite_jobs.py);
# --only names either. Test args: words starting with `-` go to the binary; other words are
# name filters (a test runs if its name contains any of them), applied to the suite's names
# before `--exact` and passed to the other binaries as they are.
repeat_tests() {
  local out="$1"; shift
  local repeat=1 jobs="" only="" threads="${TEST_THREADS:-4}"
  while [ $# -gt 0 ]; do
    case "$1" in
    --repeat) repeat="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --only) only="$2"; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
  done
  jobs="${jobs:-$repeat}"
  local dir="$out/repeat"; mkdir -p "$dir"
  local opts=() filters=() words=() a
  for a in "$@"; do case "$a" in -*) opts+=("$a") ;; *) filters+=(--filter "$a"); words+=("$a") ;; esac; done
  # label<TAB>binary<TAB>arguments, one line per job.
  local list="" b name label names mods=()
  for b in .gpu/test-*; do
    name="${b#.gpu/test-}"
    # The MPI test needs the carried OpenMPI: `run scaleout` runs it.
    [ "$name" = mpi ] && continue
    if [ "$name" = suite ]; then
      mods=()
      if [ -n "$only" ]; then
        local all; all="$(python3 scripts/suite_jobs.py "$b" --each | cut -f1 | sed 's/^suite://')"
        for a in ${only//,/ }; do echo "$all" | grep -qx "$a" && mods+=("$a"); done
        [ ${#mods[@]} -gt 0 ] || continue
      else
        mods=(--each)
      fi
      while IFS=$'\t' read -r label names; do
        [ -n "$label" ] && list+="$label"$'\t'"$b"$'\t'"--exact $names"$'\n'
      done <<< "$(python3 scripts/suite_jobs.py "$b" "${filters[@]}" "${mods[@]}")"
      continue
    fi
    if [ -n "$only" ] && ! echo ",$only," | grep -q ",$name,"; then continue; fi
    list+="test-$name"$'\t'"$b"$'\t'"${words[*]}"$'\n'
  done
  list="${list%$'\n'}"
  [ -n "$list" ] || { echo "no test job matches --only $only $*" >&2; return 2; }
  echo "tests: $(echo "$list" | wc -l) jobs x $repeat run(s), $jobs at once, --test-threads=$threads $*" | tee "$dir/summary.txt"
  # one_run "LABEL<TAB>BIN<TAB>ARGS" K: its log and exit status under $dir; never fails itself.
  one_run() {
    local t0=$SECONDS rc=0 label bin args
    IFS=$'\t' read -r label bin args <<< "$1"
    local log="$dir/${label//[^A-Za-z0-9_.-]/_}.$2.log"
    # shellcheck disable=SC2086
    "$bin" --test-threads="$threads" $args "${opts[@]}" > "$log" 2>&1 || rc=$?
    echo "$rc $((SECONDS - t0))" > "$log.rc"
  }
  local e k running=0
  while IFS= read -r e; do
    case " $EXCLUSIVE_TESTS " in *" ${e%%$'\t'*} "*) continue ;; esac
    for k in $(seq 1 "$repeat"); do
      one_run "$e" "$k" &
      running=$((running + 1))
      if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
    done
  done <<< "$list"
  wait || true
  while IFS= read -r e; do
    case " $EXCLUSIVE_TESTS " in *" ${e%%$'\t'*} "*) ;; *) continue ;; esac
    for k in $(seq 1 "$repeat"); do one_run "$e" "$k"; done
  done <<< "$list"
  local failed=0 rc secs log passed
  while IFS= read -r e; do
    name="${e%%$'\t'*}"; passed=0
    local safe="${name//[^A-Za-z0-9_.-]/_}"
    for k in $(seq 1 "$repeat"); do
      log="$dir/$safe.$k.log"; read -r rc secs < "$log.rc"
      if [ "$rc" = 0 ]; then passed=$((passed + 1)); continue; fi
      failed=$((failed + 1))
      { echo "FAILED $name run $k/$repeat: exit $rc after ${secs}s, log $log"
        grep -E "^FAIL|panicked|^test .* FAILED|test result|error" "$log" | head -n 20 | sed 's/^/    /' || true; } | tee -a "$dir/summary.txt"
    done
    echo "$name: $passed/$repeat runs passed ($(grep -h "test result" "$dir/$safe".*.log | sort | uniq -c | sed 's/^ *\([0-9]*\) test result: /\1x /' | head -n 3 | paste -sd';'))" | tee -a "$dir/summary.txt"
  done <<< "$list"
  echo "failed runs: $failed" | tee -a "$dir/summary.txt"
  [ "$failed" = 0 ]
}
# copy_tests [cargo test args]: builds the test binaries (release) and copies each to
# .gpu/test-NAME (cargo prints their paths as JSON; a binary's unit tests are test-NAME-bin).
copy_tests() {
  cargo test --release --no-run --message-format=json "$@" 2>/dev/null |
    python3 -c 'import sys,json
for l in sys.stdin:
    try: m=json.loads(l)
    except Exception: continue
    if m.get("reason")=="compiler-artifact" and m.get("executable") and m.get("profile",{}).get("test"):
        k=m["target"].get("kind",[])
        # The library and the binary share the name "clreduce": the binary unit tests get -bin.
        print(m["target"]["name"]+("-bin" if "bin" in k else ""), m["executable"])' |
    while read -r name exe; do cp "$exe" ".gpu/test-$name"; done
}

case "${1:-}" in
build)
  cargo build --release --bins --examples
  mkdir -p .gpu
  cp target/release/clreduce .gpu/
  # Developer probes: examples/latency.rs (where a small reduction's time goes), sweep.rs.
  # read_path_ab: the read paths' A/B (issue 29, scripts/gpu/f16_latency_ab.sh).
  # exact_interleave: exact sums against the plain sum, launches interleaved (issue 28).
  # lazy_alloc: does the driver allocate at creation or at first use (issue 21).
  cp target/release/examples/latency target/release/examples/sweep target/release/examples/lazy_alloc target/release/examples/closure_vs_string target/release/examples/shortcut_latency target/release/examples/segment_bench target/release/examples/read_path_ab target/release/examples/mailbox_probe target/release/examples/exact_interleave .gpu/
  rm -f .gpu/test-*
  copy_tests
  # macros/tests/ui.rs runs rustc (trybuild): there is none on the GPU machines.
  rm -f .gpu/test-ui
  cp -r benches/peers .gpu/ 2>/dev/null || true
  # The mpi feature (issue 18): the binary and the MPI test built with it, and the OpenMPI
  # runtime they link against, packed (scripts/mpi_bundle.sh): the GPU machines have none.
  cargo build --release --features mpi --bin clreduce
  cp target/release/clreduce .gpu/clreduce-mpi
  copy_tests --features mpi --test mpi
  bash scripts/mpi_bundle.sh pack .gpu/openmpi.tar.xz
  # The default build again, so target/release/clreduce is the one the tests here expect.
  cargo build --release --bin clreduce
  # The device tool carries at most 64 MiB: debug info stays here.
  strip .gpu/clreduce .gpu/clreduce-mpi .gpu/shortcut_latency .gpu/read_path_ab .gpu/mailbox_probe .gpu/segment_bench .gpu/exact_interleave .gpu/latency .gpu/sweep .gpu/lazy_alloc .gpu/closure_vs_string .gpu/test-* 2>/dev/null || true
  ls -la .gpu
  # Stripped, the binaries still come to 63-75 MiB with the MPI bundle: packed into one
  # .gpu/bundle.tar.xz (about 8 MiB) that `run` unpacks on the device machine.
  tmp="$(mktemp)"
  (cd .gpu && tar cf - --exclude=bundle.tar.xz . | xz -T0 -6) > "$tmp"
  rm -rf .gpu/* && mv "$tmp" .gpu/bundle.tar.xz
  du -sh .gpu
  ;;
run)
  shift || true
  if [ -f .gpu/bundle.tar.xz ]; then (cd .gpu && tar xJf bundle.tar.xz && rm bundle.tar.xz); fi
  what="${1:-all}"; shift || true
  mkdir -p /tmp/icd
  echo libnvidia-opencl.so.1 > /tmp/icd/nvidia.icd
  export OCL_ICD_VENDORS=/tmp/icd
  if [ "${WITH_POCL:-0}" = 1 ]; then
    # The machine's PoCL (16 cores, slow builds) as a fourth capability profile.
    [ -f /etc/OpenCL/vendors/pocl.icd ] && cp /etc/OpenCL/vendors/pocl.icd /tmp/icd/
  else
    # NVIDIA only: with PoCL present the test matrices spend the run compiling for it.
    export OCL_ICD_FILENAMES=libnvidia-opencl.so.1
  fi
  export CLREDUCE_BIN="$PWD/.gpu/clreduce"
  # The whole test matrix here (tests/common/sample.rs): without it matrix.rs, exact.rs and
  # exact_kit.rs take a seeded sample, which keeps the README's CPU test command short.
  export CLREDUCE_FULL_MATRIX=1
  # The GPU the single-device commands use: `NVIDIA` is ambiguous on a machine with two
  # (nvidia-h200-x2); CUDA_VISIBLE_DEVICES=0 there shows NVIDIA's OpenCL one of them.
  GPU="${GPU_DEV:-NVIDIA}"
  out="${OUT:-/tmp/out}"; mkdir -p "$out"
  # PyOpenCL for the peer and ladder scripts travels as wheels (.whl, see the device README).
  if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1 &&
      export PYTHONPATH=/tmp/site
  fi
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$out/gpu.txt" || true
  B=.gpu/clreduce
  case "$what" in
  devices) $B devices ;;
  tests)
    repeat_tests "$out" "$@" ;;
  cmd) "$@" ;;
  bench)
    # The GPU's L2 size, which NVIDIA's OpenCL does not report (CL_DEVICE_GLOBAL_MEM_CACHE_SIZE
    # says 4.1 MiB on an H200): read from CUDA through torch, for the bench's cache rule.
    llc=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).L2_cache_size)' 2>/dev/null || true)
    echo "L2 (torch.cuda.get_device_properties): ${llc:-unknown}"
    $B bench --device "$GPU" --peers ${llc:+--llc $llc} --json "$out/bench-nvidia.json" --svg "$out/bench-nvidia.svg" "$@" 2>&1 | tee "$out/bench-nvidia.txt" ;;
  ladder)
    $B bench --ladder --device "$GPU" 2>&1 | tee "$out/ladder-nvidia.txt" ;;
  tune)
    # Issue 19 on the GPU: the default cases at the sizes of record with every strategy, before
    # and after `clreduce tune --quick` (a cache of this run's own, under $out), then the
    # auto-vs-best tables (scripts/auto_vs_best.py reads the JSON here too).
    llc=$(python3 -c 'import torch; print(torch.cuda.get_device_properties(0).L2_cache_size)' 2>/dev/null || true)
    export CLREDUCE_TUNE_CACHE="$out/tuning.json"
    sizes=${SIZES:-2^10,2^14,2^18,2^20,2^22,2^24,2^26,2^28}
    $B bench --device "$GPU" --sizes "$sizes" ${llc:+--llc $llc} --json "$out/tune-before.json" > "$out/tune-before.txt" 2>&1
    $B tune --device "$GPU" --quick "$@" 2>&1 | tee "$out/tune.txt"
    $B bench --device "$GPU" --sizes "$sizes" ${llc:+--llc $llc} --json "$out/tune-after.json" > "$out/tune-after.txt" 2>&1
    python3 scripts/auto_vs_best.py "$out/tune-before.json" | tee "$out/tune-before-table.txt" | tail -n 3
    python3 scripts/auto_vs_best.py "$out/tune-after.json" | tee "$out/tune-after-table.txt" | tail -n 3 ;;
  scaleout)
    # Issue 18: every device of this machine (NVIDIA's GPUs) in one launch and through MPI, one
    # GPU per rank: tests, every op family against one GPU's bits, the split and MPI benches.
    bash scripts/scaleout_gpu.sh "$out" "$@" ;;
  latency)
    LATENCY_ZERO_COPY=1 .gpu/latency "$GPU" "${1:-300}" 2>&1 | tee "$out/latency-nvidia.txt" ;;
  shortcut-latency)
    # Issue 29: the shortcuts against the general path, and torch's x.sum().item(), one run.
    { .gpu/shortcut_latency "$GPU" "${1:-300}"; python3 .gpu/peers/torch_item_latency.py "${1:-300}"; } 2>&1 | tee "$out/shortcut-latency-nvidia.txt" ;;
  all)
    $B devices | tee "$out/devices.txt"
    for t in .gpu/test-*; do [ "$t" = .gpu/test-mpi ] && continue; echo "== $t"; rc=0; "$t" --test-threads=4 > "$out/$(basename "$t").log" 2>&1 || rc=$?; echo "rc=$rc"; grep -E "^SUMMARY|^FAIL|test result|panicked" "$out/$(basename "$t").log" | tail -n 40 | tee -a "$out/tests.txt" || true; done ;;
  *) echo "unknown: $what" >&2; exit 2 ;;
  esac
  ;;
*) echo "usage: scripts/gpu.sh build | run [all|tests|bench|ladder|latency|shortcut-latency|tune|scaleout|devices|cmd ...]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# Issue 18 on a machine with two GPUs (nvidia-h200-x2), called by `scripts/gpu.sh run scaleout`
# with NVIDIA's OpenCL registered alone. Writes under OUT (default /tmp/out/scaleout):
#   tests.txt         tests/multi.rs and tests/multi_segments.rs (the split across both GPUs),
#                     tests/mpi.rs (mpirun -np 2 and 3, one GPU per rank, through the carried
#                     OpenMPI), and segmented `reduce --split` runs (rows, columns, one row, CSR)
#   families.txt      every op family reduced on GPU 0 alone, split across both GPUs
#                     (`reduce --split --device all`, equal shares and measured shares) and
#                     through `mpirun -np 2 reduce --mpi --device rank`: the result bits side by
#                     side, equal where the op is exact (integers, min/max, exact sums)
#   bench-split.*     f32 sum and exact f32 sum at 2^28, 2^30, 2^31: one GPU vs both, one run
#   bench-mpi.*       the MPI combine's cost over the local reductions, -np 2, one GPU per rank
# Usage: bash scripts/scaleout_gpu.sh [OUT] [SIZES]
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out="${1:-/tmp/out}/scaleout"; mkdir -p "$out"
sizes="${2:-2^28,2^30,2^31}"
B=.gpu/clreduce
M=.gpu/clreduce-mpi
set +e
# The machine's own MPI, if any: the MPI test once with it (libmpi.so.40 from its loader path).
if command -v mpirun >/dev/null; then
  { echo "machine's own: $(command -v mpirun): $(mpirun --version 2>&1 | head -n 1)"
    CLREDUCE_BIN="$PWD/$M" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      timeout 120 .gpu/test-mpi --test-threads=1 2>&1 | grep -E "test result|panicked|error" | head -n 5
  } > "$out/mpi-own.txt" 2>&1
else
  echo "machine's own: no mpirun on PATH" > "$out/mpi-own.txt"
fi
cat "$out/mpi-own.txt"
source scripts/mpi_bundle.sh use .gpu/openmpi.tar.xz
set +e
export CLREDUCE_BIN="$PWD/$M"
echo "carried: $(mpirun --version 2>&1 | head -n 1) ($(command -v mpirun))" | tee "$out/mpi.txt"
$B devices | tee "$out/devices.txt"

step() { echo "== $(date +%T) $*" | tee -a "$out/steps.txt"; }

step tests
: > "$out/tests.txt"
for t in multi multi_segments mpi; do
  rc=0
  timeout 240 bash scripts/gpu/test_of.sh "$t" --test-threads=4 > "$out/test-$t.log" 2>&1 || rc=$?
  { echo "test-$t: exit $rc"; grep -E "^SUMMARY|^SKIP|^FAIL|test result|panicked" "$out/test-$t.log" | head -n 40; } | tee -a "$out/tests.txt"
done

step segments
# Segmented reductions split across both GPUs (issue 26): every result checked on the host.
for c in "--rows 16384 --cols 16384 --op sum,argmax --type f32" \
         "--rows 1048576 --cols 256 --axis 0 --op sum,min --type i32" \
         "--rows 1 --cols 268435456 --op sum,max --type f32" \
         "--ragged 256 --n 268435456 --op sum,argmin --type f32"; do
  rc=0
  timeout 300 .gpu/clreduce reduce --split --device all --json $c > "$out/segments.json" 2>&1 || rc=$?
  echo "reduce --split $c: exit $rc, pass $(grep -c '"pass": true' "$out/segments.json"), split $(tr -d ' \n' < "$out/segments.json" | grep -o '"split":\[[0-9,]*\]')" | tee -a "$out/tests.txt"
done

step families
n=$((16777216 + 7))
cases=(
  "i32:--op sum,prod,min,max,and,or,xor,land,lor --type i32"
  "u32:--op sum,prod,min,max,and,or,xor,land,lor --type u32"
  "i64:--op sum,prod,min,max,and,or,xor,land,lor --type i64"
  "u64:--op sum,prod,min,max,and,or,xor,land,lor --type u64"
  "f32:--op sum,prod,min,max --type f32"
  "f64:--op sum,prod,min,max --type f64"
  "f32-argmin:--op argmin --type f32"
  "f64-argmax:--op argmax --type f64"
  "f32-exact:--op sum --type f32 --determinism exact"
  "f64-exact:--op sum --type f64 --determinism exact"
  "i32-custom:--custom max(a,b) --identity min --type i32"
  "f32-noid:--custom a+b --no-identity --type f32"
  "u32-span:--op sum --type u32 --span 256"
)
for c in "${cases[@]}"; do
  name="${c%%:*}"; read -r -a args <<< "${c#*:}"
  timeout 60 $B reduce "${args[@]}" --n "$n" --device 0 --json > "$out/fam-$name.one.json" 2> "$out/fam-$name.one.err"
  timeout 90 $B reduce "${args[@]}" --n "$n" --split --device all --shares 1,1 --json > "$out/fam-$name.split.json" 2> "$out/fam-$name.split.err"
  timeout 90 mpirun --allow-run-as-root --oversubscribe -np 2 $M reduce "${args[@]}" --n "$n" --mpi --device rank --json > "$out/fam-$name.mpi.json" 2> "$out/fam-$name.mpi.err"
done
# Measured shares once, on the largest family.
timeout 90 $B reduce --op sum --type f32 --determinism exact --n $((1 << 28)) --split --device all --json > "$out/fam-f32-exact-2p28.split.json" 2> "$out/fam-f32-exact-2p28.split.err"
timeout 60 $B reduce --op sum --type f32 --determinism exact --n $((1 << 28)) --device 0 --json > "$out/fam-f32-exact-2p28.one.json" 2> "$out/fam-f32-exact-2p28.one.err"
python3 scripts/compare_runs.py "$out" | tee "$out/families.txt"

step bench-split
timeout 300 $B bench --split --device all --sizes "$sizes" --reps 10 --json "$out/bench-split.json" 2>&1 | tee "$out/bench-split.txt"

step bench-mpi
timeout 150 mpirun --allow-run-as-root --oversubscribe -np 2 $M bench --mpi --device rank --sizes 2^10,2^20,2^24,2^28 --json "$out/bench-mpi.json" 2>&1 | tee "$out/bench-mpi.txt"
step done

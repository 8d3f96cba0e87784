# Run on the GPU machine from the repository root (device tool: run(command="bash scripts/gpu_ab_wait.sh", carry=[".gpu"])).
# A/B of Workarounds::wait_before_read on the H200: latency probe twice, bench wall at 2^20 alternating on/off.
set -u
for i in 1 2; do bash scripts/gpu.sh run latency 300 > /dev/null 2>&1; cp $OUT/latency-nvidia.txt $OUT/latency-$i.txt; done
for i in 1 2 3; do
  for mode in on off; do
    if [ $mode = off ]; then export CLREDUCE_NO_WAIT_BEFORE_READ=1; else unset CLREDUCE_NO_WAIT_BEFORE_READ; fi
    echo "== run $i wait_before_read $mode"
    bash scripts/gpu.sh run cmd .gpu/clreduce bench --device NVIDIA --cases f32-sum --sizes 2^20 --strategies auto --reps 500 2>&1 | grep -E "^f32-sum +auto"
  done
done

#!/usr/bin/env bash
# Session 16: what a large deterministic f64 sum span costs on the GPU today (global-private:
# per-work-item copies that shrink the launch) against the exact span's global path (one
# superaccumulator per element, 64-bit atomic deposits), with torch index_add_ (f64, float
# atomics) of the same shape. Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/f64span_probe.sh      (carry .gpu)
# Env: LG (24), CASES, NO_TORCH (1: skip the torch peer).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${CLREDUCE:-.gpu/clreduce}
LG=${LG:-24}
CASES=${CASES:-f64-sum,f64-hist65536,f64-hist65536-exact,f64-hist1048576,f64-hist1048576-exact,f32-hist1048576}
for c in ${CASES//,/ }; do
  t0=$SECONDS
  timeout 150 "$B" bench --device NVIDIA --cases "$c" --sizes "2^$LG" --reps 5 --strategies auto 2>&1 |
    awk -v c="$c" '$1 == c && $2 == "auto" {print "probe |", $0} /error|panicked/ {print "probe |", c, $0}' |
    sed -E 's/warm: rotating [0-9]+ buffers \(together <= LLC\/2\)|cold: [^0-9]*//; s/  +/ /g'
  echo "probe | $c $((SECONDS - t0)) s"
done
[ "${NO_TORCH:-0}" = 1 ] && exit 0
python3 - "$LG" <<'PY' 2>&1 | sed 's/^/probe | /'
import sys, statistics, torch
n = 1 << int(sys.argv[1])
dev = "cuda"
for bins in (65536, 1 << 20):
    for dt in (torch.float32, torch.float64):
        x = (torch.rand(n, device=dev, dtype=dt) - 0.5) * 4
        keys = torch.randint(0, bins, (n,), device=dev, dtype=torch.int64)
        out = torch.zeros(bins, device=dev, dtype=dt)
        ts = []
        for r in range(12):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record(); out.zero_().index_add_(0, keys, x); b.record(); torch.cuda.synchronize()
            if r >= 2: ts.append(a.elapsed_time(b) * 1e3)
        print(f"torch index_add_ {str(dt)[6:]} n=2^{sys.argv[1]} bins={bins}: median {statistics.median(ts):.1f} us")
PY

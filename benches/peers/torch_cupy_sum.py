#!/usr/bin/env python3
"""torch.sum and cupy.sum over f32 on a CUDA GPU: the vendor-library peers for clreduce's
numbers on NVIDIA GPUs (clreduce runs there through NVIDIA's OpenCL).

Prints one JSON line per (lib, op, n) on stdout:
  {"lib": "torch", "op": "sum", "device": NAME, "n": N, "gbps": G, "device_time_us": T, ...}
progress and notes go to stderr.

Times come from CUDA events recorded around the call on the current stream (median over --reps
after --warmup untimed calls); gbps = n * 4 bytes / that time, the same definition as clreduce
bench (input bytes once / device time). Ops:
  sum            torch.sum(x) / cupy.sum(x)
  sum,min,max    torch only: torch.sum, torch.min, torch.max as three separate reductions (the
                 input is read three times; gbps still counts it once, to compare with clreduce's
                 one-launch three-variable case)
  sum+aminmax    torch only: torch.sum and torch.aminmax (two reductions)
Cache: inputs larger than 2x the GPU's L2 are read cold; smaller ones rotate among K copies, as in
clreduce bench. Either library may be missing; it is then skipped with the reason on stderr.

  python3 benches/peers/torch_cupy_sum.py --sizes 2^20..2^28 --reps 20
"""

import argparse
import json
import statistics
import sys


def parse_n(s):
    s = s.strip()
    if s.startswith("2^"):
        return 1 << int(s[2:])
    return int(s.replace("_", ""))


def parse_sizes(s):
    out = []
    for part in filter(None, (p.strip() for p in s.split(","))):
        if ".." in part:
            a, b = (parse_n(x) for x in part.split(".."))
            while a <= b:
                out.append(a)
                a <<= 1
        else:
            out.append(parse_n(part))
    return sorted(set(out))


def rotation(nbytes, llc):
    if nbytes > 2 * llc:
        return 1, "cold (> L2)"
    k = max(2, min(16, 2 * llc // max(nbytes, 1) + 1))
    state = "together > L2" if k * nbytes > llc else "all fit in L2: warm"
    return k, f"rotating {k} buffers ({state})"


def emit(rec):
    print(json.dumps(rec), flush=True)
    print(f"{rec['lib']}: {rec['op']} n=2^{rec['n'].bit_length() - 1}: {rec['gbps']:.1f} GB/s",
          file=sys.stderr)


def timed(calls, start, end, sync, reps, warmup, k):
    """Median, min, max in microseconds of calls(rep % k) between two events."""
    times = []
    for rep in range(warmup + reps):
        start.record()
        calls(rep % k)
        end.record()
        sync(end)
        if rep >= warmup:
            times.append(end_elapsed_ms(start, end) * 1e3)
    return statistics.median(times), min(times), max(times)


def end_elapsed_ms(start, end):
    # torch: start.elapsed_time(end); cupy: cupy.cuda.get_elapsed_time(start, end)
    if hasattr(start, "elapsed_time"):
        return start.elapsed_time(end)
    import cupy

    return cupy.cuda.get_elapsed_time(start, end)


def run_torch(sizes, reps, warmup, dev_index):
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"torch: skipped: cannot import torch: {e}", file=sys.stderr)
        return
    if not torch.cuda.is_available():
        print("torch: skipped: torch.cuda.is_available() is False", file=sys.stderr)
        return
    dev = torch.device("cuda", dev_index)
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 0) or (50 << 20)
    name = props.name
    for n in sizes:
        nbytes = n * 4
        if 2 * nbytes > props.total_memory:
            print(f"torch: n={n} does not fit, skipped", file=sys.stderr)
            continue
        k, cache = rotation(nbytes, l2)
        g = torch.Generator(device=dev).manual_seed(1)
        xs = [torch.empty(n, dtype=torch.float32, device=dev).uniform_(-64, 64, generator=g)
              for _ in range(k)]
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        sync = lambda e: e.synchronize()  # noqa: E731
        sink = []
        variants = [
            ("sum", lambda i: sink.append(torch.sum(xs[i]))),
            ("sum,min,max", lambda i: sink.append(
                (torch.sum(xs[i]), torch.min(xs[i]), torch.max(xs[i])))),
            ("sum+aminmax", lambda i: sink.append((torch.sum(xs[i]), torch.aminmax(xs[i])))),
        ]
        for op, call in variants:
            med, lo, hi = timed(call, start, end, sync, reps, warmup, k)
            sink.clear()
            emit({"lib": "torch", "version": torch.__version__, "op": op, "device": name,
                  "n": n, "gbps": nbytes / (med * 1e3), "device_time_us": med,
                  "device_time_us_min": lo, "device_time_us_max": hi, "reps": reps,
                  "cache": cache})
        del xs
        torch.cuda.empty_cache()


def run_cupy(sizes, reps, warmup, dev_index):
    try:
        import cupy
    except Exception as e:  # noqa: BLE001
        print(f"cupy: skipped: cannot import cupy: {e}", file=sys.stderr)
        return
    try:
        cupy.cuda.Device(dev_index).use()
        props = cupy.cuda.runtime.getDeviceProperties(dev_index)
    except Exception as e:  # noqa: BLE001
        print(f"cupy: skipped: no CUDA device: {e}", file=sys.stderr)
        return
    l2 = props.get("l2CacheSize", 0) or (50 << 20)
    name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
    rng = cupy.random.default_rng(1)
    for n in sizes:
        nbytes = n * 4
        if 2 * nbytes > props["totalGlobalMem"]:
            print(f"cupy: n={n} does not fit, skipped", file=sys.stderr)
            continue
        k, cache = rotation(nbytes, l2)
        xs = [rng.uniform(-64, 64, n, dtype=cupy.float32) for _ in range(k)]
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        sink = []
        med, lo, hi = timed(lambda i: sink.append(cupy.sum(xs[i])), start, end,
                            lambda e: e.synchronize(), reps, warmup, k)
        emit({"lib": "cupy", "version": cupy.__version__, "op": "sum", "device": name, "n": n,
              "gbps": nbytes / (med * 1e3), "device_time_us": med, "device_time_us_min": lo,
              "device_time_us_max": hi, "reps": reps, "cache": cache})
        del xs, sink
        cupy.get_default_memory_pool().free_all_blocks()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2^10..2^28")
    ap.add_argument("--max-n", default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cuda-device", type=int, default=0)
    ap.add_argument("--libs", default="torch,cupy")
    a = ap.parse_args()
    sizes = parse_sizes(a.sizes)
    if a.max_n:
        sizes = [n for n in sizes if n <= parse_n(a.max_n)]
    libs = [x.strip() for x in a.libs.split(",")]
    if "torch" in libs:
        run_torch(sizes, a.reps, a.warmup, a.cuda_device)
    if "cupy" in libs:
        run_cupy(sizes, a.reps, a.warmup, a.cuda_device)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""torch and cupy reductions on a CUDA GPU: the vendor-library peers for clreduce's numbers on
NVIDIA GPUs (clreduce runs there through NVIDIA's OpenCL).

Prints one JSON line per (lib, op, n) on stdout:
  {"lib": "torch", "case": "f32-sum", "op": "sum", "device": NAME, "n": N, "gbps": G,
   "device_time_us": T, ...}
progress and notes go to stderr.

Times come from CUDA events recorded around the call on the current stream (median over --reps
after --warmup untimed calls); gbps = n * 4 bytes / that time, the same definition as clreduce
bench (input bytes once / device time). Cases (--cases, the names of clreduce bench's cases;
default f32-sum,f32-sum-min-max) and their ops:
  f32-sum          sum            torch.sum(x) / cupy.sum(x)
  f32-sum-min-max  sum,min,max    torch only: torch.sum, torch.min, torch.max as three separate
                                  reductions (the input is read three times; gbps still counts
                                  it once, to compare with clreduce's one-launch three-variable
                                  case)
                   sum+aminmax    torch only: torch.sum and torch.aminmax (two reductions)
  u32-histN        bincount       torch.bincount(x, minlength=N) / cupy.bincount(x, minlength=N)
                                  over int32 values already in [0, N) (clreduce reads u32 and
                                  masks with N-1 in the kernel; torch has no uint32 bincount).
                                  torch's CUDA bincount also reads x for its min and max first.
                   histc          torch only: torch.histc(x, bins=N, min=0, max=N) over float32
                                  values in [0, N) (one bin per integer)
  f32-histN        index_add_     torch only: out.zero_().index_add_(0, keys, x), the weighted
                                  histogram of clreduce's f32-histN (keys = the low bits of x's
                                  bits, int64, computed before the clock starts; x's values are
                                  clreduce's: random sign and fraction, exponent 2^-2..2^1).
                                  Float atomics: the rounding varies from run to run.
                   index_add_(deterministic)  the same under
                                  torch.use_deterministic_algorithms(True) (sort-based)
  f32-argmin       argmin         torch.argmin(x) / cupy.argmin(x) (index of the first minimum;
                                  clreduce returns the value as well)
Every (lib, case) runs in its own try/except: a failure is printed on stderr and the others go
on. Cache: inputs larger than 2x the GPU's L2 are read cold; smaller ones rotate among K copies,
as in clreduce bench. Either library may be missing; it is then skipped with the reason on
stderr.

  python3 benches/peers/torch_cupy_sum.py --sizes 2^20..2^28 --reps 20
  python3 benches/peers/torch_cupy_sum.py --sizes 2^20,2^24 --cases u32-hist256,f32-argmin
"""

import argparse
import json
import re
import statistics
import sys
import traceback

DEFAULT_CASES = "f32-sum,f32-sum-min-max"


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


def parse_cases(s):
    """[(case, bins or None)]; unknown names are reported and dropped."""
    out = []
    for c in filter(None, (x.strip() for x in s.split(","))):
        m = re.fullmatch(r"(u32|f32)-hist(\d+)", c)
        if m:
            out.append((c, int(m.group(2))))
        elif c in ("f32-sum", "f32-sum-min-max", "f32-argmin"):
            out.append((c, None))
        else:
            print(f"torch/cupy: no peer for case {c!r}, skipped", file=sys.stderr)
    return out


def emit(rec):
    print(json.dumps(rec), flush=True)
    print(f"{rec['lib']}: {rec['case']} {rec['op']} n=2^{rec['n'].bit_length() - 1}: "
          f"{rec['gbps']:.1f} GB/s", file=sys.stderr)


def failed(lib, case, n, e):
    print(f"{lib}: {case} n={n} failed: {type(e).__name__}: {e}", file=sys.stderr)
    traceback.print_exc(limit=3, file=sys.stderr)


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


def torch_inputs(torch, case, bins, n, k, dev, g):
    """k input copies for a case."""
    if case.startswith("u32-hist"):
        # int32 in [0, bins) for bincount, the same values as float32 for histc
        ints = [torch.randint(0, bins, (n,), dtype=torch.int32, device=dev, generator=g)
                for _ in range(k)]
        return {"int": ints, "float": [x.float() for x in ints]}
    if case.startswith("f32-hist"):
        # clreduce's keyed_f32: random sign and 23 fraction bits, biased exponent 125..128
        xs, keys = [], []
        for _ in range(k):
            b = torch.randint(-(1 << 31), 1 << 31, (n,), dtype=torch.int64, device=dev,
                              generator=g)
            e = torch.randint(125, 129, (n,), dtype=torch.int64, device=dev, generator=g)
            bits = (b & 0x8000_0000) | (e << 23) | (b & 0x7F_FFFF)
            bits = torch.where(bits >= (1 << 31), bits - (1 << 32), bits).to(torch.int32)
            xs.append(bits.view(torch.float32))
            keys.append((bits & (bins - 1)).to(torch.int64))
        return {"float": xs, "keys": keys}
    if case == "f32-argmin":
        # f32 on a grid of 1/64 in [-64, 64), like clreduce's data (the minimum has ties)
        return {"float": [torch.randint(-4096, 4096, (n,), dtype=torch.int32, device=dev,
                                        generator=g).float() / 64 for _ in range(k)]}
    return {"float": [torch.empty(n, dtype=torch.float32, device=dev).uniform_(-64, 64,
                                                                              generator=g)
                      for _ in range(k)]}


def torch_variants(torch, case, bins, xs, sink):
    """[(op, call(i))] for a case."""
    if case == "f32-sum":
        x = xs["float"]
        return [("sum", lambda i: sink.append(torch.sum(x[i])))]
    if case == "f32-sum-min-max":
        x = xs["float"]
        return [
            ("sum,min,max", lambda i: sink.append(
                (torch.sum(x[i]), torch.min(x[i]), torch.max(x[i])))),
            ("sum+aminmax", lambda i: sink.append((torch.sum(x[i]), torch.aminmax(x[i])))),
        ]
    if case == "f32-argmin":
        x = xs["float"]
        return [("argmin", lambda i: sink.append(torch.argmin(x[i])))]
    if case.startswith("f32-hist"):
        x, keys = xs["float"], xs["keys"]
        out = torch.zeros(bins, dtype=torch.float32, device=x[0].device)

        def det(i):
            torch.use_deterministic_algorithms(True)
            try:
                sink.append(out.zero_().index_add_(0, keys[i], x[i]))
            finally:
                torch.use_deterministic_algorithms(False)
        return [
            ("index_add_", lambda i: sink.append(out.zero_().index_add_(0, keys[i], x[i]))),
            ("index_add_(deterministic)", det),
        ]
    if case.startswith("u32-hist"):
        xi, xf = xs["int"], xs["float"]
        return [
            ("bincount", lambda i: sink.append(torch.bincount(xi[i], minlength=bins))),
            ("histc", lambda i: sink.append(torch.histc(xf[i], bins=bins, min=0, max=bins))),
        ]
    return []


def run_torch(sizes, cases, reps, warmup, dev_index):
    try:
        import torch
    except Exception as e:  # noqa: BLE001
        print(f"torch: skipped: cannot import torch: {e}", file=sys.stderr)
        return
    try:
        if not torch.cuda.is_available():
            print("torch: skipped: torch.cuda.is_available() is False", file=sys.stderr)
            return
        dev = torch.device("cuda", dev_index)
        props = torch.cuda.get_device_properties(dev)
    except Exception as e:  # noqa: BLE001
        print(f"torch: skipped: no CUDA device: {e}", file=sys.stderr)
        return
    l2 = getattr(props, "L2_cache_size", 0) or (50 << 20)
    name = props.name
    for case, bins in cases:
        for n in sizes:
            nbytes = n * 4
            # histograms keep an int and a float copy of each input (weighted: int64 keys)
            copies = (3 if case.startswith("f32-hist") else 2) if bins else 1
            if 2 * copies * nbytes > props.total_memory:
                print(f"torch: {case} n={n} does not fit, skipped", file=sys.stderr)
                continue
            k, cache = rotation(nbytes, l2)
            xs = None
            try:
                g = torch.Generator(device=dev).manual_seed(1)
                xs = torch_inputs(torch, case, bins, n, k, dev, g)
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                sync = lambda e: e.synchronize()  # noqa: E731
                sink = []
                variants = torch_variants(torch, case, bins, xs, sink)
            except Exception as e:  # noqa: BLE001
                failed("torch", case, n, e)
                variants = []
            for op, call in variants:
                try:
                    med, lo, hi = timed(call, start, end, sync, reps, warmup, k)
                    sink.clear()
                    emit({"lib": "torch", "version": torch.__version__, "case": case, "op": op,
                          "device": name, "n": n, "gbps": nbytes / (med * 1e3),
                          "device_time_us": med, "device_time_us_min": lo,
                          "device_time_us_max": hi, "reps": reps, "cache": cache})
                except Exception as e:  # noqa: BLE001
                    failed("torch", f"{case} {op}", n, e)
                    sink.clear()
            del xs
            torch.cuda.empty_cache()


def run_cupy(sizes, cases, reps, warmup, dev_index):
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
    for case, bins in cases:
        if case == "f32-sum-min-max" or case.startswith("f32-hist"):
            continue  # torch only
        for n in sizes:
            nbytes = n * 4
            if 2 * nbytes > props["totalGlobalMem"]:
                print(f"cupy: {case} n={n} does not fit, skipped", file=sys.stderr)
                continue
            k, cache = rotation(nbytes, l2)
            xs, sink = None, []
            try:
                rng = cupy.random.default_rng(1)
                cupy.random.seed(1)
                if bins:
                    xs = [cupy.random.randint(0, bins, size=n, dtype=cupy.int32)
                          for _ in range(k)]
                    op, fn = "bincount", lambda i: sink.append(cupy.bincount(xs[i],
                                                                            minlength=bins))
                elif case == "f32-argmin":
                    # f32 on a grid of 1/64 in [-64, 64), like clreduce's data
                    xs = [cupy.random.randint(-4096, 4096, size=n, dtype=cupy.int32)
                          .astype(cupy.float32) / 64 for _ in range(k)]
                    op, fn = "argmin", lambda i: sink.append(cupy.argmin(xs[i]))
                else:
                    xs = [rng.uniform(-64, 64, n, dtype=cupy.float32) for _ in range(k)]
                    op, fn = "sum", lambda i: sink.append(cupy.sum(xs[i]))
                start, end = cupy.cuda.Event(), cupy.cuda.Event()
                med, lo, hi = timed(fn, start, end, lambda e: e.synchronize(), reps, warmup, k)
                emit({"lib": "cupy", "version": cupy.__version__, "case": case, "op": op,
                      "device": name, "n": n, "gbps": nbytes / (med * 1e3),
                      "device_time_us": med, "device_time_us_min": lo,
                      "device_time_us_max": hi, "reps": reps, "cache": cache})
            except Exception as e:  # noqa: BLE001
                failed("cupy", case, n, e)
            del xs, sink
            try:
                cupy.get_default_memory_pool().free_all_blocks()
            except Exception as e:  # noqa: BLE001
                print(f"cupy: free_all_blocks failed: {e}", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2^10..2^28")
    ap.add_argument("--max-n", default=None)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cuda-device", type=int, default=0)
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--cases", default=DEFAULT_CASES,
                    help="clreduce bench case names (f32-sum, f32-sum-min-max, u32-histN, f32-histN, "
                         "f32-argmin)")
    a = ap.parse_args()
    sizes = parse_sizes(a.sizes)
    if a.max_n:
        sizes = [n for n in sizes if n <= parse_n(a.max_n)]
    cases = parse_cases(a.cases)
    libs = [x.strip() for x in a.libs.split(",")]
    for lib, run in (("torch", run_torch), ("cupy", run_cupy)):
        if lib in libs:
            try:
                run(sizes, cases, a.reps, a.warmup, a.cuda_device)
            except Exception as e:  # noqa: BLE001
                print(f"{lib}: failed: {type(e).__name__}: {e}", file=sys.stderr)
                traceback.print_exc(limit=5, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""torch and cupy reductions to many results on a CUDA GPU: the peers of clreduce's segmented,
axis and large-span reductions (issue 26).

Prints one JSON line per (lib, case, op) on stdout:
  {"lib": "torch", "case": "f32-rows-16384x16384", "op": "sum(dim=1)", "device": NAME,
   "n": N, "results": R, "gbps": G, "device_time_us": T, ...}
progress and notes go to stderr. Times come from CUDA events around the call (median over
--reps after --warmup untimed calls); gbps = input bytes once / that time, the definition of
`clreduce bench`. Inputs larger than 2x the L2 are read cold (every case here at 2^28).

Cases (--cases, comma-separated; T is f32, f64 or i32):
  T-rows-RxC      one result per row of a row-major R x C matrix:
                  torch.sum(x.view(R, C), dim=1)  /  cupy.sum(x.reshape(R, C), axis=1)
                  (cupy's axis reductions go through CUB's segmented reduce when CuPy's
                  accelerators include cub, the default)
  T-cols-RxC      one result per column: dim=0 / axis=0
  f32-rowmax-RxC  torch.max(dim=1) values+indices, torch.argmax(dim=1), cupy.argmax(axis=1)
  T-ragged-M      CSR segments of mean length M over n elements (heavy-tailed, empty ones
                  included; see ragged_lengths): torch.segment_reduce(x, "sum", offsets=...),
                  torch index_add_ by segment id, cupy.add.reduceat where CuPy has it
  u32-keys-B      random keys in [0, B): torch.bincount(minlength=B) / cupy.bincount
  f32-keys-B      f32 values summed into B random bins: torch index_add_ (not deterministic)
  f32-sum         the plain sum of the same n, for scale
Every (lib, case, op) runs in its own try/except: a failure goes to stderr and the rest go on.

  python3 benches/peers/torch_cupy_segment.py --n 2^28 \
      --cases f32-rows-16384x16384,f32-cols-16384x16384,f32-ragged-256,u32-keys-1048576
"""

import argparse
import json
import re
import statistics
import sys
import traceback

DEFAULT_CASES = ",".join(
    ["f32-sum"]
    + [f"f32-rows-{r}" for r in ("16384x16384", "1048576x256", "256x1048576", "16777216x16",
                                  "67108864x4", "1x268435456")]
    + [f"f32-cols-{r}" for r in ("16384x16384", "1048576x256", "256x1048576", "16777216x16")]
    + ["f32-ragged-16", "f32-ragged-256", "f32-ragged-65536", "u32-keys-1048576",
       "f32-keys-1048576"])


def parse_n(s):
    s = s.strip()
    return 1 << int(s[2:]) if s.startswith("2^") else int(s.replace("_", ""))


def ragged_lengths(np, n, mean, seed=1):
    """Heavy-tailed segment lengths that add up to n: lognormal(sigma 1.5) draws scaled to the
    mean, about 10% forced to 0, the remainder given to the last segment."""
    rng = np.random.default_rng(seed)
    r = max(1, n // mean)
    w = rng.lognormal(0.0, 1.5, r)
    w[rng.random(r) < 0.1] = 0.0
    lens = np.floor(w / w.sum() * n).astype(np.int64)
    lens[-1] += n - lens.sum()
    return lens


def emit(rec):
    print(json.dumps(rec), flush=True)
    print(f"{rec['lib']}: {rec['case']} {rec['op']}: {rec['device_time_us']:.1f} us "
          f"{rec['gbps']:.1f} GB/s", file=sys.stderr)


def timed(call, start, end, reps, warmup, elapsed_ms):
    times = []
    for rep in range(warmup + reps):
        start.record()
        call()
        end.record()
        end.synchronize()
        if rep >= warmup:
            times.append(elapsed_ms(start, end) * 1e3)
    return statistics.median(times), min(times), max(times)


def parse_case(c):
    m = re.fullmatch(r"(f32|f64|i32)-(rows|cols|rowmax)-(\d+)x(\d+)", c)
    if m:
        return {"kind": m.group(2), "ty": m.group(1), "r": int(m.group(3)),
                "c": int(m.group(4))}
    m = re.fullmatch(r"(f32|f64|i32)-ragged-(\d+)", c)
    if m:
        return {"kind": "ragged", "ty": m.group(1), "mean": int(m.group(2))}
    m = re.fullmatch(r"(u32|f32)-keys-(\d+)", c)
    if m:
        return {"kind": "keys", "ty": m.group(1), "bins": int(m.group(2))}
    if c == "f32-sum":
        return {"kind": "sum", "ty": "f32"}
    return None


def torch_ops(torch, np, case, p, n, dev):
    """[(op, call, results)] with inputs made on the device; x is n elements."""
    g = torch.Generator(device=dev).manual_seed(1)
    # u32 keys cases read no x values: x is f32 there
    dt = {"f64": torch.float64, "i32": torch.int32}.get(p["ty"], torch.float32)
    if p["ty"] == "i32":
        x = torch.randint(-1000, 1000, (n,), dtype=dt, device=dev, generator=g)
    else:
        x = torch.empty(n, dtype=dt, device=dev).uniform_(-64, 64, generator=g)
    sink = []
    k = p["kind"]
    if k == "sum":
        return [("sum", lambda: sink.append(torch.sum(x)), 1)]
    if k in ("rows", "cols", "rowmax"):
        r, c = p["r"], p["c"]
        m = x.view(r, c)
        if k == "rows":
            return [("sum(dim=1)", lambda: sink.append(torch.sum(m, dim=1)), r)]
        if k == "cols":
            return [("sum(dim=0)", lambda: sink.append(torch.sum(m, dim=0)), c)]
        return [("max(dim=1)", lambda: sink.append(torch.max(m, dim=1)), r),
                ("argmax(dim=1)", lambda: sink.append(torch.argmax(m, dim=1)), r)]
    if k == "ragged":
        lens = ragged_lengths(np, n, p["mean"])
        r = len(lens)
        lengths = torch.from_numpy(lens).to(dev)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int64, device=dev),
                             torch.cumsum(lengths, 0)])
        seg = torch.repeat_interleave(torch.arange(r, device=dev), lengths)
        out = torch.zeros(r, dtype=dt, device=dev)
        return [
            ("segment_reduce(offsets)",
             lambda: sink.append(torch.segment_reduce(x, "sum", offsets=offsets)), r),
            ("index_add_(segment ids)", lambda: sink.append(out.zero_().index_add_(0, seg, x)),
             r),
        ]
    if k == "keys":
        b = p["bins"]
        keys = torch.randint(0, b, (n,), dtype=torch.int64, device=dev, generator=g)
        if p["ty"] == "u32":
            k32 = keys.to(torch.int32)
            return [("bincount", lambda: sink.append(torch.bincount(k32, minlength=b)), b)]
        out = torch.zeros(b, dtype=torch.float32, device=dev)
        return [("index_add_", lambda: sink.append(out.zero_().index_add_(0, keys, x)), b)]
    return []


def cupy_ops(cupy, np, case, p, n):
    dt = {"f64": cupy.float64, "i32": cupy.int32}.get(p["ty"], cupy.float32)
    rng = cupy.random.default_rng(1)
    if p["ty"] == "i32":
        x = rng.integers(-1000, 1000, n, dtype=cupy.int32)
    else:
        x = rng.uniform(-64, 64, n).astype(dt)
    sink = []
    k = p["kind"]
    if k == "sum":
        return [("sum", lambda: sink.append(cupy.sum(x)), 1)]
    if k in ("rows", "cols", "rowmax"):
        r, c = p["r"], p["c"]
        m = x.reshape(r, c)
        if k == "rows":
            return [("sum(axis=1)", lambda: sink.append(cupy.sum(m, axis=1)), r)]
        if k == "cols":
            return [("sum(axis=0)", lambda: sink.append(cupy.sum(m, axis=0)), c)]
        return [("argmax(axis=1)", lambda: sink.append(cupy.argmax(m, axis=1)), r)]
    if k == "ragged":
        lens = ragged_lengths(np, n, p["mean"])
        starts = cupy.asarray(np.concatenate([[0], np.cumsum(lens)[:-1]]))
        # reduceat gives x[start] for an empty segment, not 0: the time is still the peer's
        return [("add.reduceat", lambda: sink.append(cupy.add.reduceat(x, starts)), len(lens))]
    if k == "keys" and p["ty"] == "u32":
        keys = rng.integers(0, p["bins"], n, dtype=cupy.int32)
        return [("bincount", lambda: sink.append(cupy.bincount(keys, minlength=p["bins"])),
                 p["bins"])]
    return []


def run_lib(lib, cases, n, reps, warmup, dev_index):
    import numpy as np
    if lib == "torch":
        import torch
        dev = torch.device("cuda", dev_index)
        name, ver = torch.cuda.get_device_properties(dev).name, torch.__version__
        ev = lambda: torch.cuda.Event(enable_timing=True)  # noqa: E731
        elapsed = lambda s, e: s.elapsed_time(e)  # noqa: E731
        make = lambda c, p: torch_ops(torch, np, c, p, n, dev)  # noqa: E731
        free = torch.cuda.empty_cache
    else:
        import cupy
        cupy.cuda.Device(dev_index).use()
        props = cupy.cuda.runtime.getDeviceProperties(dev_index)
        name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        ver = cupy.__version__
        ev = cupy.cuda.Event
        elapsed = cupy.cuda.get_elapsed_time
        make = lambda c, p: cupy_ops(cupy, np, c, p, n)  # noqa: E731
        free = cupy.get_default_memory_pool().free_all_blocks
    for case in cases:
        p = parse_case(case)
        if p is None:
            print(f"{lib}: no peer for case {case!r}, skipped", file=sys.stderr)
            continue
        if p["kind"] in ("rows", "cols", "rowmax") and p["r"] * p["c"] != n:
            print(f"{lib}: {case}: R*C != n = {n}, skipped", file=sys.stderr)
            continue
        ops = []
        try:
            ops = make(case, p)
        except Exception as e:  # noqa: BLE001
            print(f"{lib}: {case} inputs failed: {type(e).__name__}: {e}", file=sys.stderr)
        esize = 8 if p["ty"] == "f64" else 4
        for op, call, results in ops:
            try:
                med, lo, hi = timed(call, ev(), ev(), reps, warmup, elapsed)
                emit({"lib": lib, "version": ver, "case": case, "op": op, "device": name,
                      "n": n, "results": results, "gbps": n * esize / (med * 1e3),
                      "device_time_us": med, "device_time_us_min": lo,
                      "device_time_us_max": hi, "reps": reps})
            except Exception as e:  # noqa: BLE001
                print(f"{lib}: {case} {op} failed: {type(e).__name__}: {e}", file=sys.stderr)
                traceback.print_exc(limit=2, file=sys.stderr)
        del ops
        free()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="2^28")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cuda-device", type=int, default=0)
    ap.add_argument("--libs", default="torch,cupy")
    ap.add_argument("--cases", default=DEFAULT_CASES)
    a = ap.parse_args()
    cases = [c.strip() for c in a.cases.split(",") if c.strip()]
    for lib in (x.strip() for x in a.libs.split(",")):
        try:
            run_lib(lib, cases, parse_n(a.n), a.reps, a.warmup, a.cuda_device)
        except Exception as e:  # noqa: BLE001
            print(f"{lib}: skipped: {type(e).__name__}: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

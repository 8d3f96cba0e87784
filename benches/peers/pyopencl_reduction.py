#!/usr/bin/env python3
"""PyOpenCL's ReductionKernel (f32 sum) on each OpenCL device: the peer `clreduce bench --peers`
compares against.

Prints one JSON line per (device, n) on stdout:
  {"lib": "pyopencl", "device": "PLATFORM / NAME", "n": N, "gbps": G, "device_time_us": T, ...}
progress and notes go to stderr.

Device time is from the start of ReductionKernel's first kernel (stage 1) to the end of its last
(stage 2), from OpenCL profiling events; gbps = n * 4 bytes / that time (median over --reps after
--warmup untimed runs). Cache handling is clreduce bench's: inputs larger than 2x the last-level
cache are read cold, smaller ones rotate among K copies so no repetition reads the buffer the
previous one read.

Needs pyopencl and mako, e.g. `pip install --target .pydeps pyopencl mako` and
PYTHONPATH=.pydeps (clreduce bench sets it). Simulators (Oclgrind) are skipped unless named.

  python3 benches/peers/pyopencl_reduction.py --sizes 2^20,2^22 --reps 5
"""

import argparse
import dataclasses
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import pyopencl as cl
import pyopencl.array as cla
from pyopencl.reduction import ReductionKernel


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


def sysfs_llc():
    best = None
    base = "/sys/devices/system/cpu/cpu0/cache"
    try:
        entries = os.listdir(base)
    except OSError:
        return None
    for e in entries:
        if not e.startswith("index"):
            continue
        try:
            rd = lambda f: open(os.path.join(base, e, f)).read().strip()
            if rd("type") == "Instruction":
                continue
            level, size = int(rd("level")), rd("size")
        except (OSError, ValueError):
            continue
        mult = {"K": 1 << 10, "M": 1 << 20}.get(size[-1], 1)
        b = int(size.rstrip("KM")) * mult
        if best is None or level > best[0]:
            best = (level, b)
    return best[1] if best else None


def llc_of(dev):
    cl_size = dev.global_mem_cache_size or 0
    if dev.type & cl.device_type.CPU:
        return max(sysfs_llc() or 0, cl_size) or (32 << 20)
    return cl_size or (32 << 20)


def rotation(nbytes, llc):
    """Same rule as clreduce bench: (copies, cache state)."""
    if nbytes > 2 * llc:
        return 1, "cold (> LLC)"
    k = max(2, min(16, 2 * llc // max(nbytes, 1) + 1))
    state = "together > LLC" if k * nbytes > llc else "all fit in LLC: warm"
    return k, f"rotating {k} buffers ({state})"


class Recorder:
    """Wraps a cl.Kernel so every launch's event is recorded."""

    def __init__(self, kernel, events):
        self.kernel = kernel
        self.events = events

    def __call__(self, *args, **kwargs):
        evt = self.kernel(*args, **kwargs)
        self.events.append(evt)
        return evt

    def __getattr__(self, name):
        return getattr(self.kernel, name)


def label(platform, dev):
    return f"{platform.name.strip()} / {dev.name.strip()}"


def wanted(lbl, filters, include_sim):
    if filters:
        return any(f == lbl or f.lower() in lbl.lower() for f in filters)
    return include_sim or "Oclgrind" not in lbl


def bench_device(platform, dev, sizes, reps, warmup, seed):
    lbl = label(platform, dev)
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(
        ctx, properties=cl.command_queue_properties.PROFILING_ENABLE
    )
    events = []
    rk = ReductionKernel(
        ctx,
        np.float32,
        neutral="0",
        reduce_expr="a+b",
        map_expr="x[i]",
        arguments="__global const float *x",
    )
    # ReductionKernel returns only its last kernel's event: record both stages' events.
    rk.stage_1_inf = dataclasses.replace(
        rk.stage_1_inf, kernel=Recorder(rk.stage_1_inf.kernel, events)
    )
    rk.stage_2_inf = dataclasses.replace(
        rk.stage_2_inf, kernel=Recorder(rk.stage_2_inf.kernel, events)
    )
    llc = llc_of(dev)
    rng = np.random.default_rng(seed)
    for n in sizes:
        nbytes = n * 4
        if nbytes > dev.max_mem_alloc_size:
            print(f"pyopencl: {lbl}: 2^{n.bit_length() - 1} exceeds max alloc, skipped",
                  file=sys.stderr)
            continue
        host = (rng.integers(-4096, 4096, n, dtype=np.int32) / 64.0).astype(np.float32)
        expect = float(np.sum(host, dtype=np.float64))
        sum_abs = float(np.sum(np.abs(host), dtype=np.float64))
        k, cache = rotation(nbytes, llc)
        mf = cl.mem_flags
        bufs = [
            cla.Array(queue, (n,), np.float32,
                           data=cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host))
            for _ in range(k)
        ]
        # One untimed run over every copy: a driver may allocate or copy a buffer's storage on
        # its first use by a kernel.
        for b in bufs:
            rk(b, queue=queue).get()
        dev_ns, wall_ns, got = [], [], None
        for rep in range(warmup + reps):
            events.clear()
            t0 = time.perf_counter_ns()
            res = rk(bufs[rep % k], queue=queue)
            got = float(res.get())
            w = time.perf_counter_ns() - t0
            d = events[-1].profile.end - events[0].profile.start
            if rep >= warmup:
                dev_ns.append(d)
                wall_ns.append(w)
        med = statistics.median(dev_ns)
        ok = abs(got - expect) <= 1e-5 * sum_abs + 1e-6
        rec = {
            "lib": "pyopencl",
            "device": lbl,
            "n": n,
            "gbps": nbytes / max(med, 1),
            "device_time_us": med / 1e3,
            "device_time_us_min": min(dev_ns) / 1e3,
            "device_time_us_max": max(dev_ns) / 1e3,
            "wall_us": statistics.median(wall_ns) / 1e3,
            "reps": reps,
            "cache": cache,
            "kernels": len(events),
            "check": "ok" if ok else f"MISMATCH got {got} expected {expect}",
        }
        print(json.dumps(rec), flush=True)
        print(f"pyopencl: {lbl}: n=2^{n.bit_length() - 1}: {rec['gbps']:.2f} GB/s", file=sys.stderr)
        del bufs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2^10..2^28",
                    help="comma list of N, 2^K or 2^A..2^B (default 2^10..2^28)")
    ap.add_argument("--max-n", default=None, help="largest n (N or 2^K)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", action="append", default=[],
                    help="exact 'PLATFORM / NAME' label or substring; repeatable (default: all "
                         "devices except simulators)")
    ap.add_argument("--include-simulators", action="store_true")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    warnings.filterwarnings("ignore", category=cl.CompilerWarning)
    sizes = parse_sizes(a.sizes)
    if a.max_n:
        sizes = [n for n in sizes if n <= parse_n(a.max_n)]
    found = 0
    for p in cl.get_platforms():
        try:
            devs = p.get_devices()
        except cl.Error:
            continue
        for d in devs:
            lbl = label(p, d)
            if not wanted(lbl, a.device, a.include_simulators):
                continue
            found += 1
            try:
                bench_device(p, d, sizes, a.reps, a.warmup, a.seed)
            except Exception as e:  # one device's failure does not stop the others
                print(f"pyopencl: {lbl}: failed: {e}", file=sys.stderr)
    if not found:
        print("pyopencl: no matching OpenCL device", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

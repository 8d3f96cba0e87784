#!/usr/bin/env python3
"""The classic reduction optimization ladder (benches/ladder/ladder.cl) on each OpenCL device,
f32 sum at 2^22 and 2^26 by default, as a GB/s table (or JSON lines with --jsonl).

Steps (Harris, "Optimizing Parallel Reduction in CUDA", in OpenCL C):
  1 interleaved addressing, divergent branching
  2 interleaved addressing, strided index (no divergence)
  3 sequential addressing
  4 first add during load
  5 last steps by sub_group_reduce_add (OpenCL's stand-in for "unroll the last warp";
    not applicable without sub-groups)
  6 complete unrolling for the work-group size
  7 many elements per work-item (fixed number of work-groups, grid stride)

Every step reduces to one value by running its kernel again over the partials; device time is
from the first pass's start to the last pass's end (OpenCL profiling events), GB/s = n*4 / that
(median over --reps after --warmup). Inputs larger than 2x the last-level cache are read cold;
smaller ones rotate among K copies, as in clreduce bench. CUDA GPUs take part through NVIDIA's
OpenCL platform when its ICD is installed. Simulators (Oclgrind) are skipped unless named.

Needs pyopencl (pip install --target .pydeps pyopencl mako; PYTHONPATH=.pydeps).

  python3 benches/ladder/ladder.py --sizes 2^22,2^26 --reps 10
"""

import argparse
import json
import os
import statistics
import sys
import warnings

import numpy as np
import pyopencl as cl

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "peers"))
from pyopencl_reduction import (  # noqa: E402  (shared helpers)
    label,
    llc_of,
    parse_n,
    parse_sizes,
    rotation,
    wanted,
)

STEPS = [
    (1, "r1_interleaved_divergent", "interleaved addressing, divergent branch", 1),
    (2, "r2_interleaved_strided", "interleaved addressing, strided index", 1),
    (3, "r3_sequential", "sequential addressing", 1),
    (4, "r4_first_add_during_load", "first add during load", 2),
    (5, "r5_last_steps_subgroup", "last steps by sub-group reduce", 2),
    (6, "r6_complete_unroll", "complete unrolling by work-group size", 2),
    (7, "r7_many_per_item", "many elements per work-item", 0),
]


def cl_std(dev):
    """The newest OpenCL C the device compiles, as a -cl-std option (for sub-groups)."""
    v = dev.opencl_c_version  # "OpenCL C 3.0 ..."
    try:
        major = int(v.split()[2].split(".")[0])
    except (IndexError, ValueError):
        major = 1
    if major >= 3:
        return "-cl-std=CL3.0"
    if major == 2:
        return "-cl-std=CL2.0"
    return None


def has_subgroups(dev):
    ext = dev.extensions.split()
    if "cl_khr_subgroups" in ext:
        return True
    try:
        feats = [f.name for f in dev.opencl_c_features]
    except (cl.Error, AttributeError):
        feats = []
    return "__opencl_c_subgroups" in feats


def build(ctx, dev, src, wg, sg):
    opts = [f"-DWG={wg}"]
    if sg:
        std = cl_std(dev)
        if std is None:
            raise RuntimeError("sub-groups need OpenCL C 2.0 or newer")
        opts += ["-DLADDER_SG", std]
    return cl.Program(ctx, src).build(options=opts, devices=[dev])


def groups_for(step_div, m, wg, cap):
    if step_div == 0:  # step 7: a fixed number of groups, many elements each
        return max(1, min(-(-m // (2 * wg)), cap))
    return -(-m // (wg * step_div))


def run_step(queue, knl, step_div, wg, cap, src_buf, n, scratch):
    """All passes of one step; returns (events, the buffer holding the result)."""
    events = []
    m, cur, k = n, src_buf, 0
    while True:
        g = groups_for(step_div, m, wg, cap)
        out = scratch[k % 2]
        evt = knl(queue, (g * wg,), (wg,), cur, out, np.uint32(m))
        events.append(evt)
        m, cur, k = g, out, k + 1
        if m == 1:
            return events, cur


def bench_device(platform, dev, sizes, reps, warmup, wg_want, seed):
    lbl = label(platform, dev)
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    src = open(os.path.join(HERE, "ladder.cl")).read()
    wg = 1
    while wg * 2 <= min(wg_want, dev.max_work_group_size):
        wg *= 2
    wg = max(wg, 64)
    progs, notes = {}, {}
    try:
        progs["base"] = build(ctx, dev, src, wg, False)
    except Exception as e:  # noqa: BLE001
        notes["base"] = f"build failed: {str(e).splitlines()[0]}"
    if not has_subgroups(dev):
        notes["sg"] = "n/a: no sub-groups (warp-synchronous unrolling is not valid OpenCL)"
    else:
        try:
            progs["sg"] = build(ctx, dev, src, wg, True)
        except Exception as e:  # noqa: BLE001
            notes["sg"] = f"n/a: sub-group build failed: {str(e).splitlines()[0]}"
    # Step 7's work-groups: enough to fill a GPU (2048 work-items per compute unit), 4 per CPU core.
    is_gpu = dev.type & cl.device_type.GPU
    cap = dev.max_compute_units * (max(1, 2048 // wg) if is_gpu else 4)
    llc = llc_of(dev)
    rng = np.random.default_rng(seed)
    out, kernels = [], {}
    for n in sizes:
        nbytes = n * 4
        if nbytes > dev.max_mem_alloc_size:
            print(f"ladder: {lbl}: n={n} exceeds max alloc, skipped", file=sys.stderr)
            continue
        host = (rng.integers(-4096, 4096, n, dtype=np.int32) / 64.0).astype(np.float32)
        expect = float(np.sum(host, dtype=np.float64))
        sum_abs = float(np.sum(np.abs(host), dtype=np.float64))
        k, cache = rotation(nbytes, llc)
        mf = cl.mem_flags
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=host) for _ in range(k)]
        part = max(1, -(-n // wg))
        scratch = [cl.Buffer(ctx, mf.READ_WRITE, part * 4) for _ in range(2)]
        primed = False
        for step, name, what, div in STEPS:
            rec = {"device": lbl, "step": step, "kernel": name, "what": what, "n": n,
                   "wg": wg, "cache": cache, "gbps": None, "device_time_us": None, "note": None}
            prog = progs.get("sg" if step == 5 else "base")
            if prog is None:
                rec["note"] = notes.get("sg" if step == 5 else "base")
                emit(out, rec)
                continue
            if name not in kernels:
                kernels[name] = cl.Kernel(prog, name)
            knl = kernels[name]
            kwg = knl.get_work_group_info(cl.kernel_work_group_info.WORK_GROUP_SIZE, dev)
            if kwg < wg:
                rec["note"] = f"n/a: kernel work-group size limit {kwg} < {wg}"
                emit(out, rec)
                continue
            if not primed:
                # One untimed pass over every copy: a driver may allocate or copy a buffer's
                # storage on its first use by a kernel.
                for b in bufs:
                    run_step(queue, knl, div, wg, cap, b, n, scratch)
                queue.finish()
                primed = True
            times, got = [], None
            for rep in range(warmup + reps):
                evts, res = run_step(queue, knl, div, wg, cap, bufs[rep % k], n, scratch)
                r = np.empty(1, np.float32)
                cl.enqueue_copy(queue, r, res)
                got = float(r[0])
                if rep >= warmup:
                    times.append(evts[-1].profile.end - evts[0].profile.start)
            med = statistics.median(times)
            rec["gbps"] = nbytes / max(med, 1)
            rec["device_time_us"] = med / 1e3
            rec["passes"] = len(evts)
            if abs(got - expect) > 1e-5 * sum_abs + 1e-6:
                rec["note"] = f"MISMATCH got {got} expected {expect}"
            emit(out, rec)
            print(f"ladder: {lbl}: n={n} step {step}: {rec['gbps']:.2f} GB/s", file=sys.stderr)
        del bufs, scratch
    return out


JSONL = False


def emit(out, rec):
    out.append(rec)
    if JSONL:
        print(json.dumps(rec), flush=True)


def main():
    global JSONL
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="2^22,2^26")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--wg", type=int, default=256, help="work-group size (power of two)")
    ap.add_argument("--device", action="append", default=[],
                    help="exact 'PLATFORM / NAME' label or substring; repeatable")
    ap.add_argument("--include-simulators", action="store_true")
    ap.add_argument("--jsonl", action="store_true", help="JSON lines instead of a table")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    JSONL = a.jsonl
    warnings.filterwarnings("ignore", category=cl.CompilerWarning)
    sizes = parse_sizes(a.sizes)
    rows = []
    for p in cl.get_platforms():
        try:
            devs = p.get_devices()
        except cl.Error:
            continue
        for d in devs:
            lbl = label(p, d)
            if not wanted(lbl, a.device, a.include_simulators):
                continue
            try:
                rows += bench_device(p, d, sizes, a.reps, a.warmup, a.wg, a.seed)
            except Exception as e:  # noqa: BLE001  one device's failure does not stop the others
                print(f"ladder: {lbl}: failed: {e}", file=sys.stderr)
    if not rows:
        print("ladder: no matching OpenCL device", file=sys.stderr)
        return 1
    if not JSONL:
        hdr = ("device", "n", "step", "kernel", "dev us", "GB/s", "note")
        table = [hdr] + [
            (r["device"], f"2^{r['n'].bit_length() - 1}", str(r["step"]), r["kernel"],
             "-" if r["device_time_us"] is None else f"{r['device_time_us']:.1f}",
             "-" if r["gbps"] is None else f"{r['gbps']:.2f}", r["note"] or "")
            for r in rows
        ]
        w = [max(len(row[i]) for row in table) for i in range(len(hdr))]
        for row in table:
            print("  ".join(c.ljust(w[i]) if i in (0, 3, 6) else c.rjust(w[i])
                            for i, c in enumerate(row)).rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())

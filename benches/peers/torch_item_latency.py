#!/usr/bin/env python3
"""Call-to-result wall time of torch's `x.sum().item()` on a CUDA GPU: the peer of
`examples/shortcut_latency.rs` (issue 29: `queue.sum(&x)` no slower than this in the same run).

usage: python3 torch_item_latency.py [reps] [n...]   (default 300 calls, n = 1024 1048576)
Prints one line per size: the median over `reps` calls after 20 warm-up calls, float32 input
of fresh random values already on the GPU.
"""
import sys
import time

import torch


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    sizes = [int(s) for s in sys.argv[2:]] or [1 << 10, 1 << 20]
    print(f"torch {torch.__version__} on {torch.cuda.get_device_name(0)} ({reps} calls each, medians)")
    for n in sizes:
        x = torch.rand(n, device="cuda", dtype=torch.float32) - 0.5
        times = []
        for r in range(reps + 20):
            t0 = time.perf_counter()
            x.sum().item()
            dt = (time.perf_counter() - t0) * 1e6
            if r >= 20:
                times.append(dt)
        times.sort()
        print(f"torch   n={n:<8} x.sum().item() {times[len(times) // 2]:>9.2f} us")


if __name__ == "__main__":
    main()

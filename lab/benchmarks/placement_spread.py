"""Does where the matrices land in GPU memory move a short kernel's time?  (Issue "numbers that
hold on real data": two runs of the compare preset agree within 0.1-0.6% on short kernels, yet
each run's [min, q3] interval is only 0.1-0.3% wide, so nvbench's criterion calls them UNSURE.)

For each size, cuBLAS SGEMM (CuPy's matmul) is timed in batches of back-to-back launches (CUDA
events around each batch), first on several fresh allocations in one process, each shifted by an
offset allocation of a different size, then the same again in a second process.  It prints, per
size, each allocation's median per-launch time, the width of its [min, q3] interval, and the
spread of the medians across allocations and across processes: if the spread across allocations
is as large as the one between runs, placement is what the runs differ by.

The launches are queued by the host, one CuPy call each (about 35 us on the H100 machine): sizes
whose kernel is shorter than that measure the host's launch rate, not the kernel (the pipeline's
batches wait behind a blocking kernel instead).  First run, H100, 2026-11-23: at 2048 (343 us)
the medians of 8 allocations spread by 0.22% and 0.38% within the two processes and the
processes' medians differ by 0.22%; 512 and 768 were launch-bound.

    python3 lab/benchmarks/placement_spread.py [--sizes 512 768 1024] [--allocations 8]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

import numpy as np


def measure(sizes: list[int], allocations: int, batches: int, seed: int) -> dict:
    import cupy as cp

    rng = np.random.default_rng(seed)
    out = {}
    for n in sizes:
        per = []
        for i in range(allocations):
            pad = cp.empty(int(rng.integers(1, 64)) * 2**20 + i * 4096, dtype=cp.uint8)
            a = cp.asarray(rng.integers(0, 10, (n, n)), dtype=cp.float32)
            b = cp.asarray(rng.integers(0, 10, (n, n)), dtype=cp.float32)
            c = cp.empty((n, n), dtype=cp.float32)
            launch = 50
            for _ in range(launch):  # warm-up
                cp.matmul(a, b, out=c)
            start, stop = cp.cuda.Event(), cp.cuda.Event()
            ms = []
            for _ in range(batches):
                start.record()
                for _ in range(launch):
                    cp.matmul(a, b, out=c)
                stop.record()
                stop.synchronize()
                ms.append(cp.cuda.get_elapsed_time(start, stop) / launch)
            q3, med = np.percentile(ms, [75, 50])
            per.append(dict(median=float(med), width=float((q3 - min(ms)) / med)))
            del a, b, c, pad
            cp.get_default_memory_pool().free_all_blocks()
        out[str(n)] = per
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[512, 768, 1024])
    ap.add_argument("--allocations", type=int, default=8)
    ap.add_argument("--batches", type=int, default=100)
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--child", type=int, default=-1, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child >= 0:
        print(json.dumps(measure(args.sizes, args.allocations, args.batches, args.child)))
        return 0
    runs = []
    for p in range(args.processes):
        cmd = [sys.executable, __file__, "--child", str(p), "--sizes", *map(str, args.sizes),
               "--allocations", str(args.allocations), "--batches", str(args.batches)]  # fmt: skip
        runs.append(
            json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
        )
    for n in map(str, args.sizes):
        print(f"N = {n}: per-launch median (us) of each allocation; [min, q3] width")
        process_medians = []
        for p, run in enumerate(runs):
            meds = [x["median"] * 1e3 for x in run[n]]
            widths = [x["width"] for x in run[n]]
            process_medians.append(float(np.median(meds)))
            print(
                f"  process {p}: " + " ".join(f"{m:.3f}" for m in meds)
                + f"; across allocations {100 * (max(meds) / min(meds) - 1):.2f}%"
                + f"; interval width median {100 * np.median(widths):.2f}%"
            )  # fmt: skip
        gap = 100 * (max(process_medians) / min(process_medians) - 1)
        print(f"  between the processes' medians: {gap:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The recorded power against nvidia-smi's (issue "numbers that hold on real data"): measures
one configuration under the sustained load through the runner, the pipeline's own path, while
`nvidia-smi --query-gpu=power.draw.instant,clocks.sm -lms 100` reads the board beside it, and
prints the row's power, clock and energy columns next to nvidia-smi's median over the same
timed window (the reads between the row's settle and its end).

    python3 tools/power_check.py [--variant cublas] [--dtype float64] [--size 8192]
                                 [--distribution normal]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from datetime import datetime

import numpy as np

from mmbench.core.axes import Configuration
from mmbench.core.registry import load_registry
from mmbench.measure.runner import Runner
from mmbench.measure.timing import Sampling


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="cublas")
    ap.add_argument("--dtype", default="float64")
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--distribution", default="normal")
    ap.add_argument("--window", type=float, default=3.0, help="sustained_window_s")
    a = ap.parse_args()
    v = load_registry()[a.variant]
    if v.compiled:
        sys.exit("this check takes a library variant (cublas, cublas_tf32): no cubin to build")
    conf = Configuration.of(
        a.variant, {"dtype": a.dtype}, m=a.size, n=a.size, k=a.size, accumulate=False,
        memory="pinned", distribution=a.distribution, seed=2024, math=v.math, load="sustained",
    )  # fmt: skip
    smi = subprocess.Popen(
        ["nvidia-smi", "--query-gpu=timestamp,power.draw.instant,clocks.sm",
         "--format=csv,noheader,nounits", "-lms", "100"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    rows = []
    Runner(v, {}, Sampling(sustained_window_s=a.window)).run([conf], lambda c, r: rows.append(r))
    end = time.time()
    time.sleep(0.3)
    smi.terminate()
    (r,) = rows
    if r["verification"] != "PASS":
        print(f"{a.variant} {a.dtype} {a.size}: {r['verification']} {r.get('error', '')}")
        return 1
    reads = []
    for line in smi.stdout.read().splitlines():
        stamp, watts, mhz = (x.strip() for x in line.split(","))
        t = datetime.strptime(stamp, "%Y/%m/%d %H:%M:%S.%f").timestamp()
        reads.append((t, float(watts), float(mhz)))
    reads = np.array(reads)
    window = (reads[:, 0] >= end - r["window_s"]) & (reads[:, 0] <= end)
    smi_w, smi_mhz = np.median(reads[window, 1]), np.median(reads[window, 2])
    gap = r["power_w_median"] / smi_w - 1
    print(
        f"{a.variant} {a.dtype} {a.size} {a.distribution}, sustained: {r['kernel_ms']:.3f} ms (mean), "
        f"{r['kernel_gflops'] / 1e3:.1f} TFLOP/s, settled={r['settled']} after "
        f"{r['settle_s']:.1f} s, window {r['window_s']:.2f} s (duty {r['duty']:.3f})\n"
        f"  recorded:   power median {r['power_w_median']:.1f} W (min {r['power_w_min']:.1f}), "
        f"SM clock median {r['sm_clock_mhz']:.0f} MHz (min {r['sm_clock_mhz_min']:.0f}), "
        f"below max clock {r['below_max_clock']:.0%} ({r['slowdown_reasons'] or 'no reason'})\n"
        f"  energy:     {r['energy_power_w']:.1f} W mean over {r['energy_window_s']:.2f} s, "
        f"{r['energy_j_per_product']:.3f} J per product, {r['gflops_per_w']:.1f} GFLOP/s per W\n"
        f"  nvidia-smi: power.draw.instant median {smi_w:.1f} W, clocks.sm median "
        f"{smi_mhz:.0f} MHz over the same {window.sum()} reads\n"
        f"  recorded / nvidia-smi: {gap:+.1%} (target: within 5%)"
    )
    return 0 if abs(gap) <= 0.05 else 1


if __name__ == "__main__":
    sys.exit(main())

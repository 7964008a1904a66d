"""Does Nsight Compute's cost per profiled launch grow with the device memory the target process
holds?  (Issue "the main command at the speed of the GPU": the ladder preset's one Nsight Compute
run held the GPU about 51 s for 25 profiles at 4096, where the kernels' own replays take well
under a second; an empty kernel took 0.76 s to profile with the ladder's metric set,
lab/benchmarks/ncu_batch_split.py.)  Kernel replay restores the memory a profiled kernel may have
written before each pass; if what it saves is every allocation of the context, the batch's
target, which keeps each shape's inputs and references for the configurations after it, pays
for all of them on every pass.

For each footprint F (GiB) the target allocates F GiB with CuPy and writes it, then either
keeps it (`held`) or frees it to CuPy's pool (`pooled`: freed for CuPy, still allocated for
CUDA), or frees the pool's blocks too (`released`), and launches an empty kernel LAUNCHES
times, each in a profiler range of its own.  Nsight Compute runs it twice, profiling the empty
kernel with the metric set, and profiling nothing (a filter no kernel matches); the difference
over LAUNCHES is the cost of profiling one launch.  On the GPU machine:

    python3 lab/benchmarks/ncu_footprint.py [--gib 0,4,16] [--launches 4] [--metric-set ladder]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow" / "scripts"))

EMPTY = "ncu_footprint_empty"


def target(gib: float, how: str, launches: int) -> int:
    import cupy as cp

    kernel = cp.RawKernel(f'extern "C" __global__ void {EMPTY}() {{}}', EMPTY)
    kernel((1,), (1,), ())  # loaded outside every range
    block = None
    if gib:
        block = cp.ones(int(gib * 2**30), dtype=cp.uint8)  # written: its pages are real
    if how in ("pooled", "released"):
        del block
        block = None
    if how == "released":
        cp.get_default_memory_pool().free_all_blocks()
    cp.cuda.runtime.deviceSynchronize()
    for _ in range(launches):
        cp.cuda.runtime.profilerStart()
        kernel((1,), (1,), ())
        cp.cuda.runtime.deviceSynchronize()
        cp.cuda.runtime.profilerStop()
    print(f"pool holds {cp.get_default_memory_pool().total_bytes() / 2**30:.2f} GiB")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gib", default="0,4,16", help="footprints in GiB, comma-separated")
    ap.add_argument("--ways", default="held,pooled,released")
    ap.add_argument("--launches", type=int, default=4)
    ap.add_argument("--metric-set", default="ladder")
    ap.add_argument("--ncu", default="ncu")
    ap.add_argument("--target", nargs=2, metavar=("GIB", "HOW"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.target:
        return target(float(args.target[0]), args.target[1], args.launches)

    from mmbench.core import paths
    from mmbench.profile import profilers

    mapping = profilers.load_mapping()
    metrics = profilers.ncu_metric_names(mapping, args.metric_set)
    env = paths.child_env(dict(os.environ))
    print(f"metric set {args.metric_set!r}: {len(metrics)} metrics; {args.launches} launches "
          f"of an empty kernel, each in its own profiler range")  # fmt: skip
    failed = 0
    for gib in [float(x) for x in args.gib.split(",")]:
        for how in args.ways.split(",") if gib else ["held"]:
            took = {}
            for name, filt in (("profiled", f"regex:^{EMPTY}$"), ("bare", "regex:^nothing$")):
                cmd = [args.ncu, "--clock-control", "none", "--profile-from-start", "off",
                       "--kernel-name", filt, "--metrics", ",".join(metrics),
                       sys.executable, __file__, "--launches", str(args.launches),
                       "--target", str(gib), how]  # fmt: skip
                start = time.monotonic()
                proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
                took[name] = time.monotonic() - start
                out = proc.stdout + proc.stderr
                if proc.returncode or "==ERROR==" in out:
                    failed += 1
                    print(f"  {gib:g} GiB {how} {name}: exit {proc.returncode}: {out[-300:]}")
            per = (took["profiled"] - took["bare"]) / args.launches
            print(f"{gib:5g} GiB {how:9s} profiled {took['profiled']:6.2f} s, bare "
                  f"{took['bare']:6.2f} s: {per:6.3f} s a profiled launch")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Where a measurement job's host time goes: one variant's configurations of a preset, measured
by the Runner in this process under cProfile (no Snakemake, no worker process).  Prints the
wall time, the GPU-busy time and the functions with the most cumulative time.

    python3 tools/profile_runner.py config/presets/e3c.yaml tiled_guarded [--arch sm_90] [--top 25]
                                    [--sort cumulative|tottime]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

from mmbench.core.registry import load_registry
from mmbench.measure.runner import Runner
from mmbench.measure.timing import Sampling
from mmbench.plan import plan as mmplan
from mmbench.plan.preset import compile_plan, plan_for


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("preset")
    ap.add_argument("variant")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--tuned-gpu", default="", help="another GPU model's tuning (config tuned_gpu)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--sort", default="cumulative", help="pstats' order: cumulative, tottime, ...")
    args = ap.parse_args()
    registry = load_registry()
    plan, cfg = plan_for(
        args.preset, args.variant, args.arch, mmplan.detect_gpus(), registry, args.tuned_gpu
    )
    confs = plan.runs[args.variant]
    v = registry[args.variant]
    print(f"{args.variant}: compiling {len(plan.instantiations)} instantiations, then "
          f"{len(confs)} configurations", flush=True)  # fmt: skip
    cubins = compile_plan(plan, v, args.arch)
    runner = Runner(v, cubins, Sampling(**cfg["sampling"]), {}, cfg["freivalds_vectors"])
    rows = []
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    runner.run(confs, on_row=lambda c, r: rows.append(r))
    prof.disable()
    wall = time.perf_counter() - t0
    busy = sum(r.get("gpu_busy_ms", 0) or 0 for r in rows) / 1e3
    print(f"{args.variant}: {len(rows)} configurations, wall {wall:.1f} s, GPU busy {busy:.1f} s")
    pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

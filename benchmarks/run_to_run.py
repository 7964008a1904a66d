"""What do two runs of a short kernel differ by: the process, or the time?  (Issue "numbers that
hold on real data": two runs of the compare preset differ by up to 3% on kernels of 10-50 us
whose batched samples spread by 0.1-0.4% within a run, so nvbench's criterion cannot call
them SAME.)

Measures a few short configurations with the pipeline's own runner (burst load, batched
samples, one placement of the operands), in several processes one after another, each
measuring every configuration several times (rounds) a few seconds apart.  Prints, per
configuration, each round's batched median, the spread of the rounds within each process, and
the spread of the processes' medians: if the processes differ by more than the rounds, what
two runs differ by is set when a process starts (its CUDA context, its library handles), not
by the time of the measurement.

H100, 2026-11-23 (docs/method.md, Placements): with one placement, cuBLAS at 512 and 768
differed by 2.7% and 3.3% between 4 processes while each process's rounds agreed within
0.1-0.8%; with --fresh the rounds spread by up to 1.4% and 3 processes agreed within
0.13-0.35%; with --placements 4, 3 processes differed by 1.67% and 1.02%.

    python3 benchmarks/run_to_run.py [--processes 4] [--rounds 4] [--pause 2] [--placements 1]
                                     [--fresh]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "workflow" / "scripts")]

# (variant, size, params): the compare preset's kernels that moved most between runs
CONFIGS = [
    ("cublas", 512, {}),
    ("cublas", 768, {}),
    ("cublas", 1024, {}),
    ("tiled_guarded", 512, {"TILE": 32}),
    ("tiled_guarded", 768, {"TILE": 32}),
    ("coarsened", 768, {"TILE": 16, "COARSEN": 4}),
]


def child(rounds: int, pause: float, placements: int, fresh: bool) -> dict:
    from mmbench.core.axes import Configuration
    from mmbench.measure.runner import Runner
    from mmbench.measure.timing import Sampling
    from mmbench.plan import plan
    from mmbench.plan.compile import nvcc_command
    from mmbench.plan.registry import load_registry

    registry = load_registry()
    arch = "sm_" + plan.detect_gpus()[0]["compute_cap"].replace(".", "")
    sampling = Sampling(placements=placements)
    cubins: dict[str, dict[str, str]] = {}
    confs = {}
    tmp = Path(tempfile.mkdtemp())
    for variant, size, params in CONFIGS:
        v = registry[variant]
        c = Configuration(
            variant=variant, params=params, dtype="float32", m=size, n=size, k=size,
            accumulate=False, memory="pinned", distribution="int09", seed=7,
        )  # fmt: skip
        built = cubins.setdefault(variant, {})
        if v.compiled and c.instance not in built:
            out = tmp / f"{variant}_{c.instance}.cubin"
            cmd = nvcc_command(ROOT / "kernels" / v.source, out, v.arch or arch, c.instance_params)
            subprocess.run(cmd, check=True, capture_output=True)
            built[c.instance] = str(out)
        confs[f"{c.label} {size}"] = c

    def runners():
        return {v: Runner(registry[v], built, sampling) for v, built in cubins.items()}

    made = runners()
    alive = [made]  # the old runners stay, so no new one gets their addresses
    out: dict[str, list[float]] = {k: [] for k in confs}
    for r in range(rounds):
        if fresh and r:  # a new stream, batcher and module load (the kernels' code placed anew)
            made = runners()
            alive.append(made)
        for key, c in confs.items():
            rows: list[dict] = []
            made[c.variant].run([c], lambda _c, row, rows=rows: rows.append(row))
            out[key].append(float(rows[0]["batch_ms_median"]))
        time.sleep(pause)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--pause", type=float, default=2.0, help="seconds between rounds")
    ap.add_argument("--placements", type=int, default=1)
    ap.add_argument(
        "--fresh", action="store_true",
        help="a new runner each round: its own stream, blocking kernel and module loads",
    )  # fmt: skip
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.rounds, args.pause, args.placements, args.fresh)))
        return 0
    runs = []
    for _ in range(args.processes):
        cmd = [sys.executable, __file__, "--child", "--rounds", str(args.rounds),
               "--pause", str(args.pause), "--placements", str(args.placements),
               *(["--fresh"] if args.fresh else [])]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr[-3000:])
            return 1
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"batched median per launch (us), {args.rounds} rounds in each of {args.processes} "
          f"processes, {args.placements} placement(s)"
          + (", a new runner each round" if args.fresh else ""))  # fmt: skip
    for key in runs[0]:
        print(key)
        medians = []
        for p, run in enumerate(runs):
            r = np.array(run[key]) * 1e3
            medians.append(float(np.median(r)))
            print(f"  process {p}: " + " ".join(f"{x:.3f}" for x in r)
                  + f"; rounds spread {100 * (r.max() / r.min() - 1):.2f}%")  # fmt: skip
        print(f"  between the processes' medians: {100 * (max(medians) / min(medians) - 1):.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

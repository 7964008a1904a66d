"""How long the planner takes to expand the shapes preset (the drawn products, every rung, the
calibrated model's choice for each), best of three, in this tree or another checkout's:

    python lab/benchmarks/plan_time.py [TREE] [--seed N]

Every Snakemake call (a dry run, a run, a resumed run) plans once before any job starts."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("tree", nargs="?", default=str(ROOT))
    ap.add_argument("--seed", type=int, default=20261202)
    args = ap.parse_args()
    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree / "workflow" / "scripts"))
    from mmbench.plan.experiment import start
    from mmbench.report import catalogue

    cfg = yaml.safe_load((tree / "config" / "presets" / "shapes.yaml").read_text())
    cfg |= {"arch": "sm_90", "tuned_gpu": "NVIDIA H100 80GB HBM3"}
    cfg["draw"] = {**(cfg.get("draw") or {}), "count": 64, "seed": args.seed}
    times = []
    for _ in range(3):
        t = time.perf_counter()
        exp = start(dict(cfg), tree, outputs=catalogue.names())
        times.append(time.perf_counter() - t)
    runs = sum(len(r) for r in exp.plan.runs.values())
    print(f"{tree}: the shapes preset (seed {args.seed}) planned in {min(times):.2f} s "
          f"(best of 3), {runs} instantiation runs")  # fmt: skip


if __name__ == "__main__":
    main()

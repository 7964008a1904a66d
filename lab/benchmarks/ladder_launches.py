"""The launches the ladder preset makes, as the registry of the checkout it runs in works them out:
for each hand-written rung's configuration (variant, instantiation, m x n x k) its grid, block,
cluster, dynamic shared memory and shape facts, on a GPU of SMS multiprocessors named MODEL, with
the tuning of TUNED_GPU.  Run in two checkouts and compared, it says whether a change of the
registry or of core/schedule.py changes a ladder launch (tools/same_cubins.py says whether it
changes the code); no GPU is needed.

    python lab/benchmarks/ladder_launches.py OUT.json [--sms 132] [--model "NVIDIA H200"]
    python lab/benchmarks/ladder_launches.py --compare OLD.json NEW.json

A kernel whose launch reads the occupancy calculator (`blocks_per_sm`) is worked out at one
block a multiprocessor in both checkouts; with the same cubin the calculator gives both the same.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def launches(root: Path, sms: int, model: str, tuned_gpu: str) -> dict[str, dict]:
    sys.path.insert(0, str(root / "workflow" / "scripts"))
    import yaml

    from mmbench.plan import plan
    from mmbench.plan.experiment import prepare
    from mmbench.report import catalogue

    board = {"index": 0, "name": model, "compute_cap": "9.0", "memory_gib": 140, "uuid": ""}
    plan.detect_gpus = lambda: [board]  # the board the plan is made for, named, not asked
    given = yaml.safe_load((root / "config" / "presets" / "ladder.yaml").read_text())
    given["tuned_gpu"] = tuned_gpu
    exp = prepare(given, str(root), catalogue.names())
    out = {}
    for name, runs in exp.plan.runs.items():
        v = exp.registry[name]
        if v.library_launched:  # cuBLAS, CUTLASS: the library chooses its launch
            continue
        for r in runs:
            p = v.instance(r.instance)
            names = v.names(p, m=r.m, n=r.n, k=r.k, sms=sms, blocks_per_sm=1)
            grid, block = v._grid_and_block(names)
            out[f"{name} {r.instance} {r.m}x{r.n}x{r.k}"] = dict(
                grid=list(grid), block=list(block), cluster=list(v.cluster_of(p)),
                smem=v.dynamic_shared_bytes(p),
                facts={f: names[f] for f, _ in v.shape_facts},
            )  # fmt: skip
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path)
    ap.add_argument("--compare", nargs=2, type=Path, metavar=("OLD", "NEW"))
    ap.add_argument("--sms", type=int, default=132)
    ap.add_argument("--model", default="NVIDIA H200")
    ap.add_argument("--tuned-gpu", default="NVIDIA H100 80GB HBM3")
    args = ap.parse_args()
    if args.compare:
        old, new = (json.loads(p.read_text()) for p in args.compare)
        differ = sorted(k for k in old.keys() & new.keys() if old[k] != new[k])
        print(f"{len(old)} and {len(new)} launches; {len(old.keys() & new.keys())} in both, "
              f"{len(differ)} of them different")  # fmt: skip
        for k in differ:
            print(f"  {k}: {old[k]} -> {new[k]}")
        for k in sorted(old.keys() ^ new.keys()):
            print(f"  only in {'OLD' if k in old else 'NEW'}: {k}")
        return 1 if differ or old.keys() != new.keys() else 0
    if args.out is None:
        ap.error("give OUT.json, or --compare OLD.json NEW.json")
    found = launches(Path.cwd(), args.sms, args.model, args.tuned_gpu)
    args.out.write_text(json.dumps(found, indent=0, sort_keys=True))
    print(f"{len(found)} launches of the ladder's hand-written rungs -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which instantiation a rung should run at a shape it was not tuned at: the tuning table's
nearest shape (plan/tuning.py today) against a wave-fill model, on recorded tuning runs where
every instantiation ran at every shape, each shape held out in turn (issue 76, item 3).

    python lab/benchmarks/choice_model.py [TIMINGS.csv.gz ...]

Per rung and held-out shape S, with the other shapes as the tuning:

    best      the fastest instantiation measured at S (what an oracle would pick)
    nearest   the fastest at the tuning shape nearest S (tuning.distance), as run at S
    model     the instantiation whose predicted rate at S is highest: its rate at the largest
              tuning shape times the wave fill at S over the wave fill there, the fill being the
              work units (TILES x SPLITS, from the rows' launch facts) over whole waves of 132
              (the H100's multiprocessors)
    timed     the instantiation whose time at S the pipeline's model (core/timemodel.py) predicts
              least, each instantiation's costs fitted on the tuning shapes (the launch at S
              as the row recorded it: the split policy of the sources that ran)

and prints each policy's share of the best (its regret), per rung and over all.  Defaults: the
H100 tuning runs recorded in tests/data/h100-tune-model (squares.csv.xz: 1024 to 4096 square;
small_side.csv.xz: 128, 256 and 512 x 8192 x 8192)."""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import fit_rung, recorded_us  # noqa: E402
from mmbench.plan.tuning import distance  # noqa: E402

SMS = 132
DEFAULT = [ROOT / "tests/data/h100-tune-model/squares.csv.xz",
           ROOT / "tests/data/h100-tune-model/small_side.csv.xz"]  # fmt: skip


def facts(text) -> dict[str, int]:
    return {k: int(v) for k, v in re.findall(r"\b([A-Z_]+)=(\d+)", str(text or ""))}


def fill(launch_facts) -> float:
    """The share of the last whole waves the work units fill (1: no idle multiprocessor)."""
    f = facts(launch_facts)
    units = f.get("TILES", 0) * f.get("SPLITS", 1)
    return units / (math.ceil(units / SMS) * SMS) if units else 1.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="*", type=Path, default=DEFAULT)
    args = ap.parse_args()
    d = pd.concat([pd.read_csv(t) for t in args.tables], ignore_index=True)
    d = d[(d.verification == "PASS") & (d.backend != "cublas")]
    if "kernel_gflops" not in d:  # a kept calibrate run (lab/keep_calibration.py's columns)
        d = d.assign(kernel_gflops=2.0 * d.m * d.n * d.k / d.kernel_ms / 1e6)
    d = d.assign(
        shape=list(zip(d.m, d.n, d.k, strict=True)), fill=[fill(x) for x in d.launch_facts]
    )
    rate = d.groupby(["variant", "instance", "shape"]).agg(gflops=("kernel_gflops", "median"),
                                                            fill=("fill", "first"))  # fmt: skip
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    first = d.sort_values("kernel_ms").drop_duplicates(["variant", "instance", "m", "n", "k"])
    runs = {key: r for key, r in zip(
        zip(first.variant, first.instance, first["shape"], strict=True),
        (r for _, r in first.iterrows()), strict=True)}  # fmt: skip

    def timed(variant, tuning, held, candidates):
        v = registry[variant]
        runs_of = {}
        for inst in candidates:
            try:
                v.instance(inst)
            except Exception:  # an instantiation the registry no longer declares
                continue
            rows = [runs[(variant, inst, s)] for s in tuning if (variant, inst, s) in runs]
            if len(rows) >= 3:
                runs_of[inst] = rows
        costs, _ = fit_rung(v, runs_of, SMS)

        def us(inst):
            params, c = v.instance(inst), costs[inst]
            return recorded_us(v, params, c, runs[(variant, inst, held)], SMS)

        return min(costs, key=us)

    rows = []
    for variant, part in rate.groupby(level="variant"):
        part = part.droplevel("variant")
        shapes = sorted({s for _, s in part.index}, key=lambda s: s[0] * s[1] * s[2])
        for held in shapes:
            at = part.xs(held, level="shape")
            best = at.gflops.max()
            tuning = [s for s in shapes if s != held]
            near = min(tuning, key=lambda s: distance(s, *held))
            pick_near = part.xs(near, level="shape").gflops.idxmax()
            big = tuning[-1]  # the largest tuning shape: where a one-shape tuning is made
            there = part.xs(big, level="shape")
            common = there.index.intersection(at.index)
            predicted = there.gflops[common] * at.fill[common] / there.fill[common]
            pick_model = predicted.idxmax()
            pick_timed = timed(variant, tuning, held, list(at.index))
            rows.append(dict(variant=variant, shape="x".join(map(str, held)), best=best,
                             nearest=at.gflops.get(pick_near, float("nan")) / best,
                             model=at.gflops[pick_model] / best,
                             timed=at.gflops.get(pick_timed, float("nan")) / best,
                             largest=at.gflops.get(there.gflops.idxmax(), float("nan")) / best,
                             instances=len(at)))  # fmt: skip
    out = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    print(out.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    for policy in ("nearest", "largest", "model", "timed"):
        shares = out[policy].dropna()
        gmean = math.exp(statistics.fmean(math.log(x) for x in shares))
        print(
            f"{policy:8s} geometric mean {gmean:.3f} of the best, least {shares.min():.3f}, "
            f"at the best at {int((shares >= 0.999).sum())} of {len(shares)}"
        )


if __name__ == "__main__":
    main()

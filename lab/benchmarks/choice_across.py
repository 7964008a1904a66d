"""How well one GPU model's calibration chooses a rung's build on another GPU model: the build
the kept rows (kernels/calibration.csv) of each model choose at every product of the recorded
calibrate runs of the other (tests/data/h200-calibrate/, tests/data/h100-calibrate/: every
build of a rung at each product), scored against the fastest build measured there, beside the
choice of the run's own model's rows (which were fitted on those runs: in-sample).

    python lab/benchmarks/choice_across.py

A run on a GPU model whose calibration lacks a rung chooses by the first model of the tuning's
that holds it (plan/tuning.calibrated), e.g. warptile_ring and skinny_dot on an H200 by the
H100's rows; this says what such a choice has cost where both models hold the rung.  Rungs whose
launch takes a stream-K grid (Variant.uses_workers) are left out: their recorded runs ran grids
the plan chose per model, so a build's time there depends on the grid as well.  Per rung and
element type: the geometric mean and the least of the chosen build's speed over the fastest's
(1.000: the model chose the fastest build); for the other model's rows also over the fastest
of the builds they hold (a model may hold rows of fewer builds: those it can choose); and the
products where the other model's rows choose a build slower than the own rows' choice by more
than 5%."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from scipy.stats import gmean

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "lab"))

from keep_calibration import H100, H200, KEPT  # noqa: E402

from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.core.timemodel import choose  # noqa: E402
from mmbench.plan.tuning import calibrated, read_calibration  # noqa: E402

# the recorded calibrate runs of each model (the folders keep_calibration.py keeps them in)
RUNS = {model: folder for model, (folder, _) in KEPT.items()}


def recorded(model: str) -> pd.DataFrame:
    """Every recorded calibrate run of `model`: the verified cubin rows, each build's least
    time at each product."""
    d = pd.concat([pd.read_csv(p) for p in sorted(RUNS[model].glob("*.csv.xz"))])
    d = d[(d.verification == "PASS") & (d.backend == "cubin") & (d.gpu_name == model)]
    return d.groupby(
        ["variant", "dtype", "m", "n", "k", "instance"], as_index=False
    ).kernel_ms.min()


def main() -> int:
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    kept = read_calibration(ROOT / "kernels" / "calibration.csv")
    both = sorted(
        set(kept[kept.gpu_name == H200].variant) & set(kept[kept.gpu_name == H100].variant)
    )
    rungs = [v for v in both if not registry[v].uses_workers]
    rows = {g: calibrated(kept, [g], rungs, registry, "kernels/calibration.csv") for g in RUNS}
    print(f"rungs both models hold, without a stream-K grid: {', '.join(rungs)}")
    for on, other in ((H200, H100), (H100, H200)):
        runs = recorded(on)
        print(
            f"\non {on}'s recorded runs: the own rows' choice (in-sample) | {other}'s rows' choice"
        )
        for (name, dtype), part in runs[runs.variant.isin(rungs)].groupby(["variant", "dtype"]):
            v, own, far, held, worse = registry[name], [], [], [], []
            holds = {slug(r["params"]) for r in rows[other][name] if r["dtype"] == dtype}
            for (m, n, k), at in part.groupby(["m", "n", "k"]):
                at = at.set_index("instance").kernel_ms
                picks = [choose(v, rows[g][name], dtype, m, n, k, grids=False) for g in (on, other)]
                names = [slug(p["params"]) if p else None for p in picks]
                if any(x not in at.index for x in names):
                    continue  # a build the run did not measure there (constraints since)
                own.append(at.min() / at[names[0]])
                far.append(at.min() / at[names[1]])
                held.append(at[at.index.isin(holds)].min() / at[names[1]])
                if far[-1] < 0.95 * own[-1]:
                    worse.append(f"{m} x {n} x {k} ({far[-1]:.3f} against {own[-1]:.3f})")
            if not own:
                continue
            print(f"  {name} {dtype}, {len(own)} products: {gmean(own):.3f} (least {min(own):.3f})"
                  f" | {gmean(far):.3f} (least {min(far):.3f}); of the {len(holds)} builds it"
                  f" holds: {gmean(held):.3f} (least {min(held):.3f})")  # fmt: skip
            for w in worse:
                print(f"    the other's choice 5% slower or more: {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

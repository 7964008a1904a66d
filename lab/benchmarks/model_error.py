"""How far the time model's prediction (core/timemodel.py, the costs in a calibration table) is
from a recorded run's kernel time, at the shapes the calibration was not fitted at.

    python lab/benchmarks/model_error.py [TIMINGS.csv.gz] [--calibration kernels/calibration.csv]

Each verified row of a calibrated instantiation (`--as-planned`: of any GPU model's calibration
where the run's has none, as the plan picks; the variant then names the model) is predicted
from the launch it recorded (its TILES, SPLITS and grid) and the instantiation's costs; prints
the relative error (predicted over measured, minus 1) per rung and load, and its spread over the
shapes the fit never saw.  Default:
the recorded H100 sweep (tests/data/h100-sweep: 1024 to 16384 square, 3001, 7001, one small side
with n = k = 4096 to 16384; bursts, and sustained at 4096, 7001, 8192 and 16384)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import (  # noqa: E402
    COST_COLUMNS,
    Costs,
    recorded_us,
)
from mmbench.plan.tuning import read_calibration  # noqa: E402

DEFAULT = ROOT / "tests/data/h100-sweep/results/sweep/tables/timings.csv.xz"


def predictions(
    registry, cal: pd.DataFrame, t: pd.DataFrame, as_planned: bool = False
) -> pd.DataFrame:
    """The model's time beside the measured one at each verified row of a calibrated
    instantiation in timings `t` (`as_planned`: of any GPU model's calibration where the row's
    has none): variant, shape, load, measured_ms, predicted_ms, error (predicted over measured,
    minus 1) and fitted (the calibration row was fitted at that shape)."""
    t = t[(t.verification == "PASS") & (t.backend == "cubin")]
    rows = []
    for _, r in t.iterrows():
        c = cal[(cal.gpu_name == r.gpu_name) & (cal.variant == r.variant)
                & (cal.instance == r.instance)]  # fmt: skip
        if c.empty and as_planned:
            c = cal[(cal.variant == r.variant) & (cal.instance == r.instance)]
        if c.empty:
            continue
        c = c.iloc[0]
        v, params = registry[r.variant], registry[r.variant].instance(r.instance)
        costs = Costs.of({k: c[k] for k in COST_COLUMNS}, c.blocks_per_sm)
        ms = recorded_us(v, params, costs, r, int(c.sms)) / 1e3
        shape = f"{r.m}x{r.n}x{r.k}"
        rows.append(dict(variant=f"{r.variant} ({c.gpu_name})" if c.gpu_name != r.gpu_name
                         else r.variant, shape=shape, load=r.load, measured_ms=r.kernel_ms,
                         predicted_ms=ms, error=ms / r.kernel_ms - 1,
                         fitted=shape in str(c.fitted_at).split()))  # fmt: skip
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("timings", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--calibration", type=Path, default=ROOT / "kernels" / "calibration.csv")
    ap.add_argument(
        "--as-planned",
        action="store_true",
        help="where the calibration has no row of the run's GPU model for an instantiation, "
        "use another model's, as the plan does (plan/tuning.py: each rung's rows of this "
        "GPU model where the table has them, else another's)",
    )
    args = ap.parse_args()
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    cal = read_calibration(args.calibration)
    d = predictions(registry, cal, pd.read_csv(args.timings), args.as_planned)
    unseen = d[~d.fitted]
    pd.set_option("display.width", 200)
    print(f"{len(d)} rows of calibrated instantiations, {len(unseen)} at shapes the fit never saw")
    table = unseen.groupby(["variant", "load"]).error.describe()
    print(table[["count", "mean", "min", "50%", "max"]].round(3).to_string())
    err = unseen.error.abs()
    print(f"|error| at unseen shapes: median {err.median():.3f}, 90th percentile "
          f"{err.quantile(0.9):.3f}, largest {err.max():.3f}")  # fmt: skip
    # by the kernel's measured time: the fit's shapes take 0.1 ms and more
    bands = pd.cut(unseen.measured_ms, [0, 0.05, 0.2, 1, float("inf")],
                   labels=["< 0.05 ms", "0.05-0.2 ms", "0.2-1 ms", ">= 1 ms"])  # fmt: skip
    by = unseen.groupby(bands, observed=True).error
    print("by measured time: " + "; ".join(
        f"{band} {len(e)} rows, median {e.median():+.3f}, |error| median {e.abs().median():.3f}"
        for band, e in by))  # fmt: skip
    for label, part in (("bursts", unseen[unseen.load == "burst"]),
                        ("sustained", unseen[unseen.load == "sustained"])):  # fmt: skip
        if len(part):
            print(f"{label}: mean error {part.error.mean():+.3f} over {len(part)}")


if __name__ == "__main__":
    main()

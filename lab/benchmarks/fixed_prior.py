"""Does holding each instantiation's fixed cost toward its rung's predict the launches no fit saw
better, and choose better among every build?

    python lab/benchmarks/fixed_prior.py [--weights 0,0.05,0.1,0.2] [--rows OUT.csv]
                                         [--changes]

core/timemodel.fit_rung fits a rung's instantiations together by nnls, minimising the squared
relative error; an instantiation whose rows leave its fixed cost free (no launch short enough to
show it) can take nnls's bound, 0.  Here each fit is done again with a term w^2 (fixed / median -
1)^2 per instantiation added, the median being that of the first fit's positive fixed costs of
the rung, GPU model and element type (as a row's relative error w would weigh).  For each weight
w, every GPU model's rows are fitted again from its recorded calibrate runs
(lab/keep_calibration.py's runs; w = 0 is the kept table's fit), and then:

- the prediction error (predicted over measured, minus 1) of each verified row of a calibrated
  instantiation at a product its fit never saw, in the recorded runs of HELD_OUT (the shapes
  runs and every-build runs of lab/data and tests/data, an H100 sweep), in bands of the
  measured time, and how many of the fitted rows have a fixed cost of 0;
- at the products of the every-build runs of EVERY (a rung's every build measured at products
  no fit saw), the fastest build's time over the chosen build's (geometric mean and least),
  the entry's own grid (choose(grids=False): those runs ran no other);
- with --changes, how many of the H200 rows' choices (rung, element type and product: the build
  and stream-K grid) at the 128 products of the two recorded shapes runs (tests/data/h200-shapes-
  SEED) differ from w = 0's.
"""

from __future__ import annotations

import argparse
import functools
import io
import math
import sys
import tarfile
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "lab"))
sys.path.insert(0, str(ROOT / "lab" / "benchmarks"))

import keep_calibration as kc  # noqa: E402
from choice_h200 import gmean  # noqa: E402
from model_error import predictions  # noqa: E402

from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.core.timemodel import choose  # noqa: E402
from mmbench.plan.tuning import calibrated, read_calibration  # noqa: E402

DATA, LAB = ROOT / "tests" / "data", ROOT / "lab" / "data"
H100, H200 = kc.H100, kc.H200
# runs with launch facts at products the calibrate runs did not measure: (file, member of a tar
# or None)
HELD_OUT = [
    (DATA / "h100-sweep/results/sweep/tables/timings.csv.xz", None),
    (LAB / "h200-skinny-simt-rows-first/shapes-726870-fp32_fp64_bf16-kept.tar.xz",
     "shapes-726870-fp32_fp64_bf16/tables/timings.csv"),
    *[(LAB / "h200-shapes-726870/shapes-726870-skinny_dot-warptile_ring-streamk_f64-kept.tar.xz",
       f"shapes-726870-fp32_fp64_bf16/runs/{v}.csv")
      for v in ("skinny_dot", "warptile_ring", "streamk_f64")],
    (LAB / "h200-shapes-726870/shapes-726870-tf32-kept.tar.xz", "shapes-726870-tf32/tables/timings.csv"),
    (LAB / "h200-shapes-755700/shapes-755700-fp32_fp64_bf16-kept.tar.xz",
     "shapes-755700-fp32_fp64_bf16/tables/timings.csv"),
    (LAB / "h200-shapes-755700/shapes-755700-tf32_fp8-kept.tar.xz", "shapes-755700-tf32_fp8/tables/timings.csv"),
]  # fmt: skip
# every build of a rung at products no fit saw: (file, variant, dtype, GPU model)
EVERY = [
    (LAB / "h200-fp32-narrow-tiles/every-14-products.csv.xz", "warptile_db", "float32", H200),
    (LAB / "h200-skinny-simt-rows-first/every-15-products.csv.xz", "skinny_simt", "float32", H200),
    (LAB / "h200-streamk-f64/every-4-products.csv.xz", "streamk_f64", "float64", H200),
    (LAB / "h200-streamk-f64/every-4-products.csv.xz", "ws_f64", "float64", H200),
    (LAB / "h100-warptile-ring/every-6-fp32-misses.csv.xz", "warptile_ring", "float32", H100),
    (LAB / "h200-fp8-wide/every-skinny-6-products.csv.xz", "skinny_fp8", "float8_e4m3", H200),
    (LAB / "h200-fp8-wide/every-persistent-8-products.csv.xz", "persistent_fp8", "float8_e4m3", H200),
    (LAB / "h100-fp8-narrow-n/every-narrow-9-products.csv.xz", "streamk_fp8", "float8_e4m3", H100),
    (LAB / "h100-tmastore-fp8/every-5-squares.csv.xz", "tmastore_fp8", "float8_e4m3", H100),
]  # fmt: skip


def read(path: Path, member: str | None) -> pd.DataFrame:
    if member is None:
        return pd.read_csv(path)
    with tarfile.open(path) as tar:
        return pd.read_csv(io.BytesIO(tar.extractfile(member).read()))


OWN = 5  # fit_rung's costs of each instantiation's own, the fixed cost first; then the shared
# cost per byte of partial sums: a matrix of OWN * instantiations + 1 columns


def nnls_with_prior(plain, weight: float, a, b, **kw):
    """scipy.optimize.nnls as fit_rung calls it, then again with the prior's rows where the
    matrix is fit_rung's (OWN * instantiations + 1 columns) and the first fit has a positive
    fixed cost (_blocks_per_sm's fits, OWN columns, are left as they are)."""
    import numpy as np

    coef, res = plain(a, b, **kw)
    count, extra = divmod(a.shape[1], OWN)
    if weight <= 0 or extra != 1:
        return coef, res
    fixed = coef[: OWN * count : OWN]
    if not (fixed > 0).any():
        return coef, res
    prior = np.zeros((count, a.shape[1]))
    prior[np.arange(count), OWN * np.arange(count)] = weight / float(np.median(fixed[fixed > 0]))
    return plain(np.vstack([a, prior]), np.r_[b, np.full(count, weight)], **kw)


def fitted(registry, weight: float) -> pd.DataFrame:
    """Every kept GPU model's rows, fitted with `weight` (fit_rung's nnls wrapped)."""
    import scipy.optimize

    plain = scipy.optimize.nnls
    scipy.optimize.nnls = functools.partial(nnls_with_prior, plain, weight)
    try:
        return pd.concat([kc.refit(registry, model) for model in kc.KEPT], ignore_index=True)
    finally:
        scipy.optimize.nnls = plain


def errors(registry, cal: pd.DataFrame, runs: list[pd.DataFrame]) -> pd.DataFrame:
    """Predicted over measured, minus 1, at each held-out row of a calibrated instantiation
    (model_error.predictions at the shapes its fit never saw)."""
    d = pd.concat([predictions(registry, cal, t) for t in runs], ignore_index=True)
    return d[~d.fitted]


def choices(registry, table: Path) -> list[tuple[str, list[float]]]:
    """Per EVERY run, the fastest build's time over the chosen build's at each product (1: the
    model chose the fastest), and how many products' choice the run did not measure."""
    kept = read_calibration(table)
    out = []
    for path, name, dtype, gpu in EVERY:
        every = pd.read_csv(path)
        every = every[(every.verification == "PASS") & (every.variant == name)]
        # the entry's own grid alone (the runs' other grids: `whole`, `workers`)
        if "whole" in every.columns:
            every = every[~every.whole.astype(bool)]
        if "workers" in every.columns:
            every = every[every.workers.fillna(0) == 0]
        if "kernel_gflops" in every.columns and "kernel_ms" not in every.columns:
            every = every.assign(kernel_ms=1 / every.kernel_gflops)  # the same ratios
        time = "kernel_ms" if "kernel_ms" in every.columns else "kernel_ms_median"
        # (some runs name a build without its element type)
        every = every.assign(instance=[i if i.startswith(dtype) else f"{dtype}_{i}"
                                       for i in every.instance])  # fmt: skip
        rows = calibrated(kept, [gpu], [name], registry, str(table))[name]
        if "dtype" in every.columns:
            every = every[every.dtype == dtype]
        got, missing = [], 0
        for (m, n, k), at in every.groupby(["m", "n", "k"]):
            at = at.groupby("instance")[time].min()
            pick = choose(registry[name], rows, dtype, m, n, k, grids=False)
            if pick is None or slug(pick["params"]) not in at.index:
                missing += 1
                continue
            got.append(at.min() / at[slug(pick["params"])])
        out.append((f"{name} ({path.parent.name}/{path.name})", got, missing))
    return out


def changed(registry, before: Path, after: Path) -> tuple[int, int, dict[str, int]]:
    """How many of the H200 rows' choices at the recorded shapes runs' products differ between
    two calibration tables: (changed, weighed, changed per rung)."""
    products = set()
    for seed in (726870, 755700):
        t = pd.read_csv(DATA / f"h200-shapes-{seed}" / "shapes-columns.csv.xz")
        products |= set(zip(t.m, t.n, t.k, strict=True))
    a, b = read_calibration(before), read_calibration(after)

    def launch(pick: dict) -> tuple:  # the build and the stream-K grid
        return slug(pick["params"]), pick.get("workers")

    count = total = 0
    per: dict[str, int] = {}
    for name in sorted(set(a[a.gpu_name == H200].variant)):
        ra = calibrated(a, [H200], [name], registry, str(before))[name]
        rb = calibrated(b, [H200], [name], registry, str(after))[name]
        for dtype in sorted({r["dtype"] for r in ra}):
            for m, n, k in sorted(products):
                pa = choose(registry[name], ra, dtype, m, n, k)
                if pa is None:
                    continue
                pb = choose(registry[name], rb, dtype, m, n, k)
                total += 1
                if launch(pa) != launch(pb):
                    count += 1
                    per[name] = per.get(name, 0) + 1
    return count, total, per


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights", default="0,0.05,0.1,0.2")
    ap.add_argument("--rows", type=Path, help="write every held-out row's error here")
    ap.add_argument("--changes", action="store_true", help="count the H200 choices that move")
    a = ap.parse_args()
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    runs = [read(p, m) for p, m in HELD_OUT]
    bands = [0, 0.02, 0.05, 0.2, math.inf]
    every_rows = []
    weights = [float(x) for x in a.weights.split(",")]
    if a.changes and 0.0 not in weights:
        weights.insert(0, 0.0)
    folder = tempfile.mkdtemp(prefix="fixed-prior-")
    for w in weights:
        cal = fitted(registry, w)
        table = Path(folder) / f"w{w}.csv"
        cal.to_csv(table, index=False)
        e = errors(registry, read_calibration(table), runs)
        e["band"] = pd.cut(
            e.measured_ms, bands, labels=["<20 us", "20-50 us", "50-200 us", ">=200 us"]
        )
        zero = int((cal.fixed_us == 0).sum())
        print(f"w = {w}: {zero} of {len(cal)} rows with a fixed cost of 0; {len(e)} held-out rows, "
              f"|error| median {e.error.abs().median():.3f}, 90th percentile "
              f"{e.error.abs().quantile(0.9):.3f}")  # fmt: skip
        for band, part in e.groupby("band", observed=True):
            print(f"    {band}: {len(part)} rows, error median {part.error.median():+.3f}, "
                  f"|error| median {part.error.abs().median():.3f}, 90th {part.error.abs().quantile(0.9):.3f}")  # fmt: skip
        if a.rows is not None:
            e.assign(weight=w).to_csv(a.rows, mode="a", header=not a.rows.exists(), index=False)
        if a.changes and w > 0:
            count, total, per = changed(registry, Path(folder) / f"w{0.0}.csv", table)
            print(f"    H200 choices at the shapes runs' products that move: {count} of {total} "
                  f"({', '.join(f'{v} {c}' for v, c in sorted(per.items()))})")  # fmt: skip
        for label, got, missing in choices(registry, table):
            every_rows.append(dict(weight=w, run=label, products=f"{len(got)} ({missing})",
                                   gmean=round(gmean(got), 3) if got else math.nan, least=round(min(got), 3) if got else math.nan))  # fmt: skip
    every = pd.DataFrame(every_rows)
    print(
        "the fastest build's time over the chosen one's, geometric mean and least, at each "
        "weight; products scored (and those whose chosen build the run did not measure):"
    )
    print(
        every.pivot(
            index="run", columns="weight", values=["gmean", "least", "products"]
        ).to_string()
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

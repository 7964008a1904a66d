"""Would short launches with every tile whole in the calibration mend the H100 fit of
streamk_fp8's narrow builds?  Offline, on recorded H100 runs: the kept H100 calibrate run of
every FP8 build (tests/data/h100-calibrate/fp8.csv.xz) alone, and with one every-build run's
streamk_fp8 rows added to the fit (lab/data/h100-fp8-narrow-n: each build at the rule's grid
and with every tile whole), each fit choosing a build and grid at the products of the other
every-build run of the same board; prints per product the measured time of the fit's choice
over the fastest measured there.

    python lab/benchmarks/fit_short_launches.py

The every-build runs kept only a few columns: the launch each row ran (grid, shape facts) is
rebuilt from the registry at its product and grid (core/timemodel's names of the launch), which
is what the plan launches for that build and grid."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
from scipy.stats import gmean

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import Costs, calibrate, predict_ms, worker_choices  # noqa: E402

H100 = "NVIDIA H100 80GB HBM3"
SMS = 132
VARIANT = "streamk_fp8"
EVERY = ROOT / "lab" / "data" / "h100-fp8-narrow-n"
# two every-build runs of one board (GPU-9794ec23): each the other's held-out products
RUNS = {"726870 misses": EVERY / "every-7-misses-726870.csv.xz",
        "755700, 64-row": EVERY / "every-64-rows-4-products.csv.xz"}  # fmt: skip


def whole_workers(v, params, m, n, k) -> int:
    """The grid with every tile whole (as many workers as tiles), or 0 where that is the rule's."""
    choices = worker_choices(v, params, m, n, k, SMS, 1)
    return choices[1] if len(choices) > 1 else 0


def as_timings(every: pd.DataFrame, v) -> pd.DataFrame:
    """An every-build run's rows of VARIANT as calibrate() reads a timings table."""
    rows = []
    for r in every[(every.variant == VARIANT) & (every.verification == "PASS")].itertuples():
        params = v.instance(r.instance)
        workers = whole_workers(v, params, r.m, r.n, r.k) if r.whole else 0
        names = v.names(params, m=r.m, n=r.n, k=r.k, sms=SMS, blocks_per_sm=1, workers=workers)
        grid, _ = v._grid_and_block(names)
        facts = " ".join(f"{f}={names[f]}" for f, _ in v.shape_facts)
        rows.append(dict(variant=VARIANT, params=" ".join(f"{a}={b}" for a, b in params.items()
                                                           if a != "dtype"),
                         instance=r.instance, backend="cubin", dtype="float8_e4m3", m=r.m, n=r.n,
                         k=r.k, workers=workers, gpu_name=H100,
                         grid="x".join(str(g) for g in grid), launch_facts=facts,
                         verification="PASS", kernel_ms=r.kernel_ms_median))  # fmt: skip
    return pd.DataFrame(rows)


def choice_ratios(fit: pd.DataFrame, every: pd.DataFrame, v) -> dict:
    """Per product of an every-build run: the measured time of the build and grid the fit
    predicts fastest, over the fastest measured there."""
    costs = {r.instance: Costs.of(r, r.blocks_per_sm) for _, r in fit.iterrows()}
    e = every[(every.variant == VARIANT) & (every.verification == "PASS")]
    e = e[e.instance.isin(list(costs))]
    out = {}
    for (m, n, k), part in e.groupby(["m", "n", "k"]):
        best = part.kernel_ms_median.min()
        pred = []
        for r in part.itertuples():
            params = v.instance(r.instance)
            workers = whole_workers(v, params, m, n, k) if r.whole else 0
            pred.append((predict_ms(v, params, costs[r.instance], m, n, k, SMS, workers),
                         r.kernel_ms_median))  # fmt: skip
        out[(m, n, k)] = round(min(pred)[1] / best, 3)
    return out


def held_out(registry) -> dict[str, tuple[dict, dict, pd.DataFrame]]:
    """Per every-build run held out: the choice ratios at its products of the kept run's fit
    alone and of the fit with the other run added (choice_ratios), and that second fit."""
    v = registry[VARIANT]
    kept = pd.read_csv(ROOT / "tests" / "data" / "h100-calibrate" / "fp8.csv.xz")
    kept = kept[kept.variant == VARIANT]
    runs = {name: pd.read_csv(path) for name, path in RUNS.items()}
    alone = calibrate(kept, registry)
    out = {}
    for held, every in runs.items():
        added = next(n for n in runs if n != held)
        fit = calibrate(pd.concat([kept, as_timings(runs[added], v)], ignore_index=True),
                        registry)  # fmt: skip
        out[held] = (choice_ratios(alone, every, v), choice_ratios(fit, every, v), fit)
    return out


def main() -> None:
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    for held, (before, after, fit) in held_out(registry).items():
        added = next(n for n in RUNS if n != held)
        print(f"held out: {held}; added to the fit: {added}")
        for p in before:
            print(f"  {p[0]} x {p[1]} x {p[2]}: choice / fastest {before[p]:.3f} -> {after[p]:.3f}")
        print(f"  geometric mean {gmean(list(before.values())):.3f} -> "
              f"{gmean(list(after.values())):.3f}")  # fmt: skip
        top = fit[fit.instance.str.contains("BM64_BN16")][["instance", "fixed_us", "split_us"]]
        print("  64 x 16 builds in that fit:", "; ".join(
            f"{r.instance[12:]} fixed {r.fixed_us:.2f} split {r.split_us:.2f}"
            for r in top.itertuples()))  # fmt: skip


if __name__ == "__main__":
    main()

"""How well the time model (core/timemodel.py) chooses a rung's build on an H200, on recorded runs
where every build ran: the calibrate stage's runs (tests/data/h200-calibrate, each shape held
out of the fit in turn, and in-sample), and every warptile_db build at 14 FP32 products of seed
755700 that no fit saw (lab/data/h200-fp32-narrow-tiles/every-14-products.csv.xz, against the
kept calibration, kernels/calibration.csv).

    python lab/benchmarks/choice_h200.py
    python lab/benchmarks/choice_h200.py --large-only    warptile_db fitted at the eight large
                                                         products alone (squares 1024-4096,
                                                         128-512 x 8192 x 8192), scored at the
                                                         other ten and at the 14 products

Per rung and element type: the geometric mean and the least of the chosen build's speed over
the fastest build's (1.0: the model picked the fastest), and at the 14 products, the chosen
build's share of cuBLAS and the fastest build's (the most a choice among the builds can give)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.core.timemodel import (  # noqa: E402
    choose,
    fit_rung,
    predict_ms,
    recorded_us,
)
from mmbench.plan.tuning import calibrated, read_calibration  # noqa: E402

SMS = 132
H200 = "NVIDIA H200"
RECORDED = [
    "tn_and_streamk.csv.xz",
    "skinny.csv.xz",
    "skinny_simt.csv.xz",
    "warptile_db_ws_f64.csv.xz",
]
EVERY = ROOT / "lab/data/h200-fp32-narrow-tiles/every-14-products.csv.xz"
RUNGS = [("warptile_db", "float32"), ("ws_f64", "float64"), ("skinny_simt", "float32"),
         ("skinny_simt", "float64")]  # fmt: skip


def gmean(xs) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs))


def shares(v, first: pd.DataFrame, held=None) -> list[float]:
    """The chosen build's speed over the fastest's at each shape (`held`: that shape alone,
    left out of the fit)."""
    fit_rows = first if held is None else first[[s != held for s in first["shape"]]]
    runs = {i: [r for _, r in g.iterrows()] for i, g in fit_rows.groupby("instance")
            if len(g) >= 3 and i in v.by_slug and not v.rejected(v.by_slug[i])}  # fmt: skip
    costs, _ = fit_rung(v, runs, SMS)
    out = []
    for s, at in first.groupby("shape"):
        if held is not None and s != held:
            continue
        at = at[at.instance.isin(list(costs))].set_index("instance")

        def us(inst, at=at):
            params, c = v.instance(inst), costs[inst]
            return recorded_us(v, params, c, at.loc[inst], SMS)

        out.append(at.kernel_ms.min() / at.kernel_ms[min(at.index, key=us)])
    return out


def large_only(registry, d: pd.DataFrame, every: pd.DataFrame) -> None:
    """warptile_db fitted at the eight large products alone, scored at the others."""
    v = registry["warptile_db"]
    large = {(s, s, s) for s in (1024, 1536, 2048, 3072, 4096)}
    large |= {(m, 8192, 8192) for m in (128, 256, 512)}
    part = d[(d.variant == "warptile_db") & (d.dtype == "float32")]
    first = part.sort_values("kernel_ms").drop_duplicates(["instance", "shape"])
    fit_rows = first[[s in large for s in first["shape"]]]
    costs, _ = fit_rung(v, {i: [r for _, r in g.iterrows()]
                            for i, g in fit_rows.groupby("instance")}, SMS)  # fmt: skip

    def pick(m, n, k):
        return min(costs, key=lambda i: predict_ms(v, v.instance(i), costs[i], m, n, k, SMS))

    for label, rows in (("the other calibration shapes", first[[s not in large for s in first["shape"]]]),
                        ("the 14 products", every[every.variant == "warptile_db"])):  # fmt: skip
        got = []
        for (m, n, k), at in rows.groupby(["m", "n", "k"]):
            at = at.set_index("instance").kernel_ms
            got.append(at.min() / at[pick(m, n, k)])
        print(f"warptile_db fitted at the 8 large products, at {label}: {gmean(got):.3f} of the "
              f"fastest build (least {min(got):.3f}), {len(got)} products")  # fmt: skip


def main() -> None:
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    d = pd.concat([pd.read_csv(ROOT / "tests/data/h200-calibrate" / p) for p in RECORDED])
    d = d[(d.verification == "PASS") & (d.backend == "cubin")]
    d["shape"] = list(zip(d.m, d.n, d.k, strict=True))
    if "--large-only" in sys.argv[1:]:
        large_only(registry, d, pd.read_csv(EVERY))
        return
    for name, dtype in RUNGS:
        v = registry[name]
        part = d[(d.variant == name) & (d.dtype == dtype)]
        first = part.sort_values("kernel_ms").drop_duplicates(["instance", "shape"])
        inside = shares(v, first)
        held = [x for s in sorted(set(first["shape"])) for x in shares(v, first, s)]
        print(f"{name} {dtype}: in-sample {gmean(inside):.3f} (least {min(inside):.3f}), "
              f"held out {gmean(held):.3f} (least {min(held):.3f}), {len(held)} shapes")  # fmt: skip
    choice_at_every(registry, pd.read_csv(EVERY), "warptile_db", "float32", H200)


def choice_at_every(registry, every: pd.DataFrame, name: str, dtype: str, gpu: str) -> None:
    """The build the kept calibration's `gpu` rows choose for rung `name` at each product of
    a run of every build (lab/gpu.sh shapes every: its timings table, with cuBLAS's rows),
    against the fastest build and cuBLAS there."""
    kept = read_calibration(ROOT / "kernels" / "calibration.csv")
    v = registry[name]
    rows = calibrated(kept, [gpu], [name], registry, "kernels/calibration.csv")
    every = every[every.verification == "PASS"]
    ref = every[every.variant == "cublas"].set_index(["m", "n", "k"]).kernel_ms
    got, of_ref, best_of_ref = [], [], []
    for (m, n, k), at in every[every.variant == name].groupby(["m", "n", "k"]):
        at = at.set_index("instance").kernel_ms
        pick = slug(choose(v, rows[name], dtype, m, n, k)["params"])
        got.append(at.min() / at[pick])
        of_ref.append(ref[(m, n, k)] / at[pick])
        best_of_ref.append(ref[(m, n, k)] / at.min())
        print(f"  {m} x {n} x {k}: {pick}, {at.min() / at[pick]:.3f} of the fastest build, "
              f"{100 * ref[(m, n, k)] / at[pick]:.1f}% of cuBLAS (the fastest build "
              f"{100 * best_of_ref[-1]:.1f}%)")  # fmt: skip
    print(
        f"{name} at the {len(got)} products: {gmean(got):.3f} of the fastest build (least "
        f"{min(got):.3f}); {100 * gmean(of_ref):.1f}% of cuBLAS (least {100 * min(of_ref):.1f}); "
        f"the fastest build {100 * gmean(best_of_ref):.1f}% (least {100 * min(best_of_ref):.1f}), "
        "what a perfect choice among these builds would give"
    )


if __name__ == "__main__":
    main()

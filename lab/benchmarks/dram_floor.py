"""Would a floor at the operand bytes mend the H100 model's FP8 times at memory-bound
products?  Offline, on recorded H100 runs: each FP8 build's highest rate of operand bytes in the
H100 calibration runs (A and B read once, C written once in FP32, over the launch's time), and
the H100 rows' prediction (the fit of the runs named in FITTED, the kept rows when this was
written) raised to those bytes at that rate where it is below; then the
same with the rates of a calibrate run at six products of 200 to 270 MB of operands
(lab/data/h100-fp8-memory-bound, one side of 16 to 128), where the builds reach their
bandwidth, among the rates; then a floor that also counts the large operand read again for
each further tile along the other side where it exceeds the L2, a fraction per rung of those
reads fitted on the memory-bound run (RereadModel), taken as the larger of the two times or as
their soft maximum.  Each judged
on the launches of the shapes preset's FP8 part (lab/data/h100-shapes-fp8-short: predicted over
measured time) and on the every-build runs of lab/data/h100-fp8-narrow-n (the measured time of
the build and grid each prediction chooses, over the fastest measured there).  None of these
runs is in the fit.

    python lab/benchmarks/dram_floor.py
"""

from __future__ import annotations

import functools
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import gmean

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "lab"))
sys.path.insert(0, str(ROOT / "lab" / "benchmarks"))

import keep_calibration  # noqa: E402
from fit_short_launches import whole_workers  # noqa: E402

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import Costs, calibrate, predict_ms  # noqa: E402

H100 = keep_calibration.H100
FP8 = ["persistent_fp8", "streamk_fp8", "skinny_fp8"]
SHAPES = ROOT / "lab" / "data" / "h100-shapes-fp8-short"
EVERY = ROOT / "lab" / "data" / "h100-fp8-narrow-n"
LARGE = ROOT / "lab" / "data" / "h100-fp8-memory-bound" / "calibrate-6-products.csv.xz"
DATA = ROOT / "tests" / "data"
# the recorded H100 runs the kept H100 rows were fitted from when this was written: the rows
# and rates here are theirs, whatever runs are kept since
FITTED = [DATA / "h100-tune-model" / "squares.csv.xz", DATA / "h100-tune-model" / "small_side.csv.xz",
          DATA / "h100-calibrate" / "fp8.csv.xz", DATA / "h100-calibrate" / "fp8_short.csv.xz"]  # fmt: skip
EVERY_RUNS = ["every-6-products", "every-6-more-products", "every-narrow-9-products",
              "every-7-misses-726870", "every-64-rows-4-products"]  # fmt: skip


def operand_bytes(m, n, k):
    """A (m x k) and B (k x n) in e4m3 read once, C (m x n) in FP32 written once."""
    return m * k + k * n + 4 * m * n


def best_rates(large: bool = False) -> pd.Series:
    """Bytes per µs: each FP8 build's highest operand rate in the FITTED runs (and, `large`, in
    the memory-bound run)."""
    paths = [*FITTED, *([LARGE] if large else [])]
    runs = pd.concat([pd.read_csv(p) for p in paths])
    runs = runs[runs.variant.isin(FP8) & (runs.verification == "PASS")]
    rate = operand_bytes(runs.m, runs.n, runs.k) / (runs.kernel_ms * 1e3)
    return rate.groupby([runs.variant, runs.instance]).max()


@functools.cache
def fitted_rows() -> pd.DataFrame:
    """The H100 rows calibrate() fits from the FITTED runs, by variant and instance."""
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    cal = calibrate(pd.concat([pd.read_csv(p) for p in FITTED], ignore_index=True), registry)
    return cal[cal.gpu_name == H100].set_index(["variant", "instance"])


class Model:
    """The FITTED H100 rows' time for a launch, and that time raised to the floor."""

    def __init__(self, large: bool = False):
        self.reg = load_registry(ROOT / "kernels" / "registry.yaml")
        self.cal = fitted_rows()
        self.rate = best_rates(large)

    def times(self, variant, instance, m, n, k, workers) -> tuple[float, float]:
        c = self.cal.loc[(variant, instance)]
        v = self.reg[variant]
        us = predict_ms(v, v.instance(instance), Costs.of(c, c.blocks_per_sm), m, n, k, 132,
                        workers) * 1e3  # fmt: skip
        return us, max(us, operand_bytes(m, n, k) / self.rate[(variant, instance)])


L2_BYTES = 50e6  # the H100's L2


def tiles_along(reg, variant, instance, m, n) -> tuple[int, int]:
    """A build's tiles along m and along n (skinny_fp8 exchanges the operands: its BM tiles n,
    its BN tiles m)."""
    p = reg[variant].instance(instance)
    bm, bn = int(p["BM"]), int(p["BN"])
    if variant == "skinny_fp8":
        return -(-m // bn), -(-n // bm)
    return -(-m // bm), -(-n // bn)


def reread_bytes(reg, variant, instance, m, n, k) -> int:
    """A (m x k) read again for each further tile along n, B (k x n) for each further tile
    along m, each only where it exceeds the L2."""
    along_m, along_n = tiles_along(reg, variant, instance, m, n)
    a, b = m * k, k * n
    return (along_n - 1) * a * (a > L2_BYTES) + (along_m - 1) * b * (b > L2_BYTES)


class RereadModel(Model):
    """The floor at (operand bytes + f x re-read bytes) / BW: BW the best operand rate of the
    memory-bound run's launches, f per rung the 10th percentile of the fraction of its re-read
    bytes the fastest launch of each build and product there implies; `power` None takes the
    larger of the model's time and the floor, else their soft maximum (a^p + b^p)^(1/p)."""

    def __init__(self, power: float | None = None):
        super().__init__(large=True)
        self.power = power
        t = pd.read_csv(LARGE)
        t = t[t.variant.isin(FP8) & (t.verification == "PASS")]
        t = t.groupby(["variant", "instance", "m", "n", "k"], as_index=False).kernel_ms.min()
        t["us"] = t.kernel_ms * 1e3
        t["once"] = operand_bytes(t.m, t.n, t.k)
        t["again"] = [reread_bytes(self.reg, r.variant, r.instance, r.m, r.n, r.k)
                      for r in t.itertuples()]  # fmt: skip
        self.bw = float((t.once / t.us).max())
        again = t[t.again > 0]
        implied = (again.us * self.bw - again.once) / again.again
        self.share = {v: max(0.0, float(implied[again.variant == v].quantile(0.1)))
                      if (again.variant == v).any() else 0.0 for v in FP8}  # fmt: skip

    def times(self, variant, instance, m, n, k, workers) -> tuple[float, float]:
        us = Model.times(self, variant, instance, m, n, k, workers)[0]
        again = reread_bytes(self.reg, variant, instance, m, n, k)
        floor = (operand_bytes(m, n, k) + self.share[variant] * again) / self.bw
        if self.power is None:
            return us, max(us, floor)
        return us, (us**self.power + floor**self.power) ** (1 / self.power)


def shapes_errors(model: Model) -> pd.DataFrame:
    """Per FP8 rung launch of the two shapes runs: its instance, the model's µs (`us`), the
    measured µs (`ran`), and predicted over measured without and with the floor."""
    rows = []
    for seed in (755700, 726870):
        t = pd.read_csv(SHAPES / f"timings-{seed}.csv.xz")
        for r in t[t.variant.isin(FP8) & (t.verification == "PASS")].itertuples():
            w = int(r.workers) if r.workers == r.workers else 0
            us, floored = model.times(r.variant, r.instance, r.m, r.n, r.k, w)
            ran = r.kernel_ms_median * 1e3
            rows.append(dict(seed=seed, m=r.m, n=r.n, k=r.k, instance=r.instance, us=us, ran=ran,
                             plain=us / ran, floored=floored / ran))  # fmt: skip
    return pd.DataFrame(rows)


def every_choices(model: Model) -> pd.DataFrame:
    """Per product of the every-build runs: the measured time of the build and grid each
    prediction chooses, over the fastest measured there."""
    rows = []
    for name in EVERY_RUNS:
        e = pd.read_csv(EVERY / f"{name}.csv.xz")
        e = e[e.variant.isin(FP8) & (e.verification == "PASS")]
        for (m, n, k), g in e.groupby(["m", "n", "k"]):
            picks = []
            for r in g.itertuples():
                v = model.reg[r.variant]
                w = whole_workers(v, v.instance(r.instance), m, n, k) if r.whole else 0
                picks.append((*model.times(r.variant, r.instance, m, n, k, w), r.kernel_ms_median))
            fastest = g.kernel_ms_median.min()
            rows.append(dict(run=name, m=m, n=n, k=k,
                             plain=min(picks, key=lambda p: p[0])[2] / fastest,
                             floored=min(picks, key=lambda p: p[1])[2] / fastest))  # fmt: skip
    return pd.DataFrame(rows)


def main() -> int:
    for large in (False, True):
        print("rates of the calibration runs" + (" and the memory-bound run" if large else ""))
        model = Model(large)
        r = model.rate / 1e6
        print(f"highest operand rate per build: {r.min():.2f} to {r.max():.2f} "
              f"TB/s (median {r.median():.2f}), {len(r)} builds")  # fmt: skip
        report(model)
    for power in (None, 4):
        model = RereadModel(power)
        print(f"with re-reads ({'the larger' if power is None else f'soft maximum, p {power}'}):"
              f" {model.bw / 1e6:.2f} TB/s, re-read shares "
              + ", ".join(f"{v} {f:.3f}" for v, f in model.share.items()))  # fmt: skip
        report(model)
    return 0


def report(model: Model) -> None:
    e = shapes_errors(model)
    for col in ("plain", "floored"):
        spread = np.exp(np.abs(np.log(e[col])))
        print(f"shapes runs, {col}: {len(e)} launches, median error x{spread.median():.3f}, "
              f"worst x{spread.max():.3f}, {int((e[col] < 0.8).sum())} predicted under 0.8 of "
              f"the time, {int((e[col] > 1.2).sum())} over 1.2")  # fmt: skip
    c = every_choices(model)
    print("every-build runs: choice over the fastest (geometric mean, worst)")
    for name, g in c.groupby("run", sort=False):
        print(f"  {name}: {len(g)} products, plain {gmean(g.plain):.3f} ({g.plain.max():.3f}), "
              f"floored {gmean(g.floored):.3f} ({g.floored.max():.3f})")  # fmt: skip
    print(f"  all: {len(c)} products, plain {gmean(c.plain):.3f}, floored {gmean(c.floored):.3f}")


if __name__ == "__main__":
    sys.exit(main())

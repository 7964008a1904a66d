"""Would a cost per operand byte mend the time model where a product is memory-bound?  Offline,
on recorded calibrate runs of one GPU model, each product held out in turn: every rung's costs
fitted on the other products (core/timemodel.py's terms), once as the pipeline fits them and
once with one more cost shared by the rung's builds, per byte of its operands (A and B read
once, C written once), added to the time as the partial sums' bytes are.  Then, at the held-out
product:

    per rung      each build's predicted time over its measured one (the median and the least
                  of them), the pick's (the build predicted fastest) and the pick's measured
                  speed against the fastest build's ("choice")
    per class     the rungs the plan would run (config calibration_margin 0.25, below a least
                  prediction of 20 µs all: calibration_margin_from_ms 0.02) and the fastest of
                  their picks, measured, against the fastest pick of every rung

    python lab/benchmarks/operand_bytes_term.py RUN.csv.xz [RUN.csv.xz ...]

Defaults: the H100's calibrate runs of skinny_simt, skinny_dot and streamk_f64
(tests/data/h100-calibrate), where the three ran at the same 19 products and 1024^3 (2048^3 and
4096^3 too for streamk_f64)."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.optimize import nnls

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core import timemodel as tm  # noqa: E402
from mmbench.core.registry import load_registry  # noqa: E402

SMS = 132
MARGIN, FLOOR_US = 0.25, 20.0
CAL = ROOT / "tests" / "data" / "h100-calibrate"
DEFAULT = [CAL / "skinny_simt_streamk_f64.csv.xz", CAL / "skinny_dot.csv.xz",
           CAL / "streamk_f64_small_tiles.csv.xz"]  # fmt: skip
OWN = 5  # an instantiation's own costs (tm._terms)


def operand_bytes(r, elem: int) -> float:
    return float((r.m * r.k + r.k * r.n + r.m * r.n) * elem)


def _load(v, inst, r, blocks):
    p = v.instance(inst)
    return tm.load_of(tm.recorded_work(v, p, r, SMS, blocks), tm.tile_bytes_of(v, p))


def fit(v, runs: dict[str, list], with_bytes: bool, elem: int):
    """fit_rung's least squares (relative error, none negative), with the operand-byte cost
    where `with_bytes`: (instances, coefficients, blocks per multiprocessor)."""
    names = sorted(runs)
    blocks = {i: tm._blocks_per_sm(v, v.instance(i), runs[i], SMS) for i in names}
    cols, t = [], []
    for j, inst in enumerate(names):
        for r in runs[inst]:
            ld = _load(v, inst, r, blocks[inst])
            row = np.zeros(OWN * len(names) + 2)
            row[OWN * j : OWN * (j + 1)] = tm._terms(ld)
            row[-2] = ld.partial_bytes
            row[-1] = operand_bytes(r, elem) if with_bytes else 0.0
            cols.append(row)
            t.append(float(r.kernel_ms) * 1e3)
    tt = np.asarray(t)
    coef, _ = nnls(np.asarray(cols) / tt[:, None], np.ones(len(tt)))
    return names, coef, blocks


def predict_us(v, fitted, inst, r, elem: int) -> float:
    names, coef, blocks = fitted
    j = names.index(inst)
    ld = _load(v, inst, r, blocks[inst])
    own = float(np.dot(coef[OWN * j : OWN * (j + 1)], tm._terms(ld)))
    return own + coef[-2] * ld.partial_bytes + coef[-1] * operand_bytes(r, elem)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", type=Path, default=DEFAULT)
    args = ap.parse_args()
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    d = pd.concat([pd.read_csv(p) for p in args.runs], ignore_index=True)
    d = d[(d.verification == "PASS") & (d.backend == "cubin")]
    d = d[[i in registry[v].by_slug for v, i in zip(d.variant, d.instance, strict=True)]]
    d = d.sort_values("kernel_ms").drop_duplicates(
        ["variant", "instance", "m", "n", "k", "workers"]
    )
    d = d.assign(product=list(zip(d.m, d.n, d.k, strict=True)))
    builds, classes = [], []
    for dtype, part in d.groupby("dtype"):
        elem = 8 if dtype == "float64" else 4
        for held in sorted(set(part["product"]), key=lambda s: s[0] * s[1] * s[2]):
            picks = {False: {}, True: {}}
            for name, rows in part.groupby("variant"):
                v = registry[name]
                test = rows[rows["product"] == held]
                train = rows[rows["product"] != held]
                runs = {i: [r for _, r in g.iterrows()]
                        for i, g in train.groupby("instance") if len(g) >= 3}  # fmt: skip
                if test.empty or not runs:
                    continue
                for with_bytes in (False, True):
                    fitted = fit(v, runs, with_bytes, elem)
                    ps = [(predict_us(v, fitted, r.instance, r, elem), float(r.kernel_ms) * 1e3)
                          for _, r in test.iterrows() if r.instance in runs]  # fmt: skip
                    ratio = [p / m for p, m in ps]
                    pick = min(ps)
                    picks[with_bytes][name] = pick
                    builds.append(dict(
                        dtype=dtype, rung=name, product="x".join(map(str, held)),
                        bytes_term=with_bytes, median=np.median(ratio), least=min(ratio),
                        pick=pick[0] / pick[1], choice=min(m for _, m in ps) / pick[1],
                        operand_mb=operand_bytes(test.iloc[0], elem) / 1e6,
                    ))  # fmt: skip
            for with_bytes, p in picks.items():
                if len(p) < 2:
                    continue
                least = min(x for x, _ in p.values())
                ran = [
                    n for n, (x, _) in p.items() if least < FLOOR_US or x <= (1 + MARGIN) * least
                ]
                best = min(m for _, m in p.values())
                classes.append(dict(dtype=dtype, product="x".join(map(str, held)),
                                    bytes_term=with_bytes, ran=len(ran), rungs=len(p),
                                    share=best / min(p[n][1] for n in ran)))  # fmt: skip
    b, c = pd.DataFrame(builds), pd.DataFrame(classes)
    pd.set_option("display.width", 200)
    print(
        "per rung and held-out product, predicted / measured (the pick: the build predicted "
        "fastest) and the pick's speed against the fastest build's; without | with the term"
    )
    wide = b.pivot_table(index=["dtype", "rung", "product"], columns="bytes_term",
                         values=["operand_mb", "median", "least", "pick", "choice"])  # fmt: skip
    print(wide.round(3).to_string())
    for with_bytes in (False, True):
        x = b[b.bytes_term == with_bytes]
        g = math.exp(np.log(x.choice).mean())
        print(
            f"\nbytes term {with_bytes}: choice geometric mean {g:.3f}, least "
            f"{x.choice.min():.3f}; median |log(predicted / measured)| "
            f"{np.median(np.abs(np.log(x['median']))):.3f}; picks predicted under 0.8 of "
            f"their time {int((x.pick < 0.8).sum())} of {len(x)}"
        )
        y = c[c.bytes_term == with_bytes]
        for dtype, z in y.groupby("dtype"):
            g = math.exp(np.log(z.share).mean())
            below = ", ".join(f"{p} {s:.3f}" for p, s in zip(z["product"], z.share, strict=True)
                              if s < 0.999)  # fmt: skip
            print(
                f"  {dtype}: the margin's fastest rung against all rungs' geometric mean "
                f"{g:.3f}, least {z.share.min():.3f}; rungs run {z.ran.sum()} of "
                f"{z.rungs.sum()}; short at: {below or 'none'}"
            )


if __name__ == "__main__":
    main()

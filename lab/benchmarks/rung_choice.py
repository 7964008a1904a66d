"""Which rungs of a class to run at a product: all of them (what the shapes preset measures), or
only those whose time the calibrated model predicts within a margin of the class's least, on
the recorded H200 calibration runs where every instantiation of nine rungs ran at the same 8
shapes, each shape held out in turn (issue 76, item 3: the schedule chosen by the shape too).

    python lab/benchmarks/rung_choice.py [TIMINGS.csv.gz ...]

Per class (element type and math) and held-out shape S, each rung's costs are fitted on the
other shapes (core/timemodel.py's fit_rung), its pick is the instantiation whose time at S it
predicts least (the launch at S as the row recorded it), and its predicted time that one's.
Then, per margin, the rungs kept are those predicted within (1 + margin) of the least; the
result is the fastest measured pick among them, against the fastest measured pick of all the
class's rungs.  Printed: per margin, the geometric mean and least of that share, and the rungs
run (the configurations a run of the shapes preset would measure for the class's hand-written
rungs).  Default: tests/data/h200-calibrate.

    --floor-ms F   the margin applies only where the class's least predicted time is at least
                   F ms (config calibration_margin_from_ms); below it every rung runs, as the
                   shapes preset does (its floor: 0.02)."""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import fit_rung, recorded_us  # noqa: E402
from mmbench.plan.plan import margin_keeps  # noqa: E402

SMS = 132
DEFAULT = [ROOT / "tests/data/h200-calibrate/tn_and_streamk.csv.xz",
           ROOT / "tests/data/h200-calibrate/skinny.csv.xz"]  # fmt: skip
MARGINS = (0.0, 0.05, 0.10, 0.15, 0.25, 0.50)


def kept(predicted_ms: dict[str, float], margin: float, floor_ms: float | None) -> list[str]:
    """The rungs a plan with this margin and floor runs, of those whose times it predicts."""
    least = min(predicted_ms.values())
    return [n for n, ms in predicted_ms.items() if margin_keeps(ms, least, margin, floor_ms)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("tables", nargs="*", type=Path, default=DEFAULT)
    ap.add_argument("--floor-ms", type=float, default=None)
    args = ap.parse_args()
    d = pd.concat([pd.read_csv(t) for t in args.tables], ignore_index=True)
    d = d[(d.verification == "PASS") & (d.backend == "cubin")]
    d = d.sort_values("kernel_ms").drop_duplicates(["variant", "instance", "m", "n", "k"])
    d = d.assign(shape=list(zip(d.m, d.n, d.k, strict=True)))
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    # the shapes every rung ran at
    common = set.intersection(*(set(p["shape"]) for _, p in d.groupby("variant")))
    d = d[d["shape"].isin(common)]
    row_of = {(r.variant, r.instance, r.shape): r for r in d.itertuples(index=False)}

    def pick(variant: str, held: tuple) -> tuple[str, float]:
        """The rung's instantiation the model fitted without `held` predicts fastest there,
        and that prediction (us)."""
        v = registry[variant]
        part = d[d.variant == variant]
        runs = {}
        for inst, rows in part.groupby("instance"):
            rows = [r for _, r in rows.iterrows() if r["shape"] != held]
            if len(rows) >= 3 and inst in v.by_slug and not v.rejected(v.by_slug[inst]):
                runs[inst] = rows
        costs, _ = fit_rung(v, runs, SMS)

        def us(inst):
            params, c = v.instance(inst), costs[inst]
            return recorded_us(v, params, c, pd.Series(row_of[(variant, inst, held)]._asdict()),
                               SMS)  # fmt: skip

        best = min(costs, key=us)
        return best, us(best)

    classes: dict[tuple, list[str]] = {}
    for name in sorted(set(d.variant)):
        v = registry[name]
        classes.setdefault((v.dtypes[0], v.math), []).append(name)
    rows = []
    for (dtype, math_mode), names in classes.items():
        for held in sorted(common, key=lambda s: s[0] * s[1] * s[2]):
            picks = {n: pick(n, held) for n in names}
            measured = {n: row_of[(n, inst, held)].kernel_ms for n, (inst, _) in picks.items()}
            fastest = min(measured.values())
            pred = {n: us / 1e3 for n, (_, us) in picks.items()}
            for margin in MARGINS:
                run = kept(pred, margin, args.floor_ms)
                rows.append(dict(cls=f"{dtype}/{math_mode}", shape="x".join(map(str, held)),
                                 margin=margin, kept=len(run), rungs=len(names),
                                 share=fastest / min(measured[n] for n in run)))  # fmt: skip
    out = pd.DataFrame(rows)
    pd.set_option("display.width", 200)
    for margin, part in out.groupby("margin"):
        shares = part.share
        gmean = math.exp(statistics.fmean(math.log(x) for x in shares))
        worst = part.loc[shares.idxmin()]
        print(f"margin {margin:.2f}: geometric mean {gmean:.3f} of all rungs' best, least "
              f"{shares.min():.3f} ({worst['cls']} at {worst['shape']}), rungs run "
              f"{part.kept.sum()} of {part.rungs.sum()}")  # fmt: skip
    print()
    print(out[out.margin == 0.10].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    unseen(registry, args.floor_ms)


def unseen(registry, floor_ms: float | None) -> None:
    """The same at the products of one small side the H200 comparisons measured every
    instantiation of a stream-K and a skinny rung at (lab/data/h200-streamk-skinny, runs
    `skinny` and `skinny_unseen`), the calibration kept in kernels/calibration.csv (fitted at
    the 8 shapes and, for the skinny rungs, 16 and 64 x 8192 x 8192) predicting each rung's
    time with the plan's launch."""
    from mmbench.core.timemodel import COST_COLUMNS, Costs, choose, predict_ms
    from mmbench.plan.tuning import read_calibration

    t = pd.read_csv(ROOT / "lab/data/h200-streamk-skinny/timings.csv.xz")
    t = t[(t.verification == "PASS") & t.run.isin(["skinny", "skinny_unseen"])]
    cal = read_calibration(ROOT / "kernels/calibration.csv")
    cal = cal[cal.gpu_name == "NVIDIA H200"]
    rows = []
    for (m, n, k), part in t.groupby(["m", "n", "k"]):
        for dtype, names in (("float32", ["streamk_tf32_tn", "skinny_tf32_tn"]),
                             ("float8_e4m3", ["streamk_fp8", "skinny_fp8"])):  # fmt: skip
            mine = part[part.variant.isin(names)]
            if set(mine.variant) != set(names):
                continue
            picks = {}
            for name in names:
                v = registry[name]
                cal_rows = [dict(dtype=dtype, params=v.instance(r.instance), sms=int(r.sms),
                                 blocks_per_sm=int(r.blocks_per_sm),
                                 costs={c: float(getattr(r, c)) for c in COST_COLUMNS})
                            for r in cal[cal.variant == name].itertuples()]  # fmt: skip
                # the entry's own grid: the runs scored here ran no other
                row = choose(v, cal_rows, dtype, m, n, k, grids=False)
                costs = Costs.of(row["costs"], row["blocks_per_sm"])
                inst = next(i for i, p in v.by_slug.items() if p == row["params"])
                at = mine[(mine.variant == name) & (mine.instance == inst)]
                picks[name] = (predict_ms(v, row["params"], costs, m, n, k, 132),
                               at.kernel_ms.min())  # fmt: skip
            fastest = min(ms for _, ms in picks.values())
            pred = {nm: p for nm, (p, _) in picks.items()}
            for margin in MARGINS:
                run = kept(pred, margin, floor_ms)
                rows.append(dict(dtype=dtype, shape=f"{m}x{n}x{k}", margin=margin,
                                 kept=len(run),
                                 share=fastest / min(picks[nm][1] for nm in run)))  # fmt: skip
    out = pd.DataFrame(rows)
    print()
    print("products of one small side (stream-K against skinny):")
    for margin, part in out.groupby("margin"):
        worst = part.loc[part.share.idxmin()]
        print(f"margin {margin:.2f}: least {part.share.min():.3f} ({worst['dtype']} at "
              f"{worst['shape']}), rungs run {part.kept.sum()} of {2 * len(part)}")  # fmt: skip


if __name__ == "__main__":
    main()

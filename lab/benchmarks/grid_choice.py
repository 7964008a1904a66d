"""Where the time model chooses a stream-K rung's grid (core/timemodel.py: worker_choices) other
than the entry's own rule, and, on a GPU, whether the chosen grid is the faster one.

    python3 lab/benchmarks/grid_choice.py [--seeds 755700 726870]      # here: the choices
    python3 lab/benchmarks/grid_choice.py --measure OUT [--limit N]    # on the GPU machine

For each product the shapes preset draws at the seeds (plan/shapes.py: 64 a seed, its
families) and each stream-K rung (streamk_*, skinny_*) that the kept calibration
(kernels/calibration.csv, the GPU model --gpu) holds, the model's choice with the grids weighed
(the plan's: `choose`) beside its choice with the entry's own grid alone (`grids=False`, the
plan before the grids were weighed).  Printed where they differ: the product, each build and
its workers, and both predicted times.

--measure OUT (needs a GPU, CuPy, nvcc): runs both configurations of each such product (the
--limit with the largest predicted gain, all by default) through the pipeline's runner (bursts,
normal inputs, verified as every run is), the two of a product one after the other, and prints
each one's measured kernel time beside its prediction; OUT/grid_choice.csv keeps the rows.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.core.timemodel import Costs, choose, predict_ms  # noqa: E402
from mmbench.plan.shapes import draw  # noqa: E402
from mmbench.plan.tuning import calibrated, read_calibration  # noqa: E402

H200 = "NVIDIA H200"


def choices(registry, rows_of: dict, seeds: list[int]) -> list[dict]:
    """Per product and stream-K rung where the two choices differ: both, predicted."""
    out = []
    shapes = sorted({s for seed in seeds for s in draw(seed, 64)})
    for name, rows in sorted(rows_of.items()):
        v = registry[name]
        if not v.uses_workers:
            continue
        for dtype in sorted({r["dtype"] for r in rows}):
            for m, n, k in shapes:
                now = choose(v, rows, dtype, m, n, k)
                before = choose(v, rows, dtype, m, n, k, grids=False)
                if now is None or (now["params"], now["workers"]) == (before["params"], 0):
                    continue

                out.append(dict(variant=name, dtype=dtype, m=m, n=n, k=k,
                                rule=slug(before["params"]),
                                rule_us=_us(v, before, 0, m, n, k),
                                chosen=slug(now["params"]), workers=now["workers"],
                                chosen_us=_us(v, now, now["workers"], m, n, k)))  # fmt: skip
    return out


def _us(v, row: dict, workers: int, m: int, n: int, k: int) -> float:
    costs = Costs.of(row["costs"], row["blocks_per_sm"])
    return 1e3 * predict_ms(v, row["params"], costs, m, n, k, row["sms"], workers)


def show(found: list[dict]) -> None:
    for r in sorted(found, key=lambda r: r["chosen_us"] / r["rule_us"]):
        print(f"{r['variant']:15} {r['m']:>6} x {r['n']:>6} x {r['k']:>6}: "
              f"{r['rule']} (rule) {r['rule_us']:8.1f} us; {r['chosen']} workers "
              f"{r['workers']} {r['chosen_us']:8.1f} us "
              f"({r['rule_us'] / r['chosen_us']:.3f}x predicted)")  # fmt: skip
    print(f"{len(found)} (product, rung) pairs where the model now chooses another grid")


def measure(registry, found: list[dict], out: Path) -> None:
    """Both configurations of each pair, through the pipeline's runner, one after the other."""
    import os
    from concurrent.futures import ThreadPoolExecutor

    import pandas as pd

    from mmbench.core.axes import Configuration
    from mmbench.core.rates import with_rates
    from mmbench.core.sampling import Sampling
    from mmbench.measure.runner import Runner
    from mmbench.plan import plan
    from mmbench.plan.builds import build_instantiation

    arch = "sm_" + plan.detect_gpus()[0]["compute_cap"].replace(".", "")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted({r["variant"] for r in found}):
            v = registry[name]
            mine = [r for r in found if r["variant"] == name]
            todo = {i: v.instance(i) for r in mine for i in (r["rule"], r["chosen"])}

            def build(inst, v=v, todo=todo, name=name):
                cubin = Path(tmp) / f"{name}_{inst}.cubin"
                build_instantiation(v, todo[inst], cubin, arch, cubin.with_suffix(".log"),
                                    f"{name} {inst}")  # fmt: skip
                return str(cubin)

            with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
                cubins = dict(zip(todo, pool.map(build, todo), strict=True))
            confs = []
            for r in mine:
                for inst, workers in ((r["rule"], 0), (r["chosen"], r["workers"])):
                    confs.append(Configuration.of(name, v.instance(inst), m=r["m"], n=r["n"],
                                                  k=r["k"], accumulate=False, memory="pinned",
                                                  distribution="normal", seed=11,
                                                  workers=workers))  # fmt: skip
            Runner(v, cubins, Sampling()).run(confs, lambda c, row: rows.append(with_rates(row)))
    table = pd.DataFrame(rows)
    out.mkdir(parents=True, exist_ok=True)
    table.to_csv(out / "grid_choice.csv", index=False)
    for r in found:
        at = table[(table.variant == r["variant"]) & (table.m == r["m"]) & (table.n == r["n"])
                   & (table.k == r["k"])]  # fmt: skip
        rule = at[(at.instance == r["rule"]) & (at.workers == 0)]
        chosen = at[(at.instance == r["chosen"]) & (at.workers == r["workers"])]
        verdicts = set(at.verification)
        if rule.empty or chosen.empty:
            print(f"{r['variant']} {r['m']}x{r['n']}x{r['k']}: not measured ({verdicts})")
            continue
        a, b = 1e3 * rule.kernel_ms.iloc[0], 1e3 * chosen.kernel_ms.iloc[0]
        print(f"{r['variant']:15} {r['m']:>6} x {r['n']:>6} x {r['k']:>6}: rule {a:8.1f} us "
              f"(predicted {r['rule_us']:.1f}), workers {r['workers']} {b:8.1f} us (predicted "
              f"{r['chosen_us']:.1f}): {a / b:.3f}x measured, {r['rule_us'] / r['chosen_us']:.3f}x "
              f"predicted; {'/'.join(sorted(verdicts))}")  # fmt: skip
    gains = [a / b for a, b in _pairs(table, found)]
    if gains:
        mean = math.exp(sum(math.log(g) for g in gains) / len(gains))
        print(
            f"measured, the chosen grid against the rule's: geometric mean {mean:.3f}x, "
            f"least {min(gains):.3f}x, {sum(g < 1 for g in gains)} of {len(gains)} slower"
        )


def _pairs(table, found):
    for r in found:
        at = table[(table.variant == r["variant"]) & (table.m == r["m"]) & (table.n == r["n"])
                   & (table.k == r["k"]) & (table.verification == "PASS")]  # fmt: skip
        rule = at[(at.instance == r["rule"]) & (at.workers == 0)].kernel_ms
        chosen = at[(at.instance == r["chosen"]) & (at.workers == r["workers"])].kernel_ms
        if len(rule) and len(chosen):
            yield float(rule.iloc[0]), float(chosen.iloc[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[755700, 726870])
    ap.add_argument("--gpu", default=H200, help="the calibration's GPU model")
    ap.add_argument("--measure", type=Path, metavar="OUT")
    ap.add_argument("--limit", type=int, default=0, help="measure the N largest predicted gains")
    args = ap.parse_args()
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    table = read_calibration(ROOT / "kernels" / "calibration.csv")
    rows_of = calibrated(table, [args.gpu], list(registry), registry, "kernels/calibration.csv")
    found = choices(registry, rows_of, args.seeds)
    show(found)
    if args.measure:
        found.sort(key=lambda r: r["chosen_us"] / r["rule_us"])
        measure(registry, found[: args.limit] if args.limit else found, args.measure)


if __name__ == "__main__":
    main()

"""Whether a stream-K rung's costs fitted at the rule's grids alone price the grid of whole tiles
well enough to choose it (core/timemodel.choose): each rung refitted (calibrate) on its
rule-grid launches of a run that measured both grids, its whole-tile launches priced from those
costs, and the choice between the two grids at each (instantiation, product) set beside what
the run measured.

    python lab/benchmarks/whole_from_rule.py [TIMINGS ...]

Default: the H100's streamk_bf16 rows (lab/data/h100-every-build-misses/streamk-grids.csv.xz)
and the H200's skinny rungs' calibration with chosen and whole grids
(tests/data/h200-calibrate/skinny_grids.csv.xz).  Prints per run: the launches compared, how
often the whole-tile grid is predicted least, how often that is slower than the rule's grid
measured and by how much at most, the median measured gain where it is chosen, and the
median relative error of the whole-tile prediction."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import COST_COLUMNS, Costs, calibrate, recorded_us  # noqa: E402

DEFAULT = [ROOT / "lab/data/h100-every-build-misses/streamk-grids.csv.xz",
           ROOT / "tests/data/h200-calibrate/skinny_grids.csv.xz"]  # fmt: skip


def compare(timings: pd.DataFrame, registry) -> pd.DataFrame:
    """One row per (variant, instance, product) that ran at the rule's grid and with every tile
    whole: the measured and predicted µs of each."""
    t = timings[(timings.verification == "PASS") & timings.variant.map(
        lambda v: v in registry and registry[v].uses_workers)]  # fmt: skip
    rule = t[t.workers == 0]
    whole = t[(t.workers != 0) & t.launch_facts.str.contains("WORKERS=0")]
    cal = calibrate(rule, registry).set_index(["gpu_name", "variant", "instance"])
    key = ["gpu_name", "variant", "instance", "m", "n", "k"]
    fastest = {w: part.sort_values("kernel_ms").drop_duplicates(key).set_index(key, drop=False)
               for w, part in (("rule", rule), ("whole", whole))}  # fmt: skip
    out = []
    for idx, r in fastest["whole"].iterrows():
        if idx not in fastest["rule"].index or idx[:3] not in cal.index:
            continue
        c = cal.loc[idx[:3]]
        v = registry[idx[1]]
        params = v.instance(idx[2])
        costs = Costs.of(c[list(COST_COLUMNS)].to_dict(), c.blocks_per_sm)
        row = {"whole": r, "rule": fastest["rule"].loc[idx]}
        got = dict(zip(key, idx, strict=True))
        for w, x in row.items():
            got[f"{w}_predicted_us"] = recorded_us(v, params, costs, x, int(c.sms))
            got[f"{w}_us"] = float(x.kernel_ms) * 1e3
        out.append(got)
    return pd.DataFrame(out)


def summary(d: pd.DataFrame) -> dict:
    pick = d[d.whole_predicted_us < d.rule_predicted_us]
    slower = pick[pick.whole_us > pick.rule_us]
    return dict(
        launches=len(d),
        whole_chosen=len(pick),
        slower=len(slower),
        worst=round(float((slower.whole_us / slower.rule_us).max() - 1), 3) if len(slower) else 0.0,
        median_gain=round(float((pick.rule_us / pick.whole_us).median()), 3),
        median_error=round(float((d.whole_predicted_us / d.whole_us - 1).median()), 3),
    )


def main(argv: list[str]) -> int:
    registry = load_registry()
    for path in [Path(a) for a in argv] or DEFAULT:
        d = compare(pd.read_csv(path), registry)
        print(f"{path.name}: {summary(d)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Do the configurations that stop at `max_samples` need their samples?  (Issue "the main
command at the speed of the GPU": no measurement repeated to reach a sample count the
statistics do not need.)  The ladder preset's bursts at 1, 31, 33 and 1000 x 1100 x 37 always
take `max_samples` (100): a launch of microseconds never reaches `min_time_s` of GPU time.

From a recorded run's samples files (each configuration's timed samples, in the order they were
taken), for every configuration that took max_samples, this prints:
  - the relative standard deviation of the mean of all its samples (the `noise` stopping rule
    stops where that is at most `max_noise`, 0.5%);
  - where the `noise` rule would have stopped it, had it been the rule;
  - how far the median of its first N samples (--first, default 20) lies from the median of
    all of them: what the row's kernel time would have moved by, had it stopped there.

No GPU: it reads the recorded samples.

    python3 lab/benchmarks/sample_counts.py tests/data/h200-ladder/results/ladder [--first 20]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow" / "scripts"))

from mmbench.core.row import config_id, upgraded  # noqa: E402
from mmbench.core.sampling import Sampling  # noqa: E402
from mmbench.core.schemas import read_table  # noqa: E402
from mmbench.core.tables import read_samples  # noqa: E402
from mmbench.measure.stopping import NoiseRule, noise  # noqa: E402


def where_noise_stops(kernel_ms: list[float], s: Sampling) -> int | None:
    """The sample count at which the `noise` rule is done, or None if it never is."""
    rule = NoiseRule(s)
    for i, k in enumerate(kernel_ms, 1):
        rule.add(k, k)
        if rule.enough(i, 0.0):
            return i
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", type=Path, help="a results folder: results/<experiment>")
    ap.add_argument("--first", type=int, default=20, help="samples a shorter rule would keep")
    args = ap.parse_args()
    t = upgraded(read_table(args.run / "tables" / "timings.csv", "timings"))
    s = Sampling(stop="noise")
    cap = s.max_samples  # the preset's (the default's) cap
    capped = t[t.samples >= cap]
    rows = []
    for variant, g in capped.groupby("variant"):
        kept = read_samples(args.run / "runs" / f"{variant}.samples.json.gz")
        for _, r in g.iterrows():
            k = np.asarray(kept[config_id(r)]["kernel_ms"], dtype=float)
            rows.append({
                "config": f"{variant} {r['dtype']} {r.m}x{r.n}x{r.k} {r.distribution} {r.load}",
                "noise_pct": 100 * noise(list(k)),
                "noise_stops_at": where_noise_stops(list(k), s),
                "moved_pct": 100 * (np.median(k[: args.first]) / np.median(k) - 1),
                "wall_s": r.config_wall_ms / 1e3,
            })  # fmt: skip
    if not rows:
        print(f"{args.run}: no configuration took {cap} samples")
        return 1
    d = pd.DataFrame(rows)
    moved = d.moved_pct.abs()
    print(f"{len(d)} of {len(t)} configurations took {cap} samples "
          f"({d.wall_s.sum():.1f} s of wall time in all)")  # fmt: skip
    print(f"noise of the mean at {cap} samples: median {d.noise_pct.median():.2f}%,"
          f" {(d.noise_pct <= 100 * s.max_noise).sum()} of {len(d)} at most "
          f"{100 * s.max_noise:.1f}%; the noise rule would stop "
          f"{d.noise_stops_at.notna().sum()} of them early")  # fmt: skip
    print(f"median of the first {args.first} samples against all: moved by a median "
          f"{moved.median():.2f}%, 95th percentile {moved.quantile(0.95):.2f}%, "
          f"at most {moved.max():.1f}%")  # fmt: skip
    for _, r in d.loc[moved.sort_values().index[-5:]].iterrows():
        print(f"  {r.config}: {r.moved_pct:+.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Per-configuration margins for runs made apart: how far repeated runs of the same code put each
configuration's median, measured rather than assumed (compare.tolerance's one 5% for all).

Two runs made at different times differ by what each process starts with (where the matrices
land, the clock's state, what ran before): up to 4.4% for the shortest kernels on an H100, under
0.5% for most (docs/method.md).  A margin per configuration, from several runs of the same code
(`benchmarks/margins.py` writes the table), lets a comparison of runs made apart report a 1%
change of a kernel whose runs agree within 0.2%, and still call SAME a kernel whose runs move by
3%.  The margin is the largest relative difference between the runs' medians (of the kind of
sample the criterion judges: batched where every run has them), times a factor for the runs
not seen (default 1.5: a handful of runs rarely holds the largest difference to come), and never
below nvbench's clear gap (0.5%).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from mmbench.compare.criterion import SAMPLE_KINDS
from mmbench.compare.runs import Run

FACTOR = 1.5
FLOOR = 0.005


def measure(runs: list[Run], factor: float = FACTOR, floor: float = FLOOR) -> pd.DataFrame:
    """One row per configuration that every run measured with samples: the margin, the largest
    difference seen, the runs and the kind of sample."""
    if len(runs) < 2:
        raise ValueError(f"margins need at least two runs of the same code, got {len(runs)}")
    common = set.intersection(*(set(r.samples) for r in runs))
    rows = []
    for cid in sorted(common):
        samples = [r.samples[cid] for r in runs]
        kind = "batched" if all(s.get("batch_ms") for s in samples) else "single"
        times = SAMPLE_KINDS[kind][0]
        medians = [float(np.median(s[times])) for s in samples if s.get(times)]
        if len(medians) < len(runs) or min(medians) <= 0:
            continue
        seen = max(medians) / min(medians) - 1
        ref = runs[-1].rows.loc[cid] if cid in runs[-1].rows.index else {}
        rows.append(
            dict(
                config_id=cid,
                label=ref.get("label", ""),
                m=ref.get("m"),
                margin=max(floor, seen * factor),
                largest_difference=seen,
                runs=len(runs),
                samples_kind=kind,
            )
        )
    return pd.DataFrame(rows)


def load(path: str | Path) -> dict[str, float]:
    """config_id -> margin, from a margins table (checked where it is read)."""
    from mmbench.core.schemas import read_table

    t = read_table(path, "margins", allow_empty=False)
    return dict(zip(t.config_id.astype(str), t.margin.astype(float), strict=True))

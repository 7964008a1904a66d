"""Per-configuration margins for runs made apart: how far repeated runs of the same code put each
configuration's median, measured rather than assumed (compare.tolerance's one 5% for all).

Two runs made at different times differ by what each process starts with (where the matrices
land, the clock's state, what ran before): several percent for the shortest kernels, under 0.5%
for most (docs/method.md).  A margin per configuration, from several runs of the same code
(`mmbench margins` writes the table: main below), lets a comparison of runs made apart report a 1%
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


USAGE = """Per-configuration margins for comparing runs made apart (compare.margins), from repeated
runs of the same code: each configuration's largest relative difference between the runs'
medians, times a factor, written as a margins table.

    mmbench margins RESULTS_A RESULTS_B [RESULTS_C ...] --out margins.csv [--factor 1.5]

Each RESULTS is the results folder of one run of the same preset and code (e.g. copies of
results/compare after `snakemake --cores 16 --configfile config/presets/compare.yaml
--forcerun measure_variant`, made at different times).  Then compare a later run with any of
them using the margins instead of the one tolerance:

    snakemake --cores 1 compare --configfile config/presets/compare.yaml \\
      --config baseline=RESULTS_A 'compare={margins: margins.csv}'
"""


def main(argv: list[str] | None = None) -> int:
    """`mmbench margins RESULTS_A RESULTS_B [...] --out margins.csv [--factor 1.5]`: the margins
    table of repeated runs of the same code, for `compare={margins: margins.csv}`."""
    import argparse
    import sys

    from mmbench.compare.runs import load_folder
    from mmbench.core.tables import atomic_write_csv

    ap = argparse.ArgumentParser(
        prog="mmbench margins", description=USAGE.splitlines()[0], epilog=USAGE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )  # fmt: skip
    ap.add_argument("runs", nargs="+", help="results folders of repeated runs")
    ap.add_argument("--out", required=True, help="the margins table to write")
    ap.add_argument("--factor", type=float, default=FACTOR, help="times the largest difference")
    a = ap.parse_args(argv)
    if len(a.runs) < 2:
        ap.error("give at least two results folders of the same code")
    table = measure([load_folder(r) for r in a.runs], a.factor)
    if table.empty:
        sys.exit("no configuration has samples in every run: nothing to write")
    atomic_write_csv(table, a.out, "margins")
    d = table.largest_difference * 100
    print(
        f"{len(table)} configurations over {len(a.runs)} runs: largest difference between the "
        f"runs' medians {d.min():.2f}% to {d.max():.2f}% (median {d.median():.2f}%); margins "
        f"{table.margin.min():.2%} to {table.margin.max():.2%} -> {a.out}"
    )
    for r in table.sort_values("largest_difference").tail(5).itertuples():
        print(
            f"  {r.label} {r.m}: runs differ by {r.largest_difference:.2%}, margin {r.margin:.2%}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

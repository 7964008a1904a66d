"""Per-configuration margins for comparing runs made apart (compare.margins), measured from
repeated runs of the same code: each configuration's largest relative difference between the
runs' medians, times a factor (compare/margins.py says why), written as a margins table.

    python3 benchmarks/margins.py RESULTS_A RESULTS_B [RESULTS_C ...] --out margins.csv [--factor 1.5]

Each RESULTS is the results folder of one run of the same preset and code (e.g. copies of
results/compare after `snakemake --cores 16 --configfile config/presets/compare.yaml
--forcerun measure_variant`, made at different times).  Then compare a later run with any of
them using the margins instead of the one tolerance:

    snakemake --cores 1 compare --configfile config/presets/compare.yaml \
      --config baseline=RESULTS_A 'compare={margins: margins.csv}'
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "workflow" / "scripts"))

from mmbench.compare.margins import FACTOR, measure  # noqa: E402
from mmbench.compare.runs import load_folder  # noqa: E402
from mmbench.core.tables import atomic_write_csv  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
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
    sys.exit(main())

"""Snakemake job: concatenate per-job tables (per-variant timings, per-configuration metrics)."""

import sys

from mmbench.core.row import ordered
from mmbench.core.tables import atomic_write_csv, concat_csv


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    df = concat_csv(list(sm.input))
    atomic_write_csv(ordered(df) if sm.params.get("kind") == "timings" else df, sm.output[0])
    print(f"{len(df)} rows from {len(sm.input)} tables", file=sys.stderr)


main(snakemake)  # noqa: F821

"""Snakemake job: concatenate the per-variant tables into results/tables/timings.csv."""

import sys

from mmbench.tables import TIMINGS_COLUMNS, atomic_write_csv, concat_csv, ordered


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    df = concat_csv(list(sm.input))
    columns = TIMINGS_COLUMNS if sm.params.get("kind") == "timings" else list(df.columns)
    atomic_write_csv(ordered(df, columns), sm.output[0])
    print(f"{len(df)} rows from {len(sm.input)} tables", file=sys.stderr)


main(snakemake)  # noqa: F821

"""Snakemake job: seed 002's metrics table (E3f), nvprof names, from results/tables/metrics.csv."""

import sys

from mmbench.core.schemas import read_table
from mmbench.core.tables import atomic_write_csv, atomic_write_text
from mmbench.profile.profilers import e3f_table


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    table = e3f_table(read_table(sm.input[0], "metrics"))
    atomic_write_csv(table, sm.output.csv, "nvprof_metrics")
    atomic_write_text(
        sm.output.md, table.to_string(index=False, float_format=lambda x: f"{x:.4g}") + "\n"
    )


main(snakemake)  # noqa: F821

"""Snakemake job: profiled kernels placed against the measured ceilings."""

import sys

from mmbench.core.schemas import read_table
from mmbench.core.tables import atomic_write_csv
from mmbench.profile import roofline


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    metrics = read_table(sm.input.metrics, "metrics")
    ceilings = read_table(sm.input.ceilings, "ceilings")
    atomic_write_csv(roofline.table(metrics, ceilings), sm.output[0], "roofline")


main(snakemake)  # noqa: F821

"""Snakemake job: profiled kernels placed against the measured ceilings."""

import sys

import pandas as pd

from mmbench.core.tables import atomic_write_csv
from mmbench.profile import roofline


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    metrics = pd.read_csv(sm.input.metrics)
    ceilings = pd.read_csv(sm.input.ceilings)
    atomic_write_csv(roofline.table(metrics, ceilings), sm.output[0])


main(snakemake)  # noqa: F821

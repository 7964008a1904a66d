"""Snakemake job: measure the device's ceilings (peak FP32/FP64, DRAM bandwidth)."""

import sys

import pandas as pd

from mmbench.ceilings import measure
from mmbench.tables import atomic_write_csv


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    atomic_write_csv(pd.DataFrame([measure(sm.input.cubin)]), sm.output[0])


main(snakemake)  # noqa: F821

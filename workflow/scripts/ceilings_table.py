"""Snakemake job: measure the device's ceilings (peak FP32/FP64, DRAM bandwidth)."""

import os
import sys

import pandas as pd

from mmbench.core.tables import atomic_write_csv
from mmbench.profile.ceilings import measure
from mmbench.service import gpus


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    with gpus.acquire() as env:
        os.environ.update(env)  # before CuPy initialises CUDA in this process
        atomic_write_csv(pd.DataFrame([measure(sm.input.cubin)]), sm.output[0], "ceilings")


main(snakemake)  # noqa: F821

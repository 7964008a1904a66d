"""Snakemake job: write the configurations refused before running, with their reasons."""

import sys

import pandas as pd

from mmbench.core.tables import atomic_write_csv


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    df = pd.DataFrame(sm.params.refused)
    if df.empty:
        df = pd.DataFrame(columns=["variant", "reason"])
    atomic_write_csv(df, sm.output[0], "refused")


main(snakemake)  # noqa: F821

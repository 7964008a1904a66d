"""Snakemake job: the summary in the shape of seed 003's table (printed at the end of a run)."""

import sys

import pandas as pd

from mmbench.summary import render
from mmbench.tables import atomic_write_text


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    timings = pd.read_csv(sm.input.timings)
    refused = pd.read_csv(sm.input.refused)
    txt, md = render(timings, refused)
    atomic_write_text(sm.output.txt, txt)
    atomic_write_text(sm.output.md, md)


main(snakemake)  # noqa: F821

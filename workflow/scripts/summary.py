"""Snakemake job: the summary in the shape of seed 003's table (printed at the end of a run),
from the timings table as read and checked here (render_only: the copied table, never the
copied summary)."""

import sys

import pandas as pd

from mmbench.core.schemas import check_against_manifests, read_table
from mmbench.core.tables import atomic_write_text
from mmbench.report.summary import render


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    timings = read_table(sm.input.timings, "timings")
    check_against_manifests(timings, list(sm.input.get("manifests", [])), sm.input.timings)
    refused = read_table(sm.input.refused, "refused") if sm.input.get("refused") else pd.DataFrame()
    txt, md = render(timings, refused)
    atomic_write_text(sm.output.txt, txt)
    atomic_write_text(sm.output.md, md)


main(snakemake)  # noqa: F821

"""Snakemake job: the summary in the shape of seed 003's table (printed at the end of a run)."""

import sys
import warnings
from pathlib import Path

import pandas as pd

from mmbench.compare import compare
from mmbench.core.tables import atomic_write_text
from mmbench.report.summary import render


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    warnings.simplefilter("ignore", RuntimeWarning)  # nvbench's notes on missing clock data
    timings = pd.read_csv(sm.input.timings)
    refused = pd.read_csv(sm.input.refused)
    txt, md = render(timings, refused)
    # the edit loop: a re-measured kernel against its previous source, before -> after
    edits = compare.edits(
        sm.params.results,
        [Path(t) for t in sm.input.tables],
        sm.params.criterion,
        sm.params.tolerance,
    )
    if edits:
        txt += "\n" + edits + "\n"
        md += "\n```\n" + edits + "\n```\n"
    atomic_write_text(sm.output.txt, txt)
    atomic_write_text(sm.output.md, md)


main(snakemake)  # noqa: F821

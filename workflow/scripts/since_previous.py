"""Snakemake job: the edit loop's "before -> after", each re-measured kernel against its
previous source's measurement in the results folder's archive (rule since_previous); an empty
file where no variant of this run has an earlier source."""

import sys
import warnings
from pathlib import Path

from mmbench.compare import compare
from mmbench.core.tables import atomic_write_text


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    warnings.simplefilter("ignore", RuntimeWarning)  # nvbench's notes on missing clock data
    tables = [Path(t) for t in sm.input.get("tables", [])]
    text = compare.edits(sm.params.results, tables, sm.params.criterion, sm.params.tolerance)
    atomic_write_text(sm.output[0], text + "\n" if text else "")


main(snakemake)  # noqa: F821

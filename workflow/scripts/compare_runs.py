"""Snakemake job: this run against the baseline (rule compare_table), by mmbench/compare.py."""

import json
import sys
import warnings
from pathlib import Path

from mmbench.compare import compare
from mmbench.core.tables import atomic_write_csv, atomic_write_text


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    warnings.simplefilter("ignore", RuntimeWarning)  # nvbench's notes on missing clock data
    new = compare.load_tables([Path(t) for t in sm.input.tables], sm.params.results)
    if sm.params.baseline == "previous":
        base, hashes = compare.previous(sm.params.results, new)
        base.name = (
            "previous kernel sources (" + ", ".join(f"{v} {h}" for v, h in hashes.items()) + ")"
        )
    else:
        base = compare.load_folder(sm.params.baseline)
    table = compare.compare(base, new, sm.params.criterion, sm.params.tolerance)
    head = compare.header(base, new) | dict(
        criterion=sm.params.criterion,
        tolerance=sm.params.tolerance,
        counts=compare.counts(table),
    )
    text = compare.summary(table, head)
    atomic_write_csv(table, sm.output.csv, "compare")
    atomic_write_text(sm.output.header, json.dumps(head, indent=2, default=str))
    atomic_write_text(sm.output.txt, text + "\n")
    atomic_write_text(sm.output.html, compare.html(table, text))


main(snakemake)  # noqa: F821

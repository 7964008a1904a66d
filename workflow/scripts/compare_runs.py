"""Snakemake job: this run against the baseline (rule compare_table), by mmbench/compare/:
configurations measured side by side with a baseline build (rule pair_variant) get the paired
verdict (compare/paired.py), the others nvbench's criterion on two runs made apart."""

import json
import sys
import warnings
from pathlib import Path

from mmbench.compare import compare, paired
from mmbench.compare.margins import load as load_margins
from mmbench.compare.runs import NoRun, load_pairs
from mmbench.core.tables import atomic_write_csv, atomic_write_text


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    warnings.simplefilter("ignore", RuntimeWarning)  # nvbench's notes on missing clock data
    new = compare.load_tables([Path(t) for t in sm.input.tables], sm.params.results)
    baseline, threshold = sm.params.baseline, sm.params.threshold
    pair_rows, pair_samples = load_pairs([Path(t) for t in sm.input.pairs])
    by_pairs = paired.table(pair_rows, pair_samples, threshold, compare.KEEP)
    apart, base = None, None
    if isinstance(baseline, dict) or baseline == "itself":  # every verdict is paired
        base = compare.build_run(baseline, new)
    else:
        try:
            if baseline == "previous":
                base, hashes = compare.previous(sm.params.results, new)
                base.name = (
                    "previous kernel sources ("
                    + ", ".join(f"{v} {h}" for v, h in hashes.items())
                    + ")"
                )
            else:
                base = compare.load_folder(baseline)
        except NoRun:
            if not len(by_pairs):
                raise
            base = compare.build_run(dict(variant="previous kernel sources"), new)
        else:
            margins = load_margins(sm.params.margins) if sm.params.margins else None
            apart = compare.compare(base, new, sm.params.criterion, sm.params.tolerance, margins)
    table = compare.finish(paired.merged(apart, by_pairs))
    head = compare.header(base, new) | dict(
        criterion=sm.params.criterion,
        tolerance=sm.params.tolerance,
        threshold=threshold,
        comparison=compare.kind(table),
        counts=compare.counts(table),
    )
    text = compare.summary(table, head)
    atomic_write_csv(table, sm.output.csv, "compare")
    atomic_write_text(sm.output.header, json.dumps(head, indent=2, default=str))
    atomic_write_text(sm.output.txt, text + "\n")
    atomic_write_text(sm.output.html, compare.html(table, text))


main(snakemake)  # noqa: F821

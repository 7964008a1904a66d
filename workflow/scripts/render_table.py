"""Snakemake job: one table of the output catalogue as CSV, Markdown, HTML and LaTeX, in a
process of its own (the rule's conda environment; report.smk runs it in Snakemake's process
otherwise: mmbench/report/render.py)."""

import sys

from mmbench.report import render


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    render.table(sm.wildcards.table, sm.input, sm.output.html, sm.params.gpu_model)


main(snakemake)  # noqa: F821

"""Snakemake job: one figure of the output catalogue (PNG for the report, PDF for papers), in a
process of its own (the rule's conda environment; report.smk runs it in Snakemake's process
otherwise: mmbench/report/render.py)."""

import sys

from mmbench.report import render


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    render.figure(sm.wildcards.figure, sm.input, sm.output.png, sm.params.gpu_model)


main(snakemake)  # noqa: F821

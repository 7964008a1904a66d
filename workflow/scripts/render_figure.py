"""Snakemake job: one figure of the output catalogue (PNG for the report, PDF for papers)."""

import sys
from pathlib import Path

from mmbench.report.catalogue import FIGURES, load_inputs


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    figure = FIGURES[sm.wildcards.figure]
    data = load_inputs({name: sm.input[name] for name in figure.inputs}, sm.params.gpu_model)
    figure.make(data, Path(sm.output.png).with_suffix(""))


main(snakemake)  # noqa: F821

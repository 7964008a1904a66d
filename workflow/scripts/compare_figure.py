"""Snakemake job: the comparison's figure (rule compare_figure)."""

import json
import sys
from pathlib import Path

import pandas as pd

from mmbench.compare import figure


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    head = json.loads(Path(sm.input.header).read_text())
    table = pd.read_csv(sm.input[0])
    figure.compare(table, head, Path(sm.output.png).with_suffix(""))


main(snakemake)  # noqa: F821

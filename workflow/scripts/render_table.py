"""Snakemake job: one table of the output catalogue as CSV, Markdown, HTML and LaTeX."""

import sys
from pathlib import Path

from mmbench.report.catalogue import TABLES, load_inputs, title_of
from mmbench.report.report_tables import write


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    table = TABLES[sm.wildcards.table]
    data = load_inputs({name: sm.input[name] for name in table.inputs}, sm.params.gpu_model)
    made = table.make(data)
    write(made, Path(sm.output.html).with_suffix(""), title_of(table, made))


main(snakemake)  # noqa: F821

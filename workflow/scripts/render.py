"""Snakemake job (rule render): every figure and report table of the run that its data can make,
drawn in this one process (mmbench/report/render.py), and the summary in the shape of seed 003's
table, from the timings table as read and checked here (render_only: the copied table, never the
copied summary)."""

import sys

from mmbench.report import render


def main(sm) -> None:
    sys.stderr = log = open(sm.log[0], "w")
    paths = {name: sm.input[name] for name in sm.input.keys() if name != "refused"}
    render.render_all(sm.params.figures, sm.params.tables, paths, sm.output.figures,
                      sm.output.report, sm.params.gpu_model, sm.threads, log)  # fmt: skip
    # beside the tables (rendering only: in the report folder, beside the copied run's tables)
    txt, md = (sm.output.summary, sm.output.summary_md) if "summary" in sm.output.keys() else (
        f"{sm.output.report}/summary.txt", f"{sm.output.report}/summary.md")  # fmt: skip
    render.summary(paths["timings"], paths.get("manifests", []), sm.input.get("refused"), txt, md)


main(snakemake)  # noqa: F821

"""Snakemake jobs (rules render_profiles and render): the figures and report tables of the run
that its data can make, drawn in one process (mmbench/report/render.py).  render_profiles draws
those that read the profilers' tables alone into a folder of its own; render draws the rest,
links those in beside them, and writes the summary in the shape of seed 003's table from the
timings table as read and checked here (render_only: the copied table, never the copied
summary)."""

import sys

from mmbench.report import render


def main(sm) -> None:
    sys.stderr = log = open(sm.log[0], "w")
    paths = {n: sm.input[n] for n in sm.input.keys() if n not in ("refused", "drawn")}
    if "drawn" in sm.output.keys():  # rule render_profiles: the render job gathers them
        out = sm.output.drawn
        render.render_all(sm.params.figures, sm.params.tables, paths, f"{out}/figures",
                          f"{out}/report", sm.params.gpu_model, sm.threads, log)  # fmt: skip
        return
    render.render_all(sm.params.figures, sm.params.tables, paths, sm.output.figures,
                      sm.output.report, sm.params.gpu_model, sm.threads, log,
                      sm.input.get("drawn"))  # fmt: skip
    # beside the tables (rendering only: in the report folder, beside the copied run's tables)
    txt, md = (sm.output.summary, sm.output.summary_md) if "summary" in sm.output.keys() else (
        f"{sm.output.report}/summary.txt", f"{sm.output.report}/summary.md")  # fmt: skip
    render.summary(paths["timings"], paths.get("manifests", []), sm.input.get("refused"), txt, md)


main(snakemake)  # noqa: F821

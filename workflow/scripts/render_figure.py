"""Snakemake job: one figure (PNG for the report, PDF for papers) from the tidy tables."""

import sys
from pathlib import Path

import pandas as pd

from mmbench import figures


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    name = sm.wildcards.figure
    stem = Path(sm.output.png).with_suffix("")
    if name == "roofline":
        roof = (
            pd.read_csv(sm.input.roofline) if Path(sm.input.roofline).stat().st_size > 1 else None
        )
        figures.roofline(roof, pd.read_csv(sm.input.ceilings), stem)
        return
    timings = pd.read_csv(sm.input.timings)
    FIGURES[name](timings, stem)


FIGURES = {
    "e1_time_vs_n": figures.time_vs_n,
    "e3c_gflops_vs_n": figures.gflops_vs_n,
    "e3d_remainder": figures.remainder,
    "e3e_global_vs_kernel": figures.global_vs_kernel,
    "e3b_time_split": figures.time_split,
    "fraction_of_cublas": figures.fraction_of_cublas,
}

main(snakemake)  # noqa: F821

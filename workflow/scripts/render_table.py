"""Snakemake job: one of the reports' tables as CSV, Markdown, HTML and LaTeX."""

import sys
from pathlib import Path

import pandas as pd

from mmbench import report_tables as rt

TITLES = {
    "e4b": "Kernel time, ms (GFLOPS), per variant, block and size (seed 003)",
    "e4a": "Matrix sum C = A + B, kernel ms (G additions/s): one thread per element, row, column (seed 003)",
    "e3a": "kernel00 vs kernel01: global and kernel time, GFLOPS, PASS/FAIL (seed 002)",
    "e3b": "Time split HtoD / kernel / DtoH (seed 002's nvprof summary)",
    "e3f": "Profiler metrics, nvprof names (seed 002 at N = 2048)",
    "verification": "Verification: relative L2 error, writes outside C, Freivalds, first mismatches",
    "e4c": "Device properties (seed 003's deviceQuery)",
    "e5a": "Padded leading dimensions: packing buffer vs strided copy (seed 004)",
    "provenance": "Provenance of this run",
}


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    name = sm.wildcards.table
    timings = pd.read_csv(sm.input.timings)
    manifests = sorted(Path(sm.input.timings).parent.parent.glob("runs/*.manifest.json"))
    if name == "e3f":
        df = pd.read_csv(sm.input.e3f) if sm.input.get("e3f") else pd.DataFrame()
    elif name == "e4a":
        df = rt.e4b(timings[timings.variant.str.startswith("matadd")])
    elif name == "e4c":
        df = rt.e4c(manifests, timings)
    elif name == "provenance":
        df = rt.provenance(timings, manifests)
    else:
        df = getattr(rt, name)(timings)
    rt.write(df, Path(sm.output.html).with_suffix(""), TITLES[name])


main(snakemake)  # noqa: F821

"""Snakemake job: parse every ptxas -v report into results/tables/resources.csv."""

import re
import sys
from pathlib import Path

import pandas as pd

from mmbench.ptxas import parse_ptxas
from mmbench.tables import atomic_write_csv

NAME = re.compile(r"(?P<dtype>float32|float64|int32)_t(?P<tile>\d+)_f(?P<coarsen>\d+)\.ptxas\.txt$")


def table(paths: list[str]) -> pd.DataFrame:
    rows = []
    for p in map(Path, paths):
        m = NAME.search(p.name)
        for rec in parse_ptxas(p.read_text()):
            rows.append(
                dict(
                    variant=p.parent.name,
                    dtype=m["dtype"],
                    tile=int(m["tile"]),
                    coarsen=int(m["coarsen"]),
                )
                | rec
            )
    return pd.DataFrame(rows)


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    atomic_write_csv(table(list(sm.input)), sm.output[0])


main(snakemake)  # noqa: F821

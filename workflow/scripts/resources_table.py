"""Snakemake job: parse every ptxas -v report into results/tables/resources.csv, one row per
kernel instantiation with its variant, parameters and resources."""

import sys
from pathlib import Path

import pandas as pd

from mmbench.plan import Configuration
from mmbench.ptxas import parse_ptxas
from mmbench.registry import load_registry
from mmbench.tables import atomic_write_csv


def table(paths: list[str], registry: dict) -> pd.DataFrame:
    """results/build/<arch>/<variant>/<instance>.ptxas.txt -> rows."""
    rows = []
    for p in map(Path, paths):
        variant = registry[p.parent.name]
        params = dict(variant.instance(p.name.removesuffix(".ptxas.txt")))
        conf = Configuration(variant.name, params.pop("dtype"), 0, 0, 0, False, "", "", 0, params)
        ident = {k: conf.axes()[k] for k in ("variant", "label", "params", "instance", "dtype")}
        for rec in parse_ptxas(p.read_text()):
            rows.append(ident | dict(conf.params) | rec)
    return pd.DataFrame(rows)


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    atomic_write_csv(table(list(sm.input), load_registry(sm.params.registry)), sm.output[0])


main(snakemake)  # noqa: F821

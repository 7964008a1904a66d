"""Snakemake job: parse every ptxas -v report into results/tables/resources.csv, one row per
kernel instantiation with its variant, parameters and resources."""

import sys
from pathlib import Path

import pandas as pd

from mmbench.core.axes import DTYPE_PARAM, params_label
from mmbench.core.registry import load_registry
from mmbench.core.tables import atomic_write_csv
from mmbench.plan.ptxas import parse_ptxas


def table(paths: list[str], registry: dict) -> pd.DataFrame:
    """results/build/<arch>/<variant>/<instance>.ptxas.txt -> rows."""
    rows = []
    for p in map(Path, paths):
        variant = registry[p.parent.name]
        instance = p.name.removesuffix(".ptxas.txt")
        params = dict(variant.instance(instance))
        label = params_label(params)
        ident = dict(
            variant=variant.name,
            label=f"{variant.name} {label}".strip(),
            params=label,
            instance=instance,
            dtype=params.pop(DTYPE_PARAM),
        )
        for rec in parse_ptxas(p.read_text()):
            rows.append(ident | params | rec)
    return pd.DataFrame(rows)


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    atomic_write_csv(
        table(list(sm.input), load_registry(sm.params.registry)), sm.output[0], "resources"
    )


main(snakemake)  # noqa: F821

"""What the planning stage needs to know of the tidy tables without importing pandera (a third
of a second of every snakemake command): the error a table that cannot be trusted raises, and
the tuning table's columns.  core/schemas.py holds the schemas themselves."""

from __future__ import annotations


class TableError(ValueError):
    """A table that cannot be trusted: the message names the file, the rows and what is wrong
    (core/schemas.py checks tables against their schemas)."""


# the tuning table (report/ladder.tuned writes it, plan/tuning.py reads it): its columns
TUNED_COLUMNS = [
    "gpu_name",
    "variant",
    "dtype",
    "math",
    "params",
    "instance",
    # the shape the row was tuned at; where a rung has rows at several shapes, each product runs
    # the row tuned nearest to it (plan/tuning.py); a rung's only row holds for every shape
    "m",
    "n",
    "k",
    "kernel_ms",
    "kernel_gflops",
    "reference",
    "percent_of_reference",
    "instantiations",
]

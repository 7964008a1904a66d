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
    "m",
    "kernel_ms",
    "kernel_gflops",
    "reference",
    "percent_of_reference",
    "instantiations",
    # the products the row holds for: mn_min <= m * n < mn_max (empty: no bound), one range per
    # tuning size (report/ladder.tuned); a row without either holds for every shape
    "mn_min",
    "mn_max",
]

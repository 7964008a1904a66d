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

# how a row's `tuned_for` names another GPU model's tuning (config tuned_gpu): plan.tuned_for
# writes it before the shape's words ("tuned on MODEL; tuned at 4096x4096x4096"), the ladder
# table reads it back
TUNED_ON = "tuned on "
# a row whose instantiation the calibrated model chose (core/timemodel.py): "chosen by the model
# calibrated at 8 shapes"
MODEL_WORDS = "chosen by the model calibrated at "


def tuned_on(tuned_for: str) -> str | None:
    """The GPU model whose tuning a row's `tuned_for` says chose it, or None."""
    head = tuned_for.split("; ")[0]
    return head[len(TUNED_ON) :] if head.startswith(TUNED_ON) else None

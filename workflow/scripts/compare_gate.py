"""Snakemake job (target `compare`): with compare.fail_on=slower, fail when any configuration is
SLOWER or REGRESSED, or (unless compare.allow_missing) missing from this run, printing the
comparison's summary (on success the end of the run prints it)."""

import sys

from mmbench.compare.compare import gate
from mmbench.core.schemas import read_table


def main(sm) -> None:
    table = read_table(sm.input.csv, "compare")
    why = gate(table, sm.params.allow_missing) if sm.params.fail_on == "slower" else []
    if why:
        print(open(sm.input.txt).read(), file=sys.stderr, flush=True)
        sys.exit("compare.fail_on=slower: " + "; ".join(why) + f" (listed in {sm.input.csv})")


main(snakemake)  # noqa: F821

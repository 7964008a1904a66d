"""Snakemake job (target `compare`): with compare.fail_on=slower, fail when any configuration is
SLOWER, printing the comparison's summary (on success the end of the run prints it)."""

import sys

import pandas as pd


def main(sm) -> None:
    slower = pd.read_csv(sm.input.csv).query("verdict == 'SLOWER'")
    if sm.params.fail_on == "slower" and len(slower):
        print(open(sm.input.txt).read(), file=sys.stderr, flush=True)
        sys.exit(
            f"compare.fail_on=slower: {len(slower)} configuration(s) SLOWER than the baseline "
            f"(listed in {sm.input.csv})"
        )


main(snakemake)  # noqa: F821

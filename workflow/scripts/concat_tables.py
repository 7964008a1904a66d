"""Snakemake job: concatenate per-job tables (per-variant timings, per-configuration metrics),
each checked against its schema where it is read, the whole checked before it is written (and,
for the timings, against the run manifests: every configuration of every job, once)."""

import sys

from mmbench.core.schemas import check_frame
from mmbench.core.tables import atomic_write_csv, concat_csv, gather_timings


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    kind = sm.params.get("kind") or "metrics"
    tables = list(sm.input.get("tables", sm.input))
    if kind == "timings":
        df = gather_timings(tables, sm.input.manifests, sm.output[0])
    else:
        df = concat_csv(tables, kind)
        check_frame(df, kind, sm.output[0])
        atomic_write_csv(df, sm.output[0])
    print(f"{len(df)} rows from {len(tables)} tables", file=sys.stderr)


main(snakemake)  # noqa: F821

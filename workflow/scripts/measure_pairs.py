"""Snakemake job: one variant's configurations measured in two builds side by side (rule
pair_variant), in worker processes that lose nothing (mmbench/measure/jobs.py, paired.py)."""

import logging
import sys

from mmbench.core.registry import source_hash
from mmbench.measure.jobs import JobFailed, run_job


def main(sm) -> None:
    fmt = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
    handler = logging.FileHandler(sm.log[0])
    handler.setFormatter(fmt)
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    sys.stderr = open(sm.log[0], "a", buffering=1)
    source_sha = source_hash(sm.params.sources) if sm.params.sources else "library"
    settings = dict(
        sampling=sm.params.sampling,
        pairing=sm.params.pairing,
        freivalds_vectors=sm.params.freivalds_vectors,
    )
    try:
        run_job(
            sm.wildcards.variant,
            sm.params.registry,
            sm.params.configurations,
            dict(sm.params.instantiations),
            sm.params.sources,
            source_sha,
            settings,
            sm.output.table,
            sm.log[0],
            baseline=dict(sm.params.baseline),
        )
    except JobFailed as err:  # say why on the console, not only in the log
        print(f"pair_variant {sm.wildcards.variant}: {err}", file=sys.__stderr__, flush=True)
        raise


main(snakemake)  # noqa: F821 - injected by Snakemake

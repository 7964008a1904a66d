"""Snakemake job: one variant's configurations measured in two builds side by side (rule
pair_variant), in worker processes that lose nothing (mmbench/service/jobs.py, paired.py)."""

import sys

from mmbench.core.registry import source_hash
from mmbench.service.jobs import JobFailed, log_to, run_job


def main(sm) -> None:
    log_to(sm.log[0])
    source_sha = source_hash(sm.params.sources) if sm.params.sources else "library"
    settings = dict(
        sampling=sm.params.sampling,
        pairing=sm.params.pairing,
        freivalds_vectors=sm.params.freivalds_vectors,
        # the baseline build launched as its own registry launches it (grid, arguments, shape
        # facts: an older tree's entry may differ), "" for this run's
        baseline_registry=sm.params.baseline_registry,
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
            serve=sm.params.serve,
        )
    except JobFailed as err:  # say why on the console, not only in the log
        print(f"pair_variant {sm.wildcards.variant}: {err}", file=sys.__stderr__, flush=True)
        raise


main(snakemake)  # noqa: F821 - injected by Snakemake

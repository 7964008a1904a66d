"""Snakemake job: measure every configuration of one variant (rule measure_variant), in worker
processes that lose nothing (mmbench/jobs.py), and write the run manifest (E4c)."""

import time

SCRIPT_AT = time.time()  # before the imports: where the job's start-up goes (job_phases)

import json  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from mmbench.core.archive import record_measured  # noqa: E402
from mmbench.core.registry import source_hash  # noqa: E402
from mmbench.core.tables import atomic_write_bytes, atomic_write_text  # noqa: E402
from mmbench.service import served  # noqa: E402
from mmbench.service.jobs import (  # noqa: E402
    JobFailed,
    git_state,
    job_phases,
    log_to,
    package_versions,
    run_job,
)
from mmbench.service.journal import process_started_at  # noqa: E402


def main(sm) -> None:
    log_to(sm.log[0])
    served.end_on_sigterm()  # stopped, the job ends its worker as for Ctrl-C
    source_sha = source_hash(sm.params.sources) if sm.params.sources else "library"
    settings = dict(sampling=sm.params.sampling, freivalds_vectors=sm.params.freivalds_vectors)
    times: dict = {}
    try:
        device = run_job(
            sm.wildcards.variant,
            sm.params.registry,
            sm.params.configurations,
            sm.params.instantiations,
            sm.params.sources,
            source_sha,
            settings,
            sm.output.table,
            sm.log[0],
            times=times,
            serve=sm.params.serve,
        )
    except JobFailed as err:  # say why on the console, not only in the log
        print(f"measure_variant {sm.wildcards.variant}: {err}", file=sys.__stderr__, flush=True)
        raise
    except served.Terminated as err:
        say = f"{err}; its worker ended with it, its journal keeps what was measured"
        print(f"measure_variant {sm.wildcards.variant}: {say}", file=sys.__stderr__, flush=True)
        raise SystemExit(served.TERMINATED_EXIT) from None
    manifest = dict(
        variant=sm.wildcards.variant,
        configurations=len(sm.params.configurations),
        device=device,
        git=git_state(sm.params.repo),
        packages=package_versions(),
        kernel_sources=sm.params.sources,
        source_sha256=source_sha,
        config=sm.config,
        # where the job's time went outside the configurations' rows (harness_phases.py)
        job_phases_s=job_phases(times, process_started_at(), SCRIPT_AT),
    )
    atomic_write_text(sm.output.manifest, json.dumps(manifest, indent=2, default=str))
    archive(sm.output, sm.wildcards.variant, source_sha, dict(sm.params.instantiations))


def archive(output, variant: str, source_sha: str, cubins: dict[str, str]) -> None:
    """A copy of this job's table, samples, manifest and cubins under
    <results>/archive/<variant>/<source hash>/ (the cubins in cubins/<arch>/): an edited
    kernel's earlier rows stay there (Snakemake removes a job's outputs before it runs again),
    for baseline=previous, which measures the kept cubins again beside the new ones."""
    folder = Path(output.table).parent.parent / "archive" / variant / source_sha
    # cubins first, the table last: an entry with a table has its cubins (plan/pairs.py)
    for name, cubin in cubins.items():
        arch = Path(cubin).parent.parent.name  # results/build/<arch>/<variant>/<name>.cubin
        suffix = Path(cubin).suffix  # .cubin, or .so (a shared library's build)
        atomic_write_bytes(folder / "cubins" / arch / f"{name}{suffix}", Path(cubin).read_bytes())
    for path in (output.samples, output.manifest, output.table):
        # atomic: a copy interrupted half-way never leaves a torn archive entry
        atomic_write_bytes(folder / Path(path).name, Path(path).read_bytes())
    # the order of measurement, whatever the clocks say (core/archive.py reads it)
    record_measured(folder.parent, source_sha)


main(snakemake)  # noqa: F821 - injected by Snakemake

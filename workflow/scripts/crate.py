"""Snakemake job (rule crate): the run's Workflow Run RO-Crate, ro-crate-metadata.json at the top
of its results folder (mmbench/report/crate.py)."""

import sys
from pathlib import Path

from mmbench.report import crate


def main(sm) -> None:
    sys.stderr = open(sm.log[0], "w")
    results = Path(sm.output.metadata).parent
    path = crate.write(results, dict(sm.params.config), sm.params.workflow_dir,
                       list(sm.input.manifests), sm.input.timings, sm.params.name,
                       sm.params.snakemake_version)  # fmt: skip
    print(f"the run's RO-Crate: {path}", file=sys.stderr)


main(snakemake)  # noqa: F821

"""Snakemake job: measure every configuration of one variant on the GPU (rule measure_variant)."""

import logging
import sys
from pathlib import Path

import pandas as pd

from mmbench.plan import Configuration
from mmbench.registry import load_registry, source_hash
from mmbench.runner import Runner, Sampling, append_jsonl
from mmbench.tables import TIMINGS_COLUMNS, atomic_write_csv, ordered


def setup_logging(logfile: str) -> None:
    """Progress to the job's log and to the console; stderr (tracebacks) to the log."""
    fmt = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in (logging.FileHandler(logfile), logging.StreamHandler(sys.stdout)):
        handler.setFormatter(fmt)
        root.addHandler(handler)
    sys.stderr = open(logfile, "a", buffering=1)


def main(sm) -> None:
    setup_logging(sm.log[0])
    variant = load_registry(sm.params.registry)[sm.wildcards.variant]
    confs = [Configuration(**c) for c in sm.params.configurations]
    cubins = {(d, int(t), int(f)): path for d, t, f, path in sm.params.instantiations}
    out = Path(sm.output[0])
    journal = out.with_name(out.name + ".partial.jsonl")
    journal.unlink(missing_ok=True)
    rows = []

    def on_row(row: dict) -> None:
        rows.append(row)
        append_jsonl(journal, row)

    sha = source_hash(sm.params.sources) if sm.params.sources else "library"
    logging.info("%s: %d configurations", variant.name, len(confs))
    runner = Runner(variant, cubins, Sampling(**sm.params.sampling), {"source_sha256": sha})
    logging.info(
        "device: %s (%s), driver %s",
        runner.facts["gpu_name"],
        runner.facts["gpu_uuid"],
        runner.facts["driver_version"],
    )
    runner.run(confs, on_row)
    atomic_write_csv(ordered(pd.DataFrame(rows), TIMINGS_COLUMNS), out)
    journal.unlink(missing_ok=True)


main(snakemake)  # noqa: F821 - injected by Snakemake

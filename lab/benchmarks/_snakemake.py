"""What both benchmarks do: run the workflow on a preset in a fresh working directory (so the
checkout's results/ is untouched) and time it."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_fresh(
    work: Path, preset: str, cores: int, *config: str
) -> tuple[subprocess.CompletedProcess, float]:
    """(the finished `snakemake` process, its wall time in s) from an emptied `work`; the
    defaults, config/config.yaml, are not named as a config file (the main command names none,
    and the workflow refuses a setting a config file names that changes nothing)."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(ROOT / "workflow" / "Snakefile"),
        "-d",
        str(work),
        "--cores",
        str(cores),
    ]
    if Path(preset).resolve() != ROOT / "config" / "config.yaml":
        cmd += ["--configfile", preset]
    if config:
        cmd += ["--config", *config]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    return proc, time.perf_counter() - t0

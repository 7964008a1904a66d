"""SLURM, asked only where a run is submitted to it: whether it answers from this machine (the
workflow's onstart, and the `mmbench` command before Snakemake starts), and whether a command
line submits to it."""

from __future__ import annotations

from pathlib import Path

import yaml

from mmbench.core.bounded import TooLarge, load_yaml

DRY = ("-n", "--dry-run", "--dryrun", "--lint", "--list", "-l", "--summary", "-S",
       "--detailed-summary", "-D", "--dag", "--rulegraph", "--filegraph", "--report")  # fmt: skip


def slurm_unreachable(timeout_s: float = 5.0) -> str | None:
    """Before the first job of a run submitted to SLURM (the workflow's onstart): why SLURM
    cannot take jobs from here, in one line, within seconds (None: `sinfo` answered).  Without
    this, the SLURM executor's first submission fails after 40-50 s with the cause inside a
    long sbatch command line."""
    import shutil
    import subprocess

    if not shutil.which("sinfo"):
        return (
            "the run is submitted to SLURM (--executor slurm), but SLURM's tools (sinfo) are not "
            "on this machine's PATH: run it from the cluster's login node, or drop "
            "--profile profiles/slurm to run here"
        )
    try:
        out = subprocess.run(["sinfo", "-h", "-o", "%P"], capture_output=True, text=True,
                             timeout=timeout_s)  # fmt: skip
    except subprocess.TimeoutExpired:
        return f"SLURM does not answer: sinfo gave nothing within {timeout_s:.0f} s"
    if out.returncode != 0:
        first = (out.stderr.strip().splitlines() or ["(no message)"])[-1]
        return f"SLURM does not answer: sinfo says {first.strip()}"
    return None


def executor(argv: list[str], environ: dict | None = None) -> str | None:
    """The executor a Snakemake command line names: --executor/-e, else its --profile's
    `executor:` (or $SNAKEMAKE_PROFILE's), else None (local)."""
    import os

    environ = os.environ if environ is None else environ
    profile = environ.get("SNAKEMAKE_PROFILE")
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if name in ("--executor", "-e", "--profile") and not eq and i + 1 < len(argv):
            value = argv[i + 1]
        if name in ("--executor", "-e"):
            return value
        if name == "--profile":
            profile = value
    if profile:
        path = Path(profile) / "config.yaml"
        try:
            loaded = load_yaml(path) or {}
        except (OSError, yaml.YAMLError, TooLarge):
            return None  # Snakemake names a profile it cannot read
        return loaded.get("executor") if isinstance(loaded, dict) else None
    return None


def _dry(arg: str) -> bool:
    """A flag that submits nothing: -n and its long forms, --lint, --report ..., or -n among
    short flags written together (-np)."""
    name = arg.partition("=")[0]
    return name in DRY or (
        len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and arg[1:].isalpha() and "n" in arg
    )


def submits(argv: list[str], environ: dict | None = None) -> bool:
    """Whether this command line submits jobs to SLURM (not a dry run, a lint or a report)."""
    return str(executor(argv, environ) or "").endswith("slurm") and not any(map(_dry, argv))

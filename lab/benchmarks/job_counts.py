"""The jobs each experiment's dry run plans, per rule: the main command, the default experiment
and every preset, planned from an empty folder for sm_90 (no GPU needed).  Run against two trees
(`--tree`) to compare a redesign's plans:

    python lab/benchmarks/job_counts.py --tree /tmp/base --json before.json
    python lab/benchmarks/job_counts.py --tree . --json after.json --against before.json
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path


def snakefile(tree: Path) -> Path:
    for name in ("workflow/Snakefile", "Snakefile"):
        if (tree / name).is_file():
            return tree / name
    raise SystemExit(f"no Snakefile in {tree}")


def experiments(tree: Path) -> dict[str, list[str]]:
    runs = {
        "main": ["--config", "sizes=[8000,10000,12000]", "arch=sm_90"],
        "default": ["--config", "arch=sm_90"],
    }
    for preset in sorted((tree / "config" / "presets").glob("*.yaml")):
        runs[preset.stem] = ["--configfile", str(preset), "--config", "arch=sm_90"]
    return runs


def counts(tree: Path, args: list[str]) -> dict[str, int] | str:
    env = dict(os.environ, PYTHONPATH=str(tree / "workflow" / "scripts"))
    with tempfile.TemporaryDirectory() as work:
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "snakemake",
                "-s",
                str(snakefile(tree)),
                "-d",
                work,
                "-n",
                "--cores",
                "1",
                *args,
            ],
            capture_output=True,
            text=True,
            env=env,
        )
    if out.returncode and "tuned_gpu" in out.stderr and "tuned_gpu=" not in " ".join(args):
        # a preset run with the tuned parameters, which no GPU here picks: the H100's rows
        return counts(tree, [*args, "tuned_gpu=NVIDIA H100 80GB HBM3"])
    if out.returncode:
        return f"exit {out.returncode}: {out.stderr.strip().splitlines()[-1:]}"
    table = out.stdout.split("Job stats:")[-1]
    rows = re.findall(r"^(\w+)\s+(\d+)$", table, re.M)
    return {rule: int(n) for rule, n in rows}


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tree", type=Path, default=Path("."))
    p.add_argument("--json", type=Path)
    p.add_argument("--against", type=Path)
    a = p.parse_args()
    tree = a.tree.resolve()
    got = {name: counts(tree, args) for name, args in experiments(tree).items()}
    before = json.loads(a.against.read_text()) if a.against else {}
    for name, c in got.items():
        if isinstance(c, str):
            print(f"{name}: {c}")
            continue
        line = f"{name}: {c.get('total', 0)} jobs"
        if name in before and isinstance(before[name], dict):
            b = before[name]
            diff = {
                r: (b.get(r, 0), c.get(r, 0))
                for r in sorted(set(b) | set(c))
                if r != "total" and b.get(r, 0) != c.get(r, 0)
            }
            line += f" (before {b.get('total', 0)}; changed: {diff or 'none'})"
        print(line)
    if a.json:
        a.json.write_text(json.dumps(got, indent=1) + "\n")


if __name__ == "__main__":
    main()

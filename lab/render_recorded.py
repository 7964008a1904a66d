"""Render every recorded run of a tree's test data without a GPU (render_only) and print one
fingerprint per rendered file: the tables (CSV, Markdown, HTML, LaTeX), the figures' PNGs and the
summary.  Two trees that print the same lines render the same tables and figure notes.

    python lab/render_recorded.py TREE [DATA] > fingerprints.txt

TREE: a checkout (its Snakefile, workflow/, kernels/, config/); DATA: the folder of recorded runs
(TREE/tests/data by default).  A run's preset is the name of the folder under its results/
(config/presets/NAME.yaml), the default config where results/ holds the tables itself."""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

KEPT = (".csv", ".md", ".html", ".tex", ".png", ".txt")


def runs(data: Path):
    for results in sorted(data.glob("*/results")):
        if (results / "tables").is_dir():
            yield results.parent.name, results, None
        for sub in sorted(p for p in results.iterdir() if p.is_dir()):
            yield results.parent.name, results, sub.name


def render(tree: Path, results: Path, preset: str | None) -> Path:
    work = Path(tempfile.mkdtemp(prefix="render-"))
    shutil.copytree(results, work / "results")
    for packed in (work / "results").rglob("*.csv.gz"):  # kept compressed in tests/data
        packed.with_suffix("").write_bytes(gzip.decompress(packed.read_bytes()))
        packed.unlink()
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(next(p for p in (tree / "workflow" / "Snakefile", tree / "Snakefile") if p.is_file())),
        "--cores",
        "2",
    ]
    if preset:
        cfg = tree / "config" / "presets" / f"{preset}.yaml"
        if not cfg.exists():
            return work
        cmd += ["--configfile", str(cfg)]
    # the tree's own package, not the one installed in this Python
    env = os.environ | {
        "PYTHONPATH": f"{tree / 'workflow' / 'scripts'}:{os.environ.get('PYTHONPATH', '')}"
    }
    out = subprocess.run([*cmd, "--config", "render_only=true"], cwd=work, capture_output=True,
                         text=True, env=env)  # fmt: skip
    if out.returncode:
        print(f"# render failed: {results} {preset}\n# " + out.stderr[-800:].replace("\n", "\n# "))
    return work


def main(tree: str, data: str | None = None) -> None:
    tree_path = Path(tree).resolve()
    data_path = Path(data).resolve() if data else tree_path / "tests" / "data"
    for name, results, preset in runs(data_path):
        work = render(tree_path, results, preset)
        base = work / "results" / (preset or "")
        for sub in ("report", "figures"):
            for f in sorted((base / sub).rglob("*")) if (base / sub).is_dir() else []:
                if f.suffix in KEPT and f.is_file():
                    digest = hashlib.sha256(f.read_bytes()).hexdigest()[:16]
                    print(f"{name} {preset or 'main'} {f.relative_to(base)} {digest}", flush=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(*sys.argv[1:])

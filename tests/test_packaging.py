"""A non-editable install of the package (a wheel, as `pip install .` builds it) carries its data
(registry, kernels, schemas, metric mapping) and renders a results folder without the checkout's
package on the path."""

import os
import shutil
import subprocess
import sys

import pytest

from .conftest import DATA, ROOT, copy_recorded


@pytest.mark.slow  # a wheel built and installed in a new venv: 90 s on a 2-core machine
def test_installed_package_renders_figures_tables_and_report(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py, bindir = venv / "bin" / "python", venv / "bin"
    build = tmp_path / "src"  # build from a copy, so no build artefacts land in the checkout
    shutil.copytree(
        ROOT,
        build,
        ignore=shutil.ignore_patterns(".venv", "results", ".snakemake", ".git", "*.egg-info"),
    )
    pip = subprocess.run(
        [py, "-m", "pip", "install", "-q", str(build)], capture_output=True, text=True
    )
    assert pip.returncode == 0, pip.stderr[-3000:]
    probe = subprocess.run(
        [
            py,
            "-c",
            "import mmbench, mmbench.report.figures, mmbench.report.catalogue\n"
            "from mmbench.core import paths\n"
            "from mmbench.core.registry import load_registry\n"
            "print(mmbench.__file__); print(paths.registry_path()); print(len(load_registry()))",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert probe.returncode == 0, probe.stderr[-3000:]
    pkg, registry, count = probe.stdout.split()
    assert "site-packages" in pkg and "site-packages" in registry, probe.stdout
    assert int(count) >= 7
    work = tmp_path / "work"
    copy_recorded(DATA / "h100-main" / "results", work / "results")
    env = dict(os.environ, PATH=f"{bindir}{os.pathsep}{os.environ['PATH']}")
    env.pop("PYTHONPATH", None)
    for args in (["--cores", "2"], ["--report", "report.html"]):
        out = subprocess.run(
            [
                bindir / "snakemake",
                "-s",
                ROOT / "workflow" / "Snakefile",
                *args,
                "--config",
                "render_only=true",
            ],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr[-3000:]
    assert len(list((work / "results" / "figures").glob("*.png"))) >= 4
    assert (work / "results" / "report" / "kernel_times.html").exists()
    assert (work / "report.html").stat().st_size > 100_000

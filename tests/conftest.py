import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_PATH = ROOT / "kernels" / "registry.yaml"
DATA = Path(__file__).resolve().parent / "data"
# the default experiment recorded on an H100 (tests/data/README.md)
MAIN = DATA / "h100-main" / "results"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]


def snakemake(*args, cwd=ROOT, check=False):
    """The real Snakemake of this environment, run on the workflow (ROOT or a copy)."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, env=env, check=check
    )


@pytest.fixture
def workdir(tmp_path):
    """A copy of the workflow, so tests never touch the checkout's results/."""
    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


def _gpu_reason() -> str | None:
    """Why GPU tests cannot run here, or None when a CUDA GPU is usable."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA GPU visible"
    except Exception as err:  # noqa: BLE001 - any import or driver failure means no GPU here
        return f"no usable CUDA GPU ({type(err).__name__}: {str(err)[:80]})"
    if not shutil.which("nvcc"):
        return "nvcc not on PATH"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}; run `pytest -m gpu` on the GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def registry():
    from mmbench.core.registry import load_registry

    return load_registry(REGISTRY_PATH)


def cell_rows(timings, made):
    """For every number cell of a pivot table (ms (GFLOPS)), the timings rows it can be."""
    shapes = [c for c in made.columns if c[0].isdigit()]
    keys = [c for c in made.columns if c not in shapes]
    for _, row in made.iterrows():
        for shape in shapes:
            cell = str(row[shape])
            if cell == "--":
                continue
            m, n, k = [int(x) for x in shape.split("x")] if "x" in shape else [int(shape)] * 3
            sel = (timings.m == m) & (timings.n == n) & (timings.k == k)
            for key in keys:
                values = timings[key].fillna("").replace("", "-").astype(str)
                sel &= values == str(row[key])
            yield cell, timings[sel]

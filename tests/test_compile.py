"""plan/compile.py: nvcc run with no path reaching a shell, interrupted builds said so."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from .conftest import ROOT


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_ctrl_c_during_compilation_says_interrupted_not_failed(tmp_path):
    """Ctrl-C while nvcc runs: the compile job says it was interrupted, never 'nvcc failed'."""
    import signal
    import subprocess
    import time

    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    cubins = [
        f"results/build/sm_90/{v}/float32_TILE{t}.cubin"
        for v in ("tiled_guarded", "naive_guarded")
        for t in (8, 16, 32)
    ]
    # nvcc runs in the instantiation's build folder (plan/compile.build_folder): stop it there
    import tempfile

    building = Path(tempfile.gettempdir()) / f"mmbench-nvcc-{os.getuid()}" / "sm_90"
    for v in ("tiled_guarded", "naive_guarded"):  # left by an earlier interrupted build
        shutil.rmtree(building / v, ignore_errors=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            "1",
            "--config",
            "arch=sm_90",
            "--",
            *cubins,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 60

    def started():  # this run's builds only: another build's leftover folder must not count
        return [
            f for v in ("tiled_guarded", "naive_guarded") for f in building.glob(f"{v}/*/src/*.cu")
        ]

    while time.time() < deadline and not started():
        time.sleep(0.05)
    assert started(), "no compilation started"
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    built = list((tmp_path / "results" / "build").rglob("*.cubin"))
    assert len(built) < len(cubins), "interrupted after every cubin was built"
    assert "nvcc failed" not in err, err
    assert "Terminating processes on user request" in err or "interrupted" in err, err

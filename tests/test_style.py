"""The project's own style checks, run as tests so CI runs them: ruff and snakefmt."""

import subprocess
import sys

from .conftest import ROOT


def test_ruff():
    for args in (["check", "."], ["format", "--check", "."]):
        out = subprocess.run(
            [sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True
        )
        assert out.returncode == 0, out.stdout + out.stderr


def test_snakefmt():
    out = subprocess.run(
        [sys.executable, "-m", "snakefmt", "--check", "workflow"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr

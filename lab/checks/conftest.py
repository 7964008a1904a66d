"""The lab notebook's checks: what its recorded evidence shows, read as data
(`python -m pytest lab/checks`).  They run no pipeline code that the product's tests do not
already run; a recorded number that changes here is a changed record, not a broken pipeline."""

from __future__ import annotations

import gzip
import io
import lzma
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "lab"
# the notebook's own evidence (compressed), and the recorded runs the product's tests read
EVIDENCE_DIR = LAB / "data"
TESTS_DATA = ROOT / "tests" / "data"


def found(path) -> Path:
    """`path`, or the same path with `.gz` or `.xz` where it is kept compressed."""
    path = Path(path)
    if path.exists():
        return path
    for suffix in (".gz", ".xz"):
        packed = path.with_name(path.name + suffix)
        if packed.exists():
            return packed
    return path


class Recorded(os.PathLike):
    """A recorded file by its path under tests/data or lab/data, wherever it is kept, plain or
    compressed.  A folder split between the two (a recorded run whose tables the product's
    tests read and whose logs the notebook keeps) is found in tests/data: the checks name
    LAB_DATA where they need the notebook's part of it."""

    def __init__(self, *parts: str):
        self.parts = parts

    def __truediv__(self, part: str) -> Recorded:
        return Recorded(*self.parts, part)

    @property
    def parent(self) -> Recorded:
        return Recorded(*self.parts[:-1])

    @property
    def name(self) -> str:
        return self.parts[-1]

    def __fspath__(self) -> str:
        for base in (TESTS_DATA, EVIDENCE_DIR):
            p = found(base.joinpath(*self.parts))
            if p.exists():
                return str(p)
        return str(EVIDENCE_DIR.joinpath(*self.parts))

    __str__ = __fspath__

    def __getattr__(self, name: str):  # the Path of what is found: glob, read_text, exists
        return getattr(Path(os.fspath(self)), name)


EVIDENCE = Recorded()
LAB_DATA = EVIDENCE_DIR


def read_csv(path, **kw) -> pd.DataFrame:
    return pd.read_csv(os.fspath(path), **kw)


def read_text(path) -> str:
    p = Path(os.fspath(path))
    if p.suffix == ".gz":
        return gzip.decompress(p.read_bytes()).decode()
    return lzma.decompress(p.read_bytes()).decode() if p.suffix == ".xz" else p.read_text()


def open_text(path: Path):
    return io.StringIO(read_text(path), newline="")


def compare_times(before: Path, after: Path, within: str) -> subprocess.CompletedProcess:
    """tools/compare_times.py on two recorded timings tables, as a user runs it."""
    tool = [sys.executable, str(ROOT / "tools" / "compare_times.py"), os.fspath(before),
            os.fspath(after)]  # fmt: skip
    env = os.environ | {"PYTHONPATH": str(ROOT / "workflow" / "scripts")}
    return subprocess.run([*tool, "--within", within], capture_output=True, text=True, env=env)


def memory_modes(t: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A timings table's pageable and pinned rows, each indexed by the configuration they
    share (variant, params, dtype, m)."""
    key = ["variant", "params", "dtype", "m"]
    return tuple(t[t.memory == mode].set_index(key) for mode in ("pageable", "pinned"))

"""Tidy tables on disk: atomic writes, so an interrupted run never leaves a table that looks
whole, and the concatenation of per-job tables (row.py says which columns a timings row has)."""

from __future__ import annotations

import gzip
import json
import os
import tempfile
from pathlib import Path

import pandas as pd


def atomic_write_text(path: str | Path, text: str) -> None:
    """Writes `text` to a temporary file beside `path`, fsyncs it, then renames it over `path`."""
    atomic_write_bytes(path, text.encode())


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    """atomic_write_text for bytes."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_csv(df: pd.DataFrame, path: str | Path) -> None:
    atomic_write_text(path, df.to_csv(index=False))


def write_samples(path: str | Path, samples: list[dict]) -> None:
    """A run's timed samples (one record per configuration: its config_id, kernel_ms and
    sm_clock_mhz lists), as compact gzipped JSON."""
    blob = json.dumps(samples, separators=(",", ":")).encode()
    atomic_write_bytes(path, gzip.compress(blob, mtime=0))


def read_samples(path: str | Path) -> dict[str, dict]:
    """config_id -> {kernel_ms, sm_clock_mhz, ...} from write_samples' file (an older file's ids
    in today's form: row.upgrade_id)."""
    from .row import upgrade_id

    return {upgrade_id(r["id"]): r for r in json.loads(gzip.decompress(Path(path).read_bytes()))}


def concat_csv(paths: list[str | Path]) -> pd.DataFrame:
    """Concatenates the per-job tables (empty ones included) into one tidy table."""
    from .row import upgraded

    frames = [upgraded(pd.read_csv(p)) for p in paths if Path(p).stat().st_size > 0]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)

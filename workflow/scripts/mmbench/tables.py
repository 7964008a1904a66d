"""Tidy tables on disk: atomic writes, so an interrupted run never leaves a table that looks
whole, and the concatenation of per-job tables."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd


def atomic_write_text(path: str | Path, text: str) -> None:
    """Writes `text` to a temporary file beside `path`, fsyncs it, then renames it over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_csv(df: pd.DataFrame, path: str | Path) -> None:
    atomic_write_text(path, df.to_csv(index=False))


def concat_csv(paths: list[str | Path]) -> pd.DataFrame:
    """Concatenates the per-job tables (empty ones included) into one tidy table."""
    frames = [pd.read_csv(p) for p in paths if Path(p).stat().st_size > 0]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


# Column order of results/tables/timings.csv: axes, launch, outcome, timings, provenance.
TIMINGS_COLUMNS = [
    "variant",
    "backend",
    "tile",
    "coarsen",
    "dtype",
    "m",
    "n",
    "k",
    "accumulate",
    "memory",
    "pad",
    "transfer",
    "cache",
    "lda",
    "ldb",
    "ldc",
    "kernel_ld",
    "distribution",
    "seed",
    "grid",
    "block",
    "precondition_met",
    "expected",
    "verification",
    "mismatches",
    "nonfinite",
    "oob_writes",
    "freivalds",
    "freivalds_bad_rows",
    "max_abs_error",
    "rel_l2_error",
    "tolerance",
    "first_mismatches",
    "error",
    "notes",
    "samples",
    "kernel_ms_median",
    "kernel_ms_min",
    "kernel_ms_max",
    "kernel_ms_iqr",
    "h2d_ms_median",
    "d2h_ms_median",
    "global_ms_median",
    "global_ms_min",
    "global_ms_max",
    "global_ms_iqr",
    "kernel_gflops",
    "global_gflops",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "temperature_c",
    "power_w",
    "throttled_samples",
    "throttle_reasons",
    "gpu_busy_ms",
    "config_wall_ms",
    "gpu_name",
    "gpu_uuid",
    "gpu_index",
    "compute_capability",
    "driver_version",
    "cuda_runtime",
    "cupy_version",
    "source_sha256",
    "hostname",
    "timestamp",
]


def ordered(df: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """The known columns in their order (missing ones empty), then any others."""
    rest = [c for c in df.columns if c not in columns]
    return df.reindex(columns=list(columns) + rest)

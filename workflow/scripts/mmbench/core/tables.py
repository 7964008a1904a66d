"""Tidy tables on disk: atomic writes, so an interrupted run never leaves a table that looks
whole, and the concatenation of per-job tables (row.py says which columns a timings row has)."""

from __future__ import annotations

import gzip
import json
import math
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


def atomic_write_csv(df: pd.DataFrame, path: str | Path, kind: str | None = None) -> None:
    """Writes a table atomically; with `kind`, only once it satisfies that kind's schema
    (core/schemas.py): a table is checked where it is written as where it is read."""
    if kind is not None:
        from .schemas import check_frame

        check_frame(df, kind, f"{path} (being written)")
    atomic_write_text(path, df.to_csv(index=False))


def write_samples(path: str | Path, samples: list[dict]) -> None:
    """A run's timed samples (one record per configuration: its config_id, kernel_ms and
    sm_clock_mhz lists), as compact gzipped JSON."""
    blob = json.dumps(samples, separators=(",", ":")).encode()
    atomic_write_bytes(path, gzip.compress(blob, mtime=0))


class DamagedFile(ValueError):
    """A results file that cannot be read: the message names it and says what is wrong."""


def read_samples(path: str | Path) -> dict[str, dict]:
    """config_id -> {kernel_ms, sm_clock_mhz, ...} from write_samples' file (an older file's ids
    in today's form: row.upgrade_id).  A damaged file raises DamagedFile naming it."""
    from .row import upgrade_id

    try:
        records = json.loads(gzip.decompress(Path(path).read_bytes()))
        out = {upgrade_id(r["id"]): r for r in records}
    except (OSError, EOFError, ValueError, KeyError, TypeError, gzip.BadGzipFile) as err:
        raise DamagedFile(
            f"{path}: not a readable samples file ({type(err).__name__}: {err}): cut short or "
            "overwritten; copy it again, or delete the variant's runs/ files and measure again"
        ) from None
    for cid, record in out.items():
        for name in TIMES:
            bad = [x for x in record.get(name, []) if not _a_time(x)]
            if bad:
                raise DamagedFile(
                    f"{path}: configuration {cid} has {len(bad)} {name} sample(s) that are no "
                    f"time (e.g. {bad[0]!r}; a time is a finite number above 0): the file was "
                    "edited or written by a broken job; delete the variant's runs/ files and "
                    "measure again"
                )
    return out


# the lists of times a samples file holds (a run's, and a paired run's two builds')
TIMES = ("kernel_ms", "batch_ms", "base_ms", "this_ms")


def _a_time(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def concat_csv(paths: list[str | Path], kind: str | None = None) -> pd.DataFrame:
    """Concatenates the per-job tables into one tidy table; with `kind`, each table and the
    whole are checked against that kind's schema (core/schemas.py).  A job's table with no rows
    (a header only) adds none."""
    from .row import upgraded
    from .schemas import read_table, read_tables

    if kind is not None:
        return read_tables(paths, kind)
    frames = [upgraded(read_table(p, "any")) for p in paths if Path(p).stat().st_size > 0]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def gather_timings(tables, manifests, dest: str | Path, results=None) -> pd.DataFrame:
    """A run's timings table from its measurement jobs' tables (runs/<variant>.csv): each
    checked and concatenated in row.py's column order, checked against the jobs' manifests
    (every configuration of every job, once; `results`: the results folder its message names)
    and whole, then written to `dest` atomically.  TableError where a check fails, nothing
    written."""
    from .row import ordered
    from .schemas import check_against_manifests, check_frame

    df = ordered(concat_csv(tables, "timings"))
    check_against_manifests(df, list(manifests), str(dest), results)
    check_frame(df, "timings", str(dest))
    atomic_write_csv(df, dest)
    return df

"""A run's per-variant files read as one, each checked before anything is drawn from it: every
runs/<variant>.csv against its schema and its run manifest (core/schemas.py), every samples
file beside it against the rows (the same configurations, counts and medians), so that a table
cut at a line's end, a samples file left from an earlier measurement, or one edited by hand is
named and refused rather than judged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from .row import config_id
from .tables import DamagedFile, read_samples

# a median of the samples file agrees with its row's to this (the file keeps 1e-6 ms)
SAMPLES_ATOL_MS = 2e-6


def read_folder(folder: str | Path) -> tuple[pd.DataFrame, dict[str, dict]] | None:
    """The checked rows and samples of a results folder: its runs/<variant>.csv (read_run),
    else its tables/timings.csv against the run manifests beside it (no samples then); None
    where it holds neither."""
    from .schemas import check_against_manifests, read_table

    folder = Path(folder)
    tables = sorted((folder / "runs").glob("*.csv"))
    if tables:
        return read_run(tables)
    timings = folder / "tables" / "timings.csv"
    if not timings.exists():
        return None
    rows = read_table(timings, "timings")
    manifests = sorted((folder / "runs").glob("*.manifest.json"))
    check_against_manifests(rows, manifests, str(timings), folder)
    return rows, {}


def read_run(tables: list[Path]) -> tuple[pd.DataFrame, dict[str, dict]]:
    """The rows of a run's per-variant tables and their samples (config_id -> record), checked:
    TableError (DamagedFile for a samples file) naming the file and what is wrong."""
    from .schemas import check_against_manifests, read_tables

    tables = [Path(t) for t in tables]
    rows = read_tables(tables, "timings")
    manifests = [m for t in tables if (m := t.with_name(t.stem + ".manifest.json")).exists()]
    folder = tables[0].parent.parent if tables else Path(".")
    where = {t.parent for t in tables}
    source = f"{tables[0].parent}/<variant>.csv" if len(where) == 1 and tables else "the run"
    check_against_manifests(rows, manifests, source, folder)
    files = [s for t in tables if (s := t.with_name(t.stem + ".samples.json.gz")).exists()]
    return rows, checked_samples(files, rows)


def checked_samples(paths: list[Path], rows: pd.DataFrame) -> dict[str, dict]:
    """The samples files at `paths`, merged, each configuration's times checked against its row
    in `rows` (same configuration, same count, same median): DamagedFile naming the file
    otherwise.  The rows are named (config_id) once for all the files."""
    by_id = {config_id(r): r for r in rows.to_dict("records")} if len(rows) else {}
    out: dict[str, dict] = {}
    for path in paths:
        out |= _checked(Path(path), by_id)
    return out


def _checked(path: Path, by_id: dict[str, dict]) -> dict[str, dict]:
    samples = read_samples(path)
    wrong = []
    for cid, s in samples.items():
        times = s.get("kernel_ms") or []
        row = by_id.get(cid)
        if row is None:
            wrong.append(f"{cid}: in the samples, not in the table")
            continue
        if not times:
            continue
        n = row.get("samples")
        if n is not None and n == n and int(n) != len(times):
            wrong.append(f"{cid}: {len(times)} samples, the table says {int(n)}")
            continue
        median, said = float(np.median(times)), float(row["kernel_ms_median"])
        if not abs(median - said) <= SAMPLES_ATOL_MS:
            wrong.append(f"{cid}: median {median:.6g} ms, the table says {said:.6g} ms")
    if wrong:
        raise DamagedFile(
            f"{path} does not hold the samples of the table beside it ({len(wrong)} "
            "configuration(s)):\n  - "
            + "\n  - ".join(wrong[:5])
            + ("\n  - ..." if len(wrong) > 5 else "")
            + "\n  It is left from another measurement or was edited; copy the run's runs/ "
            "folder again, or delete the variant's runs/ files and measure again."
        )
    return samples

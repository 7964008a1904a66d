"""The recorded runs of tests/data checked as data: every table (plain or compressed) against
its schema, every timings table against the run manifests beside it.  What the recorded runs
show is checked by the lab notebook (lab/checks); the code that reads and renders them is
tested in the files of its modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmbench.core import schemas
from mmbench.core.schemas import check_against_manifests, read_table

from .conftest import DATA, SLOWED, compare_run, copy_recorded, recorded


def _kind(path: Path) -> str | None:
    name = path.name.removesuffix(".gz").removesuffix(".xz").removesuffix(".csv")
    if path.parent.name == "runs" or name == "timings":
        return "timings"
    return name if name in schemas.SCHEMAS else None


# kept cut to the columns its test reads (lab/data/README.md says which), not a whole table
CUT = {DATA / "h100-ladder-whole" / "timings.csv.xz"}


@pytest.mark.sweeps_data
def test_every_recorded_table_satisfies_its_schema():
    checked = 0
    for path in sorted([*DATA.rglob("*.csv"), *DATA.rglob("*.csv.gz"), *DATA.rglob("*.csv.xz")]):
        kind = _kind(path)
        if kind is None or "profilers" in path.parts or path in CUT:
            continue
        read_table(path, kind)
        checked += 1
    # 23 timings tables (plain or compressed), 41 per-variant tables, and the refused,
    # resources, compare, profiler and roofline tables
    assert checked >= 89


def test_recorded_timings_hold_the_rows_their_manifests_describe(tmp_path):
    checked = 0
    for i, runs in enumerate(sorted({p.parent for p in DATA.rglob("*.manifest.json.xz")})):
        folder = runs.parent
        if folder == DATA / "compare" / SLOWED:  # kept as what differs from h100-b
            folder = compare_run(SLOWED)
        table = folder / "tables" / "timings.csv"
        if recorded(table).exists():  # kept compressed where large (read_table takes either)
            # the manifests, kept compressed, as the pipeline wrote them
            plain = copy_recorded(folder / "runs", tmp_path / str(i))
            manifests = sorted(plain.glob("*.manifest.json"))
            assert manifests, f"{folder}: no manifests"
            check_against_manifests(read_table(table, "timings"), manifests, str(table))
            checked += 1
    # the five compare runs with a table, h100-e3c, -e3d, -main, -sweep, h200-ladder, paired/aa
    assert checked == 11


@pytest.mark.sweeps_data
def test_recorded_summaries_are_gone_or_agree_with_their_table():
    """The recorded summary.txt files were made by older code (some showed a GFLOP/s that was
    not the rate of the time beside it): none is kept; render_only makes it anew."""
    assert not list(DATA.rglob("summary.txt"))

"""The archive of earlier kernel sources' measurements (measure.py writes it): under
<results>/archive/<variant>/<source hash>/ each job's table, samples, manifest and cubins
(cubins/<arch>/<instance>.cubin).  The comparison reads the previous source's rows from it
(compare/runs.previous), the planner its cubins (plan/pairs.previous_cubins): both take the
same entry, `previous_entry`."""

from __future__ import annotations

import sys
from pathlib import Path

from .columns import TableError
from .schemas import read_table
from .tables import DamagedFile, read_samples


def archived(results: str | Path, variant: str | None = None) -> dict[str, list[Path]]:
    """variant -> its archived measurements (archive/<variant>/<source hash>/<variant>.csv),
    oldest first (by the newest timestamp in each); only `variant`'s where one is named."""
    out = {}
    folders = (Path(results) / "archive").glob("*" if variant is None else variant)
    for vdir in sorted(folders):
        stamps = {}
        for p in vdir.glob(f"*/{vdir.name}.csv"):
            try:  # a damaged entry (a torn copy) is reported and skipped, never fatal
                t = read_table(p, "timings")
                read_samples(p.with_name(p.stem + ".samples.json.gz"))
            except (TableError, DamagedFile) as err:
                print(f"mmbench: archive entry skipped: {err}", file=sys.stderr)
                continue
            if "timestamp" in t and len(t):
                stamps[p] = str(t.timestamp.max())
        out[vdir.name] = sorted(stamps, key=lambda p: stamps[p])
    return out


def previous_entry(tables: list[Path], current_source: str) -> Path | None:
    """Of a variant's archived tables (oldest first), the newest of a source other than the
    current one (its folder is named by the source hash), or None."""
    earlier = [t for t in tables if t.parent.name != str(current_source)]
    return earlier[-1] if earlier else None

"""The archive of earlier kernel sources' measurements (measure.py writes it): under
<results>/archive/<variant>/<source hash>/ each job's table, samples, manifest and cubins
(cubins/<arch>/<instance>.cubin).  The comparison reads the previous source's rows from it
(compare/runs.previous), the planner its cubins (plan/pairs.previous_cubins): both take the
same entry, `previous_entry`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from .columns import TableError

# archive/<variant>/measured.log: each entry's folder name, one line each time the variant is
# measured, in the order it was (appended whole); the entries' order, whatever the clocks said
ORDER_FILE = "measured.log"


def record_measured(variant_folder: str | Path, entry: str) -> None:
    """Appends `entry` (an archive folder's name) to the variant's order of measurements."""
    path = Path(variant_folder) / ORDER_FILE
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        os.write(fd, f"{entry}\n".encode())
    finally:
        os.close(fd)


def archived(results: str | Path, variant: str | None = None) -> dict[str, list[Path]]:
    """variant -> its archived measurements (archive/<variant>/<source hash>/<variant>.csv),
    oldest first: in the order they were measured (ORDER_FILE, its last mention of each), the
    entries it does not name (archived before it was kept) before them by the newest timestamp
    of their rows; only `variant`'s where one is named."""
    from .tables import DamagedFile, read_samples

    out = {}
    folders = (Path(results) / "archive").glob("*" if variant is None else variant)
    for vdir in sorted(folders):
        stamps = {}
        for p in vdir.glob(f"*/{vdir.name}.csv"):
            try:  # a damaged entry (a torn copy) is reported and skipped, never fatal
                t = _read_table(p, "timings")
                read_samples(p.with_name(p.stem + ".samples.json.gz"))
            except (TableError, DamagedFile) as err:
                print(f"mmbench: archive entry skipped: {err}", file=sys.stderr)
                continue
            if "timestamp" in t and len(t):
                stamps[p] = str(t.timestamp.max())
        order = _measured_order(vdir)
        out[vdir.name] = sorted(stamps, key=lambda p: (order.get(p.parent.name, -1), stamps[p]))
    return out


def _measured_order(vdir: Path) -> dict[str, int]:
    """entry -> the position of its last mention in the variant's ORDER_FILE."""
    try:
        lines = (vdir / ORDER_FILE).read_text().split()
    except OSError:
        return {}
    return {name: i for i, name in enumerate(lines)}


def previous_entry(tables: list[Path], current_source: str, gpu: str | None = None) -> Path | None:
    """Of a variant's archived tables (oldest first), the newest of a source other than the
    current one (its folder is named by the source hash), or None; with `gpu`, only one
    measured on that GPU model (an earlier source measured on another GPU compares GPUs)."""
    earlier = [t for t in tables if t.parent.name != str(current_source)]
    if gpu:
        earlier = [t for t in earlier if gpu_of(t) == gpu]
    return earlier[-1] if earlier else None


def gpu_of(table: Path) -> str:
    """The GPU model an archived table's rows name ('' where they name none, or several)."""
    try:
        rows = _read_table(table, "timings")
    except TableError:
        return ""
    models = set(rows.get("gpu_name", []).dropna().astype(str)) if len(rows) else set()
    return models.pop() if len(models) == 1 else ""


def _read_table(path, kind):
    """core/schemas.read_table, imported when a table is read (as core/tables above): the
    workflow imports this module to plan, where importing pandas and pandera would cost every
    Snakemake invocation a third of a second."""
    from .schemas import read_table

    return read_table(path, kind)

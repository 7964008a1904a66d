"""Run manifests rebuilt from a table's rows, for a results folder kept without them.

Each measurement job writes runs/<variant>.manifest.json (the configurations it was given, the
device, the versions), and every table of a run is checked against them where it is read
(core/schemas.check_against_manifests): a table cut at a line's end, or grown by duplicated
rows, fails there.  A run copied without its manifests cannot be checked that way and is refused.
A user who trusts its tables as they are rebuilds them here, from the rows:

    mmbench manifests RESULTS     # or: python -m mmbench.core.manifests RESULTS

Each rebuilt manifest says so (`rebuilt_from_rows` names the table), holds the row count as its
configurations and the GPU the rows name; an existing manifest is never overwritten.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from .columns import TableError


def rows_of(results: Path):
    """The run's rows and the table they came from (relative to the results folder, `{variant}`
    standing for each variant's name): its per-variant tables, else its timings."""
    from .schemas import read_table, read_tables

    tables = sorted((results / "runs").glob("*.csv"))
    if tables:
        return read_tables(tables, "timings"), "runs/{variant}.csv"
    return read_table(results / "tables" / "timings.csv", "timings"), "tables/timings.csv"


def rebuild(results: str | Path) -> list[Path]:
    """Writes the missing runs/<variant>.manifest.json of `results` from its rows; returns them."""
    results = Path(results)
    rows, table = rows_of(results)
    if rows.empty:
        raise TableError(f"{results}: its tables hold no rows, so there is no manifest to rebuild")
    folder = results / "runs"
    folder.mkdir(exist_ok=True)
    written = []
    for variant, g in rows.groupby("variant", sort=True):
        path = folder / f"{variant}.manifest.json"
        source = str(results / table.format(variant=variant))
        gpus = sorted({str(x) for x in g.get("gpu_name", []) if x == x})
        if len(gpus) > 1:
            raise TableError(
                f"{source}: the rows of {variant} name {len(gpus)} GPU models ({', '.join(gpus)}): "
                "a manifest describes one measurement job; split the table by GPU first"
            )
        device = dict(name=gpus[0]) if gpus else {}
        uuids = sorted({str(x) for x in g.get("gpu_uuid", []) if x == x})
        if len(uuids) == 1:
            device["uuid"] = uuids[0]
        manifest = dict(
            variant=str(variant),
            configurations=len(g),
            device=device,
            rebuilt_from_rows=table.format(variant=variant),
        )
        try:  # never over a manifest (or anything else) already there
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w") as fh:
            fh.write(json.dumps(manifest, indent=2) + "\n")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="mmbench manifests",
        description="Rebuild the run manifests of a results folder kept without them, from "
        "its rows (only where you trust the tables as they are: a table cut short stays short).",
    )
    ap.add_argument("results", help="the results folder, e.g. results/default")
    a = ap.parse_args(argv)
    if not Path(a.results).is_dir():
        print(f"mmbench manifests: {a.results}: no such folder", file=sys.stderr)
        return 2
    try:
        written = rebuild(a.results)
    except TableError as err:
        print(f"mmbench manifests: {err}", file=sys.stderr)
        return 1
    for p in written:
        print(f"{p}: rebuilt from the rows")
    if not written:
        print(f"{a.results}: every variant already has its manifest; nothing written")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The runs a comparison reads: a results folder (its per-variant tables and samples, or its
timings table), an archived measurement of an earlier kernel source, and the previous source
of each variant (baseline=previous).  Configurations are matched on row.CONFIG_ID."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mmbench.core.row import config_id
from mmbench.core.schemas import TableError, read_table, read_tables
from mmbench.core.tables import DamagedFile, read_samples


class NoRun(ValueError):
    """A folder that holds no measured run."""


@dataclass
class Run:
    """One run's measured rows (by config_id) and their samples, and where they came from."""

    name: str
    rows: pd.DataFrame
    samples: dict[str, dict] = field(default_factory=dict)

    def facts(self) -> dict:
        """GPU, driver, median SM clock and kernel source hashes (per variant) of the run."""
        r = self.rows

        def one(col):
            vals = sorted({str(v) for v in r[col].dropna()}) if col in r else []
            return ", ".join(vals)

        sources = (
            r.dropna(subset=["source_sha256"]).groupby("variant").source_sha256.first().to_dict()
            if "source_sha256" in r
            else {}
        )
        clock = pd.to_numeric(r.get("sm_clock_mhz"), errors="coerce")
        probe = pd.to_numeric(r.get("sm_clock_probe_mhz", pd.Series(dtype=float)), errors="coerce")
        return dict(
            run=self.name,
            gpu=one("gpu_name"),
            gpu_uuid=one("gpu_uuid"),
            driver=one("driver_version"),
            sm_clock_mhz=float(clock.median())
            if clock is not None and clock.notna().any()
            else None,
            sm_clock_probe_mhz=float(probe.median()) if probe.notna().any() else None,
            sources=sources,
        )


def _measured(frames: list[pd.DataFrame], name: str) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        raise NoRun(f"{name}: no measured rows")
    rows = pd.concat(frames, ignore_index=True)
    rows["config_id"] = [config_id(r) for _, r in rows.iterrows()]
    return rows.drop_duplicates("config_id", keep="last").set_index("config_id", drop=False)


def load_tables(tables: list[Path], name: str) -> Run:
    """A run from per-variant tables (runs/<variant>.csv) and the samples files beside them."""
    samples = {}
    for t in tables:
        s = t.with_name(t.stem + ".samples.json.gz")
        if s.exists():
            samples |= read_samples(s)
    return Run(name, _measured([read_tables(tables, "timings")], name), samples)


def load_folder(folder: str | Path) -> Run:
    """The run in a results folder: its runs/<variant>.csv (with samples), else its
    tables/timings.csv (without: every configuration is then UNSURE, for want of samples)."""
    folder = Path(folder)
    tables = sorted(p for p in (folder / "runs").glob("*.csv"))
    if tables:
        return load_tables(tables, str(folder))
    timings = folder / "tables" / "timings.csv"
    if timings.exists():
        return Run(str(folder), _measured([read_table(timings, "timings")], str(folder)))
    raise NoRun(
        f"baseline={folder}: no measured run there (looked for {folder}/runs/<variant>.csv and "
        f"{folder}/tables/timings.csv); give the results folder of an earlier run, or "
        f"baseline=previous"
    )


def archived(results: str | Path) -> dict[str, list[Path]]:
    """variant -> its archived measurements (archive/<variant>/<source hash>/<variant>.csv),
    oldest first (by the newest timestamp in each)."""
    out = {}
    for vdir in sorted((Path(results) / "archive").glob("*")):
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


def previous(results: str | Path, current: Run) -> tuple[Run, dict[str, str]]:
    """The baseline of the edit loop: for each variant of ``current``, its measurement of the
    source before the current one (the newest archived one whose source hash differs).  Variants
    never measured with another source are left out (THIS RUN ONLY).  Also returns
    variant -> the baseline's source hash."""
    now = current.facts()["sources"]
    picked, hashes = [], {}
    for variant, tables in archived(results).items():
        if variant not in now:
            continue
        earlier = [t for t in tables if t.parent.name != str(now[variant])]
        if earlier:
            picked.append(earlier[-1])
            hashes[variant] = earlier[-1].parent.name
    if not picked:
        raise NoRun(
            f"baseline=previous: no variant of this run has an earlier kernel source in "
            f"{Path(results) / 'archive'} (a variant's rows are archived when it is measured; "
            f"edit a kernel and run again, or give baseline=<results folder>)"
        )
    return load_tables(picked, "previous"), hashes

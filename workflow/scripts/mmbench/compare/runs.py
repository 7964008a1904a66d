"""The runs a comparison reads: a results folder (its per-variant tables and samples, or its
timings table), an archived measurement of an earlier kernel source, and the previous source
of each variant (baseline=previous).  Configurations are matched on row.CONFIG_ID."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from mmbench.core.archive import (  # noqa: F401  (archived re-exported)
    archived,
    gpu_of,
    previous_entry,
)
from mmbench.core.columns import TableError
from mmbench.core.row import config_id
from mmbench.core.run_files import read_folder, read_run
from mmbench.core.schemas import read_table
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
            harness=one("harness_sha256"),
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
    gpus = sorted({str(g) for g in rows.get("gpu_name", pd.Series(dtype=str)).dropna()})
    if len(gpus) > 1:
        raise NoRun(
            f"{name}: rows of {len(gpus)} GPU models ({', '.join(gpus)}) in one run; a "
            "comparison needs one GPU model a side: split the results folder by GPU"
        )
    rows["config_id"] = [config_id(r) for _, r in rows.iterrows()]
    return rows.drop_duplicates("config_id", keep="last").set_index("config_id", drop=False)


def load_tables(tables: list[Path], name: str) -> Run:
    """A run from per-variant tables (runs/<variant>.csv) and the samples files beside them,
    each checked before any verdict (core/run_files.read_run)."""
    try:
        rows, samples = read_run(tables)
    except (TableError, DamagedFile) as err:
        raise NoRun(f"{name}: {err}") from None
    return Run(name, _measured([rows], name), samples)


def load_pairs(tables: list[Path]) -> tuple[pd.DataFrame, dict[str, dict]]:
    """The rows of pairs tables (pairs/<variant>.csv, rule pair_variant) and the rounds' samples
    beside them, as load_tables reads a run's."""
    samples: dict[str, dict] = {}
    for t in tables:
        samples |= read_samples(t.with_name(t.stem + ".samples.json.gz"))
    rows = [read_table(t, "pairs") for t in tables]
    return (pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()), samples


def load_folder(folder: str | Path) -> Run:
    """The run in a results folder: its runs/<variant>.csv (with samples), else its
    tables/timings.csv (without: every configuration is then UNSURE, for want of samples),
    checked (core/run_files.read_folder)."""
    folder = Path(folder)
    try:
        found = read_folder(folder)
    except (TableError, DamagedFile) as err:
        raise NoRun(f"{folder}: {err}") from None
    if found is None:
        raise NoRun(
            f"baseline={folder}: no measured run there (looked for {folder}/runs/<variant>.csv "
            f"and {folder}/tables/timings.csv); give the results folder of an earlier run, or "
            f"baseline=previous"
        )
    rows, samples = found
    return Run(str(folder), _measured([rows], str(folder)), samples)


def previous(
    results: str | Path, current: Run, entries: dict[str, list[Path]] | None = None
) -> tuple[Run, dict[str, str]]:
    """The baseline of the edit loop: for each variant of ``current``, its measurement of the
    source before the current one (the newest archived one whose source hash differs) on the
    same GPU model.  Variants never measured with another source there are left out (THIS RUN
    ONLY).  Also returns variant -> the baseline's source hash.  `entries`: archived(results),
    where the caller has read it already."""
    now = current.facts()["sources"]
    gpus = (
        current.rows.dropna(subset=["gpu_name"]).groupby("variant").gpu_name.first().to_dict()
        if "gpu_name" in current.rows
        else {}
    )
    picked, hashes = [], {}
    for variant, tables in (archived(results) if entries is None else entries).items():
        entry = previous_entry(tables, now[variant], gpus.get(variant)) if variant in now else None
        if entry is not None:
            picked.append(entry)
            hashes[variant] = entry.parent.name
    if not picked:
        raise NoRun(
            f"baseline=previous: no variant of this run has an earlier kernel source measured "
            f"on this GPU model in {Path(results) / 'archive'} (a variant's rows are archived "
            f"when it is measured; edit a kernel and run again, or give "
            f"baseline=<results folder>)"
        )
    return load_tables(picked, "previous"), hashes


def elsewhere(entries: dict[str, list[Path]], current: Run) -> dict[str, str]:
    """variant -> the GPU models its earlier sources were measured on, for the variants of
    ``current`` whose earlier sources were all measured on another GPU model than this run's
    (the edit loop says so rather than compare GPUs).  `entries`: archived(results)."""
    now = current.facts()["sources"]
    out = {}
    for variant, tables in entries.items():
        if variant not in now:
            continue
        earlier = [t for t in tables if t.parent.name != str(now[variant])]
        here = set(current.rows.loc[current.rows.variant == variant, "gpu_name"].dropna())
        models = {gpu_of(t) for t in earlier}
        if earlier and not models & here:
            out[variant] = ", ".join(sorted(m or "an unknown GPU" for m in models))
    return out

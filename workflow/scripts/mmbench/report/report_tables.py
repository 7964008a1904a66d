"""The reports' tables from the tidy tables, written as CSV, Markdown, HTML and LaTeX."""

from __future__ import annotations

import json
import re
from html import escape
from pathlib import Path

import pandas as pd

from mmbench.report.summary import _pivot, cell_index, in_ladder_order, shape_label, significant

# mismatches listed per configuration in the people-facing tables (timings.csv keeps all 10)
LISTED_MISMATCHES = 2


def _number(x) -> str:
    """A number as people read it: integers whole, others to 4 significant digits."""
    if isinstance(x, float) and x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    if isinstance(x, float):
        return significant(x)
    return x


def for_people(df: pd.DataFrame) -> pd.DataFrame:
    """The table as Markdown, HTML and LaTeX show it: numbers formatted cell by cell (a column
    can mix counts and rates, as the metrics table does), empty cells blank."""
    out = df.copy()
    for c in out.columns:
        # a share or an efficiency column: one decimal in every cell (63.0, 62.1; 28.0, 17.2)
        percent = "%" in str(c) or "per W" in str(c)
        if (
            out[c].dtype.kind == "f"
            or pd.api.types.is_string_dtype(out[c])
            or out[c].dtype == object
        ):
            out[c] = [
                ("" if pd.isna(x) else (f"{x:.1f}" if percent else _number(x)))
                if not isinstance(x, str)
                else _nan_mismatch(x)
                for x in out[c]
            ]
    return out


_NAN_MISMATCH = re.compile(r"(\d+:\d+): (-?[0-9.]+) - nan = nan")


def _nan_mismatch(text: str) -> str:
    """A first mismatch recorded as ``row:col: 12440.000000 - nan = nan`` (results written
    before the wording below) said as the runner now says it: C held its NaN poison there."""
    return _NAN_MISMATCH.sub(
        lambda m: f"{m[1]}: {float(m[2]):g} expected, NaN found (never written, or NaN computed)",
        text,
    )


def write(df: pd.DataFrame, stem: Path, title: str) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    # text columns: object (pandas 2) or str (pandas 3)
    text = [
        c for c in df.columns if df[c].dtype == object or isinstance(df[c].dtype, pd.StringDtype)
    ]
    df = df.assign(**{c: df[c].fillna("") for c in text})
    paths = {ext: stem.with_suffix(f".{ext}") for ext in ("csv", "md", "html", "tex")}
    df.to_csv(paths["csv"], index=False)
    df = for_people(df)
    paths["md"].write_text(f"**{title}**\n\n" + df.to_markdown(index=False) + "\n")
    html = df.to_html(index=False, border=0, classes="mmbench", na_rep="--", escape=True)
    safe = escape(title)  # a title holds values read from a results folder
    paths["html"].write_text(
        f"<html><head><meta charset='utf-8'><title>{safe}</title><style>"
        "body{font-family:sans-serif} table.mmbench{border-collapse:collapse;font-size:13px}"
        "table.mmbench td,table.mmbench th{padding:3px 8px;border-bottom:1px solid #ddd;text-align:right}"
        "table.mmbench td{white-space:nowrap}table.mmbench td:last-child{white-space:normal;min-width:16em}"
        ".scroll{max-width:100%;overflow-x:auto}"
        f"</style></head><body><h3>{safe}</h3><div class='scroll'>{html}</div></body></html>"
    )
    paths["tex"].write_text(df.to_latex(index=False, na_rep="--", caption=title, escape=True))
    return list(paths.values())


def with_varying_axes(d: pd.DataFrame, out: pd.DataFrame, after: str = "memory") -> pd.DataFrame:
    """A table of one row per configuration with a column for every axis that tells its rows
    apart and that it does not show already (summary.cell_index: the distribution, load, element
    type, ... where the run varies them), placed after `after`: no two rows look alike."""
    shown = [c for c in ("label", "memory", "dtype", "pad", "transfer") if c in out]
    extra = [a for a in cell_index(d, shown) if a not in shown and a in d]
    if not extra:
        return out
    at = list(out.columns).index(after) + 1 if after in out else len(out.columns)
    out = out.copy()
    for i, a in enumerate(extra):
        out.insert(at + i, a, d.loc[out.index, a].astype(str).values)
    return out


def _shape(df):
    df = df.copy()
    df["shape"] = [shape_label(m, n, k) for m, n, k in zip(df.m, df.n, df.k, strict=True)]
    return df


def kernel_times(timings: pd.DataFrame) -> pd.DataFrame:
    """Seed 003's table: kernel ms (GFLOPS) per variant x parameters x host-memory mode x size
    (and any other axis the run varies: summary.cell_index), each cell one configuration."""
    d = _shape(in_ladder_order(timings))
    return _pivot(d, ["variant", "params", "memory"], "kernel_ms", "kernel_gflops").reset_index()


def matrix_sum(timings: pd.DataFrame) -> pd.DataFrame:
    """Seed 003's coalescing table: the matrix-sum variants (operation add)."""
    return kernel_times(timings[timings.operation == "add"])


class NoData(ValueError):
    """This run has no data for the figure or table; the message says what it needs."""


# seed 002's kernels: kernel00, kernel01 (naive), kernel10, kernel11 (tiled)
SEED_002_PAIRS = ("naive_unguarded", "naive_guarded", "tiled_unguarded", "tiled_guarded")


def unguarded_vs_guarded(timings: pd.DataFrame) -> pd.DataFrame:
    """Seed 002's kernel00/kernel01 (and kernel10/kernel11) report: global and kernel time and
    GFLOPS, PASS/FAIL with the first mismatch, per size and host-memory mode."""
    d = timings[timings.variant.isin(SEED_002_PAIRS)]
    if d.empty:
        raise NoData(
            "this run measured none of seed 002's unguarded and guarded kernels "
            f"({', '.join(SEED_002_PAIRS)})"
        )
    d = _shape(in_ladder_order(d))
    cols = [
        "label",
        "shape",
        "memory",
        "grid",
        "global_ms_median",
        "kernel_ms",
        "global_gflops",
        "kernel_gflops",
        "verification",
        "first_mismatches",
    ]
    out = with_varying_axes(d, d[[c for c in cols if c in d]].copy())
    out["first_mismatches"] = (
        out["first_mismatches"]
        .astype(object)  # a column of no mismatches reads as float NaN
        .fillna("")
        .astype(str)
        .str.split(" | ", regex=False)
        .str[0]
    )
    # names a reader scans across a report-wide table
    return out.rename(
        columns={
            "label": "kernel",
            "global_ms_median": "global ms",
            "kernel_ms": "kernel ms",
            "global_gflops": "global GFLOP/s",
            "kernel_gflops": "kernel GFLOP/s",
            "verification": "verdict",
            "first_mismatches": "first mismatch",
        }
    )


def time_split(timings: pd.DataFrame) -> pd.DataFrame:
    """The nvprof-style time split: HtoD, kernel, DtoH (ms and % of global)."""
    d = _shape(timings[timings.verification != "ERROR"])
    total = d.h2d_ms_median + d.kernel_ms_median + d.d2h_ms_median
    out = with_varying_axes(d, d[["label", "shape", "memory"]].copy())
    for col, name in (
        ("h2d_ms_median", "HtoD"),
        ("kernel_ms_median", "kernel"),
        ("d2h_ms_median", "DtoH"),
    ):
        out[f"{name} ms"] = d[col].round(3)
        out[f"{name} %"] = (100 * d[col] / total).round(1)
    return out


CONFIG = ["label", "shape"]


def _cupti(metrics: pd.DataFrame | None) -> pd.DataFrame:
    if metrics is None or metrics.empty or "tool" not in metrics:
        return pd.DataFrame()
    m = metrics[(metrics.tool == "cupti") & (metrics.status == "ok")]
    return _shape(m) if not m.empty else m


def cupti_missing(metrics: pd.DataFrame | None) -> pd.DataFrame:
    """Why a CUPTI table is empty, per profiled configuration (the profiler's status rows)."""
    if metrics is None or metrics.empty or "tool" not in metrics:
        return pd.DataFrame({"CUPTI": ["not collected: this run profiled nothing"]})
    rows = _shape(metrics[(metrics.tool == "cupti") & (metrics.status != "ok")])
    if rows.empty:
        why = "not collected: this run's metrics table has no CUPTI rows (profiled without it)"
        return pd.DataFrame({"CUPTI": [why]})
    return rows[[*CONFIG, "status"]].drop_duplicates().rename(columns={"status": "CUPTI"})


def gpu_activities(metrics: pd.DataFrame | None) -> pd.DataFrame:
    """nvprof's GPU-activities summary per profiled configuration, from CUPTI's records
    (cupti.py): Time(%), Time, Calls, Avg, Min, Max (ms) per kernel and copy kind; where there
    are none, why."""
    m = _cupti(metrics)
    m = m[m.metric.str.startswith("gpu_activity_")] if not m.empty else m
    if m.empty:
        return cupti_missing(metrics)
    wide = m.pivot_table(
        index=[*CONFIG, "tool_metric"], columns="metric", values="value", aggfunc="first"
    ).reset_index()
    names = {
        "gpu_activity_percent": "Time(%)",
        "gpu_activity_time": "Time (ms)",
        "gpu_activity_calls": "Calls",
        "gpu_activity_avg": "Avg (ms)",
        "gpu_activity_min": "Min (ms)",
        "gpu_activity_max": "Max (ms)",
    }
    wide = wide.rename(columns={**names, "tool_metric": "Name"})
    wide = wide.sort_values([*CONFIG, "Time (ms)"], ascending=[True, True, False])
    return wide[[*CONFIG, *names.values(), "Name"]].reset_index(drop=True)


def kernel_time_sources(metrics: pd.DataFrame | None) -> pd.DataFrame:
    """The same launches timed by CUDA events and by CUPTI's kernel records, and their ratio."""
    m = _cupti(metrics)
    m = m[m.metric.isin(["cupti_kernel_time", "cupti_over_event_time"])] if not m.empty else m
    if m.empty:
        return cupti_missing(metrics)
    wide = m.pivot_table(index=CONFIG, columns="metric", values="value", aggfunc="first")
    wide = wide.reset_index().rename(
        columns={"cupti_kernel_time": "CUPTI ms", "cupti_over_event_time": "CUPTI / events"}
    )
    wide["CUDA events ms"] = wide["CUPTI ms"] / wide["CUPTI / events"]
    return wide[[*CONFIG, "CUDA events ms", "CUPTI ms", "CUPTI / events"]]


def verification(timings: pd.DataFrame) -> pd.DataFrame:
    """E2 / E3g: outcome, relative L2 error (seed 001's cutCompareL2fe), writes outside C,
    Freivalds and the first mismatches (printDiff)."""
    d = _shape(timings)
    cols = [
        "label",
        "dtype",
        "shape",
        "memory",
        "precondition_met",
        "verification",
        "rel_l2_error",
        "max_abs_error",
        "mismatches",
        "oob_writes",
        "freivalds",
        "first_mismatches",
        "error",
    ]
    out = with_varying_axes(d, d[[c for c in cols if c in d]].copy())
    if "first_mismatches" in out:  # the first few, so rows stay one line high
        out["first_mismatches"] = [short_list(x) for x in out["first_mismatches"]]
    return out


def short_list(mismatches) -> str:
    """The first LISTED_MISMATCHES of a ' | '-separated list, and how many more were listed."""
    items = [x for x in str(mismatches or "").split(" | ") if x and x != "nan"]
    more = len(items) - LISTED_MISMATCHES
    return " | ".join(items[:LISTED_MISMATCHES]) + (f" (+{more} more)" if more > 0 else "")


def leading_dimensions(timings: pd.DataFrame) -> pd.DataFrame:
    """Seed 004's packing buffer vs a strided copy vs keeping the padding: global time split."""
    d = _shape(timings[timings.verification != "ERROR"])
    cols = [
        "label",
        "shape",
        "memory",
        "pad",
        "transfer",
        "h2d_ms_median",
        "kernel_ms_median",
        "d2h_ms_median",
        "global_ms_median",
        "verification",
    ]
    return with_varying_axes(d, d[[c for c in cols if c in d]].copy(), after="transfer")


def device_properties(manifests: list[Path], timings: pd.DataFrame) -> pd.DataFrame:
    """The deviceQuery facts of seed 003, from the run manifests (or the rows' provenance)."""
    for p in manifests:
        dev = json.loads(Path(p).read_text()).get("device")
        if dev:
            return pd.DataFrame(list(dev.items()), columns=["property", "value"])
    cols = [
        "gpu_name",
        "gpu_uuid",
        "compute_capability",
        "driver_version",
        "cuda_runtime",
        "cupy_version",
    ]
    first = timings.iloc[0]
    return pd.DataFrame(
        [(c, first.get(c)) for c in cols if c in timings], columns=["property", "value"]
    )


def provenance(timings: pd.DataFrame, manifests: list[Path]) -> pd.DataFrame:
    """Device, versions and commit of the run, for the report's provenance page."""
    rows = []
    for c in ("gpu_name", "gpu_uuid", "driver_version", "cuda_runtime", "cupy_version", "hostname"):
        if c in timings:
            rows.append((c, ", ".join(sorted(map(str, timings[c].dropna().unique())))))
    if len(timings) and "timestamp" in timings:
        rows.append(("measured", f"{timings.timestamp.min()} .. {timings.timestamp.max()}"))
    for p in manifests[:1]:
        m = json.loads(Path(p).read_text())
        rows.append(
            ("git commit", f"{m['git']['commit']}{' (dirty)' if m['git'].get('dirty') else ''}")
        )
        rows += [(f"package {k}", v) for k, v in m.get("packages", {}).items()]
    return pd.DataFrame(rows, columns=["what", "value"])

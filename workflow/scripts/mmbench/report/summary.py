"""The end-of-run summary, in the shape of seed 003's table: variant x parameters x size ->
kernel milliseconds (with GFLOPS), then global time per host-memory mode, then the verification
tally."""

from __future__ import annotations

import math
import textwrap

import pandas as pd

from mmbench.core.axes import GPU_KEY, IDENTITY_KEY, INSTANCE
from mmbench.core.row import parameter_columns, with_added_axes
from mmbench.core.sampling import LOADS

# rows of the summary: the variant and its compile-time parameters (e.g. "TILE=32 COARSEN=4")
KEY = ["variant", "params"]


def shape_label(m: int, n: int, k: int) -> str:
    return str(m) if m == n == k else f"{m}x{n}x{k}"


def significant(x: float, digits: int = 4) -> str:
    """x with `digits` significant digits, never in scientific notation (88.21, 100.8, 1042)."""
    if x == 0 or math.isnan(x) or math.isinf(x):
        return f"{x:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def _cell(ms: float, gflops: float | None, outcome: str) -> str:
    if outcome == "ERROR":
        return "ERROR"
    text = significant(ms)
    if gflops is not None and not math.isnan(gflops):
        text += f" ({gflops:.0f})"
    return text + (" FAIL" if outcome == "FAIL" else "")


# the axes besides the variant, its parameters and the shape that tell two configurations apart
# (core/axes.py): a pivot shows every one of them that varies among a cell's rows
CELL_AXES = [a for a in IDENTITY_KEY if a not in ("variant", INSTANCE, "m", "n", "k")]


class MixedCell(ValueError):
    """Two configurations would share one cell of a table (a bug: the pivot names every axis)."""


def cell_index(df: pd.DataFrame, index: list[str], within: str = "shape") -> list[str]:
    """`index` and every axis (CELL_AXES, in order) that still varies among the rows of one
    (index, `within`) cell (a table's shape column, a figure's x): the index under which each
    cell is one configuration."""
    index = list(index)
    for axis in CELL_AXES:
        if axis in index or axis not in df:
            continue
        varies = df.groupby(index + [within], dropna=False, sort=False)[axis].nunique(dropna=False)
        if (varies > 1).any():
            index.append(axis)
    return index


def _pivot(df: pd.DataFrame, index: list[str], value: str, gf: str | None) -> pd.DataFrame:
    """Configurations (rows: `index` and every axis that still varies, cell_index) by shape
    (columns): each cell one configuration's time and rate, never an aggregate."""
    index = cell_index(df, index)
    cols = list(dict.fromkeys(df["shape"]))
    rows = {}
    for key, g in df.groupby(index, sort=False, dropna=False):
        row = {}
        for shape, gs in g.groupby("shape", sort=False):
            if len(gs) != 1:
                raise MixedCell(
                    f"{len(gs)} configurations share the cell {dict(zip(index, key, strict=True))}"
                    f" at {shape}"
                )
            one = gs.iloc[0]
            row[shape] = _cell(one[value], one[gf] if gf else None, one["verification"])
        rows[key] = row
    # each row's cells with its own key, in the order built: pandas 2.2 and 3.0's from_dict(
    # orient="index") reorders tuple keys (grouped by the first level; 3.1 keeps their order),
    # so that labelling its rows afterwards would give one variant's cells to another
    # (tests/test_summary.py, under the lowest pandas pyproject.toml allows)
    keys = list(rows)
    out = pd.DataFrame(
        [rows[key] for key in keys], index=pd.MultiIndex.from_tuples(keys, names=index)
    )
    return out.reindex(columns=cols).fillna("--")


def in_ladder_order(df: pd.DataFrame) -> pd.DataFrame:
    """Rows by variant (in the order they appear) and then by parameter values, numerically;
    `params` shows "-" where a variant has none (cuBLAS)."""
    df = df.copy()
    df["params"] = df["params"].fillna("").replace("", "-")
    order = list(dict.fromkeys(df["variant"]))
    df["_rank"] = [order.index(v) for v in df["variant"]]
    keys = ["_rank", *(c for c in parameter_columns(df) if c != "_rank")]
    return df.sort_values(keys, kind="stable", na_position="first").drop(columns="_rank")


# the console summary's widest lines: a pivot table wider than TABLE_WIDTH wraps its columns
# into blocks, each with the row labels (E3c's 30 sizes printed lines of 1,600 characters; the
# recorded ladder's widest table is 180), and a refusal's reason wraps at TEXT_WIDTH
TABLE_WIDTH = 200
TEXT_WIDTH = 120


def _markdown(table: pd.DataFrame) -> str:
    flat = table.reset_index()
    head = "| " + " | ".join(map(str, flat.columns)) + " |"
    sep = "|" + "|".join("---" for _ in flat.columns) + "|"
    body = ["| " + " | ".join(map(str, r)) + " |" for r in flat.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def render(timings: pd.DataFrame, refused: pd.DataFrame | None = None) -> tuple[str, str]:
    """(plain text, Markdown) summary of results/tables/timings.csv: one section per GPU model
    (the GPU model is an axis of every row: core/axes.py), so no number mixes two models."""
    if timings.empty:
        return "no configurations were measured\n", "no configurations were measured\n"
    models = timings.get(GPU_KEY, pd.Series([""] * len(timings))).fillna("").astype(str)
    if models.nunique() <= 1:
        return _render_model(timings, refused)
    txt, md = [], []
    for model in sorted(models.unique()):
        part = timings[models == model]
        head = f"== {model or 'GPU not recorded'}: {len(part)} configurations =="
        t, m = _render_model(part, None)
        txt += [head, "", t]
        md += [f"## {model or 'GPU not recorded'}", "", m]
    if refused is not None and not refused.empty:
        t, m = _refused(refused)
        txt.append(t)
        md += ["", m]
    return "\n".join(txt), "\n".join(md)


def _refused(refused: pd.DataFrame) -> tuple[str, str]:
    """The refusals of configurations the run asked for (a shape a variant cannot run: its
    precondition, memory, a library's limits), each reason once with its count; the parameter
    combinations of a variant's grid that the registry's constraints rule out (no shape: never
    built, whatever the run asked) counted per variant.  Lines wrap at TEXT_WIDTH."""
    # a table written before refusals had shapes holds the grid's only
    grid = refused.m.isna() if "m" in refused else pd.Series(True, index=refused.index)
    lines = [
        f"{len(refused)} configuration(s) refused before running (results/tables/refused.csv):"
    ]
    for (variant, reason), g in refused[~grid].groupby(["variant", "reason"], sort=False):
        lines += textwrap.wrap(f"{variant}: {reason} [{len(g)}x]", TEXT_WIDTH - 2,
                               initial_indent="  ", subsequent_indent="      ")  # fmt: skip
    if grid.any():
        per = refused[grid].groupby("variant", sort=False).size()
        lines += textwrap.wrap(
            f"{int(grid.sum())} parameter combination(s) of the variants' grids that the "
            "registry's constraints rule out (never built; their reasons are in the table): "
            + ", ".join(f"{v} {n}" for v, n in per.items()),
            TEXT_WIDTH - 2, initial_indent="  ", subsequent_indent="      ",
        )  # fmt: skip
    return "\n".join(lines), "\n".join(lines).replace("\n", "  \n")


def statistic_words(rows: pd.DataFrame, load: str) -> str:
    """What the rows' kernel_ms is (core/sampling.Load.statistic); a table recorded before the
    mean was kept holds the median under every load."""
    recorded = "kernel_ms_mean" in rows and rows.kernel_ms_mean.notna().any()
    if recorded and load in LOADS and LOADS[load].statistic == "mean":
        return "mean over the timed window"
    return "median of the timed runs"


def _render_model(timings: pd.DataFrame, refused: pd.DataFrame | None) -> tuple[str, str]:
    df = in_ladder_order(timings)
    df["shape"] = [shape_label(m, n, k) for m, n, k in zip(df["m"], df["n"], df["k"], strict=True)]
    df = with_added_axes(df)  # a run recorded before loads existed: bursts
    txt, md = [], []
    groups = ["dtype", "accumulate", "distribution", "load"]
    for (dtype, acc, dist, load), part in df.groupby(groups, sort=False):
        op = "C = C + A.B" if str(acc).lower() == "true" else "C = A.B"
        # one row per host-memory mode where the run has several: a kernel's time depends on
        # where its operands live (managed, mapped), and no cell mixes two modes
        extra = [c for c in ("memory", "cache", "pad") if c in part and part[c].nunique() > 1]
        per = ", per host-memory mode" if "memory" in extra else ""
        head = (
            f"Kernel time, ms (GFLOPS), {statistic_words(part, load)}{per}: {op}, {dtype}, "
            f"{dist} inputs, {load} load"
        )
        k = _pivot(part, KEY + extra, "kernel_ms", "kernel_gflops")
        txt += [head, k.to_string(line_width=TABLE_WIDTH), ""]
        md += [f"### {head}", "", _markdown(k), ""]
        if load in LOADS and not LOADS[load].times_copies:
            continue  # copies are timed in bursts only (core/sampling.Load.times_copies)
        head = "Global time (H2D + kernel + D2H), ms (GFLOPS), per host-memory mode"
        extra = [c for c in ("cache", "pad", "transfer") if c in part and part[c].nunique() > 1]
        g = _pivot(part, KEY + ["memory"] + extra, "global_ms_median", "global_gflops")
        txt += [head, g.to_string(line_width=TABLE_WIDTH), ""]
        md += [f"### {head}", "", _markdown(g), ""]
    tally = verification_tally(timings)
    txt.append(tally)
    md += ["### Verification", "", tally.replace("\n", "  \n")]
    if refused is not None and not refused.empty:
        t, m = _refused(refused)
        txt.append(t)
        md += ["", m]
    prov = provenance_lines(timings)
    txt += ["", *prov, "cells marked FAIL did not verify; -- = not run", ""]
    md += ["", "  \n".join(prov), ""]
    return "\n".join(txt), "\n".join(md)


def provenance_lines(timings: pd.DataFrame) -> list[str]:
    """The GPU, driver, CUDA runtime and CuPy the rows were measured with: one line where one
    GPU measured them all; where the rows come from several (a run put together from parts
    measured on different machines), a line per GPU naming the variants it measured, since
    rows of different boards are compared in the tables."""

    def words(row) -> str:
        return (
            f"{row.get('gpu_name', '?')} ({row.get('gpu_uuid', '?')}), driver "
            f"{row.get('driver_version', '?')}, CUDA runtime {row.get('cuda_runtime', '?')}, "
            f"CuPy {row.get('cupy_version', '?')}"
        )

    uuids = timings["gpu_uuid"].fillna("?") if "gpu_uuid" in timings else None
    if uuids is None or uuids.nunique() == 1:
        return [f"GPU: {words(timings.iloc[0])}"]
    lines = [f"GPUs: {uuids.nunique()}; the rows of each were measured on one of them:"]
    for _, rows in timings.groupby(uuids, sort=True):
        variants = ", ".join(sorted(rows["variant"].unique()))
        lines.append(f"  {words(rows.iloc[0])}: {variants}")
    return lines


def verification_tally(timings: pd.DataFrame) -> str:
    v = timings["verification"]
    expected = timings.get("expected", pd.Series(["PASS"] * len(timings)))
    unexpected = timings[(v != expected) | (v == "ERROR")]
    lines = [
        f"{len(timings)} configurations: {int((v == 'PASS').sum())} PASS, "
        f"{int(((v == 'FAIL') & (expected == 'FAIL')).sum())} FAIL as expected "
        f"(precondition not met), {len(unexpected)} unexpected "
        f"(FAIL where PASS was expected, PASS where FAIL was, or ERROR)"
    ]
    for _, r in unexpected.head(10).iterrows():
        detail = r.get("error") if r["verification"] == "ERROR" else r.get("first_mismatches")
        lines.append(
            f"  UNEXPECTED {r['verification']}: {r['label']} {r['dtype']} "
            f"{shape_label(r['m'], r['n'], r['k'])} {r['memory']}: {detail}"
        )
    return "\n".join(lines)

"""The comparison said: the summary printed at the end (verdict counts, the configurations
that changed), the HTML table of the report, the header of both runs (GPU, driver, clocks)."""

from __future__ import annotations

import math
from html import escape

import pandas as pd

from mmbench.compare.paired import said
from mmbench.core.schemas import COMPARE_VERDICTS

# every verdict, in the order tables list them (declared with the compare table's schema), and
# the four nvbench's criterion gives a configuration measured in both runs
ORDER = list(COMPARE_VERDICTS)


JUDGED = ["SLOWER", "FASTER", "UNSURE", "SAME"]


def counts(table: pd.DataFrame) -> dict[str, int]:
    got = table.verdict.value_counts().to_dict()
    return {v: int(got.get(v, 0)) for v in ORDER}


def in_cycles_only(table: pd.DataFrame) -> pd.Series:
    """The configurations nvbench finds SAME in cycles but not in time: their time moved with
    the measured SM clock (`combined`)."""
    if "cycles_verdict" not in table:
        return pd.Series(False, index=table.index)
    return (
        table.time_verdict.notna()
        & (table.time_verdict != "SAME")
        & (table.cycles_verdict == "SAME")
    )


def within_tolerance(table: pd.DataFrame) -> pd.Series:
    """The configurations SAME by the tolerance only (nvbench's verdict, clock-measured or not,
    is not SAME)."""
    if "nvbench_verdict" not in table:
        return pd.Series(False, index=table.index)
    return (
        (table.verdict == "SAME")
        & table.nvbench_verdict.notna()
        & (table.nvbench_verdict != "SAME")
    )


def summary(table: pd.DataFrame, head: dict, limit: int = 12) -> str:
    """The console summary: both runs, the verdict counts, and the configurations that changed
    (slowest first)."""
    b, n = head["baseline"], head["this_run"]
    lines = [
        f"Comparison of runs: baseline {b['run']} vs this run {n['run']}",
        f"  baseline GPU: {b['gpu']} (driver {b['driver']}, SM clock {_clocks(b)})",
        f"  this run GPU: {n['gpu']} (driver {n['driver']}, SM clock {_clocks(n)})",
    ]
    if "cycles_verdict" in table and table.cycles_verdict.notna().any():
        lines.append(
            f"  {int(table.cycles_verdict.notna().sum())} configurations judged in time and in "
            f"cycles (the SM clock measured in both runs); {int(in_cycles_only(table).sum())} of "
            "them SAME in cycles only"
        )
    if "nvbench_verdict" in table and table.nvbench_verdict.notna().any():
        tol = float(table.tolerance.dropna().iloc[0])
        raw = table.nvbench_verdict.value_counts()
        tally = ", ".join(f"{int(raw.get(v, 0))} {v}" for v in JUDGED)
        lines.append(
            f"  tolerance +-{tol:.1%} (compare.tolerance): {int(within_tolerance(table).sum())} "
            f"configurations SAME only within it; nvbench's criterion alone: {tally}"
        )
    lines.append(f"  comparison: {head.get('comparison', 'runs apart')}")
    pairs = table[table.get("comparison", pd.Series("", index=table.index)) == "paired"]
    judged = pairs[pairs.detectable.notna()] if "detectable" in pairs else pairs.iloc[:0]
    if len(judged):
        d, w = judged.detectable, judged.resolution
        lines.append(
            f"  {len(judged)} configurations measured side by side (one process, samples "
            f"interleaved): 95% intervals of the ratio +-{w.min():.2%} to +-{w.max():.2%} "
            f"(median +-{w.median():.2%}); with the threshold of "
            f"+-{float(judged.threshold.iloc[0]):.1%}, the smallest change each could have seen "
            f"is +-{d.min():.2%} to +-{d.max():.2%}"
        )
    if not head["same_gpu"]:
        lines.append("  The runs are on different GPUs: verdicts compare the GPUs, not code.")
    other = [d for d in head.get("differs", []) if not d.startswith("GPU model")]
    if other:
        lines.append(
            f"  The runs differ in what measured them ({'; '.join(other)}): a verdict may be "
            "theirs, not the code's."
        )
    both = [v for v in n["sources"] if v in b["sources"]]
    changed = sorted(v for v in both if str(b["sources"][v]) != str(n["sources"][v]))
    if changed:
        lines.append(f"  kernel sources that differ: {', '.join(changed)}")
    c = counts(table)
    lines.append("  " + ", ".join(f"{v} {k}" for k, v in c.items() if v or k in JUDGED))
    lines += _warnings(table)
    for r in table[table.verdict == "REGRESSED"].head(limit).itertuples():
        lines.append(f"  REGRESSED {r.label} {r.dtype} {r.m}x{r.n}x{r.k} {r.memory}: {r.reason}")
    moved = table[table.verdict.isin(["SLOWER", "FASTER"])].sort_values("ratio", ascending=False)
    for r in moved.head(limit).itertuples():
        lines.append(
            f"  {r.verdict:<6} {r.label} {r.dtype} {r.m}x{r.n}x{r.k} {r.memory}: "
            f"{r.base_ms:.4g} -> {r.this_ms:.4g} ms ({_ratio(r)})"
        )
    if len(moved) > limit:
        lines.append(f"  ... and {len(moved) - limit} more (tables/compare.csv)")
    unsure = judged[judged.verdict == "UNSURE"]
    for r in unsure.head(limit).itertuples():
        lines.append(
            f"  {said(r.verdict, r.detectable)} {r.label} {r.dtype} {r.m}x{r.n}x{r.k} "
            f"{r.memory}: {r.base_ms:.4g} -> {r.this_ms:.4g} ms ({_ratio(r)})"
        )
    return "\n".join(lines)


def _warnings(table: pd.DataFrame) -> list[str]:
    """What makes verdicts say less than they seem to: samples missing on one side, or the very
    same samples on both (a copy of one measurement compared with itself)."""
    out = []
    reason = table.get("reason", pd.Series("", index=table.index)).fillna("").astype(str)
    for side, its in (("the baseline", "its results folder holds"),
                      ("this run", "its results folder holds"),
                      ("either run", "both results folders hold")):  # fmt: skip
        n = int(reason.str.startswith(f"no timed samples in {side}").sum())
        if n:
            out.append(
                f"  {n} configurations UNSURE for want of timed samples in {side} ({its} "
                "tables/timings.csv only, as runs recorded before samples were kept do): "
                "nothing was judged; compare runs that kept runs/<variant>.samples.json.gz"
            )
    same = table.get("same_samples", pd.Series(False, index=table.index)).fillna(False)
    judged = table.verdict.isin(JUDGED) & ~reason.str.startswith("no timed samples")
    if judged.any() and same[judged].astype(bool).all():
        out.append(
            "  Every configuration holds the very same samples in both runs: the baseline is a "
            "copy of this run's measurement, so SAME says nothing about the code; measure again "
            "(--forcerun measure_variant) or use baseline=itself for an A/A test"
        )
    return out


def _ratio(r) -> str:
    """A row's ratio: a paired row's centre with its interval, else the medians' ratio."""
    lo, hi = getattr(r, "ratio_low", math.nan), getattr(r, "ratio_high", math.nan)
    if getattr(r, "comparison", "") == "paired" and lo == lo:
        return f"x{r.ratio_centre:.4f}, 95% interval {lo:.4f} to {hi:.4f}"
    return f"x{r.ratio:.3f}"


SHOWN = {
    "said": "verdict",
    "comparison": "comparison",
    "label": "kernel",
    "dtype": "dtype",
    "shape": "m x n x k",
    "memory": "memory",
    "base_ms": "baseline ms",
    "this_ms": "this run ms",
    "ratio": "ratio",
    "interval": "ratio interval (paired, 95%)",
    "change": "change interval",
    "nvbench_verdict": "nvbench's verdict",
    "time_verdict": "in time",
    "cycles_verdict": "in cycles",
    "base_clock_mhz": "baseline SM MHz (measured)",
    "this_clock_mhz": "this run SM MHz (measured)",
    "reason": "reason (nvbench's, or the pairs')",
    "samples_kind": "samples of",
    "samples": "samples",
}


def html(table: pd.DataFrame, text: str) -> str:
    """The report's comparison table: the summary, then the configurations, changed first."""
    t = table.copy()
    t["shape"] = [f"{r.m}x{r.n}x{r.k}" for r in t.itertuples()]
    t["change"] = [
        f"{lo:+.1%} to {hi:+.1%}" if pd.notna(lo) else ""
        for lo, hi in zip(t.get("change_low", []), t.get("change_high", []), strict=True)
    ] if "change_low" in t else ""  # fmt: skip
    t["samples"] = [
        f"{r} rounds" if c == "paired" else f"{b:.0f} / {n:.0f}"
        for b, n, r, c in zip(
            t.get("base_samples", pd.Series(math.nan, index=t.index)),
            t.get("this_samples", pd.Series(math.nan, index=t.index)),
            t.get("rounds", pd.Series(math.nan, index=t.index)),
            t.get("comparison", pd.Series("", index=t.index)), strict=True,
        )
    ]  # fmt: skip
    t["said"] = [
        said(v, d) for v, d in zip(t.verdict, t.get("detectable", [math.nan] * len(t)), strict=True)
    ]
    t["interval"] = [
        f"{lo:.4f} to {hi:.4f}" if lo == lo else ""
        for lo, hi in zip(t.get("ratio_low", [math.nan] * len(t)),
                          t.get("ratio_high", [math.nan] * len(t)), strict=True)
    ]  # fmt: skip
    t["_rank"] = t.verdict.map({v: i for i, v in enumerate(ORDER)})
    t = t.sort_values(["_rank", "ratio"], ascending=[True, False])
    t = t.reindex(columns=list(SHOWN))
    # the columns of a kind of comparison this table does not hold (a paired one has no
    # nvbench verdict) are left out rather than shown empty
    t = t.loc[:, [c for c in t if (t[c].notna() & (t[c].astype(str) != "")).any()]]
    t = t.rename(columns=SHOWN)
    body = t.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", border=0)
    style = "<style>td, th { white-space: nowrap; padding: 1px 8px; }</style>"
    return f"{style}\n<pre>{escape(text)}</pre>\n{body}\n"


def _clocks(facts: dict) -> str:
    """NVML's median SM clock, and the clock probe's where it measured one."""
    nvml, probe = _mhz(facts["sm_clock_mhz"]), facts.get("sm_clock_probe_mhz")
    return nvml if probe is None or math.isnan(probe) else f"{nvml}, measured {probe:.1f} MHz"


def _mhz(v) -> str:
    return f"{v:.0f} MHz" if v is not None and not math.isnan(v) else "not recorded"

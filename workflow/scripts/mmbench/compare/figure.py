"""The comparison's figure: this run's kernel median over the baseline's per configuration,
coloured by verdict (drawn with the report's plotting primitives)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as mticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from mmbench.report.plotting import _setup, ladder, no_data, save, verdict  # noqa: E402

COMPARE_COLOURS = {
    "REGRESSED": "#000000",
    "SLOWER": "#d55e00",
    "FASTER": "#009e73",
    "UNSURE": "#999999",
    "SAME": "#0072b2",
}


def compare(table: pd.DataFrame, head: dict, stem):
    """This run's kernel median over the baseline's, per configuration, one row of points per
    variant instantiation, coloured by verdict; the band is the criterion's clear gap."""
    d = table[table.ratio.notna()].copy()
    paired = d.get("comparison", pd.Series("", index=d.index)) == "paired"
    # a paired row's ratio is its rounds' centre, with its interval; a row of runs made apart
    # the medians' ratio
    if paired.any():
        d.loc[paired, "ratio"] = d.loc[paired, "ratio_centre"]
    if d.empty:
        no_data("Comparison with the baseline", "configurations measured in both runs")
    if stem is None:
        return None
    _setup()
    d["series"] = d["label"]
    order = ladder(d)
    # room for the axis label above the note, whatever the number of series
    fig, ax = plt.subplots(figsize=(9, max(2.6, 0.9 + 0.42 * len(order))))
    gaps = d["clear_gap"].dropna() if "clear_gap" in d else pd.Series(dtype=float)
    gap = float(gaps.iloc[0]) if len(gaps) else 0.005
    tols = d["tolerance"].dropna() if "tolerance" in d else pd.Series(dtype=float)
    tol = float(tols.iloc[0]) if len(tols) else 0.0
    thresholds = d.loc[paired, "threshold"].dropna() if paired.any() else pd.Series(dtype=float)
    if len(thresholds):
        # the paired verdict's band: SAME where a configuration's interval lies inside it
        gap = float(thresholds.iloc[0])
        ax.axvspan(1 / (1 + gap), 1 + gap, color="#bbbbbb", alpha=0.8, lw=0,
                   label=f"threshold +-{gap:.1%} (paired)")  # fmt: skip
    if not paired.all():
        if tol > gap:
            ax.axvspan(
                1 / (1 + tol), 1 + tol, color="#e8e8e8", lw=0, label=f"tolerance +-{tol:.0%}"
            )
        ax.axvspan(1 / (1 + gap), 1 + gap, color="#bbbbbb", alpha=0.8, lw=0, label="clear-gap band")
    ax.axvline(1, color="black", lw=0.8)
    y = {s: i for i, s in enumerate(order)}
    rng = np.random.default_rng(0)

    # SAME in cycles only (the time moved with the measured SM clock) and SAME within the
    # tolerance only: columns of the comparison's table (compare.in_cycles_only,
    # compare.within_tolerance; absent in older tables)
    def flag(column):
        if column not in d:
            return pd.Series(False, index=d.index)
        return d[column].fillna(False).astype(bool)

    by_cycles, by_tol = flag("same_in_cycles_only"), flag("within_tolerance_only")
    kinds = {
        "": (pd.Series(True, index=d.index) & ~by_cycles & ~by_tol, "o"),
        " in cycles only, the clock moved": (by_cycles, "o"),
        " within the tolerance only": (by_tol, "D"),
    }
    for v, colour in COMPARE_COLOURS.items():
        for words, (which, marker) in kinds.items():
            g = d[(d.verdict == v) & which]
            if g.empty:
                continue
            hollow = bool(words)
            jitter = rng.uniform(-0.18, 0.18, len(g))
            bars = g[g.get("comparison", pd.Series("", index=g.index)) == "paired"]
            if len(bars):  # each paired ratio's 95% interval
                at = [y[s] + j for s, j, p in zip(g.series, jitter, g.index.isin(bars.index),
                                                  strict=True) if p]  # fmt: skip
                ax.errorbar(
                    bars.ratio, at,
                    xerr=[bars.ratio - bars.ratio_low, bars.ratio_high - bars.ratio],
                    fmt="none", ecolor=colour, elinewidth=1.2, capsize=2, zorder=2,
                )  # fmt: skip
            ax.scatter(
                g.ratio,
                [y[s] + j for s, j in zip(g.series, jitter, strict=True)],
                s=22,
                marker=marker,
                color="white" if hollow else colour,
                label=f"{v}{words} ({len(g)})",
                zorder=3,
                edgecolor=colour if hollow else "white",
                linewidth=1.0 if hollow else 0.4,
            )
    ax.set_yticks(range(len(order)), order)
    ax.invert_yaxis()
    ax.set_xscale("log")
    # the data and the band, with a margin (not symmetric: a slowdown needs no empty left half)
    band = max(4 * gap, 1.5 * tol)
    ax.set_xlim(min(d.ratio.min(), 1 / (1 + band)) / 1.01, max(d.ratio.max(), 1 + band) * 1.01)
    # evenly spaced ticks: the ratios usually span a few percent, where a log axis has none
    ax.xaxis.set_major_locator(mticker.MaxNLocator(9, steps=[1, 2, 2.5, 5, 10]))
    ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:.4g}"))
    ax.xaxis.set_minor_locator(mticker.NullLocator())
    ax.set_xlabel(
        "kernel time, this build / baseline, paired ratio with its 95% interval (log scale; < 1 "
        "is faster)" if paired.all() else
        "kernel median, this run / baseline (log scale; < 1 is faster)"
    )  # fmt: skip
    ax.set_ylabel("")
    b, n = head["baseline"], head["this_run"]
    side = " side by side" if paired.all() else ""
    ax.set_title(f"This run ({n['gpu']}) against the baseline ({b['gpu']}){side}", loc="left")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False, fontsize=9)
    counts = d.verdict.value_counts()
    note = ", ".join(f"{counts[v]} {v}" for v in COMPARE_COLOURS if v in counts)
    note = f"{len(d)} configurations in both: {note}."
    if paired.any():
        p = d[paired]
        half = p.resolution
        note += (
            f" {int(paired.sum())} measured side by side (both builds in one process, samples "
            f"interleaved): their 95% intervals are +-{min(half):.2%} to +-{max(half):.2%} wide, "
            f"so each would have seen a change of +-{p.detectable.max():.1%} (the threshold)."
            if p.detectable.max() == p.threshold.max() else
            f" {int(paired.sum())} measured side by side: the smallest change each would have "
            f"seen is +-{p.detectable.min():.1%} to +-{p.detectable.max():.1%}."
        )  # fmt: skip
    if by_cycles.any():
        moved = d[by_cycles]
        note += (
            f" {int(by_cycles.sum())} of the SAME are the same in cycles only (hollow): their "
            f"time moved with the SM clock the probe measured ({moved.base_clock_mhz.min():.0f}"
            f"-{moved.base_clock_mhz.max():.0f} MHz in the baseline, "
            f"{moved.this_clock_mhz.min():.0f}-{moved.this_clock_mhz.max():.0f} MHz in this run)."
        )
    if by_tol.any():
        raw = d[by_tol].nvbench_verdict.value_counts()
        note += (
            f" {int(by_tol.sum())} of the SAME are the same only within the +-{tol:.0%} tolerance "
            f"(diamonds; nvbench's criterion alone: "
            + ", ".join(f"{n} {v}" for v, n in raw.items())
            + f"), ratios {d[by_tol].ratio.min():.3f}-{d[by_tol].ratio.max():.3f}."
        )
    if not head.get("same_gpu", True):
        note += " The runs are on different GPUs, so the verdicts compare the GPUs."
    lost = table[(table.verdict == "REGRESSED") & table.ratio.isna()]
    if len(lost):
        note += (
            f" {len(lost)} configurations REGRESSED without a time (ERROR in this run; "
            "listed in compare.csv)."
        )
    only = len(table) - len(d) - len(lost)
    if only:
        note += f" {only} configurations are in one run only (listed in compare.csv)."
    fig.tight_layout()  # the axis label inside the figure, so the note below never covers it
    verdict(fig, note)
    return save(fig, Path(stem))

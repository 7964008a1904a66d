"""The report's plotting primitives: one colour per variant in every figure (the registry's
order), a figure grid, the sentence under a figure, lines named by the axes that tell
configurations apart (a line stops where two configurations would share a point), log-scaled
size axes, failed points marked, PNG and PDF saved.  Seaborn on matplotlib's Agg backend."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as mticker  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from mmbench.report.findings import ladder, variant_order  # noqa: E402
from mmbench.report.report_tables import NoData  # noqa: E402  (shared with the tables)
from mmbench.report.summary import CELL_AXES, MixedCell, cell_index  # noqa: E402

# the library references, drawn in neutral colours no kernel variant takes
REFERENCE_COLOURS = {"cublas": "#222222", "cublas_tf32": "#6b6b6b"}


def palette(variants=()) -> dict:
    order = [v for v in variant_order() if v not in REFERENCE_COLOURS]
    # the colour-blind palette, then its dark shades: twenty distinct colours before any repeats
    colours = sns.color_palette("colorblind") + sns.color_palette("dark")
    out = {v: colours[i % len(colours)] for i, v in enumerate(order)} | REFERENCE_COLOURS
    extra = [v for v in variants if v not in out]
    for i, v in enumerate(extra):
        out[v] = colours[(len(order) + i) % len(colours)]
    return out


def _setup():
    sns.set_theme(context="paper", style="whitegrid", font_scale=1.1)


def verdict(fig, text: str, condition: str = "") -> None:
    """What this run says about the report's conclusion, printed under the figure, wrapped to
    the figure's width, naming the inputs and load it was measured under (`condition`, e.g.
    "int09 inputs, burst load", given by the output catalogue: catalogue.one_condition)."""
    width = max(60, int(fig.get_figwidth() * 14))  # characters of 9-point text per line
    head = f"This run ({condition}): " if condition else "This run: "
    fig.text(
        0.01,
        -0.02,
        textwrap.fill(head + text, width),
        ha="left",
        va="top",
        fontsize=9,
        style="italic",
    )


def grid(n: int, ncols: int = 3, size=(4.2, 3.2), **kw):
    """A figure of n small panels, at most ncols a row (unused ones hidden)."""
    ncols = min(ncols, n)
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(
        nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False, **kw
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    # a panel with no visible panel below it shows its x tick labels (shared x axes hide them
    # on every row but the last, also where the last row is not full)
    for i, ax in enumerate(axes.flat[:n]):
        if i + ncols >= n:
            ax.xaxis.set_tick_params(labelbottom=True)
    return fig, list(axes.flat[:n])


def save(fig, stem: Path) -> list[Path]:
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [stem.with_suffix(".png"), stem.with_suffix(".pdf")]
    fig.savefig(paths[0], dpi=150, bbox_inches="tight")
    fig.savefig(paths[1], bbox_inches="tight")
    plt.close(fig)
    return paths


def no_data(title: str, needs: str):
    raise NoData(f"{title}: no data in this run; needs {needs}")


def measured(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that ran and verified (FAIL rows are shown in the tables, not as performance)."""
    d = df[df["verification"] == "PASS"].copy()
    d["series"] = d["label"]
    return d


# line styles and markers of the series of one variant, in ladder order: every series marked
DASHES = ["-", "--", ":", "-."]


MARKERS = ["o", "^", "s", "D", "v", "P"]


def shown_apart(d: pd.DataFrame, x: str) -> pd.DataFrame:
    """The rows with each series named by the axes that tell apart configurations sharing one
    of its x values (cuBLAS in float32 and float64 at one N: two lines, "cublas float32" and
    "cublas float64"), so that every point of a line is one configuration."""
    d = d.copy()
    for a in cell_index(d, ["series"], within=x)[1:]:
        varies = d.groupby("series")[a].transform("nunique") > 1
        d.loc[varies, "series"] = d.loc[varies, "series"] + " " + d.loc[varies, a].astype(str)
    return d


def _lines(ax, d, x, y, lo=None, hi=None):
    d = shown_apart(d, x)
    pal = palette(d["variant"].unique())
    seen: dict[str, int] = {}
    for series in ladder(d):
        g = d[d.series == series].sort_values(x)
        twice = g[g[x].duplicated(keep=False)]
        if len(twice):  # a line's point is one configuration, never two drawn as one
            axes = [a for a in CELL_AXES if a in g and twice[a].nunique() > 1]
            raise MixedCell(
                f"{series}: {len(twice)} configurations share {x} = {twice[x].iloc[0]} on one "
                f"line (they differ in {', '.join(axes) or 'nothing shown'}); the figure must "
                "choose or show that axis"
            )
        v = g["variant"].iloc[0]
        i = seen[v] = seen.get(v, -1) + 1
        ls = DASHES[i % len(DASHES)]
        mk = MARKERS[i % len(MARKERS)]
        ax.plot(
            g[x],
            g[y],
            ls,
            color=pal[v],
            label=series,
            lw=1.6 if v != "cublas" else 2.4,
            marker=mk,
            markersize=4,
            markevery=max(1, len(g) // 8),
        )
        if lo is not None and hi is not None:
            ax.fill_between(g[x], g[lo], g[hi], color=pal[v], alpha=0.2, lw=0)


def square(d: pd.DataFrame) -> pd.DataFrame:
    return d[(d.m == d.n) & (d.n == d.k)]


def log_sizes(ax, lo: float, hi: float, sizes=None) -> None:
    """A log-scale size axis labelled at the measured sizes where they are few (one label for
    sizes within 5% of each other, such as 640 and 641), else at the powers of two in range, as
    plain numbers, minor ticks unlabelled (labels at every minor tick overlap)."""
    ax.set_xscale("log")
    ticks = [2**i for i in range(0, 20) if lo <= 2**i <= hi]
    measured = sorted({float(x) for x in sizes}) if sizes is not None else []
    if 0 < len(measured) <= 8:
        ticks = []
        for x in measured:
            if not ticks or x > ticks[-1] * 1.05:
                ticks.append(x)
    ax.xaxis.set_major_locator(mticker.FixedLocator(ticks))
    ax.xaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:.0f}"))
    ax.xaxis.set_minor_formatter(mticker.NullFormatter())


def failed_points(ax, timings: pd.DataFrame, variant: str, x: str, y: str, memory: str) -> None:
    """The configurations of `variant` that ran but did not verify, as red crosses (at their
    measured value): a line that stops there does not hide why."""
    f = timings[(timings.variant == variant) & (timings.verification == "FAIL")]
    f = square(f[f.memory == memory]) if "memory" in f else square(f)
    if len(f):
        ax.plot(f[x], f[y], "x", color="#d62728", markersize=7, mew=2, label="FAIL (not verified)")

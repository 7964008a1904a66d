"""The reports' figures, and two none of them has, from the tidy tables (no GPU needed).

Every figure: seaborn on matplotlib's Agg backend, axes with units, log scales where sizes or
times span decades, the spread of the repetitions as a band (min..max of the timed runs), the
cuBLAS reference wherever performance is compared, and one colour per variant, the same in every
figure (the registry's order).  Each is saved as PNG (report) and PDF (papers).
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

import matplotlib

matplotlib.use("Agg")
import matplotlib.patches as mpatches  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker as mticker  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from mmbench.core.row import parameter_columns  # noqa: E402
from mmbench.report.findings import (  # noqa: E402
    _tensor_placed,
    block_width,
    bound_in_words,
    closest_to_cublas,
    copies_follow_speed,
    course_far_from_cublas,
    ladder_targets,
    load_costs,
    near_sizes,
    peaks_at_multiples,
    roofline_note,
    sweep_targets,
    tiled_vs_naive,
    tiling_moves_right,
    transfer_fades,
    transfer_share,
)
from mmbench.report.plotting import (  # noqa: E402
    _lines,
    _setup,
    failed_points,
    grid,
    ladder,
    log_sizes,
    measured,
    no_data,
    palette,
    save,
    shown_apart,
    square,
    variant_order,
    verdict,
)
from mmbench.report.report_tables import NoData  # noqa: E402  (shared with the tables)
from mmbench.report.summary import significant  # noqa: E402

__all__ = ["NoData", "measured", "shown_apart", "block_width", "bound_in_words", "closest_to_cublas",
           "peaks_at_multiples", "roofline_note", "tiled_vs_naive", "transfer_share"]  # fmt: skip


def time_vs_n(timings, stem, memory="pinned", condition=""):
    """E1 (seed 000): kernel time vs n, square matrices: one panel per kernel variant (its
    parameter values as lines), cuBLAS in every panel as the reference."""
    d = square(measured(timings))
    d = d[d.memory == (memory if memory in set(d.memory) else d.memory.iloc[0])] if len(d) else d
    if d.empty or d.m.nunique() < 2:
        no_data("Kernel time vs n", "two or more square sizes")
    if stem is None:  # the data check only
        return None
    _setup()
    ref = d[d.variant == "cublas"]
    kernels = [v for v in variant_order() if v in set(d.variant) and v != "cublas"] or ["cublas"]
    fig, axes = grid(len(kernels), sharex=True, sharey=True)
    for ax, v in zip(axes, kernels, strict=True):
        _lines(
            ax,
            pd.concat([d[d.variant == v], ref]),
            "m",
            "kernel_ms",
            "kernel_ms_min",
            "kernel_ms_max",
        )
        failed_points(ax, timings, v, "m", "kernel_ms", d.memory.iloc[0])
        ax.set(title=v, yscale="log", xlabel="n (matrices n x n)", ylabel="kernel time (ms)")
        if d.m.max() / d.m.min() >= LOG_SIZES:
            log_sizes(ax, d.m.min(), d.m.max(), d.m)
        ax.legend(fontsize=7, loc="upper left")
    fig.suptitle(
        f"Kernel time vs n, {d.memory.iloc[0]} memory (log scale; band: min..max of the timed "
        "runs; cuBLAS in every panel)"
    )
    fig.tight_layout()
    verdict(fig, f"{tiled_vs_naive(d)} {near_sizes(d, 'kernel_ms', 'ms')}".strip(), condition)
    return save(fig, stem)


def gflops_vs_n(timings, stem, kind="kernel", condition=""):
    """E3c (seed 002): GFLOPS vs N per block size, naive and tiled, cuBLAS for reference."""
    d = square(measured(timings))
    if d.empty or d.m.nunique() < 2:
        no_data("GFLOPS vs N", "two or more square sizes")
    if stem is None:  # the data check only
        return None
    d = d[d.memory == ("pinned" if "pinned" in set(d.memory) else d.memory.iloc[0])]
    _setup()
    kernels = [v for v in variant_order() if v in set(d.variant) and v != "cublas"]
    fig, axes = grid(max(1, len(kernels)), ncols=2, size=(6, 4.2), sharey=True)
    ref = d[d.variant == "cublas"]
    for ax, v in zip(axes, kernels or ["cublas"], strict=False):
        part = pd.concat([d[d.variant == v], ref])
        _lines(ax, part, "m", f"{kind}_gflops")
        ax.set(title=v, xlabel="N (square matrices N x N)", ylabel=f"{kind} GFLOP/s (log scale)")
        ax.set_yscale("log")
        ax.legend(fontsize=7, loc="lower right")
    fig.suptitle(
        f"{kind.capitalize()} GFLOP/s vs N per block size, cuBLAS for reference (seed 002)"
    )
    fig.tight_layout()
    big = d[d.m == d.m.max()]
    parts = []
    for v in kernels:
        part = big[big.variant == v]
        g = part.groupby("params")[f"{kind}_gflops"].median()
        g = g.reindex(part.set_index("series").loc[ladder(part), "params"].unique())
        if len(g) > 1:
            parts.append(
                f"{v} at N={int(d.m.max())}: " + ", ".join(f"{p} {x:.0f}" for p, x in g.items())
            )
    spread = [big[big.variant == v].groupby("params")[f"{kind}_gflops"].median() for v in kernels]
    matters = all(len(g) > 1 and g.max() / g.min() > 1.1 for g in spread)
    verdict(
        fig,
        "; ".join(parts)
        + (
            " GFLOP/s: the parameters (block size) matter, as seed 002 found."
            if matters
            else " GFLOP/s: the parameters (block size) matter little here, unlike seed 002."
        ),
        condition,
    )
    return save(fig, stem)


def remainder(timings, stem, condition=""):
    """E3d (seed 002): N = 1000..1100 step 1; peaks at multiples of 16 and 32.  cuBLAS gets its
    own panel above, so the kernels' axis can be zoomed enough to show the peaks."""
    d = square(measured(timings))
    d = d[(d.m >= 1000) & (d.m <= 1100)]
    if d.m.nunique() < 20:
        no_data("Remainder effect", "sizes 1000..1100 step 1 (preset e3d)")
    if stem is None:  # the data check only
        return None
    d = d[d.memory == ("pinned" if "pinned" in set(d.memory) else d.memory.iloc[0])]
    ref, kern = d[d.variant == "cublas"], d[d.variant != "cublas"]
    _setup()
    fig, axes = plt.subplots(
        2 if len(ref) else 1,
        1,
        figsize=(10, 6.5 if len(ref) else 4.5),
        sharex=True,
        squeeze=False,
        gridspec_kw={"height_ratios": [1, 2.5]} if len(ref) else None,
    )
    axes = axes[:, 0]
    for ax in axes:
        ax.grid(axis="x", visible=False)
        for n in range(1008, 1101, 16):
            ax.axvline(
                n,
                color="0.55" if n % 32 == 0 else "0.8",
                lw=1.2 if n % 32 == 0 else 0.8,
                ls="-" if n % 32 == 0 else "--",
                zorder=0,
            )
    if len(ref):
        _lines(axes[0], ref, "m", "kernel_gflops")
        axes[0].set(ylabel="GFLOP/s", title="cuBLAS (reference)")
        axes[0].legend(fontsize=7)
    _lines(axes[-1], kern, "m", "kernel_gflops")
    axes[-1].set(
        xlabel="N (lines at multiples of 16, dashed; of 32, solid)",
        ylabel="kernel GFLOP/s",
        title="Course kernels (the note says whether they peak at multiples of their block)",
    )
    axes[-1].legend(fontsize=7, ncol=2)
    fig.suptitle("Remainder effect, N = 1000..1100 step 1 (seed 002)")
    verdict(fig, peaks_at_multiples(kern), condition)
    return save(fig, stem)


# the variants global_vs_kernel draws, the first the run measured (seed 002 drew tiled_guarded)
# how a peer family's builds are drawn (report/ladder.py FAMILIES): its bars' hatch in the
# ladder figure, its points' marker and colour in any_shape (C3 is the geometric mean's line)
PEER_HATCH = {"CUTLASS": "//", "Triton": "xx"}
PEER_POINT = {"CUTLASS": ("x", "C2"), "Triton": ("+", "C4")}
GLOBAL_VS_KERNEL = ("tiled_guarded", "naive_guarded", "coarsened", "cublas")


def global_vs_kernel(timings, stem, condition=""):
    """E3e (seed 002): global (with transfers) vs kernel GFLOPS, pinned vs pageable."""
    d = square(measured(timings))
    d = d[d.memory.isin(["pinned", "pageable"])]
    named = [v for v in GLOBAL_VS_KERNEL if v in set(d.variant)]
    if d.empty or d.m.nunique() < 2 or not named:
        no_data(
            "Global vs kernel GFLOPS",
            f"square sizes in pinned and pageable memory of one of {', '.join(GLOBAL_VS_KERNEL)}",
        )
    if stem is None:  # the data check only
        return None
    pick = named[0]
    d = d[d.variant == pick]
    d = d[d.series == ladder(d)[-1]]  # the last rung of that variant (e.g. its largest block)
    _setup()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    colours = {"pinned": "C0", "pageable": "C3"}
    for mem, g in d.groupby("memory"):
        g = g.sort_values("m")
        ax.plot(g.m, g.kernel_gflops, "-", color=colours[mem], label=f"kernel ({mem})")
        ax.plot(
            g.m, g.global_gflops, "--", color=colours[mem], label=f"global, with transfers ({mem})"
        )
    ax.set(
        xlabel="N (square matrices N x N)",
        ylabel="GFLOP/s",
        title=f"{d.series.iloc[0]}: kernel and global GFLOP/s, pinned and pageable",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    verdict(fig, transfer_fades(d), condition)
    return save(fig, stem)


# a size axis spanning this factor or more is drawn on a log scale (main: 640-2048, E3c:
# 128-3200 alike)
LOG_SIZES = 3
SPLIT_PANELS = 4  # time_split's panels at most (at the report's width)


def time_split(timings, stem, condition=""):
    """E3b (seed 002's nvprof summary): H2D / kernel / D2H per variant and size."""
    d = square(measured(timings))
    if d.empty:
        no_data("Time split", "measured square configurations")
    if stem is None:  # the data check only
        return None
    d = d[d.memory == ("pinned" if "pinned" in set(d.memory) else d.memory.iloc[0])]
    d = d.drop_duplicates(["series", "m"])
    # every size, up to SPLIT_PANELS of them: then the smallest, the largest and those evenly
    # between (the note says which were left out)
    every = sorted(set(d.m))
    sizes = every
    if len(every) > SPLIT_PANELS:
        picks = np.linspace(0, len(every) - 1, SPLIT_PANELS).round().astype(int)
        sizes = [every[i] for i in sorted(set(picks))]
    d = d[d.m.isin(sizes)]
    order = ladder(d)
    _setup()
    # each bar is 100% of its configuration's global time, so the copies' share shows at every
    # size (the point of seed 002's split); the global time itself is written beside the bar
    fig, axes = plt.subplots(
        1,
        len(sizes),
        figsize=(3.4 * len(sizes) + 2.4, 0.34 * len(order) + 1.8),
        squeeze=False,
        sharey=True,
    )
    for ax, size in zip(axes[0], sizes, strict=True):
        g = d[d.m == size].set_index("series").reindex(order).reset_index()
        total = g.h2d_ms_median + g.kernel_ms_median + g.d2h_ms_median
        y = np.arange(len(g))[::-1]
        left = np.zeros(len(g))
        for col, name, colour in (
            ("h2d_ms_median", "HtoD", "C1"),
            ("kernel_ms_median", "kernel", "C0"),
            ("d2h_ms_median", "DtoH", "C2"),
        ):
            share = (100 * g[col] / total).fillna(0).to_numpy()
            ax.barh(y, share, left=left, color=colour, label=name)
            left += share
        for yi, t in zip(y, total, strict=True):
            text = f"{significant(t, 3)} ms" if t == t else "no verified run"
            ax.text(101 if t == t else 2, yi, text, va="center", fontsize=7,
                    color="0.2" if t == t else "0.45")  # fmt: skip
        ax.set_yticks(y, g.series, fontsize=7)
        ax.set_xlim(0, 125)
        ax.set_xticks([0, 25, 50, 75, 100])
        ax.set(xlabel="% of the global time (global ms at the right)", title=f"N = {size}")
    fig.suptitle(f"Where the time goes: HtoD, kernel, DtoH ({d.memory.iloc[0]} memory)")
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="upper right", ncol=3, fontsize=8, frameon=False)
    note = f"{transfer_share(d[d.m == sizes[-1]])} {copies_follow_speed(d)}"
    left = [m for m in every if m not in sizes]
    if left:
        note += f" Sizes not drawn (one panel each would not fit): N = {', '.join(map(str, left))}."
    verdict(fig, note, condition)
    return save(fig, stem)


def fraction_of_cublas(timings, stem, condition=""):
    """New: every variant's kernel rate as a fraction of cuBLAS at the same size and type."""
    from mmbench.report import ladder as lad

    # each kernel against the cuBLAS row of its element type, math, layout and host-memory mode
    # (TF32 rungs against cublas_tf32; pinned rows against pinned cuBLAS)
    d = lad.with_reference(timings).dropna(subset=["reference_gflops"])
    if d.empty:
        no_data("Fraction of cuBLAS", "cuBLAS and at least one kernel variant")
    if stem is None:  # the data check only
        return None
    # one host-memory mode (kernel time does not depend on it, but two would draw each point
    # twice): pinned where the run has it, named in the title
    mem = "pinned" if "pinned" in set(d.memory) else d.memory.iloc[0]
    d = d[d.memory == mem]
    d["series"] = d["label"]
    d = square(d).groupby(["series", "variant", "m", "reference"], as_index=False)["fraction"]
    d = d.median()
    d = d.merge(
        measured(timings)[["series", *parameter_columns(timings)]].drop_duplicates("series")
    )
    _setup()
    # one panel per variant (its parameter values as lines), so that no two series share a
    # colour and a band; cuBLAS = 1 in every panel
    kernels = [v for v in variant_order() if v in set(d.variant)]
    kernels += [v for v in dict.fromkeys(d.variant) if v not in kernels]
    fig, axes = grid(len(kernels), sharex=True, sharey=True)
    for ax, v in zip(axes, kernels, strict=True):
        _lines(ax, d[d.variant == v], "m", "fraction")
        refs = " / ".join(dict.fromkeys(d[d.variant == v].reference))
        ax.axhline(1.0, color=palette()["cublas"], lw=2.0, label=f"{refs} ({mem}) = 1")
        ax.set(title=v, xlabel="N (square matrices N x N)", ylabel="fraction of cuBLAS",
               yscale="log")  # fmt: skip
        if d.m.max() / d.m.min() >= LOG_SIZES:
            log_sizes(ax, d.m.min(), d.m.max(), d.m)
        ax.legend(fontsize=7, loc="best")
    fig.suptitle(
        f"Kernel GFLOP/s as a fraction of cuBLAS's at the same size and type, {mem} memory "
        "(log scale)"
    )
    fig.tight_layout()
    note = " ".join(
        t for t in (closest_to_cublas(d, mem), course_far_from_cublas(d, mem),
                    near_sizes(d, "fraction", f"of cuBLAS ({mem})")) if t
    )  # fmt: skip
    verdict(fig, note, condition)
    return save(fig, stem)


def ladder_rungs(timings, stem, condition=""):
    """New: the ladder to cuBLAS, each rung's best instantiation per ladder size (square, 1024
    and up, multiples of 128) in TFLOP/s with its percentage of the cuBLAS reference of its
    precision class (FP32, TF32, FP64 panels; the reference as the dashed line to beat)."""
    from mmbench.report import ladder as lad
    from mmbench.report import standing

    k = lad.ladder_sizes(lad.best_per_rung(timings)).dropna(subset=["reference_gflops"])
    if k.empty:
        no_data("The ladder to cuBLAS", "kernels and their cuBLAS reference at N >= 1024")
    if stem is None:  # the data check only
        return None
    head = lad.conditions(k)[0]
    k = lad.under(k, head)
    classes = [c for c in lad.CLASS_ORDER if c in set(k.precision)]
    sizes = sorted(k.m.unique())
    # a bar and a reference line per size: beyond lad.FIGURE_SIZES sizes (E3c's 18 sizes from
    # 1024 drew a legend taller than the figure) the largest ones, and the note says so; the
    # ladder_by_size figure draws every size
    left_out = sizes[: -lad.FIGURE_SIZES] if len(sizes) > lad.FIGURE_SIZES else []
    sizes = sizes[-lad.FIGURE_SIZES :]
    k = k[k.m.isin(sizes)]
    _setup()
    # the class with the most rungs across the top, the others side by side below in rows of
    # at most as many rungs as the top one shows: a figure about as wide as the report shows
    # it, each panel as wide as its rungs need (at least 2.5 rungs' width), so that its labels
    # and legend stay readable there (five classes in one row below were too narrow for them)
    widest = max(classes, key=lambda c: k[k.precision == c].variant.nunique())
    rest = [c for c in classes if c != widest]
    span = max(7, k[k.precision == widest].variant.nunique())
    width = {c: max(2.5, k[k.precision == c].variant.nunique()) for c in rest}
    rows: list[list[str]] = []
    for c in rest:
        if rows and sum(width[x] for x in rows[-1]) + width[c] <= span:
            rows[-1].append(c)
        else:
            rows.append([c])
    fig = plt.figure(figsize=(9.5, 4.2 + 3.9 * len(rows)))
    outer = fig.add_gridspec(1 + len(rows), 1)
    axes = {widest: fig.add_subplot(outer[0, 0])}
    for i, row in enumerate(rows):
        ratios = [width[c] for c in row]
        spare = span - sum(ratios)  # an empty column keeps the panels to the rows' scale
        inner = outer[i + 1, 0].subgridspec(1, len(row) + (spare > 0), wspace=0.35,
                                            width_ratios=ratios + ([spare] if spare else []))  # fmt: skip
        for j, c in enumerate(row):
            axes[c] = fig.add_subplot(inner[0, j])
    # one clearly different colour per size (colour-blind safe), the same in every panel
    cb = sns.color_palette("colorblind")
    order = (1, 0, 2, 4, 3, 5, 6, 7, 8, 9)  # a sweep may hold more sizes than five
    hues = [cb[order[i % len(order)] % len(cb)] for i in range(max(2, len(sizes)))]
    bar = 0.8 / len(sizes)
    notes, best_rows, inside = [], [], []
    for cls in classes:
        ax = axes[cls]
        part = k[k.precision == cls]
        rungs = list(dict.fromkeys(part.variant))
        reference = part.reference.iloc[0]
        # the class's reference (a rung with one of its own, persistent_tf32_tn's cuBLAS TF32
        # TN, is named in the title): the lines, and what the class's target is measured against
        # (any rung's reference where the class's was not measured at a size)
        class_refs = standing.class_reference_rows(part, sizes)
        refs = {n: g / 1e3 for n, (_, g) in class_refs.items()}
        # the references of the sizes as one line where they agree within 2%
        if max(refs.values()) <= 1.02 * min(refs.values()):
            label = f"{reference}, N = {' and '.join(map(str, sizes))}"
            if len(sizes) > 2:  # three sizes ran past a panel's edge (the sweep preset's FP32)
                label = f"{reference}, all {len(sizes)} sizes"
            ax.axhline(np.mean(list(refs.values())), color="0.25", ls="--", lw=1.6, label=label)
        else:
            for j, n in enumerate(sizes):
                ax.axhline(refs[n], color=hues[j], ls=("--", ":")[j % 2], lw=1.8,
                           label=f"{reference}, N = {n}")  # fmt: skip
        for j, n in enumerate(sizes):
            at = part[part.m == n].set_index("variant").reindex(rungs)
            x = np.arange(len(rungs)) + (j - (len(sizes) - 1) / 2) * bar
            bars = ax.bar(x, at.kernel_gflops / 1e3, width=bar, color=hues[j], label=f"N = {n}")
            # a peer's build (CUTLASS, Triton) is a reference line beside cuBLAS, not a rung:
            # hatched, each family its own way
            for patch, fam in zip(bars, at.family, strict=True):
                if fam == fam and fam != lad.RUNGS:
                    patch.set(hatch=PEER_HATCH.get(fam, "//"), edgecolor="white", linewidth=0)
            span = max(part.kernel_gflops.max(), part.reference_gflops.max()) / 1e3
            for xi, g, f in zip(x, at.kernel_gflops, at.fraction, strict=True):
                if g != g:
                    continue
                # a bar that ends near a reference line is labelled inside it, once the
                # panels have their final size (below)
                if any(abs(g / 1e3 - r) < 0.08 * span for r in refs.values()):
                    inside.append(InsideLabel(ax, xi, g / 1e3, f"{f:.1%}", list(refs.values()),
                                              span, bar / (len(rungs) + 0.2), hues[j]))  # fmt: skip
                else:
                    ax.text(xi, g / 1e3, f"{f:.0%}", ha="center", va="bottom", fontsize=8.5,
                            bbox=dict(facecolor="white", edgecolor="none", pad=0.4, alpha=0.85))  # fmt: skip
        ax.set_xticks(np.arange(len(rungs)))
        tilt = len(rungs) > 3 or (cls != widest and len(rungs) > 2)  # labels side by side
        ax.set_xticklabels(rungs, rotation=25 if tilt else 0, ha="right" if tilt else "center")
        ax.set_xlim(-0.6, len(rungs) - 0.4)
        top = max(part.kernel_gflops.max(), part.reference_gflops.max()) / 1e3
        # a rung with a reference of its own (its layout of B: persistent_tf32_tn) is named
        # with it, the rungs of one such reference together; the lines drawn are the class's
        # first reference
        first = part.groupby("variant", sort=False).reference.first()
        own = [f"{' and '.join(vs.index)} vs {r}"
               for r, vs in first[first != reference].groupby(first, sort=False)]  # fmt: skip
        ax.set(title=f"{cls} (vs {reference}{'; ' + ', '.join(own) if own else ''})",
               ylabel="kernel TFLOP/s")  # fmt: skip
        handles, _ = ax.get_legend_handles_labels()
        peers = lad.peer_families(part)
        for f in peers:  # what a hatched bar is, in the panel's legend
            handles.append(mpatches.Patch(facecolor="0.75", edgecolor="white",
                                          hatch=PEER_HATCH.get(f, "//"),
                                          label=f"{f}: a line beside cuBLAS"))  # fmt: skip
        ncol = 2 if len(rungs) >= 4 else 1
        ax.legend(handles=handles, fontsize=9, loc="upper left", ncol=ncol)
        legend_rows = -(-len(handles) // ncol)  # its lines, sizes and peer families
        ax.set_ylim(0, (1.2 + 0.12 * legend_rows) * top)  # the legend above the lines
        best = standing.best_of(part)
        best_rows.append(standing.of_class(best, class_refs))
        notes.append(
            f"{cls}: best rung "
            + ", ".join(
                f"{r.variant} {r.fraction:.0%} of {r.reference} at N = {r.m}"
                for r in best.itertuples()
            )
            + "".join(
                f"; {f}'s best build "
                + ", ".join(
                    f"{r.fraction:.0%} at N = {r.m}"
                    for r in standing.fastest_per_size(part[part.family == f]).itertuples()
                )  # fmt: skip
                for f in peers
            )
        )
    fig.suptitle(
        "The ladder to cuBLAS: each rung's best instantiation (% of its reference), "
        f"{lad.condition_words(head)}"
    )
    fig.tight_layout()
    # the labels of a panel all across their bars, or all along them where one does not fit
    for ax in dict.fromkeys(label.ax for label in inside):
        mine = [label for label in inside if label.ax is ax]
        along = not all(label.fits_across(fig) for label in mine)
        for label in mine:
            label.draw(fig, along)
    documented, recorded_on = standing.recorded_ladder()
    targets = ladder_targets(pd.concat(best_rows), lad.TARGETS, documented,
                             lad.condition_words(head), lad.condition_words(lad.HEADLINE),
                             recorded_on)  # fmt: skip
    shown = ""
    if left_out:
        shown = (
            f" The {len(sizes)} largest of the run's {len(sizes) + len(left_out)} sizes are "
            f"drawn (N = {', '.join(map(str, left_out))} left out; the ladder_by_size figure "
            "draws every size)."
        )
    verdict(fig, f"{'; '.join(notes)}. {targets}{shown}".strip(), condition)
    return save(fig, stem)


INSIDE_FONT = 7.5  # points: a label written inside a bar
INSIDE_PAD = 0.15  # its box's margin, in font sizes
INSIDE_MARGINS = 2 * INSIDE_PAD * INSIDE_FONT  # points: the box's two margins together


def text_points(text: str, size: float) -> tuple[float, float]:
    """The width and height in points of `text` in bold at `size` points, as matplotlib lays
    it out (its text path)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import TextPath

    box = TextPath((0, 0), text, size=size, prop=FontProperties(weight="bold")).get_extents()
    return box.width, box.height


class InsideLabel(NamedTuple):
    """A label written inside a bar of height `bar` (its share of the class's reference,
    `text`) whose width is `share` of its panel's, below every line of `lines` that would cross
    it, to a tenth of a point (where a target is judged: 96.7% is not 97%); `span` is the
    panel's tallest bar or line, `colour` the bar's.  Drawn once the panels have their size."""

    ax: object
    x: float
    bar: float
    text: str
    lines: list[float]
    span: float
    share: float
    colour: object

    def fits_across(self, fig) -> bool:
        """Whether the text fits across the bar, with two points clear of each edge."""
        bar_pt = self.share * self.ax.get_position().width * fig.get_figwidth() * 72
        return text_points(self.text, INSIDE_FONT)[0] + INSIDE_MARGINS + 4 <= bar_pt

    def draw(self, fig, along: bool) -> None:
        """The label across the bar, or `along` it, on the bar's own colour, so that a hatched
        bar's stripes do not cross it."""
        panel_pt = self.ax.get_position().height * fig.get_figheight() * 72
        wide, tall = text_points(self.text, INSIDE_FONT)
        low, high = self.ax.get_ylim()
        height = ((wide if along else tall) + INSIDE_MARGINS) / panel_pt * (high - low)
        top = label_below(self.bar, self.lines, self.span, height)
        self.ax.text(self.x, top, self.text, ha="center", va="top", fontsize=INSIDE_FONT,
                     rotation=90 if along else 0, color="white", fontweight="bold", zorder=4,
                     bbox=dict(facecolor=self.colour, edgecolor="none", pad=INSIDE_PAD))  # fmt: skip


def label_below(bar: float, lines: list[float], span: float, height: float) -> float:
    """The top of a label `height` tall written inside a bar of height `bar` (va="top"), as
    high as it can be with none of the horizontal `lines` through it, with 2% of `span` (the
    panel's tallest bar or line) kept clear above and below."""
    gap = 0.02 * span
    top = bar - gap
    for line in sorted(lines, reverse=True):
        if top - height - gap <= line <= top + gap:
            top = line - gap
    return top


def ladder_by_size(timings, stem, condition=""):
    """New: the ladder at every size (config/presets/sweep.yaml).  One panel per precision
    class: each rung's fastest instantiation as a percentage of its cuBLAS reference against the
    square size N (one line per rung; filled markers where the size was measured under
    sustained load, open where in bursts), the target of each size range dashed."""
    from mmbench.report import ladder as lad
    from mmbench.report import standing

    k = lad.sweep_rows(timings)
    k = k[(k.m == k.n) & (k.n == k.k)] if not k.empty else k
    if k.empty or k.m.nunique() < 2:
        no_data(
            "The ladder at every size",
            "kernels and their cuBLAS reference at two square sizes or more",
        )
    if stem is None:  # the data check only
        return None
    table = lad.sweep(timings)
    table = table[(table.m == table.n) & (table.n == table.k)]
    classes = [c for c in lad.CLASS_ORDER if c in set(k.precision)]
    _setup()
    cols = 2 if len(classes) > 1 else 1
    rows = (len(classes) + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(9.5, 3.6 * rows + 0.6), squeeze=False, sharex=True
    )
    colours = palette(k.variant.unique())
    lo, hi = int(k.m.min()), int(k.m.max())
    for ax, cls in zip(axes.flat, classes, strict=False):
        part = k[k.precision == cls]
        for variant in dict.fromkeys(part.sort_values("m").variant):
            mine = part[part.variant == variant].sort_values("m")
            pct = 100 * mine.fraction
            ax.plot(mine.m, pct, color=colours[variant], lw=1.8, label=variant)
            steady = (mine.load == lad.SUSTAINED.name).to_numpy()
            ax.scatter(mine.m[steady], pct[steady], color=colours[variant], s=30, zorder=3)
            ax.scatter(mine.m[~steady], pct[~steady], facecolors="white", s=30, zorder=3,
                       edgecolors=[colours[variant]], linewidths=1.4)  # fmt: skip
        # each size range's target, dashed over the sizes it holds
        for (lo_n, hi_n), (_, goal) in (
            ((lo, min(hi, 2047)), lad.sweep_target(lo, lo, lo)),
            ((max(lo, 2048), hi), lad.sweep_target(2048, 2048, 2048)),
        ):
            if lo_n <= hi_n:
                ax.hlines(
                    100 * goal, lo_n * 0.97, hi_n * 1.03, colors="0.3", linestyles="--", lw=1.2
                )
                ax.text(
                    hi_n * 1.03, 100 * goal, f" {goal:.0%}", va="center", fontsize=8.5, color="0.3"
                )
        ax.axhline(100, color="0.6", lw=0.8)
        # a size where cuBLAS falls far behind (an odd size) would flatten the rest: the axis
        # stops at 150% and such a point is marked at the top with its value
        top = _clipped_top(100 * part.fraction)
        ax.set_ylim(0, top)
        rungs = list(dict.fromkeys(part.sort_values("m").variant))
        for r in part[100 * part.fraction > top].itertuples():
            # one label per rung, stacked below the top edge: two rungs at one size stay apart
            ax.annotate(f"{r.fraction:.0%}", (r.m, top), xytext=(14, -12 - 13 * rungs.index(r.variant)),
                        textcoords="offset points", ha="left", va="center", fontsize=8,
                        color=colours[r.variant],
                        bbox=dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.9))  # fmt: skip
        ax.set(title=f"{cls} (vs {part.reference.iloc[0]})", ylabel="% of cuBLAS")
        log_sizes(ax, lo * 0.9, hi * 1.12, sorted(k.m.unique()))
        ax.legend(fontsize=8.5, loc="lower right")
    for ax in list(axes.flat)[len(classes) :]:
        ax.set_visible(False)
    for ax in axes[-1]:
        ax.set_xlabel("N (square, N x N x N)")
    fig.suptitle(
        "The ladder at every size: each rung's best instantiation as % of its cuBLAS "
        "(filled: sustained load, open: bursts)"
    )
    fig.tight_layout()
    off = table[table["% of ref"] > 150]
    text = sweep_targets(table, *standing.recorded_sweep()) + "."
    if len(off):
        text += " Off the scale (above 150%): " + ", ".join(
            f"{p} at {sh} ({pct:.0f}%, cuBLAS {ref / 1e3:.0f} TFLOP/s, rows {read.split(',')[0]})"
            for p, sh, pct, ref, read in zip(off.precision, off["shape"], off["% of ref"],
                                             off["reference GFLOP/s"], off["reference rows"], strict=True)
        ) + "."  # fmt: skip
    verdict(fig, text, condition)
    return save(fig, stem)


def _clipped_top(pct) -> float:
    """A share-of-cuBLAS axis's top: 110% at least, 150% at most (a point where cuBLAS falls far
    behind, an odd size, would flatten the rest; it is marked at the top with its value)."""
    return min(150.0, max(110.0, float(pct.max()) * 1.08))


def _share_axis(ax, pct) -> None:
    """A share-of-cuBLAS axis on a base-2 log scale holding every point: 50% to 150% at least,
    from a tick below the least point, ticks at 100% times the powers of two, labelled as
    percentages."""
    lo = min(50.0, 100 * 2.0 ** np.floor(np.log2(float(pct.min()) / 115)))  # a tick below all
    hi = max(150.0, float(pct.max()) * 1.15)
    ax.set_yscale("log", base=2)
    ax.set_ylim(lo, hi)
    ticks = [100 * 2.0**e for e in range(-8, 8) if lo <= 100 * 2.0**e <= hi]
    ax.yaxis.set_major_locator(mticker.FixedLocator(ticks))
    ax.yaxis.set_major_formatter(mticker.FuncFormatter(lambda v, _: f"{v:g}%"))
    ax.yaxis.set_minor_locator(mticker.NullLocator())


def any_shape(timings, stem, condition=""):
    """New: the ladder at any shape (config/presets/shapes.yaml).  One panel per precision
    class: each product's best rung as a percentage of the cuBLAS of its class against the
    product's work (2mnk, log scale), a filled marker where the tuning saw that very shape and
    an open one where it did not; the any-shape targets (geometric mean, minimum) dashed.  The
    share's axis is logarithmic (base 2): a geometric mean is the mean there, and a product
    where cuBLAS falls far behind (an unaligned side) keeps its place on the axis rather than
    flattening the rest."""
    from mmbench.report import ladder as lad

    rows = lad.sweep_with_shares(timings)
    if rows.empty or len(rows) < 2:
        no_data(
            "The ladder at any shape", "kernels and their cuBLAS reference at two products or more"
        )
    if stem is None:
        return None
    summary = lad.shapes_summary(timings, rows).set_index("precision")
    classes = [c for c in lad.CLASS_ORDER if c in set(rows.precision)]
    peers = [f for f in lad.FAMILIES if f"_{f}" in rows]
    _setup()
    fig, axes = grid(len(classes), ncols=2, size=(4.75, 3.8), sharex=True)
    work = 2.0 * rows.m * rows.n * rows.k
    lo, hi = float(work.min()), float(work.max())
    for i, (ax, cls) in enumerate(zip(axes, classes, strict=True)):
        mine = rows[rows.precision == cls]
        x, pct = 2.0 * mine.m * mine.n * mine.k, 100 * mine["_fraction"]
        saw = (mine["tuning saw it"] == "yes").to_numpy()
        ax.scatter(x[saw], pct[saw], color="C0", s=28, zorder=3, label="the tuning saw it")
        ax.scatter(x[~saw], pct[~saw], facecolors="white", edgecolors="C0", linewidths=1.3,
                   s=28, zorder=3, label="not tuned at this shape")  # fmt: skip
        for f in peers:  # a peer's best build: a line beside cuBLAS, not a rung
            share = 100 * mine[f"_{f}"].astype(float)
            marker, color = PEER_POINT.get(f, ("x", "C2"))
            ax.scatter(x, share, marker=marker, color=color, s=22, lw=1.2, zorder=2,
                       label=f"{f}'s best build")  # fmt: skip
            pct = pd.concat([pct, share.dropna()])
        s = summary.loc[cls]
        for words, goal in lad.SHAPES_TARGETS.items():
            ax.axhline(100 * goal, color="0.3", ls="--", lw=1.1)
            ax.text(hi * 1.6, 100 * goal, f" {goal:.0%} {words}", va="center", fontsize=8,
                    color="0.3")  # fmt: skip
        mean = s["geometric mean % of ref"]
        ax.axhline(mean, color="C3", lw=1.4)
        ax.text(lo / 1.4, mean * 1.03, f"geometric mean {mean:.1f}%", color="C3", fontsize=8,
                va="bottom", bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=1))  # fmt: skip
        ax.axhline(100, color="0.6", lw=0.8)
        ax.set_xscale("log")
        ax.set_xlim(lo / 1.6, hi * 1.6)
        _share_axis(ax, pct)
        refs = " / ".join(sorted(set(mine["_reference"])))  # TF32: two layouts of B
        ax.set(title=f"{cls} (vs {refs}): {len(mine)} products",
               ylabel="% of cuBLAS")  # fmt: skip
        if i + 2 >= len(classes):  # no panel below it
            ax.set_xlabel("work of the product, 2mnk (FLOP)")
    fig.suptitle("The ladder at any shape: each product's best rung as % of its cuBLAS")
    # one legend for every panel, under the title: a panel's own would hide its points
    handles, labels = axes[0].get_legend_handles_labels()
    for ax in axes[1:]:  # a class the first panel's lacks (a peer that ran FP8 alone)
        for h, lb in zip(*ax.get_legend_handles_labels(), strict=True):
            if lb not in labels:
                handles, labels = [*handles, h], [*labels, lb]
    fig.legend(handles, labels, loc="upper center", ncol=min(4, len(labels)), fontsize=9, frameon=False,
               bbox_to_anchor=(0.5, 0.965))  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    text = "; ".join(
        f"{cls}: geometric mean {r['geometric mean % of ref']:.1f}% (target "
        f"{r['target %']}%), least {r['minimum % of ref']:.1f}% at {r['at']} ({r['by']}; "
        f"target {r['target minimum %']}%), {'met' if r['met'] == 'yes' else 'missed'}"
        + "".join(
            f"; {f}'s best build {r[f'{f} geometric mean %']:.1f}% over its "
            f"{int(r[f'{f} products'])} products, least {r[f'{f} minimum %']:.1f}% at "
            f"{r[f'{f} least at']}"
            for f in peers
            if f"{f} products" in r and r[f"{f} products"] == r[f"{f} products"]
        )
        for cls, r in summary.iterrows()
    )
    met = int((summary["met"] == "yes").sum())
    text += (f". {met} of {len(summary)} classes meet docs/ladder.md's any-shape targets: this "
             f"run {'agrees' if met == len(summary) else 'disagrees'} with them.")  # fmt: skip
    verdict(fig, text, condition)
    return save(fig, stem)


def ladder_load(timings, stem, condition=""):
    """New: what the data and the power limit do to each rung.  Per precision class, each rung's
    best instantiation and its cuBLAS reference at the largest ladder size, in TFLOP/s under
    (integers, burst) and (normal inputs, sustained), each bar labelled with the SM clock it ran
    at (and the board power, sustained)."""
    from mmbench.report import ladder as lad

    every = lad.with_math(timings)
    every = every[(every.verification == "PASS") & (every.get("operation", "gemm") == "gemm")]
    every = lad.ladder_sizes(every)
    pair = [lad.BESIDE, lad.HEADLINE]
    have = {c for c in pair if not lad.under(every, c).empty}
    if have != set(pair):
        no_data(
            "Integers in bursts against normal inputs sustained",
            "the ladder's rungs and references measured under both (distribution=[int09, "
            "normal], load=[burst, sustained], as config/presets/ladder.yaml does)",
        )
    if stem is None:
        return None
    n = int(every.m.max())
    at = every[every.m == n]
    # each rung's instantiation: the fastest under the headline condition, the same beside it
    pick = lad.under(at, lad.HEADLINE).sort_values("kernel_gflops").groupby(
        ["variant", "dtype"]).tail(1)[["variant", "dtype", "instance"]]  # fmt: skip
    at = at.merge(pick, on=["variant", "dtype", "instance"])
    classes = [c for c in lad.CLASS_ORDER if c in set(at.precision)]
    counts = {c: at[at.precision == c].variant.nunique() for c in classes}
    _setup()
    fig, axes = plt.subplots(
        len(classes), 1, figsize=(9.5, 1.2 + 0.62 * sum(counts.values()) + 0.5 * len(classes)),
        gridspec_kw={"height_ratios": [counts[c] for c in classes]}, squeeze=False,
    )  # fmt: skip
    cb = sns.color_palette("colorblind")
    colours = {lad.BESIDE: cb[7], lad.HEADLINE: cb[0]}
    notes, changes = [], []
    for ax, cls in zip(axes[:, 0], classes, strict=True):
        part = at[at.precision == cls]
        rungs = list(dict.fromkeys(sorted(part.variant, key=lambda v: (
            part[part.variant == v].backend.iloc[0] == "cublas", lad.ladder_rank([v])[0]))))  # fmt: skip
        y = np.arange(len(rungs))
        top = part.kernel_gflops.max() / 1e3
        for j, cond in enumerate(pair):
            rows = lad.under(part, cond).set_index("variant").reindex(rungs)
            off = (j - 0.5) * 0.4
            ax.barh(y + off, rows.kernel_gflops / 1e3, height=0.38, color=colours[cond],
                    label=lad.condition_words(cond))  # fmt: skip
            for yi, r in zip(y + off, rows.itertuples(), strict=True):
                if r.kernel_gflops != r.kernel_gflops:
                    continue
                text = f"{r.kernel_gflops / 1e3:.1f}  {r.sm_clock_mhz:.0f} MHz"
                power = getattr(r, "power_w_median", float("nan"))
                if power == power:
                    text += f", {power:.0f} W"
                ax.text(r.kernel_gflops / 1e3 + top * 0.01, yi, text, va="center", fontsize=8.5)
        ax.set_yticks(y)
        ax.set_yticklabels(rungs)
        ax.invert_yaxis()
        ax.set_xlim(0, top * 1.45)
        ax.set(title=f"{cls}, N = {n}", xlabel="kernel TFLOP/s" if ax is axes[-1, 0] else "")
        h = lad.under(part, lad.HEADLINE).set_index("variant").kernel_gflops
        bz = lad.under(part, lad.BESIDE).set_index("variant").kernel_gflops
        change = (h / bz - 1).dropna()
        changes += [dict(precision=cls, variant=v, change=c) for v, c in change.items()]
        if len(change):
            worst = change.idxmin()
            notes.append(f"{cls}: {worst} {change[worst]:+.0%}, {change.idxmax()} "
                         f"{change.max():+.0%}")  # fmt: skip
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.suptitle(f"Integers in bursts against normal inputs sustained, N = {n}", y=0.995)
    fig.legend(handles, labels, loc="upper center", ncol=2, fontsize=10, frameon=False,
               bbox_to_anchor=(0.5, 0.975))  # fmt: skip
    fig.tight_layout(rect=(0, 0, 1, 0.955))
    verdict(
        fig,
        "Normal inputs under sustained load against integers in bursts, the largest drop and "
        "the smallest change per class: "
        + "; ".join(notes)
        + ". "
        + load_costs(pd.DataFrame(changes, columns=["precision", "variant", "change"])),
        condition,
    )
    return save(fig, stem)


# a tensor-core point's marker, by element type (a CUDA-core point is a circle)
TENSOR_MARKERS = {
    "bfloat16": "^",
    "float32": "v",
    "float64": "s",
    "float16": "D",
    "float8_e4m3": "P",
}


def roofline(roof: pd.DataFrame, ceilings: pd.DataFrame, stem, condition=""):
    """New: the roofline with the device's measured ceilings, every profiled kernel on it."""
    if roof is None or roof.empty or ceilings is None or ceilings.empty:
        no_data("Roofline", "profiled kernels (profile:) and measured ceilings")
    if stem is None:  # the data check only
        return None
    c = ceilings.iloc[0]
    _setup()
    has_l1 = "l1_arithmetic_intensity" in roof and roof["l1_arithmetic_intensity"].notna().any()
    # DRAM bytes against the DRAM roof; global-load (L1) bytes in their own panel, where each
    # kernel's line is the load bandwidth it reached: a point is only ever drawn with its roof
    beside = len(roof) > 6 and not has_l1  # many kernels: the legend beside the axes
    width = 12 if has_l1 else 10.5 if beside else 7
    # a legend beside the axes as tall as its entries (a kernel each, the two roofs, a marker
    # per kind of placement): the ladder's 23 profiles ran past the axes into the note below
    entries = len(roof) + 3 + (roof["dtype"].nunique() if "dtype" in roof else 0)
    height = max(5.0, 0.18 * entries + 1.3) if beside else 5.0
    fig, axes = plt.subplots(1, 2 if has_l1 else 1, figsize=(width, height), squeeze=False)
    if beside:  # the figure holds the legend, so the note below wraps to the whole width
        fig.subplots_adjust(left=0.08, right=0.64)
    ax = axes[0][0]
    ai = np.logspace(-2, 4, 200)
    for name, peak, ls in (("FP32", c.peak_fp32_gflops, "-"), ("FP64", c.peak_fp64_gflops, "--")):
        ax.plot(
            ai,
            np.minimum(peak, ai * c.dram_bandwidth_gbs),
            ls,
            color="0.3",
            label=f"{name} roof: {peak / 1e3:.1f} TFLOP/s, {c.dram_bandwidth_gbs:.0f} GB/s",
        )
    pal = palette(roof.variant.unique())
    many = len(roof) > 6
    # many kernels: short labels (variant and type; the parameters are the ladder table's),
    # the size in the title where there is one, and the marker says how a point is placed
    sizes = sorted({int(m) for m in roof.m})
    for _, r in roof.iterrows():
        tensor = _tensor_placed(r)
        if many:
            name = f"{r['variant']} {r['dtype']}" + (f" N={int(r['m'])}" if len(sizes) > 1 else "")
            label = name
        else:
            name = f"{r['label']} N={int(r['m'])} {r['dtype']}"
            label = f"{name} ({'tensor cores, 2mnk FLOPs' if tensor else 'DRAM bytes'})"
        colour = pal[r["variant"]]
        ax.scatter(
            r["arithmetic_intensity"],
            r["achieved_gflops"],
            color=colour,
            marker=TENSOR_MARKERS.get(str(r["dtype"]), "^") if tensor else "o",
            edgecolor="white" if not tensor else "0.15",
            linewidth=0.6,
            s=60,
            zorder=3,
            label=label,
        )
        if has_l1 and pd.notna(r.get("l1_arithmetic_intensity")) and not tensor:
            l1 = axes[0][1]
            x1 = r["l1_arithmetic_intensity"]
            bw = r["achieved_gflops"] / x1  # GB/s of global loads through L1
            l1.plot(ai, np.minimum(r["peak_gflops"], ai * bw), ":", color=colour, lw=1.2)
            l1.scatter(x1, r["achieved_gflops"], facecolors="none", edgecolors=colour, s=70,
                       lw=1.8, zorder=3, label=f"{name}: {bw / 1e3:.1f} TB/s of global loads")  # fmt: skip
    at = f", N = {sizes[0]}" if many and len(sizes) == 1 else ""
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="FLOP per DRAM byte",
        ylabel="GFLOP/s",
        title=f"Roofline, {c.gpu_name} (measured ceilings){at}",
    )
    if many:  # many kernels: the legend beside the axes, not over the roofs
        handles, labels = ax.get_legend_handles_labels()
        # how a point is placed, said once by its marker rather than in every entry
        kinds = [
            plt.Line2D([], [], ls="", marker="o", color="0.5", label="CUDA cores: DRAM bytes"),
            *[
                plt.Line2D(
                    [],
                    [],
                    ls="",
                    marker=m,
                    color="0.5",
                    markeredgecolor="0.15",
                    label=f"tensor cores ({dt}): 2mnk FLOPs",
                )  # fmt: skip
                for dt, m in TENSOR_MARKERS.items()
                if any(_tensor_placed(r) and str(r["dtype"]) == dt for _, r in roof.iterrows())
            ],
        ]
        ax.legend(handles + kinds, labels + [k.get_label() for k in kinds], fontsize=7.5,
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, ncol=1)  # fmt: skip
    elif max(len(x) for x in ax.get_legend_handles_labels()[1]) > 60:
        # a few kernels with long labels (a tuned rung's parameters): beside the axes, where
        # they cover neither a roof nor a point, each label on lines of at most 44 characters
        handles, labels = ax.get_legend_handles_labels()
        ax.legend(handles, [textwrap.fill(x, 44) for x in labels], fontsize=7,
                  loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)  # fmt: skip
    else:
        ax.legend(fontsize=7, loc="lower right")
    if has_l1:
        l1 = axes[0][1]
        l1.axhline(c.peak_fp32_gflops, color="0.3", lw=1.2, label="FP32 roof (FMA units)")
        l1.set(
            xscale="log",
            yscale="log",
            xlabel="FLOP per global-load byte (through L1; the course's CGMA ratio)",
            ylabel="GFLOP/s",
            title="Global loads: each kernel on the load bandwidth it reached",
            ylim=ax.get_ylim(),
        )
        l1.legend(fontsize=7, loc="lower right")
    if has_l1:
        fig.tight_layout()
    verdict(fig, f"{roofline_note(roof, has_l1)} {tiling_moves_right(roof, has_l1)}".strip(),
            condition)  # fmt: skip
    return save(fig, stem)

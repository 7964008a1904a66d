"""What each figure says about the report's conclusion, computed from the tidy tables: the
sentences printed under the figures (report/figures.py), written here without matplotlib so
that they can be tested and read on their own."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from mmbench.core.registry import load_registry
from mmbench.core.row import parameter_columns


def variant_order() -> list[str]:
    """The optimisation ladder: the registry's order, which also fixes each variant's colour."""
    return list(load_registry())


def ladder(d: pd.DataFrame) -> list[str]:
    """Series in the order of the optimisation ladder: registry order, then the parameter
    values, numerically."""
    rank = {v: i for i, v in enumerate(variant_order())}
    params = [c for c in parameter_columns(d) if c != "series"]
    keys = d.drop_duplicates("series")[["series", "variant", *params]]
    keys = keys.assign(_r=[rank.get(v, len(rank)) for v in keys.variant])
    return list(keys.sort_values(["_r", *params], na_position="first").series)


def _agree(share: float, whom: str) -> str:
    """'agrees with' where every case does, 'partly agrees with' where at least half do,
    'disagrees with' otherwise (the words of tiled_vs_naive)."""
    word = "agrees with" if share >= 1 else "partly agrees with" if share >= 0.5 else (
        "disagrees with")  # fmt: skip
    return f"{word} {whom}"


def tiled_vs_naive(d: pd.DataFrame) -> str:
    """Seed 000: the shared-memory kernel is faster than the naive one, at every n."""
    t = d[d.variant == "tiled_guarded"].groupby(["params", "m"]).kernel_ms.median()
    n = d[d.variant == "naive_guarded"].groupby(["params", "m"]).kernel_ms.median()
    both = pd.concat([t.rename("t"), n.rename("n")], axis=1).dropna()
    if both.empty:
        return "no tiled_guarded / naive_guarded pair to compare."
    wins = (both.t < both.n).mean()
    return (
        f"tiled is faster than naive in {100 * wins:.0f}% of (parameters, n) pairs, by "
        f"{(both.n / both.t).median():.2f}x (median): {_agree(wins, 'seed 000')}."
    )


def block_width(block: str) -> int:
    """x threads of a launch's block, "32x32x1" -> 32 (the period of the remainder effect)."""
    return int(str(block).split("x")[0])


def peaks_at_multiples(kern: pd.DataFrame) -> str:
    """Seed 002: peaks at N multiple of the block.  Per series: mean GFLOP/s where N is a
    multiple of its block width over the mean elsewhere, and whether the tiled kernels peak and
    which series dip instead, all from this run's numbers."""
    gains = {}
    for series in ladder(kern):
        g = kern[kern.series == series]
        width = block_width(g.block.iloc[0])
        at = g[g.m % width == 0].kernel_gflops.mean()
        off = g[g.m % width != 0].kernel_gflops.mean()
        if width > 1 and not (math.isnan(at) or math.isnan(off)):
            gains[series] = (width, 100 * (at / off - 1))
    if not gains:
        return "no series has sizes both on and off multiples of its block width."
    parts = [f"{s} {pct:+.1f}% (block width {w})" for s, (w, pct) in gains.items()]
    tiled = {s: pct for s, (_, pct) in gains.items() if s.startswith("tiled")}
    dips = [s for s, (_, pct) in gains.items() if pct < -1]
    text = "GFLOP/s at multiples of the block width vs elsewhere: " + ", ".join(parts) + ". "
    if tiled and all(pct > 0 for pct in tiled.values()):
        text += "The tiled kernels peak at multiples of their block, as seed 002 found"
    elif tiled:
        text += "The tiled kernels do not all peak at multiples of their block, unlike seed 002"
    else:
        text += "No tiled kernel in this run to compare with seed 002"
    if dips:
        text += "; " + ", ".join(dips) + (" dips" if len(dips) == 1 else " dip") + " there instead"
    return text + "."


def _copies_share(d: pd.DataFrame) -> pd.Series:
    """The share of each configuration's global time (HtoD + kernel + DtoH) the copies take."""
    copies = d.h2d_ms_median + d.d2h_ms_median
    return copies / (copies + d.kernel_ms_median)


def transfer_share(d: pd.DataFrame) -> str:
    """What share of the global time the copies take, fastest and slowest kernel, at one size."""
    d = d.assign(share=_copies_share(d))
    fast, slow = d.loc[d.kernel_ms_median.idxmin()], d.loc[d.kernel_ms_median.idxmax()]
    return (
        f"at N = {int(d.m.iloc[0])}, HtoD + DtoH take {fast.share:.0%} of the global time for the "
        f"fastest kernel ({fast.series}, {fast.kernel_ms_median:.3g} ms) and {slow.share:.0%} for "
        f"the slowest ({slow.series}, {slow.kernel_ms_median:.3g} ms)."
    )


def _of(r, memory: str) -> str:
    """The reference a fraction is of, as a note names it: the cuBLAS variant and the memory
    mode of its row ("cublas, pinned memory")."""
    return f"{r.reference}, {memory} memory" if memory else r.reference


def closest_to_cublas(d: pd.DataFrame, memory: str = "") -> str:
    """The best and the worst series at the largest size, each as a fraction of its reference
    row (column `reference`: the cuBLAS variant; `memory`: the host-memory mode of the rows)."""
    big = d[d.m == d.m.max()]
    best, worst = big.loc[big.fraction.idxmax()], big.loc[big.fraction.idxmin()]
    return (
        f"at N = {int(big.m.iloc[0])} the closest to cuBLAS is {best.series} at "
        f"{best.fraction:.0%} of {_of(best, memory)}; the furthest, {worst.series}, at "
        f"{worst.fraction:.1%} of {_of(worst, memory)}."
    )


def _tensor_placed(r) -> bool:
    """A kernel the roofline placed by its product's 2mnk FLOPs: its work ran on the tensor
    cores, which the FMA counters miss (roofline.table)."""
    return str(r.get("flop_source", "")).startswith("2mnk")


def bound_in_words(r, has_l1: bool) -> str:
    """What bounds a kernel, as a course report says it: below the ridge, DRAM bandwidth;
    above it and within a factor 2 of the FMA roof, the FMA units; above it and far from that
    roof, neither: something on the chip (no ceiling of it is measured here, so the global-load
    intensity and bandwidth are given as facts, not as a bound)."""
    frac = r["fraction_of_attainable"]
    dram = f"{r['arithmetic_intensity']:.0f} FLOP per DRAM byte"
    roof = "DRAM roof" if r["bound"] == "memory" else "FMA roof"
    side = "below the ridge" if r["bound"] == "memory" else "above the ridge"
    if frac >= 0.5:
        what = "DRAM-bound" if r["bound"] == "memory" else "compute-bound"
        return f"{dram}, {side}: {what}, at {frac:.0%} of the {roof}"
    text = (
        f"{dram}, {side} yet at {frac:.0%} of the {roof}: bound neither by DRAM nor by the FMA "
        "units, but on chip (loads, latency)"
    )
    l1 = r.get("l1_arithmetic_intensity")
    if has_l1 and pd.notna(l1):
        bw = r["achieved_gflops"] / l1 / 1e3
        text += f"; {l1:.2f} FLOP per global-load byte, {bw:.1f} TB/s of loads through L1 (right)"
    return text


def roofline_note(roof: pd.DataFrame, has_l1: bool) -> str:
    """Where each profiled kernel sits, from the roofline table: its bound and the fraction of
    the attainable rate it reaches; with L1 intensities, how far tiling moves it.  Tensor-core
    kernels are measured against no ceiling (only the CUDA cores' are measured): they are named
    together, fastest first, with their rates and whether they pass the CUDA-core roof."""
    parts, tensor = [], []
    many = len(roof) > 6
    groups: dict[str, list] = {}
    for _, r in roof.iterrows():
        name = f"{r['variant']} {r['dtype']}" if many else f"{r['label']} N={int(r['m'])}"
        if _tensor_placed(r):
            tensor.append((r["achieved_gflops"], name, r["achieved_gflops"] > r["peak_gflops"]))
            continue
        if many:  # one clause per kind of bound, the kernels in it by the share they reach
            frac, memory = r["fraction_of_attainable"], r["bound"] == "memory"
            kind = (
                ("DRAM-bound (at least half the DRAM roof)" if memory else
                 "compute-bound (at least half the FMA roof)") if frac >= 0.5 else
                ("below the ridge yet under half the DRAM roof" if memory else
                 "above the ridge yet under half the FMA roof (on chip: loads, latency)")
            )  # fmt: skip
            groups.setdefault(kind, []).append((frac, r["variant"], r["dtype"]))
            continue
        parts.append(f"{name}: {bound_in_words(r, has_l1)}")
    for kind, members in groups.items():
        members.sort(reverse=True)
        parts.append(f"{kind}: " + ", ".join(f"{v} {dt} {f:.0%}" for f, v, dt in members))
    if groups:
        parts[0] = "on the CUDA cores, placed by DRAM bytes: " + parts[0]
    if tensor:
        tensor.sort(reverse=True)
        above = sum(a for _, _, a in tensor)
        parts.append(
            "on the tensor cores (placed by 2mnk FLOPs; no tensor-core ceiling is measured), "
            + ", ".join(f"{name} {g / 1e3:.1f}" for g, name, _ in tensor)
            + " TFLOP/s"
            + (
                f": {'all' if above == len(tensor) else above} of {len(tensor)} above the "
                "CUDA-core roof"
                if above
                else ""
            )
        )
    return "; ".join(parts) + "."


def near_sizes(d: pd.DataFrame, value: str, unit: str) -> str:
    """Sizes drawn at one place on the size axis (within 1% of each other, such as 640 and 641):
    the vertical steps between them said with the largest one, '' where there are none."""
    sizes = sorted(set(d.m))
    pairs = [(a, b) for a, b in zip(sizes, sizes[1:], strict=False) if b - a <= max(1, 0.01 * a)]
    out = []
    for a, b in pairs:
        both = d[d.m.isin([a, b])].pivot_table(index="series", columns="m", values=value)
        both = both.dropna()
        if both.empty:
            continue
        step = (both[b] / both[a]).map(lambda r: abs(math.log(r)) if r > 0 else 0.0)
        s = step.idxmax()
        gap = "one" if b - a == 1 else str(b - a)
        more = "one more row and column" if b - a == 1 else f"{b - a} more rows and columns"
        out.append(
            f"N = {a} and {b} are {gap} apart, drawn at one place: a vertical step there is what "
            f"{more} change (the largest: {s}, {both.loc[s, a]:.3g} {unit} at {a} and "
            f"{both.loc[s, b]:.3g} {unit} at {b})."
        )
    return " ".join(out)


def copies_follow_speed(d: pd.DataFrame) -> str:
    """Seed 002's nvprof summary at N = 640: the copies took 11-15% of kernel00's time and
    26-34% of the faster kernel10's (two runs each): the faster the kernel, the larger the copies' share.  Here: at each
    size, whether the fastest kernel's copies take a larger share than the slowest's."""
    d = d.assign(share=_copies_share(d)).dropna(subset=["share", "kernel_ms_median"])
    sizes = []
    for m, g in d.groupby("m"):
        if g.series.nunique() > 1:
            fast, slow = g.loc[g.kernel_ms_median.idxmin()], g.loc[g.kernel_ms_median.idxmax()]
            sizes.append((int(m), fast.share > slow.share))
    if not sizes:
        return "One kernel per size: no faster kernel to compare with seed 002."
    yes = [m for m, ok in sizes if ok]
    where = "every size" if len(yes) == len(sizes) else (
        f"{len(yes)} of {len(sizes)} sizes" + (f" (N = {', '.join(map(str, yes))})" if yes else ""))  # fmt: skip
    return (
        f"The fastest kernel's copies take a larger share than the slowest's at {where}: "
        f"{_agree(len(yes) / len(sizes), 'seed 002')} (at N = 640 the copies took 11-15% of "
        "kernel00's time and 26-34% of the faster kernel10's)."
    )


def course_kernels() -> list[str]:
    """The variants the course reports describe (registry `seeds` naming a report: '002 ...'),
    not the ladder's rungs past them, the references or the test kernels."""
    return [n for n, v in load_registry().items() if v.seeds[:3].isdigit()]


# the report's conclusion on the course kernels against the library: far from it at large sizes
FAR_FROM_CUBLAS = 0.5


def course_far_from_cublas(d: pd.DataFrame, memory: str = "") -> str:
    """At the largest size, the course kernels' best fraction of cuBLAS (of its reference row,
    named) against the report's conclusion that they stay under half of it ('' where the run
    has no course kernel)."""
    course = d[d.variant.isin(course_kernels())]
    if course.empty:
        return ""
    big = course[course.m == course.m.max()]
    best = big.loc[big.fraction.idxmax()]
    far = best.fraction < FAR_FROM_CUBLAS
    return (
        f"The course's kernels reach at most {best.fraction:.0%} of cuBLAS at N = "
        f"{int(big.m.iloc[0])} ({best.series}, of {_of(best, memory)}): "
        f"{_agree(float(far), 'the report')}'s conclusion that they stay under "
        f"{FAR_FROM_CUBLAS:.0%} of the library at large sizes."
    )


def ladder_targets(
    best: pd.DataFrame,
    targets: dict[str, float],
    documented: dict,
    shown: str,
    headline: str,
    recorded_on: str,
) -> str:
    """Each class's best rung per size against docs/ladder.md's target for the class (a
    fraction of its cuBLAS reference): met, or missed by how many points; then whether this run
    agrees with the verdicts of the recorded ladder run (`documented`: (class, size) -> met, on
    the GPU `recorded_on`: report/standing.recorded_ladder).
    `best`: one row per class and size (precision, m, variant, fraction, reference: the row the
    fraction is of, standing.of_class); `shown` the condition
    drawn, `headline` the one the targets are set for."""
    parts, met, total, same, known = [], 0, 0, 0, 0
    for cls, g in best.groupby("precision", sort=False):
        if cls not in targets:
            continue
        goal = targets[cls]
        missed = []
        for r in g.sort_values("m").itertuples():
            total += 1
            ok = r.fraction >= goal
            met += ok
            if not ok:
                missed.append(
                    f"at N = {r.m} by {100 * (goal - r.fraction):.1f} points "
                    f"({r.fraction:.1%} of {r.reference})"
                )
            if (cls, int(r.m)) in documented:
                known += 1
                same += ok == documented[(cls, int(r.m))]
        # the reference each verdict is of (the class's: the one a rung of its own layout is
        # not drawn against), named once where every size has the same
        names = list(dict.fromkeys(g.reference))
        of = f" of {names[0]}" if len(names) == 1 else ""
        parts.append(
            f"{cls} (>= {goal:.0%}{of}) " + ("met" if not missed else "missed " + ", ".join(missed))
        )
    if not total:
        return ""
    text = (
        f"Against docs/ladder.md's targets: {'; '.join(parts)} "
        f"({met} of {total} class-size pairs met)"
    )
    if shown != headline:
        text += f"; the targets are for {headline}, this figure shows {shown}"
    if known:
        text += (
            f". Met or missed as in docs/ladder.md's recorded run ({recorded_on}) in {same} of "
            f"{known} class-size "
            f"pairs: {_agree(same / known, 'its verdicts')}"
        )
    else:
        text += ". No class and size of docs/ladder.md's verdicts (4096, 8192) in this run"
    return text + "."


def load_costs(change: pd.DataFrame) -> str:
    """The ladder's expectation (docs/ladder.md, "Targets and verdicts"): under normal inputs at
    the power limit the tensor-core kernels lose most, the FP32 rungs on the CUDA cores little.
    Agreement: the tensor-core kernels' median change below the CUDA-core ones'.
    `change`: one row per kernel (precision, variant, change = headline / beside - 1)."""
    cuda = change[change.precision == "FP32"].change
    tensor = change[change.precision != "FP32"].change
    if cuda.empty or tensor.empty:
        return ""
    more = tensor.median() < cuda.median()
    return (
        f"Tensor-core kernels {tensor.min():+.0%} to {tensor.max():+.0%} (median "
        f"{tensor.median():+.0%}), FP32 kernels on the CUDA cores {cuda.min():+.0%} to "
        f"{cuda.max():+.0%} (median {cuda.median():+.0%}): "
        + _agree(float(more), "the expectation")
        + " that the tensor-core kernels lose most at the power limit and the CUDA-core rungs "
        "little."
    )


def tiling_moves_right(roof: pd.DataFrame, has_l1: bool) -> str:
    """Seed 002 (nvprof at 2048): tiling uses much less global bandwidth for the same work,
    kernel10 44 GB/s of global loads against kernel00's 261.  On the roofline: the last
    CUDA-core kernel of the ladder does more FLOP per byte than the first (per global-load byte
    where measured, else per DRAM byte)."""
    registry = load_registry()
    # masks as arrays of booleans: an empty list would select no columns, not no rows (a
    # roofline of tensor-core rungs only, the FP8 ladder's, left no CUDA-core row here)
    on_cores = np.array([not _tensor_placed(r) for _, r in roof.iterrows()], dtype=bool)
    cores = roof.loc[on_cores]
    ours = np.array(
        [v in registry and registry[v].backend != "cublas" for v in cores.variant], dtype=bool
    )
    cores = cores.loc[ours]
    rank = {v: i for i, v in enumerate(registry)}  # the ladder's order (variant_order)
    cores = cores.assign(_r=[rank[v] for v in cores.variant]).sort_values(["_r", "m"])
    if cores.variant.nunique() < 2:
        return ""
    use_l1 = has_l1 and cores.l1_arithmetic_intensity.notna().all()
    col, per = ("l1_arithmetic_intensity", "global-load byte") if use_l1 else (
        "arithmetic_intensity", "DRAM byte")  # fmt: skip
    first, last = cores.iloc[0], cores.iloc[-1]
    right = last[col] > first[col]
    return (
        f"From {first['variant']} to {last['variant']}: {first[col]:.3g} to {last[col]:.3g} FLOP "
        f"per {per}, {'less' if right else 'no less'} bandwidth for the same work: "
        f"{_agree(float(right), 'seed 002')} (at N = 2048, kernel10 read 44 GB/s of global "
        "loads against kernel00's 261)."
    )


def transfer_fades(d: pd.DataFrame) -> str:
    """Seed 002: "the cost of the transfer fades as the problem grows".  Per host-memory mode,
    the global rate as a share of the kernel rate at the smallest and at the largest sizes (the
    median over the lowest and the highest tenth of the sizes, at least one each, so that one
    noisy size decides nothing); it fades where the share rises."""
    parts, fades = [], []
    for mem, g in d.groupby("memory"):
        g = g.sort_values("m")
        share = g.global_gflops / g.kernel_gflops
        ends = max(1, len(g) // 10)
        lo, hi = share.iloc[:ends].median(), share.iloc[-ends:].median()
        where = (f"N = {int(g.m.iloc[0])}" if ends == 1 else
                 f"N = {int(g.m.iloc[0])}-{int(g.m.iloc[ends - 1])}")  # fmt: skip
        there = (f"N = {int(g.m.iloc[-1])}" if ends == 1 else
                 f"N = {int(g.m.iloc[-ends])}-{int(g.m.iloc[-1])}")  # fmt: skip
        parts.append(f"{mem}: global/kernel {lo:.0%} at {where}, {hi:.0%} at {there}")
        fades.append(hi > lo)
    if not fades:
        return "no host-memory mode with sizes to compare."
    return (
        "; ".join(parts)
        + f": the transfer share shrinks as N grows in {sum(fades)} of {len(fades)} "
        f"host-memory mode{'s' if len(fades) > 1 else ''}: {_agree(sum(fades) / len(fades), 'seed 002')}."
    )


def sweep_targets(
    table: pd.DataFrame, documented: dict | None = None, recorded_on: str = ""
) -> str:
    """The sweep's verdict per precision class (report/ladder.sweep's table: precision, shape,
    `% of ref`, `target %`, met): how many shapes meet their target, and each miss with its
    percentage against the target, smallest share first; then whether this run meets or misses
    as the recorded sweep did (`documented`: (class, shape) -> met, on the GPU `recorded_on`:
    report/standing.recorded_sweep)."""
    if table.empty:
        return ""
    parts, met = [], 0
    for cls, g in table.groupby("precision", sort=False):
        ok = g[g.met == "yes"]
        met += len(ok)
        missed = g[g.met != "yes"].sort_values("% of ref")
        text = f"{cls} met at {len(ok)} of {len(g)} shapes"
        if len(missed):
            # whole percent, or tenths where the whole number would read as the target
            text += "; missed at " + ", ".join(
                f"{shape} ({share:.{0 if round(share) < goal else 1}f}% < {goal}%)"
                for shape, share, goal in zip(
                    missed["shape"], missed["% of ref"], missed["target %"], strict=True
                )
            )
        parts.append(text)
    text = (
        f"Each class's best rung against its cuBLAS ({met} of {len(table)} class-shape pairs "
        f"at their target: 90% from 2048, 75% at 1024 and 1536, 80% with one small side): "
        + "; ".join(parts)
    )
    known = [
        ((p, s), m == "yes")
        for p, s, m in zip(table.precision, table["shape"], table.met, strict=True)
        if (p, s) in (documented or {})
    ]
    if known:
        same = sum(ok == documented[key] for key, ok in known)
        text += (
            f". Met or missed as in docs/ladder.md's {recorded_on} sweep in {same} of {len(known)} "
            f"class-shape pairs: {_agree(same / len(known), 'its verdicts')}"
        )
    return text

"""What each figure says about the report's conclusion, computed from the tidy tables: the
sentences printed under the figures (report/figures.py), written here without matplotlib so
that they can be tested and read on their own."""

from __future__ import annotations

import math

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


def tiled_vs_naive(d: pd.DataFrame) -> str:
    """Seed 000: the shared-memory kernel is faster than the naive one, at every n."""
    t = d[d.variant == "tiled_guarded"].groupby(["params", "m"]).kernel_ms.median()
    n = d[d.variant == "naive_guarded"].groupby(["params", "m"]).kernel_ms.median()
    both = pd.concat([t.rename("t"), n.rename("n")], axis=1).dropna()
    if both.empty:
        return "no tiled_guarded / naive_guarded pair to compare."
    wins = (both.t < both.n).mean() * 100
    agree = (
        "agrees with" if wins == 100 else "partly agrees with" if wins >= 50 else "disagrees with"
    )
    return (
        f"tiled is faster than naive in {wins:.0f}% of (parameters, n) pairs, by "
        f"{(both.n / both.t).median():.2f}x (median): {agree} seed 000."
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


def transfer_share(d: pd.DataFrame) -> str:
    """What share of the global time the copies take, fastest and slowest kernel, at one size."""
    d = d.assign(
        share=(d.h2d_ms_median + d.d2h_ms_median)
        / (d.h2d_ms_median + d.kernel_ms_median + d.d2h_ms_median)
    )
    fast, slow = d.loc[d.kernel_ms_median.idxmin()], d.loc[d.kernel_ms_median.idxmax()]
    return (
        f"at N = {int(d.m.iloc[0])}, HtoD + DtoH take {fast.share:.0%} of the global time for the "
        f"fastest kernel ({fast.series}, {fast.kernel_ms_median:.3g} ms) and {slow.share:.0%} for "
        f"the slowest ({slow.series}, {slow.kernel_ms_median:.3g} ms)."
    )


def closest_to_cublas(d: pd.DataFrame) -> str:
    """The best and the worst series at the largest size, as a fraction of cuBLAS."""
    big = d[d.m == d.m.max()]
    best, worst = big.loc[big.fraction.idxmax()], big.loc[big.fraction.idxmin()]
    return (
        f"at N = {int(big.m.iloc[0])} the closest to cuBLAS is {best.series} at "
        f"{best.fraction:.0%} of its rate; the furthest, {worst.series}, at {worst.fraction:.1%}."
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

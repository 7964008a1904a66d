"""The ladder to cuBLAS: each rung (a kernel variant) against the cuBLAS reference of its
precision class, the tuned parameters that pick each rung's instantiation per GPU model, and the
profiler's view of what limits each rung.

Precision classes (panels of the ladder figure): FP32 (float32, every operation IEEE float32: the
CUDA cores), TF32 (float32 inputs rounded to TF32 on the tensor cores, FP32 sums) and FP64.  A
rung's reference is the cuBLAS-backend variant of the same element type, math (registry
`math`) and layout of B (registry `b_layout`): `cublas` for FP32 and FP64, `cublas_tf32` for
TF32, `cublas_tf32_tn` for the TF32 rung that takes B transposed.

The tuning table (`tuned`, written by config/presets/tune.yaml and kept per GPU model in
kernels/tuned.csv) holds each rung's best instantiation at the tuning size; `apply_tuned` turns
it into the config's per-variant `params` for the GPU this run uses.
"""

from __future__ import annotations

import ast
import math
import re

import numpy as np
import pandas as pd

from mmbench.core.axes import GPU_KEY
from mmbench.core.columns import TUNED_COLUMNS, TUNED_ON, tuned_on
from mmbench.core.elements import CLASS_ORDER as ELEMENT_CLASS_ORDER
from mmbench.core.elements import precision_class
from mmbench.core.registry import FAMILIES, REFERENCE, RUNGS, load_registry
from mmbench.core.row import with_added_axes
from mmbench.core.sampling import BURST, SUSTAINED

CLASS_ORDER = ELEMENT_CLASS_ORDER


def ladder_rank(variants) -> list[int]:
    """Each variant's place on the ladder: the registry's order (unknown variants last)."""
    order = {n: i for i, n in enumerate(load_registry())}
    return [order.get(v, len(order)) for v in variants]


# the most sizes the ladder figure draws side by side (a bar and a reference line each)
FIGURE_SIZES = 4

# what a rate was measured under: the inputs and the load (core/distributions.py, core/sampling.py)
CONDITION = ["distribution", "load"]
# the ladder's headline condition where the run has it (real data, a steady workload), and the
# one shown beside it (the reports' integers, one call on a fresh GPU)
HEADLINE = ("normal", SUSTAINED.name)
BESIDE = ("int09", BURST.name)


# docs/ladder.md's targets per precision class (the issue "Past cuBLAS in every precision class,
# and an FP8 rung"; FP8 against cuBLASLt): each class's best rung as a fraction of its
# reference, at 4096 and 8192, on normal inputs under sustained load (HEADLINE); the ladder
# figure says which this run meets (findings.ladder_targets).  The earlier issue "Hopper's own
# road" set FP32 0.90, TF32 0.90, BF16 1.00, FP64 0.80.
TARGETS = {"FP32": 0.97, "TF32": 1.00, "BF16": 1.00, "FP64": 1.00, "FP8": 0.90}


def condition_words(cond: tuple) -> str:
    return f"{cond[0]} inputs, {cond[1]}"


def conditions(d: pd.DataFrame) -> tuple[tuple, tuple | None]:
    """(headline, beside) of a table: HEADLINE where measured, else the condition with the most
    rows; BESIDE where measured and not the headline, else None."""
    have = d.groupby(CONDITION).size() if not d.empty else pd.Series(dtype=int)
    present = set(have.index)
    head = HEADLINE if HEADLINE in present else (have.idxmax() if len(have) else BESIDE)
    return tuple(head), (BESIDE if BESIDE in present and BESIDE != head else None)


def under(d: pd.DataFrame, cond: tuple | None) -> pd.DataFrame:
    """The rows measured under one condition."""
    if cond is None:
        return d.iloc[0:0]
    return d[(d.distribution == cond[0]) & (d.load == cond[1])]


def with_math(timings: pd.DataFrame) -> pd.DataFrame:
    """The table with its `math`, `backend`, `distribution` and `load` columns filled (from the
    registry, or as the runs recorded before the column existed were: IEEE, int09, burst)."""
    reg = load_registry()
    d = with_added_axes(timings)  # load: burst, for runs recorded before it
    d["distribution"] = d["distribution"].fillna("int09") if "distribution" in d else "int09"
    by_name = {n: v.math for n, v in reg.items()}
    d["math"] = [
        m if isinstance(m, str) and m else by_name.get(v, "ieee")
        for v, m in zip(d.variant, d.get("math", pd.Series([None] * len(d))), strict=True)
    ]
    if "backend" not in d:
        d["backend"] = [reg[v].backend if v in reg else "cubin" for v in d.variant]
    # how B is handed over (registry `b_layout`): a rung taking it transposed is set against a
    # reference taking it so too (persistent_tf32_tn and cublas_tf32_tn, FP8 and cuBLASLt's)
    d["b_layout"] = [reg[v].b_layout if v in reg else "k_by_n" for v in d.variant]
    d["precision"] = [precision_class(t, m) for t, m in zip(d.dtype, d.math, strict=True)]
    return d


def with_reference(timings: pd.DataFrame) -> pd.DataFrame:
    """Measured (PASS) GEMM rows of the kernels, each with its reference's name and GFLOP/s at the
    same shape, element type and math (columns reference, reference_gflops, fraction), and the
    bytes the reference's leading dimensions were rounded up to (reference_ld_align: 0 where it
    read its own rows; plan.reference_ld_align), and who wrote it (family: FAMILIES)."""
    reg = load_registry()
    d = with_math(timings)
    d = d[(d.verification == "PASS") & (d.get("operation", "gemm") == "gemm")]
    ref = d[d.backend == "cublas"]
    # a kernel's reference is cuBLAS on the same GPU model, element type, math, layout of B,
    # shape, inputs, load and host-memory mode: exactly one row of one cuBLAS variant (a burst's
    # kernel rate depends on the memory mode: the clocks settle between pageable copies)
    keys = ["dtype", "math", "b_layout", "m", "n", "k", *CONDITION]
    keys += [c for c in ("memory", GPU_KEY) if c in d]
    if "gflops_per_w" not in ref:
        ref = ref.assign(gflops_per_w=float("nan"))
    aligned = ref["ld_align"] if "ld_align" in ref else pd.Series(0, index=ref.index)
    ref = ref.assign(ld_align=aligned.fillna(0).astype(int))  # a run from before the axis: 0
    rates = ref.groupby(keys).agg(
        reference=("variant", "first"),
        reference_gflops=("kernel_gflops", "median"),
        reference_gflops_per_w=("gflops_per_w", "median"),
        reference_ld_align=("ld_align", "max"),
    )
    k = d[d.backend != "cublas"].join(rates, on=keys)
    k["family"] = [reg[v].family if v in reg else RUNGS for v in k.variant]
    k["reference_shape"] = ""
    k = _padded_references(k, rates, keys)
    k = _padded_peers(k, rates, keys)
    k["fraction"] = k.kernel_gflops / k.reference_gflops
    return k


def _padded_references(k: pd.DataFrame, rates: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """A kernel row without a reference at its own product, whose class's reference runs the
    product padded (registry `padded_to`: cuBLASLt's FP8 matmul at n and k rounded up to 16),
    gets that row as its reference: its time on the padded product is what a user pays for it
    here, so its GFLOP/s count the product's own 2mnk (the rate at the padded product x mnk /
    (m n' k')), and `reference_shape` names the product it ran."""
    reg = load_registry()
    pads = {(dtype, v.math): v for v in reg.values()
            if v.padded_to and v.backend == "cublas" for dtype in v.dtypes}  # fmt: skip
    padded_class = pd.Series(
        [(t, mth) in pads for t, mth in zip(k.dtype, k.math, strict=True)], index=k.index
    )
    missing = k.reference_gflops.isna() & padded_class
    if not missing.any() or rates.empty:
        return k
    k = k.copy()
    for i in k.index[missing]:
        row = k.loc[i]
        v = pads[(row["dtype"], row["math"])]
        m, n, kk = v.padded(int(row["m"]), int(row["n"]), int(row["k"]))
        key = tuple(m if c == "m" else n if c == "n" else kk if c == "k" else row[c] for c in keys)
        if key not in rates.index:
            continue
        ref = rates.loc[key]
        scale = int(row["m"]) * int(row["n"]) * int(row["k"]) / (m * n * kk)
        k.loc[i, "reference"] = ref.reference
        k.loc[i, "reference_gflops"] = ref.reference_gflops * scale
        k.loc[i, "reference_gflops_per_w"] = ref.reference_gflops_per_w * scale
        k.loc[i, "reference_ld_align"] = ref.reference_ld_align
        k.loc[i, "reference_shape"] = f"{m} x {n} x {kk}"
    return k


def _padded_peers(k: pd.DataFrame, rates: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """A peer's row measured at a padded product (registry `padded_to`: CUTLASS's TMA refuses
    the product, so the plan ran n and k rounded up) is also a row of each product of the run
    that pads to it, one the reference measured or one a rung measured against a padded
    reference (cuBLASLt's FP8 matmul pads too: then the peer's padded product is the
    reference's own).  Its time on the padded product is what a user pays for that product with
    this peer, so its GFLOP/s count the product's own 2mnk (the rate at the padded product x
    mnk / (m n' k')), it takes that product's reference, and `ran_shape` names the product it
    ran.  The row at the padded product itself stays as measured."""
    reg = load_registry()
    padded = {n for n, v in reg.items() if v.padded_to and v.backend != "cublas"}
    peers = k.variant.isin(padded)
    k = k.assign(ran_shape="")
    if not peers.any():
        return k
    # the products of the run, each with its reference: the references' own, then those only
    # the rungs ran (their reference padded: _padded_references)
    cols = ["reference", "reference_gflops", "reference_gflops_per_w", "reference_ld_align",
            "reference_shape"]  # fmt: skip
    asked = rates.assign(reference_shape="")
    rungs = k[~peers & k.reference_gflops.notna()].groupby(keys)[cols].first()
    asked = pd.concat([asked, rungs[~rungs.index.isin(asked.index)]])
    ran = {
        (name, key) for name, key in zip(k.variant, k[keys].itertuples(index=False), strict=True)
    }
    dims = ("m", "n", "k")
    extra = []
    for name in sorted(set(k.variant[peers])):
        v = reg[name]
        pads: dict[tuple, list[tuple]] = {}  # a padded product's key: the products padding to it
        for key in asked.index:
            at = dict(zip(keys, key, strict=True))
            shape = v.padded(int(at["m"]), int(at["n"]), int(at["k"]))
            if shape != tuple(int(at[d]) for d in dims) and (name, key) not in ran:
                to = tuple(shape[dims.index(c)] if c in dims else at[c] for c in keys)
                pads.setdefault(to, []).append(key)
        for i in k.index[peers & (k.variant == name)]:
            row = k.loc[i]
            for key in pads.get(tuple(row[c] for c in keys), []):
                at = dict(zip(keys, key, strict=True))
                scale = (
                    at["m"] * at["n"] * at["k"] / (int(row["m"]) * int(row["n"]) * int(row["k"]))
                )
                new = row.copy()
                new["ran_shape"] = f"{int(row['m'])} x {int(row['n'])} x {int(row['k'])}"
                new["m"], new["n"], new["k"] = at["m"], at["n"], at["k"]
                new["kernel_gflops"] = row["kernel_gflops"] * scale
                if "gflops_per_w" in row:
                    new["gflops_per_w"] = row["gflops_per_w"] * scale
                new[cols] = asked.loc[key, cols]
                extra.append(new)
    return pd.concat([k, pd.DataFrame(extra)], ignore_index=True) if extra else k


def peer_families(k: pd.DataFrame) -> list[str]:
    """The families of reference lines beside cuBLAS that rows of with_reference hold (CUTLASS),
    in FAMILIES' order: not rungs, never a class's best rung, shown beside it."""
    return [f for f in FAMILIES if f in set(k.family) and f not in (RUNGS, REFERENCE)]


def rungs_of(k: pd.DataFrame) -> pd.DataFrame:
    """The rows of with_reference that are rungs (our kernels), not a peer's reference line."""
    return k[k.family == RUNGS]


def best_per_rung(timings: pd.DataFrame) -> pd.DataFrame:
    """Each rung's fastest PASS instantiation per shape (with its reference), ladder order."""
    k = with_reference(timings)
    if k.empty:
        return k
    by = ["variant", "dtype", "m", "n", "k", *CONDITION] + ([GPU_KEY] if GPU_KEY in k else [])
    k = k.sort_values("kernel_gflops").groupby(by).tail(1)
    k = k.assign(_rank=ladder_rank(k.variant))
    return k.sort_values(["_rank", "m", "n", "k"]).drop(columns="_rank")


def one_load_per_shape(k: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """The rows of one condition per shape: the headline inputs (normal where measured, else the
    most measured), and in each group of `by` (a shape) the sustained rows where the group has
    any, else the others (a product of a few milliseconds cannot heat the GPU: bursts), with the
    condition in words (column `condition`)."""
    if k.empty:
        return k.assign(condition=pd.Series(dtype=str))
    dist = HEADLINE[0] if (k.distribution == HEADLINE[0]).any() else k.distribution.mode()[0]
    k = k[k.distribution == dist]
    steady = k.load == SUSTAINED.name
    has = set(k[steady].groupby(by).size().index)
    groups = k[by].itertuples(index=False, name=None) if len(by) > 1 else k[by[0]]
    keep = [s == (g in has) for g, s in zip(groups, steady, strict=True)]
    k = k[keep].copy()
    k["condition"] = [condition_words((dist, ld)) for ld in k.load]
    return k


def tuning_shapes(k: pd.DataFrame) -> pd.DataFrame:
    """The rows a tuning table is made of: shapes whose sides are multiples of 128 (the largest
    block tile) and whose work m x n x k is at least 1024^3, the ladder's square sizes among them
    (ladder_sizes); odd sizes such as 1000 x 1100 x 37 are there to verify."""
    sides = (k.m % 128 == 0) & (k.n % 128 == 0) & (k.k % 128 == 0)
    return k[sides & (k.m * k.n * k.k >= 1024**3)]


def tuned(timings: pd.DataFrame) -> pd.DataFrame:
    """The tuning table: per GPU model and rung, the fastest verified instantiation at each
    tuning shape (tuning_shapes: the run's squares from 1024 up and products with one small
    side such as 128 x 8192 x 8192), with how many instantiations were measured there; each
    shape measured sustained where the run did so, else in bursts (normal inputs where
    measured).  Each row records its shape (m, n, k); where a rung has rows at several shapes,
    the plan gives each product the instantiation tuned nearest to it (plan/tuning.py)."""
    k = with_reference(timings)
    if k.empty:
        return pd.DataFrame(columns=TUNED_COLUMNS)
    at = one_load_per_shape(tuning_shapes(k), ["m", "n", "k"])
    if at.empty:  # a run with no tuning shape: its largest square
        sq = one_load_per_shape(k[(k.m == k.n) & (k.n == k.k)], ["m"])
        at = sq[sq.m == sq.m.max()] if not sq.empty else sq
    if at.empty:
        return pd.DataFrame(columns=TUNED_COLUMNS)
    key = ["gpu_name", "variant", "dtype", "m", "n", "k"]
    counts = at.groupby(key).instance.nunique()
    best = at.sort_values("kernel_gflops").groupby(key).tail(1).copy()
    best["instantiations"] = [int(counts[tuple(r)]) for r in best[key].itertuples(index=False)]
    best["percent_of_reference"] = 100 * best.fraction
    best = best.assign(_rank=ladder_rank(best.variant), _work=best.m * best.n * best.k)
    best = best.sort_values(["gpu_name", "_rank", "dtype", "_work", "m"])
    return best[TUNED_COLUMNS].reset_index(drop=True)


# -- the ladder table ------------------------------------------------------------------------
_COMMENT = re.compile(r"^\s*//\s?(.*)$")
_SENTENCE_END = re.compile(r"\.\s+(?=[A-Z])")


def idea(variant: str) -> str:
    """The first sentence of a rung's kernel file (each file opens with its idea: comment lines
    in a .cu file, the module's docstring in a Triton kernel's .py file)."""
    v = load_registry().get(variant)
    if v is None or not v.compiled:
        return ""
    from mmbench.core import paths

    source = (paths.data_dir("kernels") / v.source).read_text()
    if v.source.endswith(".py"):
        text = " ".join((ast.get_docstring(ast.parse(source)) or "").split())
    else:
        lines = []
        for line in source.splitlines():
            m = _COMMENT.match(line)
            if not m:
                break
            lines.append(m.group(1))
        text = " ".join(lines)
    first = _SENTENCE_END.split(text, maxsplit=1)[0]  # "ch. 4" does not end a sentence
    head = first.split(": ")[0]  # the name part of "Name (source): what it does"
    return head.strip().rstrip(".")


def ladder_sizes(k: pd.DataFrame) -> pd.DataFrame:
    """The rows of the ladder's sizes: square, at least 1024 and a multiple of 128 (the largest
    block tile); odd sizes such as 4097 are there to verify (verification table)."""
    return k[(k.m == k.n) & (k.n == k.k) & (k.m >= 1024) & (k.m % 128 == 0)]


def table(timings: pd.DataFrame) -> pd.DataFrame:
    """One row per rung and precision class: its idea, the instantiation, and per square size,
    under the headline condition (conditions()), the GFLOP/s, the percentage of its cuBLAS
    reference, the gain over the rung before it and the GFLOP/s per watt (sustained rows), then
    the GFLOP/s and percentage under the condition beside it (integers, burst)."""
    every = ladder_sizes(best_per_rung(timings))
    if every.empty:
        return pd.DataFrame()
    head, beside = conditions(every)
    k, b = under(every, head), under(every, beside)
    if k.empty:
        return pd.DataFrame()
    sizes = sorted(k.m.unique())
    tag = f"{beside[0]} {beside[1]}" if beside else ""
    rows = []
    for prec in CLASS_ORDER:
        part = k[k.precision == prec]
        previous: dict[int, float] = {}
        for variant in dict.fromkeys(part.variant):
            mine = part[part.variant == variant]
            peer = mine.family.iloc[0] != RUNGS
            row = {
                "precision": prec,
                "rung": variant,
                "idea": f"reference line: {idea(variant)}" if peer else idea(variant),
                "parameters": " / ".join(dict.fromkeys(mine.params.fillna("").astype(str)))
                + tuned_elsewhere(mine),
                "reference": mine.reference.iloc[0],
                "measured on": condition_words(head),
            }
            for n in sizes:
                at, other = mine[mine.m == n], b[(b.variant == variant) & (b.m == n)]
                r = at.iloc[0] if len(at) else None
                # a peer's line gains nothing over the rung before it, nor the next rung over it
                ok = r is not None and n in previous and not peer
                gain = r.kernel_gflops / previous[n] if ok else None
                row |= {
                    f"{n}: GFLOP/s": _round(r, "kernel_gflops"),
                    f"{n}: % of ref": _round(r, "fraction", 100, 1),
                    f"{n}: gain": None if gain is None else f"x{gain:.2f}",
                    f"{n}: GFLOP/s per W": _round(r, "gflops_per_w", 1, 1),
                }
                if beside:
                    o = other.iloc[0] if len(other) else None
                    row |= {
                        f"{n}: {tag} GFLOP/s": _round(o, "kernel_gflops"),
                        f"{n}: {tag} % of ref": _round(o, "fraction", 100, 1),
                    }
                if r is not None and not peer:
                    previous[n] = float(r.kernel_gflops)
            rows.append(row)
        refs = part.drop_duplicates(["m"])
        if not refs.empty:
            row = {"precision": prec, "rung": refs.reference.iloc[0], "idea": "the line to beat"}
            row |= {"parameters": "", "reference": "", "measured on": condition_words(head)}
            for n in sizes:
                at = refs[refs.m == n]
                r = at.iloc[0] if len(at) else None
                row[f"{n}: GFLOP/s"] = _round(r, "reference_gflops")
                row[f"{n}: % of ref"] = 100.0 if r is not None else None
                row[f"{n}: gain"] = None
                row[f"{n}: GFLOP/s per W"] = _round(r, "reference_gflops_per_w", 1, 1)
                if beside:
                    o = b[(b.precision == prec) & (b.m == n)].drop_duplicates(["m"])
                    o = o.iloc[0] if len(o) else None
                    row[f"{n}: {tag} GFLOP/s"] = _round(o, "reference_gflops")
                    row[f"{n}: {tag} % of ref"] = 100.0 if o is not None else None
            rows.append(row)
    out = pd.DataFrame(rows)
    # the numbers first, right after the rung (a reader sees them without scrolling), then
    # what the rung is
    words = ["reference", "measured on", "parameters", "idea"]
    return out[["precision", "rung", *[c for c in out.columns if c[:1].isdigit()], *words]]


def tuned_elsewhere(rows: pd.DataFrame) -> str:
    """ " (tuned on MODEL)" where the rows ran another GPU model's tuning (config tuned_gpu:
    their `tuned_for` names it, plan.tuned_for), else ""."""
    if "tuned_for" not in rows:
        return ""
    said = [tuned_on(words) for words in rows.tuned_for.dropna().astype(str)]
    here = set(rows[GPU_KEY].astype(str))
    models = [m for m in dict.fromkeys(said) if m is not None and m not in here]
    return f" ({TUNED_ON}{', '.join(models)})" if models else ""


def _round(r, col: str, scale: float = 1, digits: int = 0):
    """A rounded number of a row (None where the row or the number is missing)."""
    if r is None or col not in r or r[col] != r[col]:
        return None
    x = float(r[col]) * scale
    return round(x) if digits == 0 else round(x, digits)


# -- what limits each rung (Nsight Compute) ---------------------------------------------------
# warp stall reasons (ncu's WarpStateStats: cycles a warp waits per issued instruction)
STALLS = {
    "stall_long_scoreboard": "waiting on global or local memory (long scoreboard)",
    "stall_short_scoreboard": "waiting on shared memory or special functions (short scoreboard)",
    "stall_mio_throttle": "shared-memory instruction queue full (MIO throttle)",
    "stall_lg_throttle": "global-memory instruction queue full (LG throttle)",
    "stall_barrier": "waiting at __syncthreads (barrier)",
    "stall_math_pipe_throttle": "math pipe busy (math pipe throttle)",
    "stall_wait": "fixed-latency dependencies (wait)",
    "stall_not_selected": "ready but another warp issued (not selected)",
    "stall_dispatch_stall": "dispatch stall",
    "stall_no_instruction": "instruction cache miss (no instruction)",
    "stall_selected": "issuing (selected)",
}


def limiter(values: dict) -> str:
    """The profiler's reading of what limits a kernel: the SM and memory throughput (speed of
    light, % of peak) and the stall reasons that cost the most cycles per issued instruction."""
    sm, mem = values.get("sm_throughput"), values.get("memory_throughput")
    stalls = {k: v for k, v in values.items() if k in STALLS and v == v and k != "stall_selected"}
    if not stalls and sm is None:
        return "not profiled with the ladder metric set"
    parts = []
    if sm is not None and mem is not None:
        bound = "compute" if sm >= mem else "memory"
        parts.append(f"{bound}-side (SM {sm:.0f}%, memory {mem:.0f}% of peak)")
    if stalls:
        total = sum(stalls.values())
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:2]
        parts.append(
            "; ".join(f"{STALLS[k]} {v:.1f} of {total:.1f} stall cycles/issue" for k, v in top)
        )
    return "; ".join(parts)


def profile_table(metrics: pd.DataFrame | None) -> pd.DataFrame:
    """Per profiled rung: parameters, registers, shared memory, achieved occupancy, the SM and
    memory throughput and the limiter (Nsight Compute metrics of tables/metrics.csv)."""
    if metrics is None or metrics.empty:
        return pd.DataFrame()
    m = metrics[(metrics.tool == "ncu") & (metrics.status == "ok")].copy()
    if m.empty:
        return pd.DataFrame()
    m["value"] = pd.to_numeric(m.value, errors="coerce")
    keys = ["variant", "label", "dtype", "m", "n", "k"]
    rows = []
    variants = list(m.variant.unique())
    rank = dict(zip(variants, ladder_rank(variants), strict=True))
    for key, part in sorted(m.groupby(keys), key=lambda kv: (rank[kv[0][0]], kv[0][3])):
        vals = dict(zip(part.metric, part.value, strict=False))
        static = vals.get("shared_memory_per_block", 0) or 0
        dynamic = vals.get("dynamic_shared_memory_per_block", 0) or 0
        occ = vals.get("achieved_occupancy")
        rows.append(
            {
                "rung": key[1],
                "dtype": key[2],
                "shape": f"{key[3]}x{key[4]}x{key[5]}",
                "registers": vals.get("registers_per_thread"),
                "shared memory (B)": None
                if "shared_memory_per_block" not in vals
                else int(static + dynamic),
                "achieved occupancy (%)": None if occ is None else round(100 * occ, 1),
                "limiter (Nsight Compute)": limiter(vals),
            }
        )
    return pd.DataFrame(rows)


# -- the ladder at every size (config/presets/sweep.yaml) ---------------------------------------
# the share of its cuBLAS reference each class's best rung is to reach at a shape (docs/ladder.md,
# "The ladder at every size"): square sizes from 2048 up and the odd sizes 90%, 1024 and 1536 75%,
# rectangular products with one small side 80%
SWEEP_TARGETS = {"square from 2048": 0.90, "square below 2048": 0.75, "one small side": 0.80}


def sweep_target(m: int, n: int, k: int) -> tuple[str, float]:
    """(the kind of shape, the share of cuBLAS the best rung is to reach there)."""
    kind = (
        ("square from 2048" if m >= 2048 else "square below 2048")
        if m == n == k
        else "one small side"
    )
    return kind, SWEEP_TARGETS[kind]


def shape_words(m: int, n: int, k: int) -> str:
    return str(m) if m == n == k else f"{m} x {n} x {k}"


def sweep_rows(timings: pd.DataFrame) -> pd.DataFrame:
    """Per precision class and shape, every rung's fastest instantiation against its reference
    under one condition per shape: the headline inputs (normal where measured), sustained where
    the shape was measured so, else in bursts (a product of a few milliseconds cannot heat the
    GPU).  Columns of best_per_rung, with `condition` and the reference's row alignment."""
    k = best_per_rung(timings).dropna(subset=["reference_gflops"])
    if k.empty:
        return k
    return one_load_per_shape(k, ["precision", "m", "n", "k"])


def output_tiles(variant: str, instance: str, m: int, n: int, k: int) -> int | None:
    """How many blocks' worth of C an instantiation cuts an m x n x k product into, to set
    beside the GPU's multiprocessors (132 on an H100 SXM): the registry's TILES shape fact
    where it declares one (a split-K kernel's grid counts its k splits too), else its grid on a
    GPU of unlimited multiprocessors (a persistent kernel's grid is the tile count there).  None
    for a library call."""
    v = load_registry().get(variant)
    if v is None or not v.compiled:
        return None
    params = v.instance(instance)
    facts = v.shape_facts_of(params, m, n, k, sms=10**6)
    if "TILES" in facts:
        return facts["TILES"]
    grid, _ = v.launch(params, m, n, k, sms=10**6)
    return math.prod(grid)


def facts_of(launch_facts) -> dict[str, int]:
    """A row's launch_facts (`TILES=288 WAVE=132 TAIL=24 SPLITS=5 HEAD=264`, core/launch_spec.py)
    as {name: value}; {} where it records none (a library call, a kernel without shape facts, a
    run recorded before rows recorded them)."""
    found = re.findall(r"\b([A-Z_][A-Z0-9_]*)=(\d+)", str(launch_facts or ""))
    return {name: int(value) for name, value in found}


def k_splits(launch_facts) -> int | None:
    """The k splits a row's launch ran with (its launch_facts' SPLITS=; kernels/split_k.cuh),
    None where it records none."""
    return facts_of(launch_facts).get("SPLITS")


def split_tiles(launch_facts) -> int | None:
    """How many of a row's output tiles ran split along k: its TAIL (a persistent kernel that
    splits only the tiles past its last whole wave; counted in clusters of tiles where HEAD +
    TAIL is fewer than TILES, so scaled back to tiles) or else all its TILES where SPLITS > 1, 0
    where it did not split; None where the row records no splits."""
    facts = facts_of(launch_facts)
    if "SPLITS" not in facts:
        return None
    if facts["SPLITS"] == 1:
        return 0
    if "TAIL" not in facts:
        return facts.get("TILES", 0)
    units = facts.get("HEAD", 0) + facts["TAIL"]
    return facts["TAIL"] * facts["TILES"] // units if units else facts["TAIL"]


def sweep(timings: pd.DataFrame) -> pd.DataFrame:
    """One row per precision class and shape: the best rung there, its GFLOP/s, its reference's,
    the percentage, the target for that kind of shape and whether it is met, the rows the
    reference read (padded as the kernels' where they pad theirs), whether the tuning saw it."""
    rows = sweep_with_shares(timings)
    return rows.drop(columns=[c for c in rows.columns if c.startswith("_")])


def sweep_with_shares(timings: pd.DataFrame) -> pd.DataFrame:
    """sweep's rows with the unrounded share of the reference (`_fraction`; a peer family's
    best build's `_<family>`, NaN where it did not run the product) and the reference's name
    alone (`_reference`: `reference` may add the padded product it ran)."""
    k = sweep_rows(timings)
    if k.empty:
        return pd.DataFrame()
    peers = peer_families(k)
    out = []
    for prec in CLASS_ORDER:
        part = k[k.precision == prec]
        for (m, n, kk), g in part.groupby(["m", "n", "k"]):
            rungs = rungs_of(g)
            if rungs.empty:  # a peer's line alone: no rung to set beside it
                continue
            best = rungs.sort_values("kernel_gflops").iloc[-1]
            beside = {f: g[g.family == f].fraction.max() for f in peers}
            kind, goal = sweep_target(int(m), int(n), int(kk))
            pad = int(best.reference_ld_align)
            out.append(
                {
                    "precision": prec,
                    "shape": shape_words(int(m), int(n), int(kk)),
                    "best rung": best.variant,
                    "GFLOP/s": round(float(best.kernel_gflops)),
                    "reference": best.reference
                    + (f" (at {best.reference_shape}, padded)" if best.reference_shape else ""),
                    "reference GFLOP/s": round(float(best.reference_gflops)),
                    "% of ref": round(100 * float(best.fraction), 1),
                    "target %": round(100 * goal),
                    "met": "yes" if best.fraction >= goal else "no",
                    # each peer's best build, a line beside cuBLAS (never the best rung)
                    **{
                        f"{f} % of ref": None if share != share else round(100 * share, 1)
                        for f, share in beside.items()
                    },  # fmt: skip
                    "output tiles": output_tiles(
                        best.variant, best.instance, int(m), int(n), int(kk)
                    ),
                    "k splits": k_splits(best.get("launch_facts")),
                    "tiles split": split_tiles(best.get("launch_facts")),
                    "reference rows": f"padded to {pad} B, as the kernels'" if pad else "its own",
                    "measured on": best.condition,
                    "rungs": rungs.variant.nunique(),
                    "parameters": best.params,
                    "tuning saw it": "yes"
                    if tuned_at(best.get("tuned_for")) == (int(m), int(n), int(kk))
                    else "no",
                    # (last: the shape's numbers, for sorting and for the figure)
                    "_fraction": float(best.fraction),
                    "_reference": best.reference,
                    **{f"_{f}": share for f, share in beside.items()},
                    "m": int(m),
                    "n": int(n),
                    "k": int(kk),
                }
            )
    out = pd.DataFrame(out)
    out["_square"] = (out.m == out.n) & (out.n == out.k)
    out["_order"] = [CLASS_ORDER.index(p) for p in out.precision]
    out = out.sort_values(["_order", "_square", "m", "n"], ascending=[True, False, True, True])
    return out.drop(columns=["_square", "_order"]).reset_index(drop=True)


_TUNED_AT = re.compile(r"tuned at (\d+)x(\d+)x(\d+)")


def tuned_at(tuned_for) -> tuple[int, int, int] | None:
    """The shape a row's instantiation was tuned at (its `tuned_for`: "...; tuned at MxNxK"),
    None where it records none (a row not tuned, or tuned at one shape only)."""
    found = _TUNED_AT.search(str(tuned_for or ""))
    return tuple(int(x) for x in found.groups()) if found else None


# the any-shape targets (docs/ladder.md): per class, the best rung's geometric mean over the
# shapes and its least share of the cuBLAS of its class
SHAPES_TARGETS = {"geometric mean": 0.95, "minimum": 0.85}


def shapes_summary(timings: pd.DataFrame, rows: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per precision class over the run's products: how many, the best rung's geometric
    mean and minimum share of its cuBLAS (the shape where it is least), against the any-shape
    targets, and how many of the products the tuning saw (a row tuned at that very shape).
    `rows`: sweep_with_shares(timings), where the caller has them."""
    rows = sweep_with_shares(timings) if rows is None else rows
    if rows.empty:
        return pd.DataFrame()
    out = []
    for prec, g in rows.groupby("precision", sort=False):
        share = g["_fraction"].astype(float)
        low = g.loc[share.idxmin()]
        gmean = float(np.exp(np.log(share).mean()))
        met = gmean >= SHAPES_TARGETS["geometric mean"] and share.min() >= SHAPES_TARGETS["minimum"]
        out.append({
            "precision": prec,
            "products": len(g),
            "geometric mean % of ref": round(100 * gmean, 1),
            "target %": round(100 * SHAPES_TARGETS["geometric mean"]),
            "minimum % of ref": round(100 * float(share.min()), 1),
            "at": low["shape"],
            "by": low["best rung"],
            "target minimum %": round(100 * SHAPES_TARGETS["minimum"]),
            "met": "yes" if met else "no",
            "below 85%": int((share < SHAPES_TARGETS["minimum"]).sum()),
            "the tuning saw": int((g["tuning saw it"] == "yes").sum()),
            **peer_summary(g),
        })  # fmt: skip
    return pd.DataFrame(out)


def peer_summary(rows: pd.DataFrame) -> dict:
    """A class's products (sweep_with_shares rows) as each peer family ran them: over the
    products it ran, its best build's geometric mean and least share of the cuBLAS of the
    class, the product where it is least, and how many products it ran."""
    out = {}
    for col in [c for c in rows.columns if c.startswith("_") and c[1:] in FAMILIES]:
        share = rows[col].astype(float).dropna()
        if share.empty:
            continue
        f = col[1:]
        out |= {
            f"{f} products": len(share),
            f"{f} geometric mean %": round(100 * float(np.exp(np.log(share).mean())), 1),
            f"{f} minimum %": round(100 * float(share.min()), 1),
            f"{f} least at": rows.loc[share.idxmin(), "shape"],
        }
    return out

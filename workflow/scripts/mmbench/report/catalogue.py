"""The one catalogue of the pipeline's figures and tables.

Each output is declared here once: its name (what it shows), the experiment it belongs to (E1 ...
E5b and the seed report, as labels), the function that makes it, the tidy tables it reads, its
title and its report caption.  The config schema's allowed names (names(), which the Snakefile
passes to config.validate), the render jobs (render_figure.py, render_table.py), the rules'
inputs (common.smk) and the report captions (workflow/report/output.rst) all come from here.

Inputs a maker reads, by name (common.smk turns them into paths of the results folder):
  timings      tables/timings.csv              one row per measured configuration
  manifests    runs/<variant>.manifest.json    each measurement job's device facts and versions
  roofline     tables/roofline.csv             profiled kernels on the roofline
  ceilings     tables/ceilings.csv             the device's measured peak rates and bandwidth
  nvprof       tables/nvprof_metrics.csv       the profiler metrics under nvprof's names
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from mmbench.core.axes import GPU_KEY
from mmbench.core.row import upgraded
from mmbench.report import ladder, report_tables


def _figures():
    """mmbench.report.figures, imported when a figure is made: it imports matplotlib and seaborn
    (about half a second), which the table jobs never need."""
    from mmbench.report import figures

    return figures


# inputs that exist only when the profile: section is on
PROFILE_INPUTS = frozenset({"roofline", "ceilings", "nvprof", "metrics"})


@dataclass(frozen=True)
class Output:
    name: str
    kind: str  # "figure" or "table"
    experiment: str  # label: experiment id and seed report
    make: Callable  # figure: make(data, stem) -> paths; table: make(data) -> DataFrame
    inputs: tuple[str, ...]
    title: str
    caption: str  # RST, shown under the output in the HTML report
    # drawn from CUPTI's records, which the profile job takes only where a table of the run
    # shows them (plan.CUPTI_TABLES names these: plan may not import the report)
    cupti: bool = False

    @property
    def needs_profile(self) -> bool:
        return bool(PROFILE_INPUTS & set(self.inputs))


def _fig(name, experiment, make, inputs, title, caption, conditions=False) -> Output:
    """A figure; one made from the timings shows the rows of one condition (inputs and load:
    one_condition) unless it compares conditions itself (`conditions`)."""
    if "timings" in inputs and not conditions:
        make = one_condition(make)
    return Output(name, "figure", experiment, make, tuple(inputs), title, caption)


def title_of(output: Output, table: pd.DataFrame) -> str:
    """A table's title, with the inputs and load of its rows where it shows one condition."""
    cond = table.attrs.get("condition")
    return f"{output.title} ({cond})" if cond else output.title


def headline_rows(timings: pd.DataFrame) -> tuple[pd.DataFrame, str, int]:
    """The rows of one condition, inputs and load (the ladder's headline where measured:
    ladder.conditions), its words ("int09 inputs, burst load") and how many other conditions
    the run holds."""
    timings = upgraded(timings)  # a run recorded before kernel_ms: its median
    filled = ladder.with_math(timings)  # a run recorded before the load axis reads as burst
    (dist, load), _ = ladder.conditions(filled)
    keep = ((filled.distribution == dist) & (filled.load == load)).to_numpy()
    others = len(filled.groupby(ladder.CONDITION)) - 1
    return timings[keep], f"{dist} inputs, {load} load", others


def one_condition(make: Callable) -> Callable:
    """`make` on the timings of one condition (headline_rows), with the figure's note naming it
    and, where the run measured others, how many."""

    def made(data: dict, stem):
        t = data.get("timings")
        if t is None or t.empty:
            return make(data, stem)
        rows, words, others = headline_rows(t)
        if others:
            words += f"; {others} other condition{'s' if others > 1 else ''} not shown"
        return make(data | {"timings": rows, "condition": words}, stem)

    return made


# the tables of rates that show one condition (inputs and load) at a time: the others list every
# configuration (verification, provenance, device_properties) or compare conditions themselves
# (ladder, tuned)
RATE_TABLES = ("kernel_times", "matrix_sum", "unguarded_vs_guarded", "time_split",
               "leading_dimensions")  # fmt: skip


def _calibration(timings, manifests=()):
    """The calibration table of a tune run's timings (core/timemodel.py), each GPU model's
    multiprocessors as a persistent kernel's grid shows them, else as the run manifests'
    device facts record them (a run of grid kernels alone)."""
    import json

    from mmbench.core.registry import load_registry
    from mmbench.core.timemodel import calibrate, sms_of

    registry = load_registry()
    sms = {}
    for p in manifests:
        dev = json.loads(Path(p).read_text()).get("device") or {}
        if dev.get("name") and dev.get("multiprocessors"):
            sms.setdefault(dev["name"], int(dev["multiprocessors"]))
    return calibrate(timings, registry, {**sms, **sms_of(timings, registry)})


def _tab(name, experiment, make, inputs, title, caption, cupti=False) -> Output:
    if name in RATE_TABLES:
        make = one_condition_table(make)
    return Output(name, "table", experiment, make, tuple(inputs), title, caption, cupti)


def one_condition_table(make: Callable) -> Callable:
    """`make` on the timings of one condition (as one_condition for figures); its title names
    it (title_of), and where the run holds several the table's first column says which."""

    def made(data: dict):
        t = data.get("timings")
        if t is None or t.empty:
            return make(data)
        rows, words, others = headline_rows(t)
        out = make(data | {"timings": rows})
        if others and len(out):
            out.insert(0, "measured on", words)
        out.attrs["condition"] = words  # the title names it (title_of)
        return out

    return made


FIGURES: dict[str, Output] = {
    o.name: o
    for o in (
        _fig(
            "time_vs_n",
            "E1 (seed 000)",
            lambda d, stem: _figures().time_vs_n(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "Kernel time vs n",
            "Kernel time vs n for the naive and shared-memory kernels (and the others), square "
            "matrices, pinned memory; the band is the min..max of the timed runs. Seed 000 found "
            "the shared-memory kernel faster than the naive one at every n.",
        ),
        _fig(
            "time_split",
            "E3b (seed 002)",
            lambda d, stem: _figures().time_split(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "Where the time goes: HtoD, kernel, DtoH",
            "Where the time of one multiplication goes, HtoD, kernel and DtoH, measured with CUDA "
            "events (seed 002's nvprof summary), pinned memory. Seed 002 (N = 640): the copies "
            "took 11-15% of the naive kernel00's time and 26-34% of the faster kernel10's: the "
            "faster the kernel, the larger the copies' share.",
        ),
        _fig(
            "gflops_vs_n",
            "E3c (seed 002)",
            lambda d, stem: _figures().gflops_vs_n(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "Kernel GFLOP/s vs N per block size",
            "Kernel GFLOP/s vs N = 128..3200 (step 32) for 8x8, 16x16 and 32x32 blocks, naive "
            '(kernel01) and tiled (kernel11), cuBLAS for reference. Seed 002 concluded "the '
            'block size matters" (GTX 1080 Ti: 358 GFLOPS naive, 1188 tiled at N = 3200).',
        ),
        _fig(
            "remainder_effect",
            "E3d (seed 002)",
            lambda d, stem: _figures().remainder(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "Remainder effect, N = 1000..1100 step 1",
            'N = 1000..1100 step 1. Seed 002: "the influence of the remainders is not '
            'negligible; the performance peaks are at N multiple of the block size (32 and 16)". '
            "Grey lines mark multiples of 16, darker ones of 32.",
        ),
        _fig(
            "global_vs_kernel",
            "E3e (seed 002)",
            lambda d, stem: _figures().global_vs_kernel(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "Global vs kernel GFLOP/s, pinned vs pageable",
            "Global (HtoD + kernel + DtoH) vs kernel GFLOP/s, pinned vs pageable memory. Seed "
            '002: "the cost of the transfer fades as the problem grows".',
        ),
        _fig(
            "fraction_of_cublas",
            "new",
            lambda d, stem: _figures().fraction_of_cublas(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "Performance as a fraction of cuBLAS",
            "Each kernel's GFLOP/s as a fraction of cuBLAS at the same size and type (log scale): "
            "how far the course kernels are from the library. The report concludes that the "
            "course's kernels (seeds 000-004) stay under half of cuBLAS at large sizes; the "
            "ladder (docs/ladder.md) is the road past them.",
        ),
        _fig(
            "ladder",
            "new (ladder)",
            lambda d, stem: _figures().ladder_rungs(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "The ladder to cuBLAS",
            "Each rung of the ladder (one kernel file each, its tuned instantiation) in TFLOP/s "
            "at each square size, with its percentage of the cuBLAS reference of its precision "
            "class: SGEMM for the FP32 rungs on the CUDA cores, SGEMM in TF32 mode for the TF32 "
            "tensor-core rung, bfloat16 GemmEx for BF16, DGEMM for FP64, cuBLASLt's FP8 matmul "
            "for FP8. docs/ladder.md tells the story rung by rung. "
            "Where the run measured normal inputs under sustained load, those are shown. "
            "docs/ladder.md sets each class a target on those inputs (the best rung at least "
            + ", ".join(f"{v:.0%} in {c}" for c, v in ladder.TARGETS.items())
            + " of the class's reference, the line its panel draws); the note says which this "
            f"run meets. At most {ladder.FIGURE_SIZES} sizes are drawn, the largest (the "
            "ladder_by_size figure draws every size).",
        ),
        _fig(
            "ladder_by_size",
            "new (ladder)",
            lambda d, stem: _figures().ladder_by_size(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "The ladder at every size",
            "Each rung (its tuned instantiation) as a percentage of the cuBLAS reference of its "
            "precision class at each square size N, one line per rung; filled markers where N was "
            "measured under sustained load, open ones where only in bursts (a product of a few "
            "milliseconds cannot heat the GPU). Dashed: the target of each size range "
            "(docs/ladder.md: 75% below 2048, 90% from 2048). Where a kernel pads its rows (a "
            "size such as 3001), its reference reads the same padded rows (the sweep table's "
            "`reference rows`). The note says which sizes meet their target.",
            conditions=True,
        ),
        _fig(
            "any_shape",
            "new (ladder)",
            lambda d, stem: _figures().any_shape(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "The ladder at any shape",
            "Per precision class, each product of the run (config/presets/shapes.yaml draws them "
            "from a seed) as the best rung's percentage of the cuBLAS of its class, against the "
            "product's work 2mnk; filled where the tuning table holds a row tuned at that very "
            "shape, open where the rung ran an instantiation tuned elsewhere. Dashed: the "
            "any-shape targets (docs/ladder.md: a geometric mean of 95% and a least share of 85% "
            "per class); red: the class's geometric mean. The share's axis is logarithmic, so "
            "every product keeps its place, a product where cuBLAS falls far behind (a side "
            "that is not a multiple of 8) too. The note gives each class's mean and its least "
            "product.",
            conditions=True,
        ),
        _fig(
            "ladder_load",
            "new (ladder)",
            lambda d, stem: _figures().ladder_load(
                d["timings"], stem, condition=d.get("condition", "")
            ),
            ["timings"],
            "What the data and the power limit do to each rung",
            "Each rung and its cuBLAS reference at the largest ladder size, in TFLOP/s under "
            "integers 0-9 timed in bursts (a fresh GPU, low-entropy data: the reports' setting) "
            "and under normal inputs timed sustained (the clocks settled at the power limit), "
            "each bar labelled with the SM clock it ran at and, sustained, the board power. "
            "The expectation: the tensor-core kernels lose most under the power limit, the FP32 "
            "rungs on the CUDA cores little; the note says whether this run agrees.",
            conditions=True,
        ),
        _fig(
            "roofline",
            "E3f (seed 002), new",
            lambda d, stem: _figures().roofline(d["roofline"], d["ceilings"], stem),
            ["roofline", "ceilings"],
            "Roofline with the measured ceilings",
            "The roofline of this GPU with its measured ceilings (peak FP32 and FP64 FMA rate, "
            "DRAM bandwidth of a large copy) and every profiled kernel on it: a CUDA-core kernel "
            "placed by Nsight Compute's FLOP and DRAM byte counts (circles), a tensor-core kernel "
            "by 2mnk FLOPs over its time, since Nsight Compute's FMA counters do not count "
            "tensor-core work (a marker per element type; no tensor-core ceiling is measured). "
            "Seed 002: tiling uses much less bandwidth for the same work (nvprof at 2048: 44 "
            "GB/s of global loads for kernel10 against 261 for kernel00), so the later kernels "
            "sit further right.",
        ),
    )
}

TABLES: dict[str, Output] = {
    o.name: o
    for o in (
        _tab(
            "kernel_times",
            "E4b (seed 003)",
            lambda d: report_tables.kernel_times(d["timings"]),
            ["timings"],
            "Kernel time, ms (GFLOPS), per variant, parameters, host-memory mode and size "
            "(seed 003)",
            "Kernel ms (GFLOPS) per variant, parameters, host-memory mode and size, each cell one "
            'configuration; "--" = refused '
            "(precondition) or not run. Seed 003 (GeForce 930MX) found shared memory about 3x "
            "faster than global and 2 outputs per thread about 23% faster again.",
        ),
        _tab(
            "matrix_sum",
            "E4a (seed 003)",
            lambda d: report_tables.matrix_sum(d["timings"]),
            ["timings"],
            "Matrix sum C = A + B, kernel ms (G additions/s): one thread per element, row, "
            "column (seed 003)",
            "Matrix sum with one thread per element, per row and per column at 2000, 6000, "
            "11000. Seed 003 (930MX) measured 21.3 / 21.5 / 3.7 ms at 2000 and concluded that "
            "the column mapping (coalesced) is much faster than the row mapping.",
        ),
        _tab(
            "unguarded_vs_guarded",
            "E3a (seed 002)",
            lambda d: report_tables.unguarded_vs_guarded(d["timings"]),
            ["timings"],
            "kernel00 vs kernel01: global and kernel time, GFLOPS, PASS/FAIL (seed 002)",
            "kernel00 (grid N/size) fails at 641 with its first mismatch; kernel01 passes; "
            "pinned memory shortens the global time.",
        ),
        _tab(
            "time_split",
            "E3b (seed 002)",
            lambda d: report_tables.time_split(d["timings"]),
            ["timings"],
            "Time split HtoD / kernel / DtoH (seed 002's nvprof summary)",
            "The time split HtoD / kernel / DtoH (nvprof's summary, here from CUDA events).",
        ),
        _tab(
            "profiler_metrics",
            "E3f (seed 002)",
            lambda d: d["nvprof"] if d["nvprof"] is not None else pd.DataFrame(),
            ["nvprof"],
            "Profiler metrics, nvprof names (seed 002 at N = 2048)",
            "Nsight Compute metrics under their nvprof names, naive vs tiled.",
        ),
        _tab(
            "gpu_activities",
            "E3b (seed 002)",
            lambda d: report_tables.gpu_activities(d["metrics"]),
            ["metrics"],
            "GPU activities from CUPTI, in nvprof's shape (seed 002's nvprof summary)",
            "nvprof's GPU-activities summary for each profiled configuration, from CUPTI's "
            "activity records (kernels and copies as the driver timed them): the copies of A "
            "and B to the device, the launches of the profiler target and the copy of C back.",
            cupti=True,
        ),
        _tab(
            "kernel_time_sources",
            "E3b (seed 002)",
            lambda d: report_tables.kernel_time_sources(d["metrics"]),
            ["metrics"],
            "The same kernel launches timed by CUDA events and by CUPTI",
            "For each profiled configuration, the median of 20 launches timed with CUDA events "
            "and the median of CUPTI's records of the same launches, and their ratio.",
            cupti=True,
        ),
        _tab(
            "ladder",
            "new (ladder)",
            lambda d: ladder.table(d["timings"]),
            ["timings"],
            "The ladder to cuBLAS: GFLOP/s, % of the reference, gain and GFLOP/s per watt per rung "
            "(each rung's fastest instantiation)",
            "Per precision class and rung: the idea (the first line of its kernel file), its "
            "tuned parameters (followed by the GPU model they were tuned on where that is not "
            "the run's: config tuned_gpu), and at each size, under the condition named in `measured on` "
            "(normal inputs, sustained load, where the run has it), its GFLOP/s, its percentage "
            "of the cuBLAS reference of its class, its gain over the rung before it and its "
            "GFLOP/s per watt (energy counter over the timed window); beside them the GFLOP/s "
            "and percentage on integers 0-9 timed in bursts, where the run measured those too.",
        ),
        _tab(
            "sweep",
            "new (ladder)",
            lambda d: ladder.sweep(d["timings"]),
            ["timings"],
            "The ladder at every size: each class's best rung against its cuBLAS per shape",
            "Per precision class and shape (square sizes, then products with one small side): "
            "the fastest rung there and its parameters, its GFLOP/s and its reference's, the "
            "percentage, the target for that kind of shape (docs/ladder.md: 90% of cuBLAS for "
            "square sizes from 2048, 75% at 1024 and 1536, 80% with one small side) and whether "
            "it is met; `output tiles`, `k splits` and `tiles split` what the rung's launch "
            "did (all its tiles split where they fill no wave of multiprocessors, the last "
            "wave's where a persistent rung splits only those: kernels/split_k.cuh); "
            "`reference rows` says whether the reference read rows padded as the "
            "kernels' (config reference_rows); `measured on` the inputs and load (sustained where "
            "the shape was measured so, else bursts); `tuning saw it` whether the rung ran an "
            "instantiation tuned at that very shape (its row's tuned_for).",
        ),
        _tab(
            "shapes",
            "new (ladder)",
            lambda d: ladder.shapes_summary(d["timings"]),
            ["timings"],
            "The ladder at any shape: each class's best rung against its cuBLAS over the products",
            "Per precision class over the run's products (the sweep table's rows): how many, the "
            "best rung's geometric mean and least percentage of the cuBLAS of its class (the "
            "product and rung where it is least), against the any-shape targets (docs/ladder.md: "
            "95% and 85%), how many products fall below 85%, and how many the tuning saw (its "
            "row tuned at that very shape).",
        ),
        _tab(
            "ladder_profile",
            "new (ladder)",
            lambda d: ladder.profile_table(d["metrics"]),
            ["metrics"],
            "What limits each rung (Nsight Compute)",
            "Per profiled rung: registers per thread, shared memory per block (static and "
            "dynamic), achieved occupancy, and the limiter: the SM and memory throughput as a "
            "percentage of peak (speed of light) and the two warp stall reasons that cost the "
            "most cycles per issued instruction.",
        ),
        _tab(
            "tuned",
            "new (ladder)",
            lambda d: ladder.tuned(d["timings"]),
            ["timings"],
            "Tuned parameters: each rung's fastest instantiation at each tuning shape",
            "Per GPU model, rung and tuning shape (the run's squares from 1024 up and its "
            "products with one small side whose sides are multiples of 128 and work m x n x k "
            "at least 1024^3; sustained where measured so, else bursts), the fastest verified "
            "instantiation and how many were measured. The ladder and sweep presets run these, "
            "each product the row tuned nearest to it (the logarithms of m, n and k; "
            "kernels/tuned.csv keeps them per GPU model).",
        ),
        _tab(
            "calibration",
            "new (ladder)",
            lambda d: _calibration(d["timings"], d["manifests"]),
            ["timings", "manifests"],
            "The tuning's time model: each instantiation's costs",
            "Per GPU model, rung and instantiation verified at three or more shapes, the costs "
            "of the time model (core/timemodel.py) fitted to its kernel times: fixed, per k-tile, per "
            "whole and per split unit of the busiest worker (microseconds), per byte of partial "
            "sums (one figure per rung), the blocks a multiprocessor holds (grid kernels), and "
            "the worst relative error of the rung's fit. Point a run's `calibration` at it: "
            "each product then runs the instantiation the model predicts fastest "
            "(kernels/calibration.csv keeps them per GPU model).",
        ),
        _tab(
            "verification",
            "E2 (seed 001), E3g (seed 002)",
            lambda d: report_tables.verification(d["timings"]),
            ["timings"],
            "Verification: relative L2 error, writes outside C, Freivalds, first mismatches",
            "Every configuration's verification (seed 001's L2 check and printDiff).",
        ),
        _tab(
            "device_properties",
            "E4c (seed 003)",
            lambda d: report_tables.device_properties(d["manifests"], d["timings"]),
            ["timings", "manifests"],
            "Device properties (seed 003's deviceQuery)",
            "The device's properties, as deviceQuery prints them.",
        ),
        _tab(
            "leading_dimensions",
            "E5a (seed 004)",
            lambda d: report_tables.leading_dimensions(d["timings"]),
            ["timings"],
            "Padded leading dimensions: packing buffer vs strided copy (seed 004)",
            "Padded leading dimensions: packing buffer vs cudaMemcpy2D vs strided.",
        ),
        _tab(
            "provenance",
            "all",
            lambda d: report_tables.provenance(d["timings"], d["manifests"]),
            ["timings", "manifests"],
            "Provenance of this run",
            "Provenance: device, driver, CUDA runtime, CuPy, commit, packages.",
        ),
    )
}

OUTPUTS: dict[str, Output] = {f"figure:{k}": v for k, v in FIGURES.items()} | {
    f"table:{k}": v for k, v in TABLES.items()
}


def names() -> dict[str, list[str]]:
    """The names the config may ask for under report.figures and report.tables."""
    return {"figures": list(FIGURES), "tables": list(TABLES)}


def caption(o: Output) -> str:
    """The report caption: what it shows and what the report concluded, plain text (the report
    shows job parameters as they are; workflow/report/output.rst sets the experiment label, a
    parameter of its own, in bold before it)."""
    return o.caption


class MixedGpuModels(ValueError):
    """A table holds rows of several GPU models and the config chose none."""


def one_gpu_model(name: str, df: pd.DataFrame | None, chosen: str | None) -> pd.DataFrame | None:
    """The rows of one GPU model.  Every figure and report table compares kernels with each
    other and with cuBLAS on one GPU; a run whose rows span several models (a SLURM run whose
    jobs landed on two kinds of node) is not drawn as one: the user names the model
    (`gpu_model`), or is told which models there are."""
    if df is None or GPU_KEY not in df.columns:
        return df
    models = sorted(set(df[GPU_KEY].dropna().astype(str)) - {""})
    if chosen:
        if chosen not in models:
            raise MixedGpuModels(
                f"config key 'gpu_model': {chosen!r} measured no row of {name}; GPU models in "
                f"it: {', '.join(models) or 'none'}"
            )
        return df[df[GPU_KEY] == chosen]
    if len(models) > 1:
        raise MixedGpuModels(
            f"{name} holds rows measured on {len(models)} GPU models ({'; '.join(models)}): "
            "figures and report tables compare kernels on one GPU, so the models are kept apart. "
            "Render one model at a time with --config render_only=true "
            f"gpu_model='{models[0]}' (and likewise for the others), or measure on one model "
            "(on SLURM, constrain the jobs to one GPU type: docs/cluster.md)"
        )
    return df


# the schema (core/schemas.py) of each named input of a maker
INPUT_KINDS = {
    "timings": "timings",
    "roofline": "roofline",
    "ceilings": "ceilings",
    "nvprof": "nvprof_metrics",
    "metrics": "metrics",
}


def load_inputs(paths: dict, gpu_model: str | None = None) -> dict:
    """The inputs of a maker, read from their paths and checked where they are read (each
    against its schema, the timings against the run manifests given with them: TableError
    otherwise); manifests as a list of paths; a table without rows becomes None; each table's
    rows of one GPU model (one_gpu_model)."""
    out = {}
    manifests = paths.get("manifests")
    if manifests is not None:
        out["manifests"] = [
            Path(p) for p in (manifests if isinstance(manifests, list) else [manifests])
        ]
    # pandera's import is a third of a second: not paid by every snakemake command's planning
    from mmbench.core.schemas import check_against_manifests, read_table

    for name, path in paths.items():
        if name == "manifests":
            continue
        df = read_table(path, INPUT_KINDS[name])
        if name == "timings" and out.get("manifests"):
            check_against_manifests(df, out["manifests"], str(path))
        out[name] = one_gpu_model(str(path), df, gpu_model) if not df.empty else None
    return out


def wanted(figures: list[str], tables: list[str], profiled: bool) -> tuple[list[str], list[str]]:
    """The figures and tables of the config's lists that a run draws: those that read a
    profiler's table only where the run is profiled (or, rendering only, the copied results
    hold the profiles)."""
    return (
        [f for f in figures if profiled or not FIGURES[f].needs_profile],
        [t for t in tables if profiled or not TABLES[t].needs_profile],
    )


def by_data(figures: list[str], tables: list[str]) -> tuple[tuple[list, list], tuple[list, list]]:
    """The two render jobs' lists: (figures, tables) that read the profilers' tables alone,
    drawn as soon as those exist, and (figures, tables) that read the timings, drawn at the
    run's end."""
    early = [
        [n for n in names if set(catalog[n].inputs) <= PROFILE_INPUTS]
        for names, catalog in ((figures, FIGURES), (tables, TABLES))
    ]
    late = [[n for n in names if n not in drawn]
            for names, drawn in zip((figures, tables), early, strict=True)]  # fmt: skip
    return (early[0], early[1]), (late[0], late[1])


def input_names(figures: list[str], tables: list[str]) -> set[str]:
    """The named inputs (timings, manifests, roofline, ...) these figures and tables read."""
    return {
        n for o in [FIGURES[f] for f in figures] + [TABLES[t] for t in tables] for n in o.inputs
    }


def notes(figures: list[str], tables: list[str]) -> dict[str, dict[str, str]]:
    """ "figure:<name>" or "table:<name>" -> its experiment label and report caption (the report's
    caption templates, workflow/report/figure.rst and table.rst, read them)."""
    return {f"{o.kind}:{o.name}": dict(experiment=o.experiment, caption=caption(o))
            for o in [FIGURES[f] for f in figures] + [TABLES[t] for t in tables]}  # fmt: skip


def missing(output: Output, data: dict) -> str | None:
    """Why this run has no data for a figure or table (None: it has): the figure's own check,
    run without plotting; a table made, and found without rows."""
    try:
        if output.kind == "figure":
            output.make(data, None)
        elif not len(output.make(data)):
            return "this run has no rows for it"
    except report_tables.NoData as err:
        return str(err)
    return None

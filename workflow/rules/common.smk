# Configuration (coerced, validated against workflow/schemas/config.schema.yaml), the registry,
# the plan of configurations, and the input functions the other rule files use.
import os
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")

# The pipeline's Python package, workflow/scripts/mmbench: the scripts import it from their own
# folder (Snakemake puts a script's folder on its path); the Snakefile does the same here.
sys.path.insert(0, str(Path(workflow.basedir) / "workflow" / "scripts"))

from mmbench import plan as mmplan  # noqa: E402
from mmbench.compile import nvcc_command  # noqa: E402
from mmbench.config import ConfigError, validate  # noqa: E402
from mmbench.registry import kernel_dependencies, load_registry  # noqa: E402

KERNELS = Path(workflow.basedir) / "kernels"

REGISTRY = load_registry(KERNELS / "registry.yaml")
ENV = "../../environment.yml"

try:
    config.update(validate(config, REGISTRY))
    FIGURES = config["report"]["figures"]
    TABLES = config["report"]["tables"]
    # results/ for the main experiment, results/<experiment>/ for a preset's
    R = os.path.join("results", config["experiment"]).rstrip(os.sep)
    RENDER_ONLY = config["render_only"]
    if RENDER_ONLY:  # nothing is compiled or measured: no GPU, no architecture needed
        ARCH, PLAN, PROFILE, PROFILE_REFUSED = None, mmplan.Plan(), [], []
    else:
        GPUS = mmplan.detect_gpus()
        ARCH = mmplan.resolve_arch(config, GPUS)
        PLAN = mmplan.expand(config, REGISTRY)
        PROFILE, PROFILE_REFUSED = mmplan.profile_plan(config, REGISTRY)
        mmplan.check_device_memory(PLAN, *mmplan.resolve_memory(config, GPUS))
except ConfigError as err:
    raise WorkflowError(str(err)) from None

if PLAN.refused:
    print(
        f"{len(PLAN.refused)} configuration(s) refused before running "
        f"(listed in {R}/tables/refused.csv), e.g.: {PLAN.refused[0]['variant']}: "
        f"{PLAN.refused[0]['reason']}",
        file=sys.stderr,
    )


wildcard_constraints:
    variant="|".join(REGISTRY),
    figure="|".join(FIGURES) or "(?!)",
    table="|".join(TABLES) or "(?!)",
    dtype="float32|float64|int32",
    tile=r"\d+",
    coarsen=r"\d+",
    arch=r"sm_\d+[af]?",


def cubin_path(arch, variant, dtype, tile, coarsen, ext="cubin"):
    return f"results/build/{arch}/{variant}/{dtype}_t{tile}_f{coarsen}.{ext}"


def kernel_source(wildcards):
    return str(KERNELS / REGISTRY[wildcards.variant].source)


def kernel_headers(wildcards):
    return [str(p) for p in kernel_dependencies(kernel_source(wildcards))[1:]]


def variant_cubins(wildcards):
    return [
        cubin_path(ARCH, *inst)
        for inst in PLAN.instantiations
        if inst[0] == wildcards.variant
    ]


def variant_sources(wildcards):
    v = REGISTRY[wildcards.variant]
    return (
        [str(p) for p in kernel_dependencies(KERNELS / v.source)] if v.compiled else []
    )


def planned_ptxas_reports(wildcards):
    return [cubin_path(ARCH, *inst, ext="ptxas.txt") for inst in PLAN.instantiations]


def profile_path(c):
    return f"{R}/profile/{c.variant}/{c.dtype}_t{c.tile}_f{c.coarsen}_{c.m}x{c.n}x{c.k}.csv"


PROFILE_BY_PATH = {profile_path(c): c for c in PROFILE}


def profile_outputs(wildcards):
    return list(PROFILE_BY_PATH)


def profile_configuration(wildcards):
    w = wildcards
    path = f"{R}/profile/{w.variant}/{w.dtype}_t{w.tile}_f{w.coarsen}_{w.m}x{w.n}x{w.k}.csv"
    return PROFILE_BY_PATH[path].as_dict()


def profile_cubin(wildcards):
    if not REGISTRY[wildcards.variant].compiled:
        return []
    return cubin_path(
        ARCH, wildcards.variant, wildcards.dtype, wildcards.tile, wildcards.coarsen
    )


def profile_targets():
    if not PROFILE:
        return []
    return [
        f"{R}/tables/metrics.csv",
        f"{R}/tables/e3f_metrics.csv",
        f"{R}/tables/roofline.csv",
    ]


EXPERIMENT_LABEL = f"Experiment {config['experiment'] or 'main'}"


def figure_inputs(wildcards):
    inputs = {"timings": f"{R}/tables/timings.csv"}
    if wildcards.figure == "roofline":
        inputs |= {
            "roofline": f"{R}/tables/roofline.csv",
            "ceilings": f"{R}/tables/ceilings.csv",
        }
    return inputs


def table_inputs(wildcards):
    inputs = {"timings": f"{R}/tables/timings.csv"}
    if wildcards.table == "e3f":
        inputs["e3f"] = f"{R}/tables/e3f_metrics.csv"
    return inputs


def report_targets():
    """Figures and tables of this experiment; those needing profiler data only when the
    profile: section is on (or, rendering only, when its tables exist)."""
    have_profile = bool(PROFILE) or (
        RENDER_ONLY and Path(f"{R}/tables/roofline.csv").exists()
    )
    figs = [f for f in FIGURES if f != "roofline" or have_profile]
    tabs = [t for t in TABLES if t != "e3f" or have_profile]
    if RENDER_ONLY:
        missing = [p for p in (f"{R}/tables/timings.csv",) if not Path(p).exists()]
        if missing:
            raise WorkflowError(
                f"render_only=true renders from an existing results folder, but {missing[0]} "
                "is missing; copy the results folder of a run here (or drop render_only)"
            )
    return [f"{R}/figures/{f}.png" for f in figs] + [
        f"{R}/report/{t}.html" for t in tabs
    ]


def print_summary():
    summary = Path(f"{R}/tables/summary.txt")
    if summary.exists():
        print(summary.read_text())

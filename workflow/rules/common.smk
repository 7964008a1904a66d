# Configuration (coerced, validated against workflow/schemas/config.schema.yaml), the registry,
# the plan of configurations, and the input functions the other rule files use.
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
        f"(listed in results/tables/refused.csv), e.g.: {PLAN.refused[0]['variant']}: "
        f"{PLAN.refused[0]['reason']}",
        file=sys.stderr,
    )


wildcard_constraints:
    variant="|".join(REGISTRY),
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
    return f"results/profile/{c.variant}/{c.dtype}_t{c.tile}_f{c.coarsen}_{c.m}x{c.n}x{c.k}.csv"


PROFILE_BY_PATH = {profile_path(c): c for c in PROFILE}


def profile_outputs(wildcards):
    return list(PROFILE_BY_PATH)


def profile_configuration(wildcards):
    w = wildcards
    path = f"results/profile/{w.variant}/{w.dtype}_t{w.tile}_f{w.coarsen}_{w.m}x{w.n}x{w.k}.csv"
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
        "results/tables/metrics.csv",
        "results/tables/e3f_metrics.csv",
        "results/tables/roofline.csv",
    ]


def print_summary():
    summary = Path("results/tables/summary.txt")
    if summary.exists():
        print(summary.read_text())

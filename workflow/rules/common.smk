# The input functions the other rule files use (wildcards to paths), over the experiment that
# mmbench/plan/experiment.py plans: the config merged and validated, the registry, the
# configurations to measure and to profile.  What decides the plan is in mmbench/plan/.
import functools
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError


def gpu_job_threads(wildcards):
    """A GPU job's cores: none where the jobs run here (`--cores 1` compiles and renders beside
    the measurement; the gpu resource and each GPU's lock keep them one at a time), one under
    a cluster, which is asked for a GPU job's CPUs."""
    return 0 if workflow.local_exec else 1


def arch():
    """The architecture to compile for; stops the run where it is unknown: with the no-GPU
    message alone (no Snakemake header or traceback) where no GPU is here."""
    if EXPERIMENT.no_gpu:
        print(f"mmbench: {EXPERIMENT.arch_problem}", file=sys.stderr)
        sys.exit(1)
    if EXPERIMENT.arch_problem:
        raise WorkflowError(EXPERIMENT.arch_problem)
    return EXPERIMENT.arch


def buildable_cubins(variants=None):
    """The build of every instantiation the registry can build here (of `variants` only)."""
    return [build_path(arch(), v, slug(params), REGISTRY)
            for v, params in mmplan.all_instantiations(REGISTRY, arch())
            if variants is None or v in variants]  # fmt: skip


REBUILT = set()  # cubins found changed in this run (said once each)


def build_ticket(wildcards):
    v = getattr(wildcards, "variant", "microbench")
    i = getattr(wildcards, "instance", "peak")
    return rebuild_ticket(build_path(wildcards.arch, v, i, REGISTRY), REBUILT)


def kernel_source(wildcards):
    return str(KERNELS / REGISTRY[wildcards.variant].source)


def kernel_headers(wildcards):
    return [str(p) for p in kernel_dependencies(kernel_source(wildcards))[1:]]


@functools.lru_cache(maxsize=None)
def _sources_sha(source):
    return source_hash(kernel_dependencies(KERNELS / source))


def sources_sha(wildcards):
    """A compile's params (an edit reruns it even where the edited file is older than the cubin;
    from the wildcards: Snakemake's params trigger skips params derived from input)."""
    return _sources_sha(REGISTRY[wildcards.variant].source)


def variant_sources(wildcards):
    v = REGISTRY[wildcards.variant]
    deps = kernel_dependencies(KERNELS / v.source) if v.compiled else []
    return [str(p) for p in deps]


def variant_cubins(wildcards):
    slugs = [slug(p) for v, p in PLAN.instantiations if v == wildcards.variant]
    return {i: build_path(arch(), wildcards.variant, i, REGISTRY) for i in slugs}  # fmt: skip


def planned_ptxas_reports(wildcards):
    return [cubin_path(arch(), v, slug(p), "ptxas.txt") for v, p in PLAN.instantiations]


@functools.lru_cache(maxsize=None)
def paired_builds(variant):
    """Instantiation -> the baseline build's cubin of a variant measured side by side with one
    (mmbench/plan/pairs.py); {} for the others."""
    v = REGISTRY[variant]
    try:
        return mmpairs.paired_builds(EXPERIMENT, variant, arch() if BASELINE else None,
                                     _sources_sha(v.source) if v.compiled else "", cubin_path)  # fmt: skip
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


def pair_cubins(wildcards):
    base = paired_builds(wildcards.variant)
    return {i: c for i, c in variant_cubins(wildcards).items() if i in base}


def pair_inputs(wildcards):
    """A pair job's cubins: this build's, and the baseline build's (named base_<instance>)."""
    base = paired_builds(wildcards.variant)
    return pair_cubins(wildcards) | {f"base_{i}": p for i, p in base.items() if p}


def pair_configurations(wildcards):
    base = paired_builds(wildcards.variant)
    return [c.as_dict() for c in PLAN.runs[wildcards.variant] if c.instance in base]


def this_pairs(wildcards):
    if RENDER_ONLY:  # those present
        return sorted(str(p) for p in Path(f"{R}/pairs").glob("*.csv"))
    return [f"{R}/pairs/{v}.csv" for v in PLAN.runs if paired_builds(v)]


def baseline_registry_file(wildcards):
    """The registry a pair job's baseline build launches with: the baseline's own or ""."""
    if isinstance(BASELINE, dict) and BASELINE.get("variant") == wildcards.variant:
        return str(BASELINE.get("registry") or "")
    return ""


def baseline_source(wildcards):
    return BASELINE["source"]


def baseline_defines(wildcards):
    try:
        return mmpairs.baseline_defines(
            BASELINE, REGISTRY, wildcards.variant, wildcards.instance
        )
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


def profile_outputs(wildcards):
    return [f"{stem}.csv" for stem in PROFILE_BY_STEM]


def spec_of(c):
    built = build_path(arch(), c.variant, c.instance, REGISTRY)
    return target_spec(EXPERIMENT, c, built)


def profile_spec(wildcards):
    w = wildcards
    return spec_of(
        PROFILE_BY_STEM[f"{R}/profile/{w.variant}/{w.instance}_{w.m}x{w.n}x{w.k}"]
    )


def ncu_batch_entries():
    return [dict(stem=stem, spec=spec_of(c)) for stem, c in PROFILE_BY_STEM.items()]


def profile_cubin(wildcards):
    return [c for c in [profile_spec(wildcards)["cubin"]] if c]


def profile_cubins(wildcards):
    """Every profiled configuration's cubin (the batch profiles them all: rule profile_ncu)."""
    return sorted({spec_of(c)["cubin"] for c in PROFILE} - {None})


def ncu_batch_table(wildcards):
    return [] if config["profile"]["ncu"] == "off" else [f"{R}/profile/ncu_batch.json"]


def profile_job_gpus(wildcards):
    """A profile job's share of the gpu resource: none in a local run with the run's worker
    where the batch made its rows and no Nsight Systems records it (the job then does not hold
    the slot the next measurement starts up in); one elsewhere."""
    from mmbench.profile import profilers

    nsys = config["profile"]["nsys"]
    recorded = nsys != "off" and profilers.find_tool("nsys", nsys) is not None
    return int(not SERVE_WORKER or config["profile"]["ncu"] == "off" or recorded)


def manifests():
    if RENDER_ONLY:  # those present
        return sorted(str(p) for p in Path(f"{R}/runs").glob("*.manifest.json"))
    return [f"{R}/runs/{v}.manifest.json" for v in PLAN.runs]


def this_run(wildcards):
    """This run's per-variant tables and samples (rendering only: those present)."""
    # a copied run keeps its per-variant tables, or at least timings.csv
    if RENDER_ONLY:
        tables = sorted(str(p) for p in Path(f"{R}/runs").glob("*.csv"))
        tables = tables or [f"{R}/tables/timings.csv"]
        samples = [t[: -len(".csv")] + ".samples.json.gz" for t in tables]
        return dict(tables=tables, samples=[s for s in samples if Path(s).exists()])
    return dict(tables=[f"{R}/runs/{v}.csv" for v in PLAN.runs],
                samples=[f"{R}/runs/{v}.samples.json.gz" for v in PLAN.runs])  # fmt: skip


def render_inputs(wildcards):
    try:
        lists = (RENDER_FIGURES, RENDER_TABLES)
        return render.inputs(R, RENDER_ONLY, *lists, manifests(), DRAWN_EARLY)
    except ValueError as err:
        raise WorkflowError(str(err)) from None

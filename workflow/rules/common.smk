# The input functions the other rule files use, over the experiment that mmbench/plan/experiment.py
# plans (the config merged and validated, the registry, the configurations to measure and to
# profile), as the rna-seq-star-deseq2 workflow keeps its common.smk.
import functools
import os
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

min_version("9.0")

try:  # the pipeline's package (workflow/scripts/mmbench), installed by the README's set-up
    from mmbench.core.registry import kernel_dependencies, slug, source_hash
    from mmbench.core.columns import TableError
    from mmbench.core.paths import settle_future_times
    from mmbench.measure import gpus as mmgpus
    from mmbench.plan import pairs as mmpairs
    from mmbench.plan import plan as mmplan
    from mmbench.plan.compile import cubin_intact
    from mmbench.plan.config import ConfigError
    from mmbench.plan.experiment import gpu_jobs_without_gpu, last_seconds, prepare
    from mmbench.plan.experiment import time_estimate, work_words
    from mmbench.plan.slurm import slurm_unreachable
    from mmbench.report.catalogue import FIGURES as FIGURE_CATALOGUE
    from mmbench.report.catalogue import TABLES as TABLE_CATALOGUE
    from mmbench.report.catalogue import (
        PROFILE_INPUTS,
        MixedGpuModels,
        caption,
        inputs_of,
        split_by_data,
    )
    from mmbench.report.catalogue import names as output_names
except ImportError as err:
    raise WorkflowError(
        f"the mmbench package is not importable in this Python ({sys.executable}): {err}. "
        "Install it from the repository root with `pip install -e .` (the README's set-up "
        "command does this)."
    ) from None

# the checkout: config/, kernels/ and workflow/ (this Snakefile's folder) side by side
REPO = Path(workflow.basedir).parent

# The defaults (config/config.yaml) under whatever --configfile and --config give: merged by
# prepare rather than with `configfile:`, so no run announces a cached copy of config.yaml.
try:
    EXPERIMENT = prepare(dict(config), REPO, outputs=output_names())
except ConfigError as err:
    # the message alone (key, value, what is valid): no "WorkflowError in file ..." header and
    # no traceback line, which would point at this file rather than at the user's config
    print(f"mmbench: {err}", file=sys.stderr)
    sys.exit(1)
for line in EXPERIMENT.notes:
    print(f"mmbench: {line}", file=sys.stderr)
# results dated in the future (a copy from a machine whose clock ran ahead) would stall every job
# that reads them, or hide an edit from Snakemake's time check: their times are set to now
_SETTLED = settle_future_times(Path("results"))
if _SETTLED:
    print(f"mmbench: {_SETTLED}", file=sys.stderr)
config.update(EXPERIMENT.config)
REGISTRY, REGISTRY_FILE, KERNELS = (
    EXPERIMENT.registry,
    EXPERIMENT.registry_file,
    EXPERIMENT.kernels,
)
R, RENDER_ONLY, BASELINE = (
    EXPERIMENT.results,
    EXPERIMENT.render_only,
    EXPERIMENT.baseline,
)
ARCH, PLAN, PROFILE = EXPERIMENT.arch, EXPERIMENT.plan, EXPERIMENT.profile
FIGURES, TABLES = config["report"]["figures"], config["report"]["tables"]


# One GPU where nothing says otherwise: `--resources gpu=N` (N GPUs here, N GPU jobs at once)
# or a profile's `resources:` (profiles/slurm: gpu=16) set the total; a plain local run measures
# on one GPU, the first (MMBENCH_ONE_GPU, measure/gpus.py), and runs two GPU jobs at a time: one
# holding the GPU, the next started up (its process, its imports, its worker's) and waiting at
# the GPU's lock, so that its start-up is not added to the run.  (A limit in workflow/profiles/default
# would override the cluster profile's: Snakemake layers the workflow profile over --profile.)
if "gpu" not in workflow.global_resources:
    workflow.register_resource("gpu", 2)
    mmgpus.first_gpu_only()


def gpu_job_threads(wildcards):
    """The cores a GPU job (measurement, profile, ceilings) takes from `--cores`: none where the
    jobs run here, so that `--cores 1` compiles, aggregates and renders on its core while the GPU
    measures (the jobs that hold the GPU are one at a time all the same: the gpu resource above
    and each job's lock on its GPU, measure/gpus.py); one where a cluster runs them (SLURM is
    asked for a GPU job's CPUs: profiles/slurm)."""
    return 0 if workflow.local_exec else 1


# one worker process measures the local run's variants one after another, keeping its CUDA
# context, the inputs' references and its host buffers (config `worker`, measure/served.py);
# under SLURM each job is an allocation of its own, with its own worker
SERVE_WORKER = workflow.local_exec and config["worker"] == "run"


# among the GPU jobs ready at once, the profilers and the ceilings first, the measurements after
# them: what only the profiles need (the metrics, nvprof-named and roofline tables) is made
# while the GPU measures, and after the last measurement only what needs the timings is left.
# (lab: code-choices, "profilers first").  The figures that read no profile wait for the
# timings alone (timing_targets).
GPU_PRIORITY = dict(ceilings=20, profile=20, measure=10)


def arch():
    """The architecture to compile for; stops the run (not --lint) where it is unknown: with the
    no-GPU message alone (no Snakemake header or traceback) where no GPU is here."""
    if EXPERIMENT.no_gpu:
        print(f"mmbench: {EXPERIMENT.arch_problem}", file=sys.stderr)
        sys.exit(1)
    if EXPERIMENT.arch_problem:
        raise WorkflowError(EXPERIMENT.arch_problem)
    return ARCH


wildcard_constraints:
    variant="|".join(REGISTRY),
    figure="|".join(FIGURES) or "(?!)",
    table="|".join(TABLES) or "(?!)",
    instance=r"[A-Za-z0-9_]+",
    m=r"\d+",
    n=r"\d+",
    k=r"\d+",
    arch=r"sm_\d+[af]?",


def cubin_path(arch, variant, instance, ext="cubin"):
    """One cubin per instantiation, named by its parameter slug."""
    return f"results/build/{arch}/{variant}/{instance}.{ext}"


def buildable_cubins(variants=None):
    """The cubin of every instantiation the registry can build for this architecture, of
    `variants` only where given (rules compile and compile_all)."""
    return [
        cubin_path(arch(), v, slug(params))
        for v, params in mmplan.all_instantiations(REGISTRY, arch())
        if variants is None or v in variants
    ]


REBUILT = set()  # cubins found changed in this run (said once each)


def build_ticket(wildcards):
    """The input of a cubin's build that changes when the cubin must be built again:
    `<instance>.rebuild`, a count, written only when needed (no job makes it, so a run's
    progress counts compiles, not bookkeeping).  A cubin that is not what its build wrote
    (overwritten, truncated, copied from another build: its sha256 differs from the `.sha256`
    that compile_kernel recorded; or swapped with its `.sha256` for another instantiation's:
    the name built into it differs, plan/compile.cubin_identity) has its count raised, so
    Snakemake builds it again (an updated input) and measures again what ran it.  (Deleting it
    would not do: Snakemake does not rebuild a missing intermediate file whose downstream
    outputs are present.)  No input where the ticket was never needed."""
    instance = getattr(wildcards, "instance", "peak")
    variant = getattr(wildcards, "variant", "microbench")
    cubin = Path(cubin_path(wildcards.arch, variant, instance))
    ticket = cubin.with_suffix(".rebuild")
    if (
        str(cubin) not in REBUILT
        and cubin_intact(cubin, cubin.with_suffix(".sha256")) is False
    ):
        REBUILT.add(str(cubin))
        count = (
            int(((ticket.read_text() if ticket.exists() else "").split() or ["0"])[0])
            + 1
        )
        ticket.write_text(f"{count}\n")
        print(
            f"mmbench: {cubin} is not what its build wrote (its sha256 differs from "
            f"{cubin.with_suffix('.sha256')}, or it names another instantiation): building "
            "it again, and measuring again what ran it",
            file=sys.stderr,
        )
    return [str(ticket)] if ticket.exists() else []


def kernel_source(wildcards):
    return str(KERNELS / REGISTRY[wildcards.variant].source)


def kernel_headers(wildcards):
    return [str(p) for p in kernel_dependencies(kernel_source(wildcards))[1:]]


def sources_sha(wildcards):
    """The kernel's source and headers, hashed: a compile's params, so that an edit reruns it
    even where the edited file is older than the cubin (Snakemake's mtime trigger misses that:
    a copied or checked-out tree keeps its files' times while results/build/ stays).  Found from
    the wildcards, not the job's input: Snakemake's params trigger skips params derived from
    input."""
    return _sources_sha(REGISTRY[wildcards.variant].source)


@functools.lru_cache(maxsize=None)
def _sources_sha(source: str) -> str:
    return source_hash(kernel_dependencies(KERNELS / source))


def variant_cubins(wildcards):
    slugs = [
        slug(params) for v, params in PLAN.instantiations if v == wildcards.variant
    ]
    return {name: cubin_path(arch(), wildcards.variant, name) for name in slugs}


@functools.lru_cache(maxsize=None)
def paired_builds(variant):
    """Instantiation slug -> the baseline build's cubin, for the variants measured side by side
    with a baseline build (mmbench/plan/pairs.py); {} for the others."""
    if RENDER_ONLY or not BASELINE or variant not in PLAN.runs:
        return {}
    if BASELINE == "previous" and not config["compare"]["paired"]:
        return {}
    v = REGISTRY[variant]
    if not v.compiled and BASELINE != "itself":
        return {}
    instances = sorted({c.instance for c in PLAN.runs[variant]})
    try:
        return mmpairs.baseline_cubins(
            BASELINE,
            v,
            instances,
            arch(),
            R,
            _sources_sha(v.source) if v.compiled else "",
            cubin_path,
        )
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


def paired_variants():
    return [v for v in PLAN.runs if paired_builds(v)]


def baseline_registry_file(wildcards):
    """The registry file the baseline build of a pair job's variant launches with: the
    baseline's own (config `baseline`'s `registry`, with a kernel file of an older tree: its
    grid, arguments and shape facts, as its -D flags) or "" (this run's registry)."""
    if isinstance(BASELINE, dict) and BASELINE.get("variant") == wildcards.variant:
        return str(BASELINE.get("registry") or "")
    return ""


def pair_cubins(wildcards):
    """This build's cubins of the instantiations a pair job measures."""
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
    """The pairs tables of this run's paired comparison (none where nothing is paired; those
    present, rendering only)."""
    if RENDER_ONLY:
        return sorted(str(p) for p in Path(f"{R}/pairs").glob("*.csv"))
    return [f"{R}/pairs/{v}.csv" for v in paired_variants()]


def baseline_source(wildcards):
    return BASELINE["source"]


def baseline_defines(wildcards):
    try:
        return mmpairs.baseline_defines(
            BASELINE, REGISTRY, wildcards.variant, wildcards.instance
        )
    except ConfigError as err:
        raise WorkflowError(str(err)) from None


def variant_sources(wildcards):
    v = REGISTRY[wildcards.variant]
    return (
        [str(p) for p in kernel_dependencies(KERNELS / v.source)] if v.compiled else []
    )


def planned_ptxas_reports(wildcards):
    return [
        cubin_path(arch(), v, slug(params), ext="ptxas.txt")
        for v, params in PLAN.instantiations
    ]


def profile_stem(c):
    return f"{R}/profile/{c.variant}/{c.instance}_{c.m}x{c.n}x{c.k}"


PROFILE_BY_STEM = {profile_stem(c): c for c in PROFILE}


def profile_outputs(wildcards):
    return [f"{stem}.csv" for stem in PROFILE_BY_STEM]


def target_spec(c):
    """What the profilers' target reads of a profiled configuration (profile/target.py): the
    configuration, its cubin (none for a library call), the kernel Nsight Compute looks for,
    the warm-up launches, the metric set and, as the measurements check theirs, the Freivalds
    vectors (a served target's reference is then theirs too)."""
    v = REGISTRY[c.variant]
    return dict(
        configuration=c.as_dict(),
        registry=REGISTRY_FILE,
        cubin=cubin_path(arch(), c.variant, c.instance) if v.compiled else None,
        kernel_name=v.profile_kernel or v.symbol,
        warmup=config["profile"]["warmup_launches"],
        metric_set=config["profile"]["metric_set"],
        freivalds_vectors=config["freivalds_vectors"],
    )


def profile_spec(wildcards):
    w = wildcards
    return target_spec(
        PROFILE_BY_STEM[f"{R}/profile/{w.variant}/{w.instance}_{w.m}x{w.n}x{w.k}"]
    )


def profile_cubin(wildcards):
    cubin = profile_spec(wildcards)["cubin"]
    return [cubin] if cubin else []


def profile_cubins(wildcards):
    """Every profiled configuration's cubin (the batch profiles them all: rule profile_ncu)."""
    return sorted({target_spec(c)["cubin"] for c in PROFILE} - {None})


def ncu_batch_entries():
    """What the batch profiles, in order: each configuration's stem and spec."""
    return [dict(stem=stem, spec=target_spec(c)) for stem, c in PROFILE_BY_STEM.items()]


def ncu_batch_table(wildcards):
    """The batch's rows (rule profile_ncu), where Nsight Compute is not turned off."""
    return [] if config["profile"]["ncu"] == "off" else [f"{R}/profile/ncu_batch.json"]


def profile_job_gpus(wildcards):
    """A profile job's share of the gpu resource: none in a local run with the run's worker,
    where the batch makes its rows (Nsight Compute's and the event-timed run's) and no Nsight
    Systems records it, so that the profile jobs do not hold the slot in which the next
    measurement job starts up; one elsewhere (under SLURM each job is an allocation of its
    own)."""
    from mmbench.profile import profilers

    nsys = config["profile"]["nsys"]
    recorded = nsys != "off" and profilers.find_tool("nsys", nsys) is not None
    batched = config["profile"]["ncu"] != "off"
    return 0 if SERVE_WORKER and batched and not recorded else 1


def profile_targets():
    if not PROFILE:
        return []
    return [
        f"{R}/tables/metrics.csv",
        f"{R}/tables/nvprof_metrics.csv",
        f"{R}/tables/roofline.csv",
    ]


EXPERIMENT_LABEL = f"Experiment {config['experiment'] or 'main'}"


def manifests():
    """The run manifests: of the planned measurement jobs, or (rendering only) those present."""
    if RENDER_ONLY:
        return sorted(str(p) for p in Path(f"{R}/runs").glob("*.manifest.json"))
    return [f"{R}/runs/{v}.manifest.json" for v in PLAN.runs]


def this_run(wildcards):
    """This run's per-variant tables and samples: of the planned jobs, or (rendering only)
    those present."""
    if (
        RENDER_ONLY
    ):  # a copied run keeps its per-variant tables, or at least timings.csv
        tables = sorted(str(p) for p in Path(f"{R}/runs").glob("*.csv")) or [
            f"{R}/tables/timings.csv"
        ]
        samples = [t[: -len(".csv")] + ".samples.json.gz" for t in tables]
        return dict(tables=tables, samples=[s for s in samples if Path(s).exists()])
    return dict(
        tables=[f"{R}/runs/{v}.csv" for v in PLAN.runs],
        samples=[f"{R}/runs/{v}.samples.json.gz" for v in PLAN.runs],
    )


def input_paths(output):
    """The paths of a catalogue output's named inputs (mmbench/report/catalogue.py)."""
    paths = {
        "timings": f"{R}/tables/timings.csv",
        "roofline": f"{R}/tables/roofline.csv",
        "ceilings": f"{R}/tables/ceilings.csv",
        "nvprof": f"{R}/tables/nvprof_metrics.csv",
        "metrics": f"{R}/tables/metrics.csv",
        "manifests": manifests(),
    }
    return {name: paths[name] for name in output.inputs}


def figure_inputs(wildcards):
    return input_paths(FIGURE_CATALOGUE[wildcards.figure])


def table_inputs(wildcards):
    return input_paths(TABLE_CATALOGUE[wildcards.table])


def have_profile():
    """Profiler tables exist for this experiment: the profile: section is on, or (rendering
    only) the copied results hold them."""
    return bool(PROFILE) or (RENDER_ONLY and Path(f"{R}/tables/roofline.csv").exists())


def checked_tables():
    """The report tables whose data a run may lack and that read only the timings: made when
    the timings hold rows for them (the others are always made)."""
    profiled = have_profile()
    return [
        t
        for t in TABLES
        if set(TABLE_CATALOGUE[t].inputs) <= {"timings"}
        and (profiled or not TABLE_CATALOGUE[t].needs_profile)
    ]


def outputs_with_data(profiles=True):
    """(figures to make, tables to make, [(kind, name, why not)]) of this experiment: a figure
    or a timings table whose data this run lacks is not made (the tables are read once
    written: checkpoints).  `profiles` False: only those that read no profile, known once the
    timings are written, without waiting for the profilers (timing_targets)."""
    profiled = have_profile()
    wanted = [f for f in FIGURES if profiled or not FIGURE_CATALOGUE[f].needs_profile]
    tables = checked_tables()
    if not profiles:
        wanted = [f for f in wanted if not FIGURE_CATALOGUE[f].needs_profile]
        tables = [t for t in tables if not TABLE_CATALOGUE[t].needs_profile]
    if not RENDER_ONLY:
        if wanted or tables:
            checkpoints.timings_table.get()
        if any(FIGURE_CATALOGUE[f].needs_profile for f in wanted):
            checkpoints.roofline_table.get()
    return split_by_data_once(wanted, tables)


_SPLIT = {}  # (outputs, their inputs' sizes and times) -> split_by_data's answer


def split_by_data_once(wanted, tables):
    """split_by_data, read once for the same outputs and the same input files (the input
    functions of `all` ask it again after each checkpoint); a table it cannot trust stops the
    run with its reason."""
    paths = inputs_of(wanted, tables, input_paths)
    files = sorted(
        {str(f) for v in paths.values() for f in (v if isinstance(v, list) else [v])}
    )
    stamps = tuple(
        (
            (f, os.stat(f).st_mtime_ns, os.stat(f).st_size)
            if os.path.exists(f)
            else (f, None)
        )
        for f in files
    )
    key = (tuple(wanted), tuple(tables), stamps)
    if key not in _SPLIT:
        try:
            _SPLIT[key] = split_by_data(
                wanted, tables, input_paths, config["gpu_model"]
            )
        except (MixedGpuModels, TableError) as err:
            raise WorkflowError(str(err)) from None
    return _SPLIT[key]


def report_targets():
    """The tables of this experiment that are made whatever the timings hold (those needing
    profiler data only when the profile: section is on, or, rendering only, when its tables
    exist); the timings tables follow once the timings are written (output_targets)."""
    profiled = have_profile()
    checked = checked_tables()
    tabs = [
        t
        for t in TABLES
        if (profiled or not TABLE_CATALOGUE[t].needs_profile) and t not in checked
    ]
    if RENDER_ONLY:
        missing_input = [
            p for p in (f"{R}/tables/timings.csv",) if not Path(p).exists()
        ]
        if missing_input:
            raise WorkflowError(
                f"render_only=true renders from an existing results folder, but "
                f"{missing_input[0]} is missing; copy the results folder of a run here (or "
                "drop render_only)"
            )
    return [f"{R}/report/{t}.html" for t in tabs]


def timing_targets(wildcards):
    """The figures and timings tables that read no profile and that this run has data for:
    drawn once the timings are written, while the profilers may still hold the GPU."""
    figs, tabs, _ = outputs_with_data(profiles=False)
    return [f"{R}/figures/{f}.png" for f in figs] + [
        f"{R}/report/{t}.html" for t in tabs
    ]


def profile_figure_targets(wildcards):
    """The figures that read the profiles alone (the roofline): drawn once the roofline table
    is written, while the GPU measures, rather than after the last measurement."""
    wanted = [
        f
        for f in FIGURES
        if have_profile() and set(FIGURE_CATALOGUE[f].inputs) <= PROFILE_INPUTS
    ]
    if not wanted:
        return []
    if not RENDER_ONLY:
        checkpoints.roofline_table.get()
    figs, _, _ = split_by_data_once(wanted, [])
    return [f"{R}/figures/{f}.png" for f in figs]


def output_targets(wildcards):
    """The figures and timings tables this run has data for, and the note of those left out,
    if any (known once the tables are written, the profiles' too)."""
    figs, tabs, left = outputs_with_data()
    return (
        [f"{R}/figures/{f}.png" for f in figs]
        + [f"{R}/report/{t}.html" for t in tabs]
        + ([f"{R}/report/figures_left_out.html"] if left else [])
    )


def copied_summary_inputs(wildcards):
    """render_only: the copied table the summary is made from, its manifests and refusals."""
    refused = Path(f"{R}/tables/refused.csv")
    return dict(
        timings=f"{R}/tables/timings.csv",
        manifests=manifests(),
        **({"refused": str(refused)} if refused.exists() else {}),
    )


def print_summary():
    summary = (
        "report" if RENDER_ONLY else "tables"
    )  # render_only: made from the copied table
    for path in (
        Path(f"{R}/{summary}/summary.txt"),
        Path(f"{R}/report/figures_left_out.txt"),
        *([] if RENDER_ONLY else [Path(f"{R}/tables/since_previous.txt")]),
        *([Path(f"{R}/tables/compare.txt")] if BASELINE else []),  # written by this run
    ):
        if path.exists() and path.read_text().strip():
            print(path.read_text())


def conda_deployed(wf) -> bool:
    """Whether Snakemake deploys a conda environment for each rule (--sdm conda).  Where that
    cannot be read, yes (then every figure and table job runs its script in a process of its
    own, as always)."""
    try:
        from snakemake.settings.types import DeploymentMethod

        return DeploymentMethod.CONDA in wf.deployment_settings.deployment_method
    except (ImportError, AttributeError):
        return True


# figures and tables drawn in Snakemake's own process where no rule has an environment of its
# own (report.smk)
RENDER_HERE = not conda_deployed(workflow)


def render_here(kind, name, inputs, first, gpu_model, log):
    from mmbench.report import render

    render.in_process(kind, name, inputs, first, gpu_model, log)


def script_here(script, input, output, params, log):
    """A `run:` job that runs workflow/scripts/<script> in Snakemake's own process, as its
    `script:` twin runs it in a process of its own (where rules have conda environments).
    """
    from types import SimpleNamespace

    from mmbench.report import render

    job = SimpleNamespace(
        input=input, output=output, params=params, log=log, config=config
    )
    render.script_in_process(REPO / "workflow" / "scripts" / script, job, log[0])


def say_if_stopped_by_user(log):
    """onerror: after Ctrl-C, one line on what stopped and how to go on
    (plan/experiment.stopped_by_user)."""
    from mmbench.plan.experiment import stopped_by_user

    logs = [log] if isinstance(log, (str, Path)) else list(log or [])
    text = "".join(
        Path(f).read_text(errors="replace") for f in logs if Path(f).is_file()
    )
    words = stopped_by_user(text)
    if words:
        print(f"mmbench: {words}", file=sys.stderr)


def clear_inputs_cache():
    """onsuccess, onerror: the inputs the measurement jobs shared (measure/input_cache.py) go
    with the run: they are memory (/dev/shm); so does the run's worker (measure/served.py),
    which holds a CUDA context."""
    from mmbench.measure import input_cache, served

    input_cache.clear()
    if SERVE_WORKER:
        served.stop()


def check_before_jobs(wf):
    """onstart: a local run whose jobs need a GPU, on a machine without one (arch named, so
    planning went on), stops before any job with the ways forward; a run submitted to SLURM
    stops in one line where SLURM does not answer."""
    jobs = list(wf.dag.needrun_jobs())
    gpu_jobs = sum(1 for j in jobs if j.resources.get("gpu", 0))
    why = gpu_jobs_without_gpu(wf.local_exec, gpu_jobs, EXPERIMENT)
    executor = getattr(wf.executor_plugin, "name", "")
    if not why and not wf.local_exec and executor.endswith("slurm") and jobs:
        why = slurm_unreachable()
    if why:
        print(f"mmbench: {why}", file=sys.stderr)
        sys.exit(1)
    todo = work_words(
        [(j.rule.name, j.wildcards.get("variant")) for j in jobs],
        PLAN.runs,
        checkpoints=any(j.is_checkpoint for j in jobs),
    )
    if todo:
        print(f"mmbench: {todo}", file=sys.stderr)
    took = time_estimate(
        [
            (j.rule.name, last_seconds(j.benchmark), bool(j.resources.get("gpu", 0)))
            for j in jobs
            if j.benchmark  # targets and small local jobs keep no benchmark file
        ],
        wf.cores or 1,
    )
    if took:
        print(f"mmbench: {took}", file=sys.stderr)
    if RENDER_HERE and wf.local_exec and gpu_jobs:
        # the figures' imports while the GPU measures, not after it (render.warm_up)
        from mmbench.report import render

        # figures and tables side by side where the run has the cores for it
        render.warm_up(min(4, workflow.cores or 1))

"""One invocation of the workflow, planned before any job runs: the config (the defaults under
what the user gave, validated), the registry, the results folder, the architecture, the tuned
parameters, the configurations to measure and to profile, and the checks that stop a run before
any GPU time is spent (a baseline that holds no run, a copied results folder that is damaged, a
plan that measures nothing or cannot fit in GPU memory).

workflow/rules/common.smk calls `prepare` once and keeps the input functions; everything here
is plain Python, testable without Snakemake.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from mmbench.core.bounded import load_yaml
from mmbench.core.registry import Variant, load_registry
from mmbench.plan import plan as mmplan
from mmbench.plan.config import ConfigError, check_baseline, idle_shorthands, merge, validate
from mmbench.plan.tuning import apply_tuned, locate, models_in, read_tuned

# the tables a copied results folder may hold besides timings.csv (render_only checks them)
COPIED_TABLES = ("refused", "roofline", "ceilings", "metrics", "nvprof_metrics")


@dataclass
class Experiment:
    config: dict
    registry: dict[str, Variant]
    kernels: Path
    # results/ for the main experiment, results/<experiment>/ for a preset's
    results: str
    arch: str | None = None
    # why no architecture is known (no GPU and arch=auto): a run stops where it needs one
    arch_problem: str | None = None
    no_gpu: bool = False  # arch=auto on a machine without a GPU: arch_problem says what to do
    # the GPUs nvidia-smi saw when the run was planned (none for render_only, which asks not)
    gpus: list = field(default_factory=list)
    plan: mmplan.Plan = field(default_factory=mmplan.Plan)
    profile: list = field(default_factory=list)
    # lines to print before the jobs (variants left with nothing to measure)
    notes: list[str] = field(default_factory=list)

    @property
    def registry_file(self) -> str:
        return str(self.kernels / "registry.yaml")

    @property
    def render_only(self) -> bool:
        return self.config["render_only"]

    @property
    def baseline(self) -> str:
        return self.config["baseline"]


def no_gpu_message(baseline: str = "", tuned: tuple[str, str] | None = None) -> str:
    """What a machine without a GPU can do instead of measuring: the three ways forward.
    `tuned`: the GPU models of the tuning table a run reads without naming one (tuned_gpu
    auto, which needs a GPU to read the model off), listed and the one to name (tuning.models_in):
    the submission names one too."""
    seen = "add render_only=true to compare" if baseline else "add --config render_only=true"
    submit, model = "naming the GPUs' architecture", ""
    if tuned:
        listed, named = tuned
        submit += (
            " and, as this run reads a tuning table, the GPU model whose tuning it runs (the "
            f"table's: {listed})"
        )
        model = f" 'tuned_gpu={named}'"
    return (
        "no GPU on this machine (nvidia-smi sees none), and this run measures kernels on one. "
        "Three ways forward:\n"
        "  - measure where a GPU is: run the same command on a GPU machine, or submit it from "
        f"here to a SLURM GPU cluster, {submit}: snakemake --profile "
        f"profiles/slurm --config arch=sm_90{model} (docs/cluster.md)\n"
        "  - show the figures and tables of a run already measured: copy its results folder to "
        f"results/ and {seen} (the tables present are then this run)\n"
        "  - build the kernels only, here: snakemake --cores 4 compile_all --config arch=sm_90"
    )


def tuned_models(cfg: dict, basedir: str | Path) -> tuple[str, str] | None:
    """The GPU models of the tuning table `cfg` reads where it names none (tuned_gpu auto), as
    tuning.models_in gives them; None where it reads none or names one."""
    path = locate(cfg.get("tuned") or "", basedir)
    if not path or (cfg.get("tuned_gpu") or "auto") != "auto":
        return None
    return models_in(read_tuned(path))


def gpu_jobs_without_gpu(local: bool, gpu_jobs: int, exp: Experiment) -> str | None:
    """Before any job (the workflow's onstart): why a run that would measure here cannot (its
    GPU jobs run on this machine, where planning saw no GPU), or None.  A run submitted to a
    cluster (local=False) measures on the cluster's GPU nodes."""
    if exp.render_only or not local or not gpu_jobs or exp.gpus:
        return None
    return f"{gpu_jobs} job(s) of this run need a GPU; " + no_gpu_message()


def user_config(basedir: str | Path, given: dict) -> tuple[dict, frozenset]:
    """The defaults (config/config.yaml) under what --configfile and --config gave, and the
    profile: keys the user's own config names (the others follow the run)."""
    named = frozenset((dict(given).get("profile") or {}).keys())
    defaults = load_yaml(Path(basedir) / "config" / "config.yaml")
    return merge(defaults, dict(given)), named


def gather_measured_runs(results: str | Path) -> str | None:
    """render_only where a run stopped after its measurement jobs but before its timings table
    was gathered (its time ran out while drawing the report, say): tables/timings.csv made from
    runs/<variant>.csv of every job that wrote its manifest (a job writes its manifest last, so
    a job stopped part-way adds nothing), checked as the aggregate job checks it.  A note saying
    what was gathered, or None where runs/ holds no finished job (ConfigError where it holds a
    damaged one)."""
    from mmbench.core.schemas import TableError
    from mmbench.core.tables import DamagedFile, gather_timings

    runs = Path(results) / "runs"
    finished = [
        (table, m)
        for m in sorted(runs.glob("*.manifest.json"))
        if (table := m.with_name(m.name.removesuffix(".manifest.json") + ".csv")).exists()
    ]
    if not finished:
        return None
    tables, manifests = (list(x) for x in zip(*finished, strict=True))
    timings = Path(results) / "tables" / "timings.csv"
    try:  # as the aggregate job gathers them (scripts/concat_tables.py)
        df = gather_timings(tables, manifests, timings, results)
    except (TableError, DamagedFile) as err:
        raise ConfigError(f"render_only=true: gathering {runs}/: {err}") from None
    return (
        f"render_only: {timings} gathered from the {len(tables)} finished measurement job(s) "
        f"in {runs}/ ({len(df)} rows: {', '.join(t.stem for t in tables)}); the run had "
        "stopped before gathering them"
    )


def check_copied_run(results: str | Path) -> str | None:
    """render_only: the copied results folder's tables, checked against their schemas and the
    run manifests before any job (ConfigError naming the file and what is wrong); where the
    timings table is missing but runs/ holds finished measurement jobs, the table gathered from
    them first (gather_measured_runs, whose note it returns)."""
    # pandera's import is a third of a second: only render_only pays it at planning time
    from mmbench.core.run_files import checked_samples
    from mmbench.core.schemas import TableError, check_against_manifests, read_table
    from mmbench.core.tables import DamagedFile

    folder = Path(results) / "tables"
    timings = folder / "timings.csv"
    note = None if timings.exists() else gather_measured_runs(results)
    if not timings.exists():
        raise ConfigError(
            f"render_only=true renders a run already measured, from {results}/, but "
            f"{timings} is missing and {results}/runs/ holds no finished measurement job (no "
            f"run of this experiment is there); copy the results folder of a run to "
            f"{results}/ first, or drop render_only to measure one"
        )
    runs = sorted(Path(results).glob("runs/*.manifest.json"))
    try:
        checked = read_table(timings, "timings")
        check_against_manifests(checked, runs, str(timings), results)
        for kind in COPIED_TABLES:
            if (folder / f"{kind}.csv").exists():
                read_table(folder / f"{kind}.csv", kind)
        # the samples a comparison judges on: each file against the rows of its table
        checked_samples(sorted(Path(results).glob("runs/*.samples.json.gz")), checked)
    except (TableError, DamagedFile) as err:
        raise ConfigError(f"render_only=true: {err}") from None
    return note


def prepare(given: dict, basedir: str | Path, outputs: dict[str, list[str]]) -> Experiment:
    """The experiment this invocation runs; ConfigError (key, value, what is valid) otherwise.
    `outputs` are the figure and table names the report can make (its catalogue)."""
    cfg, named = user_config(basedir, given)
    kernels = Path(basedir) / "kernels"
    registry = load_registry(str(kernels / "registry.yaml"))
    cfg = validate(cfg, registry, outputs=outputs)
    idle = idle_shorthands(dict(given), cfg, registry)
    if idle:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(idle))
    results = os.path.join("results", cfg["experiment"]).rstrip(os.sep)
    check_baseline(cfg["baseline"], results)
    margins = cfg["compare"]["margins"]
    if margins and not Path(margins).is_file():
        raise ConfigError(
            f"config key 'compare.margins': {margins!r} is not a file; give the table "
            "`mmbench margins` wrote from repeated runs (or leave it empty for the tolerance)"
        )
    if isinstance(cfg["baseline"], dict):
        from mmbench.plan.pairs import check_build

        check_build(cfg["baseline"], registry, cfg["variants"])
    exp = Experiment(config=cfg, registry=registry, kernels=kernels, results=results)
    if exp.render_only:  # nothing is compiled or measured: no GPU, no architecture needed
        exp.arch_problem = "render_only=true compiles nothing"
        gathered = check_copied_run(results)
        exp.notes = [gathered] if gathered else []
        return exp
    exp.gpus = gpus = mmplan.detect_gpus()
    if cfg["arch"] == "auto" and not gpus:
        # no architecture to build for: planned for none (the tuning table, which needs a GPU
        # model, left aside, and with it the cuBLAS rates that decide where a sustained load
        # runs: sustained_from_ms), so that what runs no job (--lint, --list-rules) runs; the
        # first job that needs one stops the run at arch() with the ways forward, before
        # anything is compiled
        exp.no_gpu = True
        exp.arch_problem = no_gpu_message(exp.baseline, tuned_models(cfg, basedir))
        unrated = {**cfg, "sustained_from_ms": None}
        exp.plan = mmplan.expand(unrated, registry, None)
        exp.profile = mmplan.profile_plan(unrated, registry, None, named)[0]
        return exp
    exp.config = cfg = apply_tuned(cfg, gpus, registry, basedir)
    try:
        exp.arch = mmplan.resolve_arch(cfg, gpus)
    except ConfigError as err:  # GPUs of several architectures: a run stops at arch()
        exp.arch_problem = str(err)
    exp.plan = mmplan.expand(cfg, registry, exp.arch)
    exp.notes = mmplan.check_something_to_measure(cfg, exp.plan)
    exp.notes += mmplan.outpaced_notes(cfg, exp.plan)
    exp.profile = mmplan.profile_plan(cfg, registry, exp.arch, named)[0]
    mmplan.check_device_memory(exp.plan, *mmplan.resolve_memory(cfg, gpus))
    return exp


def start(given: dict, repo: str | Path, outputs: dict[str, list[str]]) -> Experiment:
    """The workflow's first step (common.smk): the experiment prepared from the defaults under
    what --configfile and --config give, its notes printed; a configuration error stops here
    with its message alone (key, value, what is valid: no Snakemake header or traceback, which
    would point at the workflow rather than at the user's config).  Results dated in the future
    (a copy from a machine whose clock ran ahead) would stall every job that reads them, or
    hide an edit from Snakemake's time check: their times are set to now."""
    import sys

    from mmbench.core.paths import settle_future_times

    try:
        exp = prepare(given, repo, outputs)
    except ConfigError as err:
        print(f"mmbench: {err}", file=sys.stderr)
        sys.exit(1)
    settled = settle_future_times(Path("results"))
    for line in [*exp.notes, *([settled] if settled else [])]:
        print(f"mmbench: {line}", file=sys.stderr)
    return exp


def before_jobs(jobs: list[dict], local: bool, executor: str, cores: int, exp: Experiment
                ) -> tuple[str | None, list[str]]:  # fmt: skip
    """onstart: (why the run stops before any job, or None; the lines to print).  A local run
    whose jobs need a GPU on a machine without one stops with the ways forward; a run submitted
    to SLURM stops in one line where SLURM does not answer.  Otherwise the work to do
    (work_words) and how long it may take (time_estimate).  `jobs`: each job to run, as
    {rule, variant, gpu, benchmark, checkpoint}."""
    gpu_jobs = sum(1 for j in jobs if j["gpu"])
    why = gpu_jobs_without_gpu(local, gpu_jobs, exp)
    if not why and not local and executor.endswith("slurm") and jobs:
        from mmbench.plan.slurm import slurm_unreachable

        why = slurm_unreachable()
    if why:
        return why, []
    todo = work_words([(j["rule"], j["variant"]) for j in jobs], exp.plan.runs,
                      checkpoints=any(j["checkpoint"] for j in jobs))  # fmt: skip
    timed = [
        (j["rule"], last_seconds(j["benchmark"]), bool(j["gpu"])) for j in jobs if j["benchmark"]
    ]  # fmt: skip (targets keep no benchmark file)
    return None, [line for line in (todo, time_estimate(timed, cores or 1)) if line]


def stopped_by_user(log_text: str) -> str | None:
    """onerror: where Snakemake's log says the run was stopped by Ctrl-C ("Terminating
    processes on user request"), one line on what stopped and how to go on (Snakemake's own
    error block for each interrupted job comes before it); None for any other failure."""
    import re
    from collections import Counter

    if "Terminating processes on user request" not in log_text:
        return None
    steps = re.findall(r"(\d+) of (\d+) steps", log_text)
    done = f" after {steps[-1][0]} of {steps[-1][1]} steps" if steps else ""
    jobs = Counter(re.findall(r"Error in rule (\w+):", log_text))
    which = ", ".join(f"{n} {rule}" for rule, n in jobs.items())
    return (
        f"stopped by Ctrl-C{done}"
        + (f"; interrupted: {which}" if which else "")
        + "; every finished job's files are kept: run the same command again to go on (where "
        "Snakemake asks, add --rerun-incomplete: the interrupted jobs are then made again)"
    )


COMPILE_RULES = (
    "compile_kernel",
    "compile_library",
    "compile_microbench",
    "compile_baseline_source",
)
GPU_RULES = ("measure_variant", "pair_variant")


def work_words(
    jobs: list[tuple[str, str | None]], runs: dict[str, list], checkpoints: bool = False
) -> str | None:
    """onstart: the work this run will do, counted as a user waits for it: the compiles, the
    measurement jobs with the configurations they hold (each job prints its own progress and
    the time it has left), the rest in one count.  `jobs`: (rule, its variant wildcard or
    None) of every job that needs to run; `runs`: the plan's configurations per variant;
    `checkpoints`: whether a checkpoint is among them (the jobs that wait for its table, the
    figures, are known to Snakemake only once it has run, and are said to come)."""
    if not jobs:
        return None
    rules = [r for r, _ in jobs]
    compiles = sum(r in COMPILE_RULES for r in rules)
    measured = [v for r, v in jobs if r in GPU_RULES and v in runs]
    configurations = sum(len(runs[v]) for v in measured)
    rest = len(jobs) - compiles - sum(r in GPU_RULES for r in rules)
    parts = []
    if compiles:
        parts.append(f"{compiles} compile{'s' * (compiles != 1)}")
    if measured:
        parts.append(
            f"{len(measured)} measurement job{'s' * (len(measured) != 1)} of {configurations} "
            "configurations (each prints its progress and the time it has left)"
        )
    if rest:
        parts.append(f"{rest} other job{'s' * (rest != 1)} (profiles, tables, figures)")
    more = (
        "; then the figures and tables that wait for the timings or roofline table"
        if checkpoints
        else ""
    )
    return "to do: " + ", ".join(parts) + more


def last_seconds(benchmark) -> float | None:
    """The seconds a job took the last time it ran, from its Snakemake benchmark file (a tab-
    separated table whose first column, `s`, is the wall time); None where it never ran here."""
    try:
        lines = Path(str(benchmark)).read_text().splitlines()
        return float(lines[1].split("\t")[0])
    except (OSError, IndexError, ValueError, TypeError):
        return None


def time_estimate(jobs: list[tuple[str, float | None, bool]], cores: int) -> str | None:
    """onstart, beside work_words: how long the run may take, by the seconds each job took the
    last time it ran here (a job that never ran: the median of its rule's jobs that did).  The
    GPU's jobs run one at a time, the others share `cores`; the run takes about the longer of
    the two.  `jobs`: (rule, seconds last time or None, holds the GPU).  None where no job of
    any rule has run here before (a first run: no basis for an estimate)."""
    import statistics

    known: dict[str, list[float]] = {}
    for rule, seconds, _ in jobs:
        if seconds is not None:
            known.setdefault(rule, []).append(seconds)
    if not known:
        return None
    gpu = cpu = 0.0
    guessed = unknown = 0
    for rule, seconds, holds_gpu in jobs:
        if seconds is None and rule in known:
            seconds, guessed = statistics.median(known[rule]), guessed + 1
        if seconds is None:
            unknown += 1
            continue
        if holds_gpu:
            gpu += seconds
        else:
            cpu += seconds
    total = max(gpu, cpu / max(1, cores))
    text = f"about {_duration(total)}, by the time these jobs took when they last ran here"
    if guessed:
        text += f" ({guessed} never ran: the median of their rule's)"
    if unknown:
        text += f"; {unknown} job{'s' * (unknown != 1)} of rules never run here not counted"
    return text


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def profile_stems(exp: Experiment) -> dict[str, object]:
    """Each profiled configuration by the stem of its profile job's files."""
    return {f"{exp.results}/profile/{c.variant}/{c.instance}_{c.m}x{c.n}x{c.k}": c
            for c in exp.profile}  # fmt: skip


def target_spec(exp: Experiment, c, cubin: str | None) -> dict:
    """What the profilers' target reads of a profiled configuration (profile/target.py): the
    configuration, its cubin (none for a library call), the kernel Nsight Compute looks for,
    the warm-up launches, the metric set and, as the measurements check theirs, the Freivalds
    vectors (a served target's reference is then theirs too)."""
    v = exp.registry[c.variant]
    return dict(
        configuration=c.as_dict(),
        registry=exp.registry_file,
        cubin=cubin if v.compiled else None,
        kernel_name=v.profile_kernel or v.symbol,
        warmup=exp.config["profile"]["warmup_launches"],
        metric_set=exp.config["profile"]["metric_set"],
        freivalds_vectors=exp.config["freivalds_vectors"],
    )


def end_of_run(results: str, render_only: bool, baseline) -> list[Path]:
    """onsuccess: the files whose text the run prints at its end, in order: the summary (made
    again from the copied table when rendering only), the outputs left out, the edit loop's
    before -> after, this run's comparison with its baseline."""
    return [
        Path(results) / ("report" if render_only else "tables") / "summary.txt",
        Path(results) / "report" / "figures_left_out.txt",
        *([] if render_only else [Path(results) / "tables" / "since_previous.txt"]),
        *([Path(results) / "tables" / "compare.txt"] if baseline else []),
    ]

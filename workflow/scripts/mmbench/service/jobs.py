"""One measurement job (rule measure_variant): its configurations run in worker processes.

The parent never touches the GPU.  It starts `python -m mmbench.service.worker`, which measures the
configurations still to do and appends each finished row to the job's journal
(`results/runs/<variant>.csv.journal.jsonl`), flushed, with a "start" record before each one.
When a worker ends early (a sticky CUDA error ends its context, a segfault, a kill), the parent
records the configuration it was in as failed, with the reason, and starts a new worker for the
rest.  When the job is interrupted (Ctrl-C, a killed SLURM job), the journal survives: the next
run of the job keeps every row whose configuration, kernel binary, sources and sampling are
unchanged and measures only the others.  The table is written atomically at the end.  In a
local run (`serve`), the worker is the run's: it stays for the next job on its GPU (served.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from mmbench.core import paths
from mmbench.core.axes import Configuration
from mmbench.core.cubins import file_sha, misnamed
from mmbench.core.rates import with_rates
from mmbench.core.registry import load_registry
from mmbench.core.row import SAMPLES, config_id, error_row, ordered
from mmbench.core.tables import atomic_write_csv, atomic_write_text, write_samples
from mmbench.measure.runner import footprint
from mmbench.service import predraw, served
from mmbench.service.gpus import GPU_KEY_VAR
from mmbench.service.journal import (
    driver_version,
    harness_sha,
    journal_fatal,
    journal_key,
    read_journal,
    worker_times,
)

log = logging.getLogger("mmbench.service.jobs")
CONTEXT_LOST_EXIT = 3
NO_GPU_EXIT = 4  # the worker could not reach a GPU: nothing in this job can run
NEVER_TOLD_EXIT = 5  # a worker started ahead whose job ended before it held a GPU
JOB_GONE_EXIT = 6  # a served worker whose job ended while it measured (it ends too)


class JobFailed(RuntimeError):
    """The measurement job cannot measure anything (no GPU, a worker that cannot start)."""


def log_to(logfile: str) -> None:
    """A measurement job's logging: time-stamped lines, and its stderr, into its log file."""
    handler = logging.FileHandler(logfile)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    logging.getLogger().addHandler(handler)
    logging.getLogger().setLevel(logging.INFO)
    sys.stderr = open(logfile, "a", buffering=1)


def run_job(
    variant: str,
    registry: str,
    confs: list[dict],
    instantiations: dict[str, str],
    sources: list[str],
    source_sha: str,
    settings: dict,
    out_csv: str,
    logfile: str,
    max_workers: int | None = None,
    baseline: dict[str, str] | None = None,
    times: dict | None = None,
    serve: bool = False,
) -> dict | None:
    """Measures `confs`, resuming from the journal; returns the device record of the workers.
    With `baseline` (instantiation slug -> the cubin of another build of it), each configuration
    is measured in both builds side by side (measure/paired.py; settings["pairing"] says how
    long) and the table is a pairs table (compare/paired.py judges it).  `times`, where given,
    receives the job's time stamps (job_phases says what they add up to).  `serve`: the
    worker is the run's, served to one job after another (served.py; a local run's), not this
    job's alone."""
    times = {} if times is None else times
    times["began"] = time.time()
    # inside a SLURM job the worker is the job's, whatever the submitting process asked
    serve = served.for_this_job(serve)
    out = Path(out_csv)
    journal = out.with_name(out.name + ".journal.jsonl")
    spec_path = out.with_name(out.name + ".spec.json")
    wrong = misnamed(instantiations)
    if wrong:  # swapped for another instantiation's cubin (its .sha256 with it): not measured
        raise JobFailed(
            "cubins that are not the build of their instantiation: "
            + "; ".join(wrong)
            + " (delete them and run again: they are built afresh)"
        )
    shas = {name: file_sha(path) for name, path in instantiations.items()}
    for name, path in (baseline or {}).items():  # a pair's row names both builds
        shas[name] = f"{shas.get(name, 'library')}+{file_sha(path) if path else 'library'}"
    from mmbench.service import gpus

    # what every worker of this job is told, besides its configurations still to do
    base = dict(
        variant=variant,
        registry=registry,
        instantiations=instantiations,
        settings=settings,
        journal=str(journal),
        log=logfile,
        source_sha=source_sha,
        baseline=baseline or {},
    )
    # the first worker starts now, while another job may hold the GPU, and waits to be told
    # which GPU it may use once this job holds it (worker.py --wait, --serve); none where the
    # run's worker is there already
    ahead = None
    if not serve:
        ahead = _start_worker(spec_path)
    elif not served.serving():
        ahead = served.spawn()
    # the job's groups drawn into the inputs cache while the job waits for the GPU (the job
    # before it measuring there), largest first as the runner takes them (input_cache.py)
    entry = load_registry(registry)[variant]
    drawn = predraw.draw_ahead(
        sorted(confs, key=lambda c: -footprint(Configuration.from_dict(c))),
        vectors=int(settings["freivalds_vectors"]),
        promoted=entry.sums_promoted_every,
    )
    times["asked"] = time.time()
    try:
        with gpus.acquire(log=log) as gpu_env:
            times["locked"] = time.time()
            # a journal row is kept only where the configuration, its cubin, the kernel
            # sources, the sampling settings, the GPU (host and UUID), the driver and the
            # harness are unchanged: in its key, and in the row itself (resumable)
            gpu = gpu_env.get(gpus.GPU_KEY_VAR, "")
            on, facts = measured_on(gpu)
            launch = entry.launch_sha()
            keyed, expected = [], {}
            for c in confs:
                cub = shas.get(Configuration.from_dict(c).instance, "library")
                key = journal_key(c, cub, f"{source_sha}/{launch}", settings, on)
                keyed.append((key, c))
                expected[key] = facts | ({} if baseline else dict(cubin_sha256=cub))
            rows = resumable(journal, expected, gpu)
            spawns = _measure(keyed, rows, base, spec_path, max_workers, gpu_env, ahead, serve)
            device = read_journal(journal)[2]
            # each worker's own stamps (imported, ready, done) beside its spawn and exit here:
            # the stamps taken between the two (a worker that died early wrote none)
            stamped = worker_times(journal)
            times["workers"] = [
                next(
                    (w for w in stamped if s["spawned"] <= w.get("imported", 0) <= s["exited"]), {}
                )
                | s
                for s in spawns
            ]
    except gpus.NoGpuVisible as err:
        raise JobFailed(str(err)) from None
    finally:
        if serve:
            served.end_unused(ahead)
        else:
            _tell(ahead, None)  # never told to go (no GPU, an error, nothing to do): it ends
        if drawn is not None and drawn.poll() is None:  # what it has not drawn is not needed
            with contextlib.suppress(ProcessLookupError):
                os.killpg(drawn.pid, signal.SIGKILL)  # its pool's processes with it
            drawn.wait()
    # the table: the workers' measurements, and the rates derived from them (core/rates.py)
    done = [rows[k] if baseline else with_rates(rows[k]) for k, _ in keyed]
    samples = [dict(id=config_id(r), **r[SAMPLES]) for r in done if r.get(SAMPLES)]
    write_samples(samples_path(out), samples)
    table = pd.DataFrame([{c: v for c, v in r.items() if c != SAMPLES} for r in done])
    if baseline:
        table.insert(0, "config_id", [config_id(r) for r in done])
        atomic_write_csv(table, out, "pairs")
    else:
        atomic_write_csv(ordered(table), out, "timings")
    journal.unlink(missing_ok=True)
    spec_path.unlink(missing_ok=True)
    times["tables"] = time.time()
    why = nothing_measured(done)
    if why:  # the run must not end as if it had measured something
        raise JobFailed(why)
    return device


def measured_on(gpu: str) -> tuple[str, dict]:
    """What a journal key names a row as measured on (the GPU lock key: host and UUID; the
    driver; the harness), and the facts among those that a row states itself."""
    facts = dict(driver_version=driver_version(), harness_sha256=harness_sha())
    return "/".join([gpu, *facts.values()]), facts


def resumable(journal: Path, expected: dict[str, dict], gpu: str) -> dict[str, dict]:
    """The journal's rows this job can keep: their key is one of `expected`'s (it names this
    configuration, cubin, sources, settings, GPU, driver and harness) and the row itself says
    the same (its GPU UUID is the one `gpu` names, and each fact of `expected[key]` that is known
    here is the row's): a row written under a key it does not match is measured again, with a
    message.  A journal whose rows were all measured elsewhere (another GPU or host: a requeued
    SLURM job, a results folder copied between machines; another driver or harness) is set aside
    under a name of its own, with a message, and the job starts afresh."""
    rows, _, _ = read_journal(journal)
    kept, wrong = {}, []
    for k, r in rows.items():
        if k not in expected:
            continue
        said = [
            f"{name} {r.get(name)!r}, not {want!r}"
            for name, want in expected[k].items()
            if want and want != "library" and str(r.get(name) or "") != want
        ]
        uuid = str(r.get("gpu_uuid") or "")
        if uuid and gpu and not gpu.endswith(uuid):
            said.insert(0, f"gpu_uuid {uuid!r}, not this job's GPU ({gpu})")
        if said:
            wrong.append(said[0])
        else:
            kept[k] = r
    if wrong:
        log.warning(
            "the journal %s holds %d row(s) under this job's keys that say otherwise (e.g. "
            "%s): measured again, not reused",
            journal,
            len(wrong),
            wrong[0],
        )
    if rows and not kept:
        others = sorted({str(r.get("gpu_uuid") or "?") for r in rows.values()})
        aside = journal.with_name(f"{journal.name}.set-aside-{int(time.time())}")
        journal.rename(aside)
        log.warning(
            "the journal %s holds %d rows measured with other settings, on another GPU, "
            "driver or harness (%s; this job runs on %s): set aside as %s, not reused",
            journal,
            len(rows),
            ", ".join(others),
            gpu or "this GPU",
            aside,
        )
        return {}
    if kept:
        log.info(
            "resuming: %d of %d configurations already measured on this GPU (journal %s)",
            len(kept),
            len(expected),
            journal,
        )
    return kept


def samples_path(table: str | Path) -> Path:
    """runs/<variant>.samples.json.gz beside a job's runs/<variant>.csv."""
    table = Path(table)
    return table.with_name(table.stem + ".samples.json.gz")


def nothing_measured(rows: list[dict]) -> str | None:
    """Why a job's rows hold no measurement (every configuration ended in ERROR), or None."""
    if rows and all(r.get("verification") == "ERROR" for r in rows):
        return (
            f"every configuration of this job failed ({len(rows)} ERROR rows); the first: "
            f"{rows[0].get('error')}"
        )
    return None


# what a worker is told once its job holds a GPU (service/gpus.py acquire's environment)
GPU_VARIABLES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", GPU_KEY_VAR)


def _start_worker(spec_path: Path) -> subprocess.Popen:
    """A worker that imports what it needs, then waits for the GPU it may use (worker.py)."""
    env = {k: v for k, v in os.environ.items() if k not in GPU_VARIABLES}
    proc = subprocess.Popen(
        paths.child_command("service.worker", "--wait", str(spec_path)),
        env=paths.child_env(env),
        stdin=subprocess.PIPE,
        text=True,
    )
    proc.spawned = time.time()  # type: ignore[attr-defined]
    return proc


def _tell(proc: subprocess.Popen, gpu_env: dict | None) -> None:
    """Tells a waiting worker its GPU (gpu_env's CUDA variables), or to end (None); a worker
    already told, or already ended, is left alone."""
    if proc.stdin is None or proc.stdin.closed:
        return
    try:
        if gpu_env is not None:
            proc.stdin.write(json.dumps({k: gpu_env[k] for k in GPU_VARIABLES if k in gpu_env}))
        proc.stdin.write("\n")
        proc.stdin.close()
    except (BrokenPipeError, OSError):  # it ended on its own
        pass
    if gpu_env is None:  # it ends as soon as its imports are done; never left behind
        try:
            proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _measure(
    keyed, rows, base: dict, spec_path: Path, max_workers, gpu_env: dict, ahead=None,
    serve: bool = False,
) -> list[dict]:  # fmt: skip
    """Workers until every configuration has a row (restarting after a lost context): the one
    started `ahead` first, where given; when each was spawned and exited.  `serve`: the run's
    worker (served.py), where one serves this GPU, else `ahead` or a new one made the run's."""
    spawns: list[dict] = []
    attempts = 0
    gone = 0  # served workers that ended before they answered (retiring, killed)
    limit = max_workers or len(keyed) + 1
    started = read_journal(Path(base["journal"]))[1]
    while True:
        todo = [(k, c) for k, c in keyed if k not in rows]
        if not todo:
            break
        attempts += 1
        if attempts > limit:
            for k, c in todo:
                rows[k] = conf_error(c, "not run: too many worker restarts in this job")
            break
        spec = dict(base, todo=todo)
        atomic_write_text(spec_path, json.dumps(spec, default=str))
        started_before = len(started)
        if serve and gone < 2:
            # `ahead` once only: after a lost context it is the worker still ending
            proc, ahead = served.worker_for(gpu_env, ahead), None
            spawns.append(dict(spawned=proc.spawned))
            proc.run(spec_path, gpu_env)
        else:
            proc, ahead = ahead if not serve and ahead else _start_worker(spec_path), None
            spawns.append(dict(spawned=proc.spawned))
            try:
                _tell(proc, gpu_env)
                proc.wait()
            except BaseException:  # interrupted (Ctrl-C, a cancelled job): the worker goes too
                proc.kill()
                proc.wait()
                raise
        spawns[-1]["exited"] = time.time()
        new_rows, started, device = read_journal(Path(base["journal"]))
        rows.update(new_rows)
        if proc.returncode == served.GONE and len(started) == started_before:
            gone += 1  # it measured nothing: another worker takes the same configurations
            attempts -= 1  # (and its entry is gone: Served.run)
            log.warning("the run's worker ended before it answered; starting another")
            continue
        # only this worker's start records: one left by an earlier, interrupted run names a
        # configuration that this worker may never have reached
        unfinished = [k for k in started[started_before:] if k not in rows]
        if proc.returncode == NO_GPU_EXIT:
            raise JobFailed(journal_fatal(Path(base["journal"])) or "no usable GPU")
        if proc.returncode != 0 and len(started) == started_before:
            raise JobFailed(
                f"the worker process failed before measuring anything (exit code "
                f"{proc.returncode}); its output is in {base['log']}"
            )
        if proc.returncode != 0:
            reason = (
                f"killed by signal {-proc.returncode}"
                if proc.returncode < 0
                else f"exit code {proc.returncode}"
            )
            if proc.returncode == CONTEXT_LOST_EXIT:
                reason = "the CUDA context was lost (see the row before)"
            elif proc.returncode == served.GONE:
                reason = "the run's worker process ended without a word; see the job's log"
            for k in unfinished:
                conf = dict(keyed)[k]
                rows[k] = conf_error(
                    conf,
                    f"worker process ended while measuring this configuration ({reason})",
                    (device or {}).get("name", ""),
                )
                log.warning("worker ended (%s) during %s; restarting for the rest", reason, conf)
    return spawns


def job_phases(times: dict, process: float | None, script: float) -> dict[str, float]:
    """Where a measurement job's time went, in seconds, from its stamps (run_job's `times`, the
    job process's start `process` and its script's first line `script`): the job process's
    interpreter and imports, its set-up, its wait for the GPU (another job holding it), each
    worker's start (interpreter and imports, while the job waits; its own wait to be told the
    GPU; CuPy, then the CUDA context, cubins, cuBLAS and the runner), its configurations, its
    exit (the context torn down), and the job's tables.  The first worker starts as the job asks
    for the GPU, so its start and wait lie beside the job's wait, not after it.  Stamps a worker
    never wrote (it ended early) count nothing."""
    out = {}
    if process is not None:
        out["job process: interpreter, imports"] = script - process
    out["job set-up"] = times["asked"] - script
    out["job waiting for the GPU"] = times["locked"] - times["asked"]
    spans = (
        ("worker start: interpreter, imports", "spawned", "imported"),
        ("worker waiting to be told its GPU", "imported", "told"),
        ("worker start: CuPy", "told", "cupy"),
        ("worker start: CUDA context, cubins, cuBLAS, runner", "cupy", "ready"),
        ("worker: configurations", "ready", "done"),
        ("worker exit", "done", "exited"),
    )
    for label, a, b in spans:
        out[label] = sum(w[b] - w[a] for w in times.get("workers", []) if a in w and b in w)
    last = max([w["exited"] for w in times.get("workers", [])], default=times["locked"])
    out["job tables and samples"] = times["tables"] - last
    return {k: round(v, 3) for k, v in out.items()}


def conf_error(conf: dict, message: str, gpu_name: str = "") -> dict:
    """The row of a configuration no worker could finish (on the GPU model the journal names)."""
    return error_row(Configuration.from_dict(conf).axes() | dict(gpu_name=gpu_name), message)


def git_state(repo: str | Path) -> dict:
    def git(*args):
        r = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True)
        return r.stdout.strip() if r.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    dirty = git("status", "--porcelain", "--untracked-files=no")
    return dict(commit=commit or "unknown", dirty=bool(dirty) if dirty is not None else None)


def package_versions() -> dict:
    from importlib import metadata

    out = {"python": sys.version.split()[0]}
    for name in ("snakemake", "numpy", "pandas", "cupy-cuda13x", "cupy", "nvidia-ml-py", "pyyaml"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out

"""One profiling job: a configuration under the right profiler, into tidy metric rows.

Metrics come from Nsight Compute (named by their nvprof equivalents), run once for every
configuration of the profile section (record_ncu_batch, in the job profile_batch.py), or on one
configuration alone where the batch has no rows for it (record_ncu).  nvprof itself is not
supported: it profiles only GPUs below compute capability 7.5, which the CUDA 13 toolkit this
pipeline builds with no longer targets.  Nsight Systems adds the time split (kernel, HtoD, DtoH)
where a full installation can turn its recording into statistics; where it cannot (no
QdstrmImporter, as on our GPU machines) the job records exactly that and carries on.  A missing
profiler never fails the workflow: its rows say what was not collected and why.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import logging
import re
import shutil
import subprocess
from importlib import metadata
from pathlib import Path
from typing import Protocol

from mmbench.core import paths
from mmbench.core.cubins import file_sha
from mmbench.measure.timing import Sampling, launches_before_timed
from mmbench.profile import cupti, profilers
from mmbench.profile.profilers import matches
from mmbench.profile.target import MARKER, NOT_VERIFIED_EXIT

log = logging.getLogger("mmbench.profile.profiling")


class Launch(Protocol):
    """How the target is run (service/programs.py's Launch, handed in by the job script): the
    command a profiler wraps, and a run without a profiler (exit code, what it said)."""

    def command(self, *args: str) -> list[str]: ...
    def run(self, args: list[str], env: dict, workdir: Path,
            fine: tuple[int, ...] = (0,)) -> tuple[int, str]: ...  # fmt: skip


def _run(cmd: list[str], env: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    log.info("$ %s", " ".join(cmd))
    return subprocess.run(
        cmd, capture_output=True, text=True, env=paths.child_env(env), timeout=timeout
    )


class ProfileFailed(RuntimeError):
    """The configuration could not be run at all: the job fails, and the next run retries it."""


def status(metric: str, tool: str, text: str, version: str = "") -> dict:
    return dict(metric=metric, tool=tool, tool_version=version, status=text)


def profile(
    spec: dict, workdir: Path, tools: dict, hold, launch: Launch, ncu_rows=None, target=None
) -> list[dict]:
    """Rows for one configuration: event time, then the profilers' metrics.  `hold()` holds
    the GPU (gpus.acquire) and yields the environment of the programs that run on it: the
    target's runs and the profilers' recordings happen inside it; the tools' versions before it,
    and the reading of their reports (ncu --import, nsys stats, no GPU) after it, while the
    next GPU job measures.  `launch`: how the target runs (under a profiler, and without one:
    in the run's worker, in its CUDA context, where the job has one).
    `ncu_rows`: this configuration's Nsight Compute rows from the run's batch (record_ncu_batch),
    where it has them; else Nsight Compute runs here on this configuration alone.  `target`:
    its event-timed (and CUPTI-recorded) run from the batch (record_targets), where it has one;
    else it runs here.  With both from the batch and no Nsight Systems, the GPU is not held."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    mapping = profilers.load_mapping()
    mset = spec["metric_set"]
    ncu = profilers.find_tool("ncu", tools.get("ncu")) if tools.get("ncu") != "off" else None
    nsys = profilers.find_tool("nsys", tools.get("nsys")) if tools.get("nsys") != "off" else None
    versions = {tool: profilers.tool_version(tool) for tool in (ncu, nsys) if tool}
    cupti_wanted = bool(tools.get("cupti", True))
    cupti_here = cupti_wanted and importlib.util.find_spec("cupti") is not None
    if target is not None:  # the batch's run, its files beside this job's reports
        for name in TARGET_FILES:
            if (Path(target["folder"]) / name).exists():
                shutil.copy(Path(target["folder"]) / name, workdir / name)
        log.info("the target's runs come from the batch (%s)", target["folder"])
    gpu_needed = target is None or (ncu and ncu_rows is None) or nsys
    with hold() if gpu_needed else contextlib.nullcontext({}) as gpu_env:
        env = dict(gpu_env)
        # 1. the event-timed kernel, without any profiler attached, and (CUPTI subscribed only
        # after it, in the same process) the run CUPTI records
        event = target["event"] if target is not None else None
        if event is None:
            event = run_target(spec, spec_path, workdir, env, cupti_here, launch)
        # 2. metrics, 3. timeline: recorded now, read after the GPU is free
        ncu_run = None
        if ncu and ncu_rows is None:
            ncu_run = record_ncu(ncu, spec, spec_path, workdir, mapping, mset, env, launch)
        nsys_run = record_nsys(nsys, spec_path, workdir, env, launch) if nsys else None
    if gpu_needed:
        log.info("the GPU released; the profilers' reports are read")
    rows = [event]
    if ncu_rows is not None:
        rows += ncu_rows
    elif ncu_run is None:
        why = "ncu (Nsight Compute) not found on PATH; set profile.ncu to its path"
        if tools.get("ncu") == "off":
            why = "profile.ncu is off"
        rows.append(status("metrics", "none", f"not collected: {why}"))
    else:
        rows += read_ncu(ncu, ncu_run, spec, workdir, mapping, mset, env, versions[ncu])
    if tools.get("nsys") != "off":
        if nsys_run is None:
            rows.append(
                status(
                    "time_split",
                    "nsys",
                    "not collected: nsys (Nsight Systems) not "
                    "found on PATH; set profile.nsys to its path, or off",
                )
            )
        else:
            rows += read_nsys(nsys, nsys_run, workdir, env, versions[nsys])
    # 4. CUPTI activity records: nvprof's GPU-activities table, CUPTI's kernel time
    if cupti_wanted:
        rows += cupti_rows(workdir)
    else:
        why = "not collected: profile.cupti is off, or auto and no report table of the run shows it"
        rows.append(status("gpu_activities", "cupti", why))
    return rows


def run_target(
    spec: dict, spec_path: Path, workdir: Path, env: dict, cupti_too: bool, launch: Launch
) -> dict:
    """The event-timed run (and, with `cupti_too`, the CUPTI-recorded run after it, in the
    same process: target.py): the event time's row, run as `launch` runs it (in the run's
    worker where the job has one).
    Where the target could not run at all (no GPU, no driver, a lost context) the job fails:
    no row may say otherwise."""
    ev_path = workdir / "event.json"
    ev_path.unlink(missing_ok=True)
    args = [str(spec_path), "--event-json", str(ev_path)]
    if cupti_too:
        (workdir / "cupti.json").unlink(missing_ok=True)
        args += ["--cupti-json", str(workdir / "cupti.json")]
    # a result that does not verify leaves the run's worker standing
    code, said = launch.run(args, env, workdir, fine=(0, NOT_VERIFIED_EXIT))
    if cupti_too:
        (workdir / "cupti.log").write_text(said)
    # with CUPTI after it, a failure of the recorded run leaves the event run's file standing
    ran = code in (0, NOT_VERIFIED_EXIT) or cupti_too
    if not ev_path.exists() or not ran:
        raise ProfileFailed(
            f"the profiler's target program could not run {spec['configuration']['variant']} "
            f"(exit code {code}): {said.strip()[-600:]}"
        )
    ev = json.loads(ev_path.read_text())
    if not ev.get("verified"):  # it ran, and its result did not verify
        return status("event_time", "cuda_events", f"failed: {said.strip()[-300:]}")
    return dict(
        metric="event_time",
        tool_metric=f"cudaEventElapsedTime (median of {ev['samples']})",
        value=ev["event_kernel_ms"],
        unit="ms",
        raw_value=ev["event_kernel_ms"],
        raw_unit="ms",
        tool="cuda_events",
        tool_version="",
        status="ok",
    )


# what a target's runs leave in their folder (run_target), for a profile job
TARGET_FILES = ("event.json", "cupti.json", "cupti.log", "target.log")


def record_targets(entries, workdir: Path, env: dict, cupti_too: bool, launch: Launch) -> dict:
    """The event-timed (and, with `cupti_too`, CUPTI-recorded) run of every configuration of
    `entries` ((stem, spec path)), one after another in the run's worker while the batch holds
    the GPU: stem -> {event: its row, folder: its files}, so that no profile job holds the GPU
    for its own (lab: code-choices, "record_targets").  A configuration whose runs fail is left
    out: its job runs them again."""
    out = {}
    for i, (stem, spec_path) in enumerate(entries):
        folder = workdir / "targets" / str(i)
        folder.mkdir(parents=True, exist_ok=True)
        spec = json.loads(Path(spec_path).read_text())
        try:
            event = run_target(spec, Path(spec_path), folder, env, cupti_too, launch)
        except ProfileFailed as err:
            log.warning("%s: its target's runs failed in the batch (%s); its job runs them", stem,
                        str(err)[:300])  # fmt: skip
            continue
        out[stem] = dict(event=event, folder=str(folder))
    return out


def cupti_rows(workdir: Path) -> list[dict]:
    """The CUPTI-recorded run's rows (cupti.py), or why there are none: cupti-python not
    installed, the run failed, or its result did not verify."""
    if importlib.util.find_spec("cupti") is None:
        why = "not collected: cupti-python is not installed (pip install '.[cupti]')"
        return [status("gpu_activities", "cupti", why)]
    version = metadata.version("cupti-python")
    out = workdir / "cupti.json"
    recorded = json.loads(out.read_text()) if out.exists() else {}
    if not recorded.get("verified"):  # it failed, or its result did not verify
        log_file = workdir / "cupti.log"
        text = log_file.read_text() if log_file.exists() else ""
        return [status("gpu_activities", "cupti", f"failed: {text.strip()[-400:]}", version)]
    return cupti.rows(recorded, version)


def record_ncu(ncu, spec, spec_path, workdir, mapping, mset, env, launch) -> list[dict] | Path:
    """Nsight Compute on the target (on the GPU): its report's path, or the rows saying why
    there is none."""
    select = [
        "--kernel-name",
        spec["kernel_name"],
        "--launch-skip",
        str(launches_before_timed(Sampling(warmup=int(spec["warmup"])))),
        "--launch-count",
        "1",
    ]
    target = launch.command(str(spec_path))
    return ncu_export(ncu, select, target, workdir / "ncu", mapping, mset, env)


def ncu_export(ncu, select, target, rep, mapping, mset, env, timeout=1800) -> list[dict] | Path:
    """Nsight Compute's run of `target` (a command), profiling the launches `select` (its
    filter options) into `rep`.ncu-rep: the report's path, or the rows saying why there is
    none.  A metric this GPU cannot collect is dropped and the run repeated."""
    wanted = profilers.ncu_metric_names(mapping, mset)
    dropped: list[str] = []
    for _ in range(4):
        metrics = [m for m in wanted if m not in dropped]
        cmd = [ncu, "--clock-control", "none", *select, "--metrics", ",".join(metrics),
               "--export", str(rep), "--force-overwrite", *target]  # fmt: skip
        proc = _run(cmd, env, timeout)
        Path(str(rep) + ".log").write_text(proc.stdout + proc.stderr)
        if proc.returncode == 0 and "==ERROR==" not in proc.stdout + proc.stderr:
            break
        missing = profilers.ncu_missing_metrics(proc.stdout + proc.stderr, metrics)
        if not missing:
            why = f"failed: {(proc.stdout + proc.stderr).strip()[-400:]}"
            return [status("metrics", "ncu", why)]
        log.warning("ncu cannot collect %s on this GPU; retrying without them", missing)
        dropped += missing
    return Path(str(rep) + ".ncu-rep")


# -- one Nsight Compute run for every configuration of a profile section -------------------------
# The report of one run is a list of launches in the order they ran, without the profiler range
# each came from, and a range can hold none (a library that ran a kernel its filter does not
# name: cuBLAS runs CUTLASS 2.x's `Kernel2` at small products).  So the launches split
# into stretches at launches of the target's MARKER, an empty kernel opening a range, and within
# a stretch no configuration's filter may match another's kernels: then each launch belongs to
# the one configuration of its stretch whose filter names it, whichever ranges are empty.  (Told
# apart only from its neighbour, an empty library range between two configurations of one kernel
# gave the second one's launch to the first: lab, "the batch's rows do not hold".)  The MARKER is
# profiled like any kernel, at the cost of a profiled launch (lab: code-choices,
# "kernel_filter"), so it opens a range only where the stretch needs it: the batch runs the
# configurations whose filters match library kernels between those of the pipeline's own
# kernels, whose names are their own, each library one in a stretch of its own.
def kernel_filter(names: list[str], marker: bool = True) -> str:
    """One `--kernel-name` filter for a batch: each configuration's kernel (the registry's
    profile_kernel: a name, or `regex:` and an expression) and, where any range opens with one,
    the target's MARKER."""
    parts = [f"^{MARKER}$"] if marker else []
    parts += [
        n.removeprefix("regex:") if n.startswith("regex:") else f"^{re.escape(n)}$" for n in names
    ]
    return "regex:" + "|".join(f"({p})" for p in dict.fromkeys(parts))


def named(name_filter: str) -> str | None:
    """The kernel name a filter stands for, where it names one kernel of this pipeline's: a
    plain name, or an anchored expression of a name with optional suffixes (`^ws_f64(_split)?$`
    -> ws_f64).  None for an expression that matches names of many kernels (a library's)."""
    if not name_filter.startswith("regex:"):
        return name_filter
    expr = name_filter.removeprefix("regex:")
    if not (expr.startswith("^") and expr.endswith("$")):
        return None
    base = re.sub(r"\([^()]*\)\?", "", expr[1:-1])
    return base if re.fullmatch(r"\w+", base) else None


def told_apart(one: str, other: str) -> bool:
    """Whether the launches of two configurations filtered by `one` and `other` can be told
    apart in one stretch of the report (no MARKER between them): one of the two names a single
    kernel of its own that the other's filter does not match.  (Where this is wrong, the split
    finds a launch both filters match and takes no rows: split_by_config.)"""
    a, b = named(one), named(other)
    if a is None and b is None:
        return False
    if a is not None and b is not None:
        return a != b and not matches(one, b) and not matches(other, a)
    return not matches(one, b) if b is not None else not matches(other, a)


def batch_plan(filters: list[str]) -> tuple[list[int], list[bool]]:
    """The order to run a batch's configurations in (indices into `filters`) and, in that order,
    whether each one's range opens with a MARKER: one where a configuration of the stretch since
    the last MARKER cannot be told from it.  The library configurations (filters naming no
    kernel of their own) each after one of the pipeline's own, while there are enough, and each
    own one a kernel the stretch does not hold yet where there is one, so that as few ranges as
    possible need one."""
    own = [i for i, f in enumerate(filters) if named(f) is not None]
    library = [i for i, f in enumerate(filters) if named(f) is None]
    order: list[int] = []
    marks: list[bool] = []
    stretch: list[str] = []  # the filters since the last MARKER

    def add(i: int) -> None:
        mark = bool(order) and not all(told_apart(f, filters[i]) for f in stretch)
        if mark:
            stretch.clear()
        stretch.append(filters[i])
        order.append(i)
        marks.append(mark)

    while own or library:
        if own:  # deep_bf16's and persistent_bf16's are one kernel
            pick = next((i for i in own if all(told_apart(f, filters[i]) for f in stretch)),
                        own[0])  # fmt: skip
            own.remove(pick)
            add(pick)
        if library:
            add(library.pop(0))
    return order, marks


def stretches(ranged: list[tuple[str, bool]]) -> list[range]:
    """The configurations of each stretch of a batch's report (`ranged`: in the order they ran,
    each one's filter and whether a MARKER opened its range): a MARKER starts the next."""
    starts = [0] + [k for k, (_, marked) in enumerate(ranged) if marked and k > 0]
    return [range(a, b) for a, b in zip(starts, starts[1:] + [len(ranged)], strict=True)]


def split_by_config(
    launches: list[dict], ranged: list[tuple[str, bool]]
) -> list[list[dict]] | None:
    """A batch report's launches in one group per configuration whose range was opened
    (`ranged`: its filter and whether a MARKER opened its range, in the order they ran): a
    MARKER starts the next stretch; within one, a launch goes to the configuration whose filter
    names it.  None where the launches cannot be told apart (a launch two filters of its stretch
    both match, a MARKER more than the ranges opened, a launch of a stretch already left): then
    no configuration takes rows from the report, and each one's job profiles it alone."""
    groups: list[list[dict]] = [[] for _ in ranged]
    parts = stretches(ranged) if ranged else []
    # the first range of all opens without a MARKER launch of its own where none was asked for
    s = 0 if parts and not ranged[0][1] else -1
    last = -1  # the configuration that took the last launch
    for launch in launches:
        name = launch.get("Kernel Name", "")
        if name == MARKER:
            s += 1
            if s >= len(parts):
                log.warning("the batch report holds a MARKER more than the ranges that had one")
                return None
            continue
        whose = [k for k in (parts[s] if s >= 0 else ()) if matches(ranged[k][0], name)]
        if len(whose) > 1:
            log.warning("launch %s (%s) matches the filters of %s, in one stretch with no MARKER "
                        "between them", launch.get("ID"), name, len(whose))  # fmt: skip
            return None
        if not whose:  # no configuration's filter names it: never a hit
            if last >= 0:
                groups[last].append(launch)
            continue
        if whose[0] < last:  # the launches ran in the ranges' order
            log.warning("launch %s (%s) comes after a later range's", launch.get("ID"), name)
            return None
        last = whose[0]
        groups[last].append(launch)
    return groups


def record_ncu_batch(ncu, entries, workdir, mapping, mset, env,
                     launch) -> tuple[list[dict] | Path, list]:  # fmt: skip
    """Nsight Compute on the target in batch (target.batch; on the GPU): each configuration of
    `entries` ((stem, spec path)) profiled in its own range of one process, in batch_plan's
    order.  The report's path (or the rows saying why there is none), and the target's account of
    each configuration in the order they ran (its range opened, with a MARKER or not, its exit
    code, its error)."""
    workdir.mkdir(parents=True, exist_ok=True)
    list_path, done_path = workdir / "batch.json", workdir / "batch-done.json"
    names = [json.loads(Path(path).read_text())["kernel_name"] for _, path in entries]
    order, marks = batch_plan(names)
    listed = [dict(stem=entries[i][0], spec=str(entries[i][1]), marker=m)
              for i, m in zip(order, marks, strict=True)]  # fmt: skip
    list_path.write_text(json.dumps(listed))
    done_path.unlink(missing_ok=True)
    select = ["--profile-from-start", "off", "--kernel-name", kernel_filter(names, any(marks))]
    target = launch.command("--batch", str(list_path), str(done_path))
    timeout = 300 + 120 * len(entries)
    rep = ncu_export(ncu, select, target, workdir / "ncu", mapping, mset, env, timeout)
    done = json.loads(done_path.read_text()) if done_path.exists() else []
    return rep, done


def read_ncu_batch(ncu, recorded, done, specs, workdir, mapping, mset, env, version) -> dict:
    """stem -> metric rows of record_ncu_batch's report (no GPU: `ncu --import`; batch_rows
    says which configurations get rows)."""
    if not isinstance(recorded, Path) or not recorded.exists():
        return {}
    launches = imported_launches(ncu, recorded, workdir, env)
    return batch_rows(launches, done, specs, mapping, mset, version)


def batch_rows(launches, done, specs, mapping, mset, version) -> dict:
    """stem -> metric rows of a batch report's launches, for each configuration whose range
    the report holds (the first launch of its group that its own filter names: split_by_config),
    whose result verified and, where the target says the grid it launched, whose launch has that
    grid; the others get none (their profile jobs then run Nsight Compute
    alone, and say why where it fails again).  Where the report's launches cannot be split by
    configuration, none is taken."""
    ranged = [d for d in done if d.get("ranged")]
    filters = [(specs[d["stem"]]["kernel_name"], d.get("marker", True)) for d in ranged]
    groups = split_by_config(launches, filters)
    if groups is None:
        return {}
    out = {}
    for d, group in zip(ranged, groups, strict=True):
        name = specs[d["stem"]]["kernel_name"]
        hit = next((x for x in group if matches(name, x.get("Kernel Name", ""))), None)
        if hit is not None and not same_grid(d.get("grid", ""), hit.get("Grid Size", "")):
            log.warning("%s: its range's launch %s has grid %s, not the %s it launched: no rows "
                        "from the batch", d["stem"], hit.get("ID"), hit.get("Grid Size"),
                        d.get("grid"))  # fmt: skip
            continue
        if d.get("code") == 0 and hit is not None:
            out[d["stem"]] = profilers.ncu_rows(hit, mapping, mset, version)
    return out


def same_grid(launched: str, reported: str) -> bool:
    """Whether the grid a configuration launched (its row's `3x11x1`; a library's `0x0x0`, or
    none recorded: not known) is the grid of the report's launch (`(3, 11, 1)`), where known."""
    mine = tuple(int(x) for x in re.findall(r"\d+", str(launched)))
    theirs = tuple(int(x) for x in re.findall(r"\d+", str(reported)))
    return not any(mine) or not theirs or mine == theirs


def batch_key(spec: dict, launch: str, version: str) -> str:
    """What a configuration's batch rows depend on (profile_batch.py keeps them under it): its
    spec with the cubin by content rather than by path, the registry's launch of its variant,
    and the profiler's version."""
    made = dict(spec, cubin=file_sha(spec["cubin"]) if spec.get("cubin") else "library")
    text = json.dumps([made, launch, version], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def imported_launches(ncu, report: Path, workdir: Path, env) -> list[dict]:
    """The launches of a Nsight Compute report, its raw page read with `ncu --import` (no GPU)
    and kept beside it as workdir/ncu_raw.csv."""
    imp = _run(
        [ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base"], env
    )
    (workdir / "ncu_raw.csv").write_text(imp.stdout)
    return profilers.parse_ncu_raw(imp.stdout)


def read_ncu(ncu, recorded, spec, workdir, mapping, mset, env, version: str) -> list[dict]:
    """The metric rows of record_ncu's report (no GPU: `ncu --import`)."""
    if not isinstance(recorded, Path):
        return [dict(r, tool_version=version) for r in recorded]
    launches = imported_launches(ncu, recorded, workdir, env)
    if not launches:
        why = f"no kernel launch named {spec['kernel_name']} was profiled"
        seen = launched(Path(str(recorded).removesuffix(".ncu-rep") + ".log"))
        if seen:  # the registry's profile_kernel names none of them
            why += f"; the target launched {', '.join(seen)}"
        return [status("metrics", "ncu", why, version)]
    return profilers.ncu_rows(launches[0], mapping, mset, version)


def launched(log_path: Path) -> list[str]:
    """The kernels Nsight Compute saw but profiled none of (by function name), from the list
    its log prints after "No kernels were profiled"."""
    text = log_path.read_text() if log_path.exists() else ""
    _, found, rest = text.partition("Available Kernels:")
    return re.findall(r"^\s*\d+\.\s+(\S+)\s*$", rest, re.M) if found else []


def record_nsys(nsys, spec_path, workdir, env, launch) -> list[dict] | Path:
    """Nsight Systems on the target (on the GPU): its report's path, or the rows saying why
    there is none (on our GPU machines it records but cannot import its recording)."""
    rep = workdir / "nsys"
    proc = _run(
        [
            nsys,
            "profile",
            "--trace",
            "cuda",
            "--output",
            str(rep),
            "--force-overwrite",
            "true",
            *launch.command(str(spec_path)),
        ],
        env,
    )
    (workdir / "nsys.log").write_text(proc.stdout + proc.stderr)
    rep_file = Path(str(rep) + ".nsys-rep")
    if not rep_file.exists():
        recorded = sorted(p.name for p in workdir.glob("nsys*"))
        text = (proc.stdout + proc.stderr).strip()
        why = (
            "cannot import its recording (QdstrmImporter missing)"
            if "Qdstrm" in text or any(p.endswith(".qdstrm") for p in recorded)
            else "made no report"
        )
        return [
            status(
                "time_split",
                "nsys",
                f"unavailable: nsys recorded {recorded} but {why}: "
                f"{text.splitlines()[-1] if text else ''}",
            )
        ]
    return rep_file


def read_nsys(nsys, recorded, workdir, env, version: str) -> list[dict]:
    """The time split of record_nsys's report (no GPU: `nsys stats`)."""
    if not isinstance(recorded, Path):
        return [dict(r, tool_version=version) for r in recorded]
    rep_file = recorded
    prefix = workdir / "nsys_stats"
    st = _run(
        [
            nsys,
            "stats",
            "--report",
            "cuda_gpu_kern_sum,cuda_gpu_mem_time_sum",
            "--format",
            "csv",
            "--output",
            str(prefix),
            "--force-export",
            "true",
            str(rep_file),
        ],
        env,
    )
    kern = workdir / "nsys_stats_cuda_gpu_kern_sum.csv"
    mem = workdir / "nsys_stats_cuda_gpu_mem_time_sum.csv"
    if st.returncode != 0 or not kern.exists():
        return [
            status(
                "time_split",
                "nsys",
                f"unavailable: nsys stats failed: {st.stderr.strip()[-300:]}",
                version,
            )
        ]
    return profilers.time_split_rows(
        profilers.parse_nsys_stats(kern.read_text()),
        profilers.parse_nsys_stats(mem.read_text()) if mem.exists() else [],
        "nsys",
        version,
    )

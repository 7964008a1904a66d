"""One profiling job: a configuration under the right profiler, into tidy metric rows.

Metrics come from Nsight Compute (named by their nvprof equivalents).  nvprof itself is not
supported: it profiles only GPUs below compute capability 7.5, which the CUDA 13 toolkit this
pipeline builds with no longer targets.  Nsight Systems adds the time split (kernel, HtoD, DtoH) where a full
installation can turn its recording into statistics; where it cannot (no QdstrmImporter, as on
our GPU machines) the job records exactly that and carries on.  A missing profiler never fails
the workflow: its rows say what was not collected and why.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import subprocess
from importlib import metadata
from pathlib import Path

from mmbench.core import paths
from mmbench.measure.timing import Sampling, launches_before_timed
from mmbench.profile import cupti, profilers
from mmbench.profile.target import NOT_VERIFIED_EXIT

log = logging.getLogger("mmbench.profile.profiling")


def _target(spec_path: Path) -> list[str]:
    return paths.child_command("profile.target", str(spec_path))


def _run(cmd: list[str], env: dict, timeout: int = 1800) -> subprocess.CompletedProcess:
    log.info("$ %s", " ".join(cmd))
    return subprocess.run(
        cmd, capture_output=True, text=True, env=paths.child_env(env), timeout=timeout
    )


class ProfileFailed(RuntimeError):
    """The configuration could not be run at all: the job fails, and the next run retries it."""


def status(metric: str, tool: str, text: str, version: str = "") -> dict:
    return dict(metric=metric, tool=tool, tool_version=version, status=text)


def profile(spec: dict, workdir: Path, tools: dict, env: dict) -> list[dict]:
    """Rows for one configuration: event time, then the profiler's metrics."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / "spec.json"
    spec_path.write_text(json.dumps(spec))
    rows: list[dict] = []
    # 1. the event-timed kernel, without any profiler attached
    ev_path = workdir / "event.json"
    proc = _run(_target(spec_path) + ["--event-json", str(ev_path)], env)
    if proc.returncode == 0:
        ev = json.loads(ev_path.read_text())
        rows.append(
            dict(
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
        )
    elif proc.returncode == NOT_VERIFIED_EXIT:  # it ran, and its result did not verify
        rows.append(status("event_time", "cuda_events", f"failed: {proc.stderr.strip()[-300:]}"))
    else:  # it could not run (no GPU, no driver, a lost context): no row may say otherwise
        raise ProfileFailed(
            f"the profiler's target program could not run {spec['configuration']['variant']} "
            f"(exit code {proc.returncode}): {proc.stderr.strip()[-600:]}"
        )
    mapping = profilers.load_mapping()
    mset = spec["metric_set"]
    ncu = profilers.find_tool("ncu", tools.get("ncu")) if tools.get("ncu") != "off" else None
    # 2. metrics
    if ncu:
        rows += run_ncu(ncu, spec, spec_path, workdir, mapping, mset, env)
    else:
        why = "ncu (Nsight Compute) not found on PATH; set profile.ncu to its path"
        if tools.get("ncu") == "off":
            why = "profile.ncu is off"
        rows.append(status("metrics", "none", f"not collected: {why}"))
    # 3. timeline (time split)
    if tools.get("nsys") != "off":
        nsys = profilers.find_tool("nsys", tools.get("nsys"))
        if nsys:
            rows += run_nsys(nsys, spec_path, workdir, env)
        else:
            rows.append(
                status(
                    "time_split",
                    "nsys",
                    "not collected: nsys (Nsight Systems) not "
                    "found on PATH; set profile.nsys to its path, or off",
                )
            )
    # 4. CUPTI activity records: nvprof's GPU-activities table, CUPTI's kernel time
    if tools.get("cupti", True):
        rows += run_cupti(spec_path, workdir, env)
    else:
        why = "not collected: profile.cupti is off, or auto and no report table of the run shows it"
        rows.append(status("gpu_activities", "cupti", why))
    return rows


def run_cupti(spec_path, workdir, env) -> list[dict]:
    """The target once more, recorded by CUPTI in its own process (cupti.py)."""
    if importlib.util.find_spec("cupti") is None:
        why = "not collected: cupti-python is not installed (pip install '.[cupti]')"
        return [status("gpu_activities", "cupti", why)]
    version = metadata.version("cupti-python")
    out = workdir / "cupti.json"
    proc = _run(_target(spec_path) + ["--cupti-json", str(out)], env)
    (workdir / "cupti.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not out.exists():
        why = f"failed: {(proc.stdout + proc.stderr).strip()[-400:]}"
        return [status("gpu_activities", "cupti", why, version)]
    return cupti.rows(json.loads(out.read_text()), version)


def run_ncu(ncu, spec, spec_path, workdir, mapping, mset, env) -> list[dict]:
    version = profilers.tool_version(ncu)
    wanted = profilers.ncu_metric_names(mapping, mset)
    rep = workdir / "ncu"
    dropped: list[str] = []
    for _ in range(4):
        metrics = [m for m in wanted if m not in dropped]
        cmd = [
            ncu,
            "--clock-control",
            "none",
            "--kernel-name",
            spec["kernel_name"],
            "--launch-skip",
            str(launches_before_timed(Sampling(warmup=int(spec["warmup"])))),
            "--launch-count",
            "1",
            "--metrics",
            ",".join(metrics),
            "--export",
            str(rep),
            "--force-overwrite",
            *_target(spec_path),
        ]
        proc = _run(cmd, env)
        (workdir / "ncu.log").write_text(proc.stdout + proc.stderr)
        if proc.returncode == 0 and "==ERROR==" not in proc.stdout + proc.stderr:
            break
        missing = profilers.ncu_missing_metrics(proc.stdout + proc.stderr, metrics)
        if not missing:
            return [
                status(
                    "metrics",
                    "ncu",
                    f"failed: {(proc.stdout + proc.stderr).strip()[-400:]}",
                    version,
                )
            ]
        log.warning("ncu cannot collect %s on this GPU; retrying without them", missing)
        dropped += missing
    imp = _run(
        [ncu, "--import", str(rep) + ".ncu-rep", "--csv", "--page", "raw", "--print-units", "base"],
        env,
    )
    raw = workdir / "ncu_raw.csv"
    raw.write_text(imp.stdout)
    launches = profilers.parse_ncu_raw(imp.stdout)
    if not launches:
        return [
            status(
                "metrics",
                "ncu",
                f"no kernel launch named {spec['kernel_name']} was profiled",
                version,
            )
        ]
    return profilers.ncu_rows(launches[0], mapping, mset, version)


def run_nsys(nsys, spec_path, workdir, env) -> list[dict]:
    version = profilers.tool_version(nsys)
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
            *_target(spec_path),
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
                version,
            )
        ]
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

"""nvprof's GPU-activities table from CUPTI's activity records (NVIDIA's ``cupti-python``).

Nsight Systems records on our GPU machines but cannot import its recording, so its time split is
"unavailable"; CUPTI's activity API gives the same records from the driver: every kernel (name,
start, end) and every memory copy (kind, bytes, start, end).  The profiler target
(profile_target.py --cupti-json) records them for one configuration; ``activity_table`` turns
them into seed 002's nvprof summary:

    Type  Time(%)  Time  Calls  Avg  Min  Max  Name
    GPU activities  ...  tiled_guarded / [CUDA memcpy HtoD] / [CUDA memcpy DtoH]

``cupti-python`` is optional (the ``cupti`` extra); without it the rows say why, as for nsys.
"""

from __future__ import annotations

import statistics
from contextlib import contextmanager

import pandas as pd

from mmbench.profile.profilers import matches

# CUPTI's memcpy kinds (CUpti_ActivityMemcpyKind) under nvprof's names
COPY_NAMES = {
    "HTOD": "[CUDA memcpy HtoD]",
    "DTOH": "[CUDA memcpy DtoH]",
    "DTOD": "[CUDA memcpy DtoD]",
    "HTOH": "[CUDA memcpy HtoH]",
    "PTOP": "[CUDA memcpy PtoP]",
}


def unavailable() -> str | None:
    """Why CUPTI cannot record here (None when it can)."""
    try:
        from cupti import cupti  # noqa: F401
    except Exception as err:  # noqa: BLE001 - not installed, or no matching libcupti
        return f"cupti-python not usable ({type(err).__name__}: {str(err)[:120]})"
    return None


@contextmanager
def recording(records: list[dict]):
    """Collects kernel, memcpy and memset activity records of the code inside into ``records``
    (dicts: kind, name, start_ns, end_ns, bytes)."""
    from cupti import cupti

    kinds = (
        cupti.ActivityKind.CONCURRENT_KERNEL,
        cupti.ActivityKind.MEMCPY,
        cupti.ActivityKind.MEMSET,
    )
    copy_kind = {int(k): k.name for k in cupti.ActivityMemcpyKind}

    def requested():
        return 8 * 1024 * 1024, 0  # an 8 MiB buffer, as many records as fit

    def completed(activities):
        for a in activities:
            if a.kind == cupti.ActivityKind.CONCURRENT_KERNEL:
                records.append(dict(kind="kernel", name=a.name, start_ns=a.start, end_ns=a.end))
            elif a.kind == cupti.ActivityKind.MEMCPY:
                name = COPY_NAMES.get(copy_kind.get(int(a.copy_kind), ""), "[CUDA memcpy]")
                records.append(
                    dict(kind="memcpy", name=name, start_ns=a.start, end_ns=a.end, bytes=a.bytes)
                )
            elif a.kind == cupti.ActivityKind.MEMSET:
                records.append(
                    dict(kind="memset", name="[CUDA memset]", start_ns=a.start, end_ns=a.end)
                )

    cupti.activity_register_callbacks(requested, completed)
    for k in kinds:
        cupti.activity_enable(k)
    try:
        yield records
    finally:
        cupti.activity_flush_all(1)
        for k in kinds:
            cupti.activity_disable(k)
        # detached, so that a served worker's later measurements run as they would without
        # it (profile/target.py in service/worker.py); a later recording attaches it again
        cupti.finalize()


def activity_table(records: list[dict]) -> pd.DataFrame:
    """nvprof's "GPU activities" summary of the records: one row per kernel name or copy kind,
    by total time, with Time(%) of all GPU activity time."""
    if not records:
        return pd.DataFrame(
            columns=["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
        )
    df = pd.DataFrame([r for r in records if complete(r)])
    if df.empty:
        return activity_table([])
    df["ms"] = (df.end_ns - df.start_ns) / 1e6
    g = df.groupby("name").ms
    out = pd.DataFrame(
        {
            "Time": g.sum(),
            "Calls": g.size(),
            "Avg": g.mean(),
            "Min": g.min(),
            "Max": g.max(),
        }
    ).reset_index(names="Name")
    out["Time(%)"] = 100 * out.Time / out.Time.sum()
    out["Type"] = "GPU activities"
    out = out.sort_values("Time", ascending=False)
    return out[["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]].reset_index(
        drop=True
    )


def complete(record: dict) -> bool:
    """A record with both timestamps (a forced flush hands over the records of work still
    running with zeros)."""
    return record["start_ns"] > 0 and record["end_ns"] >= record["start_ns"]


def kernel_times(records: list[dict], kernel: str, last: int) -> list[float]:
    """The durations (ms) of the last ``last`` launches of ``kernel`` (profilers.matches)."""
    ks = [r for r in records if r["kind"] == "kernel" and matches(kernel, r["name"])]
    ks = [r for r in ks if complete(r)]
    ks.sort(key=lambda r: r["start_ns"])
    return [(r["end_ns"] - r["start_ns"]) / 1e6 for r in ks[-last:]]


def status_row(metric: str, text: str, version: str) -> dict:
    return dict(metric=metric, tool="cupti", tool_version=version, status=text)


def rows(record: dict, version: str) -> list[dict]:
    """Tidy metric rows (profiling.py's shape) from profile_target's --cupti-json output: the
    CUPTI kernel time of the event-timed launches beside their CUDA-event time, and one row per
    line of the GPU-activities table (metric gpu_activity_*, tool_metric = the activity's name)."""
    base = dict(tool="cupti", tool_version=version, status="ok")
    out = []
    # a launch whose record had no timestamps was timed as 0 by an older profile target
    cupti_ms = [x for x in record["cupti_kernel_ms"] if x > 0]
    event_ms = record["event_kernel_ms"]
    lost = sum(not complete(r) for r in record["records"])
    if lost:
        out.append(
            status_row("gpu_activities", f"incomplete: {lost} records without timestamps", version)
        )
    if len(cupti_ms) < len(event_ms):
        why = f"CUPTI timed {len(cupti_ms)} of the {len(event_ms)} event-timed launches"
        out.append(status_row("cupti_kernel_time", f"incomplete: {why}", version))
    elif cupti_ms:
        med = statistics.median(cupti_ms)
        out.append(
            base
            | dict(
                metric="cupti_kernel_time",
                tool_metric=f"CUPTI kernel activity (median of {len(cupti_ms)})",
                value=med,
                unit="ms",
                raw_value=med,
                raw_unit="ms",
            )
        )
        ratio = med / statistics.median(event_ms)
        out.append(
            base
            | dict(
                metric="cupti_over_event_time",
                tool_metric="CUPTI kernel time / cudaEventElapsedTime (same launches)",
                value=ratio,
                unit="ratio",
                raw_value=ratio,
                raw_unit="ratio",
            )
        )
    for t in activity_table(record["records"]).to_dict("records"):
        for col, metric, unit in (
            ("Time", "gpu_activity_time", "ms"),
            ("Time(%)", "gpu_activity_percent", "%"),
            ("Calls", "gpu_activity_calls", "count"),
            ("Avg", "gpu_activity_avg", "ms"),
            ("Min", "gpu_activity_min", "ms"),
            ("Max", "gpu_activity_max", "ms"),
        ):
            value = float(t[col])
            out.append(
                base
                | dict(
                    metric=metric,
                    tool_metric=t["Name"],
                    value=value,
                    unit=unit,
                    raw_value=value,
                    raw_unit=unit,
                )
            )
    return out

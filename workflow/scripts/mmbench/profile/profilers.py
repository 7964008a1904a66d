"""Profiler output -> tidy metric rows, and the commands that produce it.

Nsight Compute (`ncu --import R --csv --page raw --print-units base`) and Nsight Systems
(`nsys stats --format csv` of cuda_gpu_kern_sum and cuda_gpu_mem_time_sum) are parsed here, and
every value is named by its nvprof metric (workflow/resources/nvprof_to_ncu.yaml), in nvprof's
unit, so the table reads like seed 002's nvprof output.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from pathlib import Path

from mmbench.core import paths
from mmbench.core.bounded import load_yaml

METRIC_COLUMNS = [
    "metric",
    "tool_metric",
    "value",
    "unit",
    "raw_value",
    "raw_unit",
    "tool",
    "tool_version",
    "status",
]


def load_mapping(path: str | Path | None = None) -> dict:
    """The nvprof -> Nsight Compute metric mapping (workflow/resources/nvprof_to_ncu.yaml)."""
    return load_yaml(Path(path or paths.resource_path("nvprof_to_ncu.yaml")))


def ncu_metric_names(mapping: dict, metric_set: str) -> list[str]:
    """The Nsight Compute metrics a metric set needs."""
    names: list[str] = []
    for m in mapping["sets"][metric_set]:
        entry = mapping["metrics"][m]
        names += [entry["ncu"]] if "ncu" in entry else list(entry["ncu_sum"])
    return list(dict.fromkeys(names))


def number(text: str) -> float | None:
    """A number as profilers print it ("1,234.5", "93.7%", "n/a")."""
    t = text.strip().replace(",", "").rstrip("%")
    try:
        return float(t)
    except ValueError:
        return None


# -- Nsight Compute -----------------------------------------------------------------------------
def parse_ncu_raw(text: str) -> list[dict]:
    """Rows of `ncu --csv --page raw --print-units base`: header, units row, one row per
    profiled kernel launch.  Returns one dict per launch: {metric: (value, unit)} plus the
    identifying columns as strings."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    if len(lines) < 2:
        return []
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    header, units, values = rows[0], rows[1], rows[2:]
    out = []
    for vals in values:
        rec = {}
        for name, unit, val in zip(header, units, vals, strict=False):
            num = number(val)
            rec[name] = (num, unit) if num is not None and "__" in name else val
        out.append(rec)
    return out


def ncu_rows(launch: dict, mapping: dict, metric_set: str, version: str) -> list[dict]:
    """Tidy rows (nvprof name, ncu name, normalised value and unit, raw value and unit) of one
    profiled launch."""
    rows = []
    for m in mapping["sets"][metric_set]:
        entry = mapping["metrics"][m]
        scale = float(entry.get("scale", 1.0))
        base = dict(metric=m, unit=entry["unit"], tool="ncu", tool_version=version)
        if "ncu" in entry:
            got = launch.get(entry["ncu"])
            if not isinstance(got, tuple):
                rows.append(base | dict(tool_metric=entry["ncu"], status="unavailable"))
                continue
            rows.append(
                base
                | dict(
                    tool_metric=entry["ncu"],
                    value=got[0] * scale,
                    raw_value=got[0],
                    raw_unit=got[1],
                    status="ok",
                )
            )
        else:
            parts = {k: launch.get(k) for k in entry["ncu_sum"]}
            if not all(isinstance(v, tuple) for v in parts.values()):
                rows.append(base | dict(tool_metric=" + ".join(parts), status="unavailable"))
                continue
            total = sum(w * parts[k][0] for k, w in entry["ncu_sum"].items())
            label = " + ".join(f"{w}*{k}" if w != 1 else k for k, w in entry["ncu_sum"].items())
            rows.append(
                base
                | dict(
                    tool_metric=label,
                    value=total * scale,
                    raw_value=total,
                    raw_unit="inst",
                    status="ok",
                )
            )
    return rows


_MISSING = re.compile(r"[a-z0-9_]+__[A-Za-z0-9_.]+")


def ncu_missing_metrics(stderr: str, requested: list[str]) -> list[str]:
    """The requested metrics ncu says it cannot collect (it names them in its error)."""
    if "metric" not in stderr.lower():
        return []
    named = set(_MISSING.findall(stderr))
    return [m for m in requested if m in named]


def tool_version(exe: str) -> str:
    try:
        out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    m = re.search(r"Version\s+([\w.\-]+)", out) or re.search(r"release\s+([\w.]+)", out)
    return m.group(1) if m else out.strip().splitlines()[-1] if out.strip() else "unknown"


def find_tool(name: str, configured: str | None) -> str | None:
    """The profiler to use: the configured path, or the one on PATH."""
    if configured and configured != "auto":
        return configured if Path(configured).exists() or shutil.which(configured) else None
    return shutil.which(name)


# -- Nsight Systems -----------------------------------------------------------------------------
def parse_nsys_stats(text: str) -> list[dict]:
    """Rows of one `nsys stats --format csv` report (cuda_gpu_kern_sum or
    cuda_gpu_mem_time_sum), whatever nsys printed before the header.  Times become ms."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if "Total Time" in ln), None)
    if start is None:
        return []
    reader = csv.DictReader(io.StringIO("\n".join(lines[start:])))
    out = []
    for r in reader:
        rec = {}
        for key, val in r.items():
            if key is None:
                continue
            m = re.match(r"(.*?)\s*\((ns|us|ms|s)\)$", key)
            if m:
                factor = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}[m.group(2)]
                num = number(val)
                rec[m.group(1).strip().lower().replace(" ", "_") + "_ms"] = (
                    num * factor if num is not None else None
                )
            else:
                rec[key.strip().lower().replace(" ", "_").replace("(%)", "pct")] = val
        out.append(rec)
    return out


def time_split_rows(kern: list[dict], mem: list[dict], tool: str, version: str) -> list[dict]:
    """nvprof-style time split (E3b): kernel, HtoD, DtoH totals in ms, from either profiler."""

    def kind(name: str) -> str:
        n = name.lower().replace("-", "").replace(" ", "")
        if "htod" in n or "hosttodevice" in n:
            return "memcpy_htod"
        if "dtoh" in n or "devicetohost" in n:
            return "memcpy_dtoh"
        if "memset" in n:
            return "memset"
        if "memcpy" in n:
            return "memcpy_other"
        return "kernel"

    totals: dict[str, float] = {}
    for r in kern + mem:
        name = r.get("name") or r.get("operation") or ""
        t = r.get("total_time_ms")
        if t is None:
            continue
        totals[kind(name)] = totals.get(kind(name), 0.0) + t
    return [
        dict(
            metric=f"time_{k}",
            tool_metric=k,
            value=v,
            unit="ms",
            raw_value=v,
            raw_unit="ms",
            tool=tool,
            tool_version=version,
            status="ok",
        )
        for k, v in sorted(totals.items())
    ]


def e3f_table(metrics):
    """Seed 002's nvprof table: one row per nvprof metric, one column per profiled kernel
    (its label and size: N for a square product, m x n x k for another; its element type too
    where the table holds more than one), values normalised to nvprof's units."""
    import pandas as pd

    ok = metrics[(metrics.status == "ok") & (metrics.tool != "cuda_events")].copy()
    if ok.empty:
        return pd.DataFrame()
    many = "dtype" in ok and ok["dtype"].nunique() > 1
    types = [f" {t}" for t in ok["dtype"]] if many else [""] * len(ok)
    ok["kernel"] = [
        f"{lab} " + (f"N={m}" if m == n == k else f"{m}x{n}x{k}") + t
        for lab, m, n, k, t in zip(ok["label"], ok.m, ok.n, ok.k, types, strict=True)
    ]
    table = ok.pivot_table(
        index=["metric", "unit"], columns="kernel", values="value", aggfunc="first"
    )
    order = [m for m in load_mapping()["sets"]["e3f"] if m in table.index.get_level_values(0)]
    return table.reindex(order, level=0).reset_index()


def function_name(kernel: str) -> str:
    """A kernel's name as `--kernel-name` sees it (Nsight Compute's default kernel-name base,
    `function`), from the demangled name its report prints: no return type, template
    arguments, parameters or namespaces (`void cutlass::Kernel2<cutlass_80_simt_sgemm_...>(
    T1::Params)` -> `Kernel2`), or from a mangled one (`_ZN7cutlass7Kernel2I...`
    -> `Kernel2`).  A C name is itself."""
    if kernel.startswith("_Z"):  # the last part of its (nested) name
        parts = []
        rest = kernel[3:] if kernel.startswith("_ZN") else kernel[2:]
        while (m := re.match(r"(\d+)", rest)) and int(m[1]) <= len(rest) - len(m[1]):
            size = int(m[1])
            parts.append(rest[len(m[1]) : len(m[1]) + size])
            rest = rest[len(m[1]) + size :]
        return parts[-1] if parts else kernel
    out, depth = [], 0
    for ch in kernel:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    words = "".join(out).split()
    return words[-1].split("::")[-1] if words else kernel


def matches(name_filter: str, kernel: str) -> bool:
    """Whether a launch's kernel name (as Nsight Compute's report or CUPTI's records give it)
    passes a configuration's own filter (the registry's profile_kernel or symbol: a name, or
    `regex:PATTERN` for a library's kernels, whose names vary), as Nsight Compute applies
    `--kernel-name`: to the function's name (function_name)."""
    base = function_name(kernel)
    if name_filter.startswith("regex:"):
        return re.search(name_filter.removeprefix("regex:"), base) is not None
    return base == name_filter

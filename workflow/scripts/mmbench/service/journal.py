"""A measurement job's journal (`runs/<variant>.csv.journal.jsonl`): one JSON record a line,
appended and flushed by the worker, read by the job (jobs.py).  The record shapes, all here:

    {"device": {...}}                 the worker reached its GPU (device.device_properties)
    {"fatal": "no usable GPU: ..."}   the worker could not reach one
    {"start": KEY}                    it starts measuring the configuration KEY
    {"key": KEY, "row": {...}}        that configuration's finished row
    {"times": {...}}                  when the worker started, was ready, was done (time.time())
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import time
from pathlib import Path


def device_record(properties: dict) -> dict:
    return {"device": properties}


def fatal_record(message: str) -> dict:
    return {"fatal": message}


def start_record(key: str) -> dict:
    return {"start": key}


def row_record(key: str, row: dict) -> dict:
    return {"key": key, "row": row}


def times_record(**times: float | None) -> dict:
    return {"times": times}


def worker_times(path: Path) -> list[dict]:
    """Each worker's time stamps, in the order the workers ran: its "times" records merged, a
    new worker starting at each record with a "process" stamp."""
    out: list[dict] = []
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                times = json.loads(line).get("times")
            except (json.JSONDecodeError, AttributeError):
                continue
            if not isinstance(times, dict):
                continue
            if "process" in times or not out:
                out.append({})
            out[-1].update(times)
    return out


@functools.cache
def harness_sha() -> str:
    """16 hex digits naming the harness that measures: the sources of this package's core/ and
    measure/ (what times and verifies a kernel), each file by its path and content."""
    package = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted([*package.glob("core/*.py"), *package.glob("measure/*.py")]):
        h.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()[:16]


# where the OS says which NVIDIA kernel driver is loaded (read without a GPU call)
DRIVER_FILES = ("/sys/module/nvidia/version", "/proc/driver/nvidia/version")


@functools.cache
def driver_version() -> str:
    """The NVIDIA driver loaded on this host, as NVML would name it ('580.95.05'); '' where
    none is loaded (no GPU here)."""
    for name in DRIVER_FILES:
        try:
            text = Path(name).read_text()
        except OSError:
            continue
        found = re.search(r"\b(\d+\.\d+(?:\.\d+)?)\b", text)
        if found:
            return found.group(1)
    return ""


def journal_key(conf: dict, cubin_sha: str, source_sha: str, settings: dict, gpu: str) -> str:
    """Names one measurement: the configuration, its cubin, the kernel sources, the sampling
    settings and what it runs on (`gpu`: host, UUID, driver and harness, jobs.run_job)."""
    blob = json.dumps([conf, cubin_sha, source_sha, settings, gpu], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def read_journal(path: Path) -> tuple[dict[str, dict], list[str], dict | None]:
    """(rows by key, keys started in order, device record) from a journal; a torn last line
    (the process was killed while writing it) is ignored."""
    rows, started, device = {}, [], None
    if not path.exists():
        return rows, started, device
    for line in path.read_text().splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "row" in rec:
            rows[rec["key"]] = rec["row"]
        elif "start" in rec:
            started.append(rec["start"])
        elif "device" in rec:
            device = rec["device"]
    return rows, started, device


def journal_fatal(path: Path) -> str | None:
    """The last fatal message a worker journaled (it could not reach the GPU), if any."""
    fatal = None
    if path.exists():
        for line in path.read_text().splitlines():
            try:
                fatal = json.loads(line).get("fatal", fatal)
            except (json.JSONDecodeError, AttributeError):
                continue
    return fatal


def append_jsonl(path: str | Path, record: dict) -> None:
    """Appends one record to a job's journal, flushed, so a crash keeps it."""
    with open(path, "a") as fh:
        fh.write(json.dumps(record, default=str) + "\n")
        fh.flush()


def process_started_at() -> float | None:
    """When this process started, on time.time()'s clock, to 10 ms (Linux: /proc/self/stat's
    start in clock ticks since boot, against the boot-time clock): the interpreter's own start
    and imports come before any stamp the program takes.  None where /proc says nothing."""
    try:
        ticks = int(open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
        return time.time() - age
    except (OSError, ValueError, IndexError, AttributeError):
        return None

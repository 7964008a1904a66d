"""The inputs of a shape drawn once per run, not once per variant.

Every measurement job (one per variant) needs the same host matrices for the same shape, seed,
distribution and element type (oracle.group_key); drawing them costs about 2.5 s for two 12000 x
12000 float32 matrices on the GPU machine's host, and a job's first group has nothing to hide it
behind.  The first job to draw a group keeps the arrays here, in shared memory (/dev/shm, where
the page cache holds them); the later jobs map them read-only.  The values are the very ones
drawn (np.save of the raw bytes, checked by shape, type and a digest of the drawing code), so a
cached input is bit-for-bit what make_inputs returns.

The cache is a folder per user (`MMBENCH_INPUTS_CACHE` names another); files are written
atomically, so a job never maps a half-written one.  Nothing is kept where the file system has
less than twice the arrays' size free (the job draws as before), and the workflow empties the
folder when a run ends (clear()).  Inside a SLURM job nothing is kept unless the variable names
a folder: a compute node's shared memory is not this run's to fill, and the workflow's end, on
the login node, could not empty it.

Drawn ahead: a measurement job starts while the one before it holds the GPU, and waits for it.
Meanwhile its groups are drawn into the cache by processes of their own (predraw.py, started
by jobs.run_job), so that its worker maps
them rather than drawing them with the GPU held.  Whoever draws a group holds its lock file
(`drawing`) while it does: a worker that needs a group being drawn waits for that draw rather
than drawing it again (lab: code-choices, "input_cache").
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ENV = "MMBENCH_INPUTS_CACHE"


def folder() -> Path:
    """Where the inputs are kept: $MMBENCH_INPUTS_CACHE, else /dev/shm (memory) where it
    exists, else the temporary directory."""
    named = os.environ.get(ENV)
    if named:
        return Path(named)
    base = Path("/dev/shm") if Path("/dev/shm").is_dir() else Path(tempfile.gettempdir())
    return base / f"mmbench-inputs-{os.getuid()}"


@functools.cache  # the files are read once per process, not per group and call
def _code_digest() -> str:
    """The drawing code's digest: an edit of a distribution never reads old draws."""
    from mmbench.core import distributions

    h = hashlib.sha256()
    # oracle.py (make_inputs) read as a file: importing it here would be a cycle
    for path in (Path(distributions.__file__), Path(__file__).with_name("oracle.py")):
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def key(conf) -> str:
    """The file stem of a configuration's inputs: everything make_inputs reads."""
    parts = (conf.seed, conf.m, conf.n, conf.k, conf.distribution, conf.dtype, conf.accumulate)
    text = "|".join(map(str, parts)) + "|" + _code_digest()
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _paths(stem: str) -> dict[str, Path]:
    return {role: folder() / f"{stem}.{role}.npy" for role in ("a", "b", "c0")}


def enabled() -> bool:
    return bool(os.environ.get(ENV)) or "SLURM_JOB_ID" not in os.environ


def load(conf, dtypes: dict[str, np.dtype], shapes: dict[str, tuple]) -> dict | None:
    """The kept arrays (read-only maps), or None where any is missing or not as expected."""
    out = {}
    for role, path in _paths(key(conf)).items():
        if role not in shapes:
            continue
        try:
            raw = np.load(path, mmap_mode="r")
        except (OSError, ValueError):
            return None
        dt = np.dtype(dtypes[role])
        if raw.dtype != np.dtype(f"u{dt.itemsize}") or raw.shape != shapes[role]:
            return None
        out[role] = raw.view(dt)
    return out


def keep(conf, arrays: dict[str, np.ndarray]) -> bool:
    """Writes the arrays (atomically) where there is room; whether they were kept."""
    where = folder()
    try:
        where.mkdir(parents=True, exist_ok=True)
        free = shutil.disk_usage(where).free
    except OSError:
        return False
    if free < 2 * sum(a.nbytes for a in arrays.values()):
        return False
    for role, path in _paths(key(conf)).items():
        if role not in arrays:
            continue
        a = np.ascontiguousarray(arrays[role])
        if not _written(path, lambda f, a=a: np.save(f, a.view(f"u{a.dtype.itemsize}"))):
            return False
    return True


def _written(path: Path, write) -> bool:
    """`write(file)` into a temporary file beside `path`, then renamed to it: a reader never
    maps a half-written file.  Whether it was written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
        return False
    return True


def drawing(conf) -> contextlib.AbstractContextManager:
    """Held while conf's group is drawn and kept (a lock file beside its arrays): the one
    drawer of a group at a time; whoever comes second finds the arrays there when it gets it."""
    return _locked(f"{key(conf)}.lock")


def probe_products(stem: str, vectors: int, exact: bool, compute) -> dict:
    """The Freivalds probes' products of a group's inputs (freivalds.products: x, A.(B.x) +
    C0.x and its bound), for `vectors` vectors of the kind `exact` says: kept beside the
    inputs by whoever computes them first (under their own lock), read back by the others
    (`compute()` makes them where none are kept, or nothing can be)."""
    path = folder() / f"{stem}.probes{vectors}{'x' if exact else 'r'}.npz"
    kept = _products_at(path)
    if kept is not None:
        return kept
    with _locked(path.name + ".lock"):  # one maker at a time; a second finds them kept
        kept = _products_at(path)
        if kept is not None:
            return kept
        made = compute()
        _written(path, lambda f: np.savez(f, **made))
        return made


def _products_at(path: Path) -> dict | None:
    try:
        with np.load(path) as kept:
            return {name: kept[name] for name in kept.files}
    except (OSError, ValueError):
        return None


@contextlib.contextmanager
def _locked(name: str) -> Iterator[None]:
    try:
        folder().mkdir(parents=True, exist_ok=True)
        fh = open(folder() / name, "a")  # noqa: SIM115 - held across the yield
    except OSError:  # no cache folder to be had: nothing is kept either (keep), nor locked
        yield
        return
    with fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def clear() -> None:
    """Empties the cache (the workflow's onsuccess and onerror); a job that still maps a file
    keeps its pages until it ends."""
    shutil.rmtree(folder(), ignore_errors=True)

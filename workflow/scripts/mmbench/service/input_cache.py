"""The inputs of a shape drawn once per run, not once per variant.

Every measurement job (one per variant) needs the same host matrices for the same shape, seed,
distribution and element type (oracle.group_key); drawing them costs about 2.5 s for two 12000 x
12000 float32 matrices on the GPU machine's host, and a job's first group has nothing to hide it
behind.  The first job to draw a group keeps the arrays here, in shared memory (/dev/shm, where
the page cache holds them); the later jobs map them read-only.  The values are the very ones
drawn (np.save of the raw bytes, checked by shape, type and a digest of the drawing code), so a
cached input is bit-for-bit what make_inputs returns.

The cache is a folder per user (`MMBENCH_INPUTS_CACHE` names another), this user's alone:
made by this module (mode 0700, marked by a file of its own, MARK), or, where it exists, owned
by this user, writable by no one else, not a symbolic link, and marked or empty.  Anything else
(a folder another user made first, one holding other files) is not used, said once on stderr,
and each job draws its inputs itself: nothing another user planted is ever mapped, and nothing
that is not the cache's is ever emptied.  Files are written atomically through temporary files
of unguessable names created exclusively, so a job never maps a half-written one and no link
planted at a temporary name is followed; each group's arrays are checked against the digest of
their draw (written beside them) before they are used, and drawn again where they differ.
Nothing is kept where the file system has less than twice the arrays' size free (the job draws
as before), and the workflow empties the folder of the cache's own files when a run ends
(clear()).  Inside a SLURM job nothing is kept unless the variable names a folder: a compute
node's shared memory is not this run's to fill, and the workflow's end, on the login node,
could not empty it.

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
import json
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from mmbench.core.paths import not_private

ENV = "MMBENCH_INPUTS_CACHE"
# the file that marks a folder as an inputs cache this module made
MARK = ".mmbench-inputs-cache"
# the names of the cache's own files (key(): 24 hex digits), the only ones clear() removes
OWN = re.compile(
    r"^([0-9a-f]{24}\.(a|b|c0)\.npy|[0-9a-f]{24}\.probes\d+[xr]\.npz|[0-9a-f]{24}\.sha256"
    r"|.+\.lock|\..+\.tmp|draw-.+\.json)$"
)


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
    from mmbench.measure import oracle

    h = hashlib.sha256()
    for path in (Path(distributions.__file__), Path(oracle.__file__)):
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


def _why_not_ours(where: Path, make: bool) -> str | None:
    """Why `where` is not this user's private inputs cache (None: it is), making it (mode
    0700, marked) where it does not exist and `make` says so."""
    if make:
        try:
            where.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(where, 0o700)
        except FileExistsError:
            pass
        except OSError as err:
            return f"cannot be made ({err.strerror})"
    try:
        why = not_private(where)
    except FileNotFoundError:
        return "does not exist"
    if why:
        return why
    mark = where / MARK
    if os.path.islink(mark) or (mark.exists() and not mark.is_file()):
        return f"its {MARK} is not a plain file"
    if not mark.exists():
        # a folder only this user can write, holding nothing but the cache's own file names
        # (an earlier version's cache) is taken as the cache; anything else is not
        if any(not OWN.match(p.name) or p.is_dir() for p in where.iterdir()):
            return f"holds files that are not the inputs cache's (no {MARK} in it)"
        if not make:
            return f"has no {MARK}"
        _create(
            mark,
            b"mmbench inputs cache: the files of key() names here are removed when a run ends\n",
        )
    return None


@functools.cache
def _refused_once(where: str, why: str) -> None:
    print(f"inputs cache {where} {why}: not used; inputs are drawn in each job", file=sys.stderr)


def usable() -> Path | None:
    """The cache folder where it is this user's private cache (made where missing), else None,
    saying why once on stderr."""
    where = folder()
    why = _why_not_ours(where, make=True)
    if why:
        _refused_once(str(where), why)
        return None
    return where


def _create(path: Path, data: bytes) -> None:
    """`path` created with `data`, never through a link and never over a file already there."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)


def _digest(raw: np.ndarray) -> str:
    return hashlib.sha256(memoryview(np.ascontiguousarray(raw)).cast("B")).hexdigest()


def load(conf, dtypes: dict[str, np.dtype], shapes: dict[str, tuple]) -> dict | None:
    """The kept arrays (read-only maps), or None where any is missing, not as expected, or not
    what the group's draw was (its digest kept beside it: said on stderr, drawn again)."""
    where = usable()
    if where is None:
        return None
    stem = key(conf)
    try:
        digests = json.loads((where / f"{stem}.sha256").read_text())
    except (OSError, ValueError):
        return None
    out = {}
    for role, path in _paths(stem).items():
        if role not in shapes:
            continue
        try:
            raw = np.load(path, mmap_mode="r")
        except (OSError, ValueError):
            return None
        dt = np.dtype(dtypes[role])
        if raw.dtype != np.dtype(f"u{dt.itemsize}") or raw.shape != shapes[role]:
            return None
        if digests.get(role) != _digest(raw):
            print(f"inputs cache: {path} is not what its group's draw was (digest); drawn again",
                  file=sys.stderr)  # fmt: skip
            return None
        out[role] = raw.view(dt)
    return out


def keep(conf, arrays: dict[str, np.ndarray]) -> bool:
    """Writes the arrays (atomically) where there is room, then their digests; whether they
    were kept."""
    where = usable()
    if where is None:
        return False
    try:
        free = shutil.disk_usage(where).free
    except OSError:
        return False
    if free < 2 * sum(a.nbytes for a in arrays.values()):
        return False
    stem = key(conf)
    digests = {}
    for role, path in _paths(stem).items():
        if role not in arrays:
            continue
        raw = np.ascontiguousarray(arrays[role]).view(f"u{arrays[role].dtype.itemsize}")
        if not _written(path, lambda f, raw=raw: np.save(f, raw)):
            return False
        digests[role] = _digest(raw)
    return _written(where / f"{stem}.sha256", lambda f: f.write(json.dumps(digests).encode()))


def _written(path: Path, write) -> bool:
    """`write(file)` into a temporary file beside `path` (a name no one can guess, created
    exclusively), then renamed to it: a reader never maps a half-written file.  Whether it was
    written."""
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
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
    where = usable()
    if where is None:
        return compute()
    path = where / f"{stem}.probes{vectors}{'x' if exact else 'r'}.npz"
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
    where = usable()
    try:
        if where is None:
            raise OSError("no private cache folder")
        fd = os.open(where / name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError:  # no cache folder to be had: nothing is kept either (keep), nor locked
        yield
        return
    with os.fdopen(fd, "r+b") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def clear() -> None:
    """Removes the cache's own files (the workflow's onsuccess and onerror), then the folder
    where nothing else is left; a folder that is not this user's cache is left as it is.  A job
    that still maps a file keeps its pages until it ends."""
    where = folder()
    if _why_not_ours(where, make=False) is not None:
        return
    for p in where.iterdir():
        if OWN.match(p.name) and not p.is_dir():
            p.unlink(missing_ok=True)
    (where / MARK).unlink(missing_ok=True)
    with contextlib.suppress(OSError):
        where.rmdir()  # only where it is empty

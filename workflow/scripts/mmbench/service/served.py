"""One worker for a local run's measurement jobs, one after another on one GPU.

A measurement job is one variant (so that an edited kernel reruns only its variant), and a
worker that serves one job pays, per job, its interpreter and imports, CuPy, a CUDA context,
its inputs drawn or mapped, their float64 references built, its host buffers allocated and
faulted in, and its exit (lab: code-choices, "served").  Here
the first job's worker stays: `python -m mmbench.service.worker --serve SOCKET` listens on a
Unix socket, and each later job that holds the same GPU's lock (gpus.py) sends it its spec and
waits for the exit code, as it would wait for its own worker.  The worker keeps its context,
the references and the buffers (session.py) between jobs.

Which worker serves which GPU is said by a file beside the GPU's lock (LOCK_DIR, private to the
user), read and written only by the job holding that lock: the worker's socket and process, the
run it serves (its working directory) and the digest of this package's code, so that a worker
of another run or of other code is told to end rather than used.  The worker ends when no job
has come for IDLE_S seconds and it can take the GPU's lock itself (no job is about to come), when
a job tells it to (the run's end: stop()), or after a job whose context was lost or whose spec
it could not measure.  Under SLURM each job is its own allocation: the jobs start their own
workers, as before (jobs.py).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import hashlib
import json
import logging
import os
import select
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

from mmbench.core import paths
from mmbench.service import gpus

log = logging.getLogger("mmbench.service.served")

# seconds a served worker waits for its next job before it ends (when it can take the GPU lock)
IDLE_S = float(os.environ.get("MMBENCH_WORKER_IDLE_S", 60))
# the longest a job waits for a worker it started to listen (its imports: a few seconds)
LISTEN_WAIT_S = 120.0
# the exit code a job reads where the served worker ended without answering (it was retiring,
# or it died): the job starts a worker of its own for the same configurations
GONE = -1000
# the exit code of a job stopped by SIGTERM (128 + 15, as a shell reports it)
TERMINATED_EXIT = 143


class Terminated(BaseException):
    """SIGTERM to a job that has a worker measuring for it (end_on_sigterm)."""


def end_on_sigterm() -> None:
    """In a measurement or profile job's main thread: SIGTERM raises Terminated, so that the
    job's interrupted paths run as for Ctrl-C and its worker ends with it (Served._ask,
    jobs._measure).  Without it SIGTERM (Snakemake cancelling a job, `timeout` stopping a run)
    ended the job at once and left its worker measuring the rest of the job's configurations
    on the GPU, beside whatever ran next."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminated)


def _terminated(signum, frame):
    raise Terminated(f"stopped by signal {signum}")


@functools.cache
def code_digest() -> str:
    """This package's code: a worker of other code never serves a job."""
    h = hashlib.sha256()
    for path in sorted(paths.PACKAGE.rglob("*.py")):
        h.update(path.relative_to(paths.PACKAGE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def for_this_job(serve: bool) -> bool:
    """Whether a job asked to use the run's worker does: not inside a SLURM job (its own
    allocation, whose end ends every process of it), whose worker is the job's own."""
    return serve and "SLURM_JOB_ID" not in os.environ


def owner() -> str:
    """The run a job belongs to: its working directory (Snakemake's)."""
    return os.getcwd()


def lock_dir() -> Path:
    return paths.private_folder(
        gpus.LOCK_DIR, "GPU lock folder", "set MMBENCH_GPU_LOCKS to a folder of your own"
    )


def entry_path(gpu_key: str) -> Path:
    """The file naming the worker that serves the GPU `gpu_key` (beside its lock)."""
    return lock_dir() / f"{hashlib.sha256(gpu_key.encode()).hexdigest()[:16]}.worker.json"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's: not ours to use
        return False
    return True


def runs_worker(pid: int, sock: str) -> bool:
    """Whether process `pid` is this user's worker listening on `sock` (its command line, read
    from /proc, is `python -m mmbench.service.worker --serve SOCK`): a pid in a stale entry may
    name an unrelated process since, which is never signalled.  False where it cannot be read."""
    if not alive(pid):
        return False
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    want = [b"mmbench.service.worker", b"--serve", os.fsencode(sock)]
    return all(w in argv for w in want)


def entries() -> list[tuple[Path, dict]]:
    """Every worker entry in the lock folder (a torn or foreign file is skipped)."""
    out = []
    for path in lock_dir().glob("*.worker.json"):
        try:
            out.append((path, json.loads(path.read_text())))
        except (OSError, json.JSONDecodeError):
            continue
    return out


def serving(run: str | None = None) -> bool:
    """Whether a live worker of this run and code serves some GPU (a job need not start one
    ahead of its lock)."""
    run = owner() if run is None else run
    return any(
        e.get("owner") == run and e.get("code") == code_digest() and _worker_of(e)
        for _, e in entries()
    )


def _worker_of(entry: dict) -> bool:
    """Whether the entry's process is the worker it names (runs_worker)."""
    try:
        return runs_worker(int(entry.get("pid", 0)), str(entry.get("socket", "")))
    except (TypeError, ValueError):
        return False


# -- the job's side ---------------------------------------------------------------------------
def spawn() -> subprocess.Popen:
    """A worker that imports what it needs and listens on a socket of its own (no CUDA call
    until a job sends it a spec and its GPU)."""
    sock = lock_dir() / f"w{os.getpid()}-{time.monotonic_ns() % 10**9}.sock"
    env = {k: v for k, v in os.environ.items() if k not in JOB_GPU_VARIABLES}
    proc = subprocess.Popen(
        paths.child_command("service.worker", "--serve", str(sock)),
        env=paths.child_env(env),
        stdin=subprocess.DEVNULL,
    )
    proc.socket = str(sock)  # type: ignore[attr-defined]
    proc.spawned = time.time()  # type: ignore[attr-defined]
    return proc


# what a worker is told once its job holds a GPU (service/gpus.py acquire's environment)
JOB_GPU_VARIABLES = ("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", gpus.GPU_KEY_VAR)


class Served:
    """A served worker as its job sees it: run(spec) -> exit code, like a worker process's."""

    def __init__(self, sock: str, pid: int, proc: subprocess.Popen | None = None):
        self.socket, self.pid, self.proc = sock, pid, proc
        self.spawned = time.time()  # a new worker's: when it was started
        self.returncode: int | None = None

    def run(self, spec_path: Path, gpu_env: dict) -> int:
        """Sends the spec and its GPU, waits for the exit code (GONE where the worker ended
        without one: its entry is then forgotten).  Interrupted, the worker goes too (its
        measurement is this job's)."""
        return self._ask(dict(spec=str(spec_path)), gpu_env)

    def program(self, name: str, argv: list[str], gpu_env: dict, log_path: Path,
                fine: tuple[int, ...] = (0,)) -> int:  # fmt: skip
        """Runs a program of this package (programs.PROGRAMS' `name`: the profilers' target)
        in the worker, its messages to `log_path`: the exit code it would have had as a
        process (GONE as for run).  An exit code not in `fine` ends the worker after it."""
        msg = dict(program=name, argv=argv, log=str(log_path), fine=list(fine))
        return self._ask(msg, gpu_env)

    def _ask(self, msg: dict, gpu_env: dict) -> int:
        env = {k: gpu_env[k] for k in JOB_GPU_VARIABLES if k in gpu_env}
        try:
            with connected(self.socket) as conn:
                conn.sendall((json.dumps(msg | dict(env=env)) + "\n").encode())
                reply = read_line(conn)
        except OSError:
            reply = None
        except BaseException:
            self.kill()
            raise
        self.returncode = GONE if reply is None else int(reply.get("exit", GONE))
        if self.returncode == GONE:  # its entry goes (the job holds the GPU's lock): a
            # process that comes to live under its number is not taken for it again
            forget(gpu_env.get(gpus.GPU_KEY_VAR, ""), self.pid)
        return self.returncode

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(self.pid, signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait()


def worker_for(gpu_env: dict, ahead: subprocess.Popen | None) -> Served:
    """The worker that serves this job's GPU (the job holds its lock): the run's, where one
    of this run and code listens; else `ahead` (started before the lock, marked `taken`) or a
    new one, named in the GPU's entry from now on."""
    gpu_key = gpu_env.get(gpus.GPU_KEY_VAR, "")
    path = entry_path(gpu_key)
    try:
        entry = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        entry = None
    if entry is not None:
        pid = int(entry.get("pid", 0)) if str(entry.get("pid", "")).isdigit() else 0
        ours = entry.get("owner") == owner() and entry.get("code") == code_digest()
        worker = _worker_of(entry)
        if ours and worker:
            return Served(entry["socket"], pid)
        if worker:  # another run's or other code's, idle (this job holds the GPU)
            log.info("a worker of %s (code %s) ends: this job's run or code differs",
                     entry.get("owner"), entry.get("code"))  # fmt: skip
            tell_to_end(entry)
        path.unlink(missing_ok=True)
    proc = ahead if ahead is not None and ahead.poll() is None else spawn()
    proc.taken = True  # type: ignore[attr-defined]
    served = Served(proc.socket, proc.pid, proc)  # type: ignore[attr-defined]
    if not wait_listening(proc):
        raise RuntimeError(
            f"the measurement worker did not start (exit code {proc.poll()}); see the job's log"
        )
    entry = dict(socket=served.socket, pid=proc.pid, owner=owner(), code=code_digest(),
                 gpu=gpu_key, since=time.time())  # fmt: skip
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(entry))
    tmp.replace(path)
    served.spawned = proc.spawned  # type: ignore[attr-defined]
    return served


def wait_listening(proc: subprocess.Popen) -> bool:
    """Waits until the worker's socket accepts (its imports done); False where it ended."""
    end = time.monotonic() + LISTEN_WAIT_S
    while time.monotonic() < end:
        if proc.poll() is not None:
            return False
        try:
            with connected(proc.socket, timeout=1.0) as conn:  # type: ignore[attr-defined]
                conn.sendall(b'{"ping": true}\n')
                if read_line(conn) is not None:
                    return True
        except OSError:
            time.sleep(0.02)
    return False


def end_unused(proc: subprocess.Popen | None) -> None:
    """A worker started ahead that no job took (the run's worker was there after all, or the
    job ended first): it has made no CUDA call, so it is simply ended."""
    if proc is None or getattr(proc, "taken", False) or proc.poll() is not None:
        return
    proc.terminate()  # serve() ends on SIGTERM through its cleanup
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    with contextlib.suppress(OSError):
        os.unlink(proc.socket)  # type: ignore[attr-defined]


def tell_to_end(entry: dict) -> None:
    """Asks a worker to end (after the job it is measuring, if any); one that does not answer
    within seconds is killed."""
    try:
        with connected(entry["socket"], timeout=5.0) as conn:
            conn.sendall(b'{"quit": true}\n')
            read_line(conn)
        return
    except OSError:
        pass
    if not _worker_of(entry):  # a stale entry: its pid may be anyone's process by now
        return
    with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
        os.kill(int(entry.get("pid", 0)), signal.SIGTERM)


def stop(run: str | None = None) -> int:
    """Ends the workers serving this run (the workflow's onsuccess and onerror): none stays
    holding a CUDA context once Snakemake has ended.  How many were told."""
    run = owner() if run is None else run
    told = 0
    for path, entry in entries():
        if entry.get("owner") != run:
            continue
        if _worker_of(entry):
            tell_to_end(entry)
            told += 1
        path.unlink(missing_ok=True)
    return told


@contextlib.contextmanager
def connected(sock: str, timeout: float | None = None):
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout)
    try:
        conn.connect(sock)
        yield conn
    finally:
        conn.close()


def peer_gone(conn: socket.socket) -> bool:
    """Whether the job on the other end of `conn` has gone (its process ended, so its end of
    the socket closed) while it waits for its answer: it sends nothing more, so a readable
    socket that reads empty is a closed one.  Never blocks."""
    try:
        readable, _, _ = select.select([conn], [], [], 0)
        return bool(readable) and conn.recv(1, socket.MSG_PEEK) == b""
    except (OSError, ValueError):  # closed here, or broken
        return True


def read_line(conn: socket.socket) -> dict | None:
    """One JSON line, or None where the other side closed first."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return None
        data += chunk
    try:
        return json.loads(data)
    except json.JSONDecodeError:
        return None


# -- the worker's side (its loop: worker.serve) --------------------------------------------------
def retire(gpu: str, sock_path: str) -> bool:
    """Idle: ends where no job holds the GPU (its lock taken here, briefly, so that no job
    reads this worker's entry meanwhile); a job holding it may be on its way here."""
    with open(gpus.lock_path(lock_dir(), gpu), "a+") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        try:
            forget(gpu, os.getpid())
            with contextlib.suppress(OSError):
                os.unlink(sock_path)
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)
    return True


def forget(gpu: str, pid: int) -> None:
    """Removes the GPU's entry where it names this worker."""
    path = entry_path(gpu)
    try:
        if int(json.loads(path.read_text()).get("pid", 0)) == pid:
            path.unlink(missing_ok=True)
    except (OSError, json.JSONDecodeError, ValueError):
        pass


def run_ended(served: bool) -> None:
    """onsuccess, onerror: the inputs the measurement jobs shared (input_cache) go with the
    run, as they are memory (/dev/shm); so does the run's worker, where one served it, which
    holds a CUDA context."""
    from mmbench.service import input_cache

    input_cache.clear()
    if served:
        stop()

"""Worker process of a measurement job (see jobs.py): `python -m mmbench.service.worker SPEC.json`.

With `--wait` it starts (the interpreter, this package and its libraries: no CUDA call) and then
waits for one line on its standard input, the GPU it may use as JSON (CUDA_VISIBLE_DEVICES, ...)
that its job sends once it holds that GPU's lock (service/gpus.py); only then does it read the
spec, import CuPy and reach the GPU.  A job started while another holds the GPU thus has its
worker ready when the GPU comes free.  An empty line (the job ended first) ends it quietly.

With `--serve SOCKET` it serves one job after another (served.py): each job that holds the GPU
sends it a spec over the socket, and it measures it as above, in the same CUDA context, keeping
the inputs' references and host buffers between jobs (session.py), until no job has come for a
while, a job says so, or its context is lost.  A profile job sends it a program of this package
to run instead (the profilers' target, its runs without a profiler: profile/profiling.py).
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import signal
import socket
import sys
import time
import traceback

from mmbench.core.axes import Configuration
from mmbench.core.cubins import file_sha
from mmbench.core.registry import load_registry
from mmbench.measure import freivalds
from mmbench.measure.device import device_properties
from mmbench.measure.runner import ContextLost, Runner
from mmbench.measure.session import Session
from mmbench.measure.timing import Sampling
from mmbench.service import gpus, input_cache, programs, served
from mmbench.service.jobs import (
    CONTEXT_LOST_EXIT,
    JOB_GONE_EXIT,
    NEVER_TOLD_EXIT,
    NO_GPU_EXIT,
)
from mmbench.service.journal import (
    append_jsonl,
    device_record,
    fatal_record,
    harness_sha,
    process_started_at,
    row_record,
    start_record,
    times_record,
)


def main(spec_path: str, wait: bool = False) -> int:
    """One job's worker: its spec's configurations, then the process ends."""
    imported = time.time()  # the interpreter and this package's imports: from the process's start
    freivalds.one_blas_pool()  # its checks beside the draw-ahead's processes
    if wait:  # the GPU this worker may use, once its job holds it: before any CUDA call
        line = sys.stdin.readline()
        if not line.strip():
            return NEVER_TOLD_EXIT
        os.environ.update(json.loads(line))
    stamps = dict(process=process_started_at(), imported=imported, told=time.time())
    return run_spec(spec_path, Session(keeps=False, store=input_cache), stamps)


def run_spec(spec_path: str, session: Session, stamps: dict, gone=None) -> int:
    """Measures a spec's configurations into its journal; the exit code its job reads.
    `stamps`: the worker's start-up so far (process, imported, told), for the journal.
    `gone`: asked before each configuration, whether the job that sent the spec has ended
    (a served worker's: served.peer_gone); then the rest is left to the job's rerun."""
    spec = json.loads(open(spec_path).read())
    fmt = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    handlers = [logging.FileHandler(spec["log"]), logging.StreamHandler(sys.stdout)]
    for handler in handlers:
        handler.setFormatter(fmt)
        root.addHandler(handler)
    try:
        return _measure_spec(spec, session, stamps, gone)
    except JobGone as err:
        logging.warning("%s", err)
        return JOB_GONE_EXIT
    except Exception:  # noqa: BLE001 - said in the job's log; the exit code fails the job
        logging.error("the worker failed: %s", traceback.format_exc())
        return 1
    finally:  # a served worker's next job logs to its own file
        for handler in handlers:
            root.removeHandler(handler)
            handler.close()


class JobGone(Exception):
    """The job that sent a served worker its spec has ended (run_spec's `gone`)."""


def _measure_spec(spec: dict, session: Session, stamps: dict, gone=None) -> int:
    variant = load_registry(spec["registry"])[spec["variant"]]
    cubins = spec["instantiations"]  # instantiation slug -> cubin
    settings = spec["settings"]
    journal = spec["journal"]
    keys = {}
    confs = []
    for key, c in spec["todo"]:
        conf = Configuration.from_dict(c)
        keys[conf] = key
        confs.append(conf)
    try:  # reaching the GPU: CuPy, the driver, a device
        import cupy

        cupy_at = time.time()
        provenance = {"source_sha256": spec["source_sha"]}
        sampling = Sampling(**settings["sampling"])
        if spec.get("baseline"):  # two builds side by side (measure/paired.py)
            from mmbench.measure.paired import PairedRunner, Pairing

            other = settings.get("baseline_registry")
            runner = PairedRunner(
                variant, cubins, spec["baseline"], sampling, Pairing(**settings["pairing"]),
                provenance, settings["freivalds_vectors"],
                load_registry(other)[spec["variant"]] if other else None, session,
            )  # fmt: skip
        else:
            runner = Runner(
                variant, cubins, sampling, provenance, settings["freivalds_vectors"], session
            )
    except Exception as err:  # noqa: BLE001 - whatever it is, no configuration can run
        cause = f"{type(err).__name__}: {err}".strip()
        logging.error("no usable GPU: %s", cause)
        append_jsonl(journal, fatal_record(f"no usable GPU: {cause}"))
        return NO_GPU_EXIT

    properties = device_properties(cupy) | {"uuid": runner.facts["gpu_uuid"]}
    append_jsonl(journal, device_record(properties))
    # where a job's start-up goes (lab/benchmarks/harness_phases.py): CuPy's import, then the CUDA
    # context, the cubins, cuBLAS and the runner's checks (for a served worker's later jobs:
    # the runner alone, the rest was there)
    append_jsonl(journal, times_record(**stamps, cupy=cupy_at, ready=time.time()))
    logging.info(
        "%s: %d configurations on %s (%s)",
        variant.name,
        len(confs),
        runner.facts["gpu_name"],
        runner.facts["gpu_uuid"],
    )
    # every row names the cubin and the launch spec that made it
    launch = variant.launch_sha()
    harness = harness_sha()
    cubin_shas = {name: file_sha(path) for name, path in cubins.items()}
    # a pair's row names its baseline build's too (a library call's: "library")
    base_shas = {n: file_sha(p) if p else "library" for n, p in spec.get("baseline", {}).items()}

    def identity(conf, row: dict) -> dict:
        row = row | dict(
            cubin_sha256=cubin_shas.get(conf.instance, ""),
            launch_sha256=launch,
            harness_sha256=harness,
        )
        if base_shas:
            row["base_cubin_sha256"] = base_shas.get(conf.instance, "")
        return row

    def started(conf) -> None:
        if gone is not None and gone():
            raise JobGone(
                f"the job that sent these configurations has ended: {conf.label} "
                f"{conf.m}x{conf.n}x{conf.k} and the rest are left to its rerun (its journal "
                "keeps what was measured)"
            )
        append_jsonl(journal, start_record(keys[conf]))

    built, reused = session.built, session.reused
    try:
        runner.run(
            confs,
            on_row=lambda conf, row: append_jsonl(
                journal, row_record(keys[conf], identity(conf, row))
            ),
            on_start=started,
        )
    except ContextLost as err:
        logging.error("CUDA context lost: %s; a new worker takes the rest", err)
        return CONTEXT_LOST_EXIT
    finally:
        try:
            runner.close()
        except Exception as err:  # noqa: BLE001 - a lost context: the process ends anyway
            logging.warning("closing the runner: %s", err)
        # references built here, and taken from an earlier job of this worker (session.py)
        append_jsonl(journal, times_record(
            done=time.time(), references_built=session.built - built,
            references_reused=session.reused - reused,
        ))  # fmt: skip
    return 0


def run_program(name: str, argv: list[str], session: Session, log_path: str) -> int:
    """A program of this package (programs.PROGRAMS: the profilers' target, profile/target.py)
    in this process, for a job that holds the GPU: its event-timed and CUPTI-recorded runs here,
    in this worker's context and with its references.  What it says goes to `log_path`; the
    exit code it would have had as a process (1 where it raised)."""
    with open(log_path, "w", buffering=1) as fh, contextlib.redirect_stderr(fh):
        try:
            return programs.run(name, argv, session)
        except Exception:  # noqa: BLE001 - said in its log; the job reads it
            traceback.print_exc()
            return 1


def serve(sock_path: str) -> int:
    """Listens on `sock_path` (served.py says who talks to it); measures each spec a job sends
    (run_spec) in one CUDA context, keeping the session between them, until idle (served.IDLE_S,
    and the GPU's lock free), told to end, or an exit code says the context is gone or the spec
    could not be measured."""
    imported = time.time()
    started = process_started_at()
    freivalds.one_blas_pool()  # its checks beside the draw-ahead's processes
    # ended by its job (end_unused) or the run (stop): through the cleanup below
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(sock_path)
    listener.listen(8)
    session = Session(keeps=True, store=input_cache)
    gpu: str | None = None
    jobs = 0
    try:
        while True:
            listener.settimeout(served.IDLE_S)
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                if gpu is None or served.retire(gpu, sock_path):
                    return 0
                continue
            with conn:
                conn.settimeout(None)
                msg = served.read_line(conn)
                if msg is None or msg.get("ping"):
                    with contextlib.suppress(OSError):
                        conn.sendall(b'{"ok": true}\n')
                    continue
                if msg.get("quit"):
                    with contextlib.suppress(OSError):
                        conn.sendall(b'{"ok": true}\n')
                    return 0
                env = msg.get("env", {})
                if gpu is None:  # the first job's GPU: before any CUDA call
                    os.environ.update(env)
                    gpu = env.get(gpus.GPU_KEY_VAR, "")
                elif env.get(gpus.GPU_KEY_VAR, "") != gpu:
                    conn.sendall(json.dumps({"exit": served.GONE}).encode() + b"\n")
                    continue
                told = time.time()
                stamps = (
                    dict(process=started, imported=imported, told=told)
                    if jobs == 0  # a later job's worker has nothing left to start
                    else dict(process=told, imported=told, told=told)
                )
                stamps |= dict(pid=os.getpid(), jobs_before=jobs,
                               references_kept=len(session.references))  # fmt: skip
                jobs += 1
                if msg.get("program"):  # a profile job's target, without a profiler
                    code = run_program(msg["program"], msg["argv"], session, msg["log"])
                    fine = code in msg.get("fine", [0])
                else:
                    code = run_spec(msg["spec"], session, stamps,
                                    gone=functools.partial(served.peer_gone, conn))  # fmt: skip
                    fine = code == 0
                with contextlib.suppress(OSError):
                    conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
                if not fine:  # a lost context, no GPU, a failure: a fresh worker goes on
                    return 0
    finally:
        listener.close()
        with contextlib.suppress(OSError):
            os.unlink(sock_path)
        if gpu is not None:
            served.forget(gpu, os.getpid())


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--serve"]:
        sys.exit(serve(args[1]))
    sys.exit(main(args[-1], wait="--wait" in args[:-1]))

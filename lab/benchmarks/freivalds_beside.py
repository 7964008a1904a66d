"""Benchmark: how long the host's Freivalds check of one result takes beside what runs with it in
a measurement job (issue "the main command at the speed of the GPU").  In the ladder preset on
an H100 (2026-11-28) an 8192 x 8192 check took a median 0.52 s inside the runs (`freivalds_ms`),
where the same product alone took 62 ms on that machine's host, and the configurations waited
6.9 s for it in all.  Three things run beside it there: the runner's own thread (launching and
timing the passes, holding the interpreter's lock between launches), the next job's draws of its
inputs (service/predraw.py: four processes, each with a BLAS pool of as many threads as cores),
and the BLAS pool of the check's own process.  This times `freivalds.check` (the runner's, on a
float32 result with one probe, as the ladder's) under each, with the BLAS pools at their
default size or limited (threadpoolctl, in the process that checks and in the draws):

    python lab/benchmarks/freivalds_beside.py [--size 8192] [--repeats 5] [--threads 0,1,4]
                                          [--switch 0.005,0.0005] [--draws 4]

`--threads 0` is the BLAS library's default; `--switch` the interpreter's switch interval, how
long a thread that holds its lock keeps it from one that waits (Python's default: 5 ms).
Prints one line per way: the median and the range of the check's milliseconds.  Needs no GPU;
the runner's thread is imitated by a Python loop that never waits (the worst case for the lock)
where no GPU is there, and by CuPy launches of a 20 ms kernel, each waited for, where one is.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow" / "scripts"))

from mmbench.measure import freivalds  # noqa: E402


def limited(threads: int):
    """A context limiting the BLAS pools of this process to `threads` (0: as they are)."""
    import contextlib

    if not threads:
        return contextlib.nullcontext()
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=threads, user_api="blas")


def draws(size: int, threads: int, stop) -> None:
    """One predraw process's work, again and again: a group's probe products (A.(B.x) and its
    bound) from float64 inputs of the size."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((size, size)), rng.standard_normal((size, size))
    with limited(threads):
        while not stop.is_set():
            freivalds.products(a, b, None, 1, exact=False, seed=3)


def runner_thread(stop: threading.Event) -> threading.Thread:
    """The runner's main thread as the check sees it: launches waited for on a GPU, else a loop
    that holds the interpreter's lock as a launching thread would at its busiest."""
    try:
        import cupy as cp

        cp.cuda.runtime.getDeviceCount()
        x = cp.ones((8192, 8192), cp.float32)

        def loop():
            end = cp.cuda.Event()
            while not stop.is_set():
                x @ x  # about 20 ms on an H100
                end.record()
                end.synchronize()

        what = "CuPy matmuls, each waited for"
    except Exception:  # noqa: BLE001  (no CuPy, no GPU)

        def loop():
            k = 0
            while not stop.is_set():
                k += 1

        what = "a Python loop that never waits"
    t = threading.Thread(target=loop, daemon=True, name=what)
    t.start()
    return t


def timed_checks(c: np.ndarray, probe, repeats: int, threads: int) -> list[float]:
    out = []
    with limited(threads):
        for _ in range(repeats):
            t = time.perf_counter()
            ok, _ = freivalds.check(c, probe)
            out.append((time.perf_counter() - t) * 1e3)
            assert ok
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=8192)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="0,1,4", help="BLAS pool sizes, 0 = the default")
    ap.add_argument("--draws", type=int, default=4, help="processes drawing beside (predraw's)")
    ap.add_argument(
        "--switch",
        default="0.005",
        help="the interpreter's switch intervals to try, s (sys.setswitchinterval)",
    )
    args = ap.parse_args()
    n = args.size
    rng = np.random.default_rng(0)
    a = rng.integers(0, 10, (n, n)).astype(np.float32)
    b = rng.integers(0, 10, (n, n)).astype(np.float32)
    probe = freivalds.probes(a, b, None, 1, exact=False, gamma=1e-6, seed=5)
    c = a @ b  # float32, as a result arrives from the GPU
    print(f"Freivalds' check of a {n} x {n} float32 result, one probe, {args.repeats} times each")
    settings = [(int(t), float(w)) for t in args.threads.split(",") for w in args.switch.split(",")]
    for threads, switch in settings:
        sys.setswitchinterval(switch)
        label = f"BLAS threads {threads or 'default'}, switch {switch * 1e3:g} ms"
        ways = []
        ways.append(("alone", timed_checks(c, probe, args.repeats, threads)))
        stop = threading.Event()
        t = runner_thread(stop)
        ways.append((f"beside {t.name}", timed_checks(c, probe, args.repeats, threads)))
        stop.set()
        t.join()
        ctx = mp.get_context("spawn")
        halt = ctx.Event()
        procs = [ctx.Process(target=draws, args=(n, threads, halt)) for _ in range(args.draws)]
        for p in procs:
            p.start()
        time.sleep(3.0)  # their inputs drawn, their products running
        ways.append((f"beside {args.draws} processes drawing",
                     timed_checks(c, probe, args.repeats, threads)))  # fmt: skip
        stop = threading.Event()
        t = runner_thread(stop)
        ways.append(("beside both", timed_checks(c, probe, args.repeats, threads)))
        stop.set()
        t.join()
        halt.set()
        for p in procs:
            p.join()
        for way, ms in ways:
            print(f"  {label:32s} {way:44s} median {statistics.median(ms):7.1f} ms "
                  f"({min(ms):.1f}-{max(ms):.1f})")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

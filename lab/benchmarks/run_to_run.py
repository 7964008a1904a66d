"""What do two runs of a short kernel differ by: the process, or the time?  (Issue "numbers that
hold on real data": two runs of the compare preset differ by up to 3% on kernels of 10-50 us
whose batched samples spread by 0.1-0.4% within a run, so nvbench's criterion cannot call
them SAME.)

Measures a few short configurations with the pipeline's own runner (burst load, batched
samples, one placement of the operands), in several processes one after another, each
measuring every configuration several times (rounds) a few seconds apart.  Prints, per
configuration, each round's batched median, the spread of the rounds within each process, and
the spread of the processes' medians: if the processes differ by more than the rounds, what
two runs differ by is set when a process starts (its CUDA context, its library handles), not
by the time of the measurement.

H100, 2026-11-23 (docs/method.md, Placements): with one placement, cuBLAS at 512 and 768
differed by 2.7% and 3.3% between 4 processes while each process's rounds agreed within
0.1-0.8%; with --fresh the rounds spread by up to 1.4% and 3 processes agreed within
0.13-0.35%; with --placements 4, 3 processes differed by 1.67% and 1.02%.  With --probe
(6 processes): NVML read 1980 MHz, the probe measured 1973.4 to 1995.0 MHz by process, and the
process at 1995 ran every kernel about 0.8% faster; in cycles the custom kernels' processes
agreed within 0.32-0.43% (in time 0.77-1.15%), cuBLAS at 512 still 3.3%.

    python3 lab/benchmarks/run_to_run.py [--processes 4] [--rounds 4] [--pause 2] [--placements 1]
                                     [--fresh] [--probe]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "workflow" / "scripts")]

# (variant, size, params): the compare preset's kernels that moved most between runs
CONFIGS = [
    ("cublas", 512, {}),
    ("cublas", 768, {}),
    ("cublas", 1024, {}),
    ("tiled_guarded", 512, {"TILE": 32}),
    ("tiled_guarded", 768, {"TILE": 32}),
    ("coarsened", 768, {"TILE": 16, "COARSEN": 4}),
    ("naive_xrow", 1024, {"TILE": 16}),
    ("naive_guarded", 1024, {"TILE": 16}),
]


def effective_mhz(cp, spins: int = 5) -> dict[str, float]:
    """The SM clock by three rulers: clock64() cycles over %globaltimer ns (median of `spins`
    probes of 40 M cycles, about 20 ms), over CUDA events around the same probes, and over the
    host's clock around one probe of 1 G cycles (about 0.5 s; the launch's microseconds are
    2e-5 of it)."""
    from mmbench.measure.telemetry import PROBE_SOURCE  # the pipeline's clock probe

    kernel = cp.RawKernel(PROBE_SOURCE, "mmbench_clock_probe")
    out = cp.zeros(2, dtype=cp.uint64)
    start, end = cp.cuda.Event(), cp.cuda.Event()
    timer, events = [], []
    for _ in range(spins):
        start.record()
        kernel((1,), (32,), (np.int64(40_000_000), out))
        end.record()
        end.synchronize()
        cycles, ns = (int(x) for x in out.get())
        timer.append(cycles / ns * 1e3)
        events.append(cycles / (cp.cuda.get_elapsed_time(start, end) * 1e3))
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter_ns()
    kernel((1,), (32,), (np.int64(1_000_000_000), out))
    cp.cuda.Device().synchronize()
    host_ns = time.perf_counter_ns() - t0
    cycles, ns = (int(x) for x in out.get())
    return {
        "SM clock by %globaltimer (MHz)": float(np.median(timer)),
        "SM clock by CUDA events (MHz)": float(np.median(events)),
        "SM clock by the host's clock (MHz)": cycles / host_ns * 1e3,
        "%globaltimer over the host's clock": ns / host_ns,
    }


def child(rounds: int, pause: float, placements: int, fresh: bool, probe: bool) -> dict:
    import cupy as cp

    from mmbench.core.axes import Configuration
    from mmbench.core.registry import load_registry
    from mmbench.measure.runner import Runner
    from mmbench.measure.timing import Sampling
    from mmbench.plan import plan
    from mmbench.plan.compile import compile_cubin

    registry = load_registry()
    arch = "sm_" + plan.detect_gpus()[0]["compute_cap"].replace(".", "")
    sampling = Sampling(placements=placements)
    cubins: dict[str, dict[str, str]] = {}
    confs = {}
    tmp = Path(tempfile.mkdtemp())
    for variant, size, params in CONFIGS:
        v = registry[variant]
        c = Configuration(
            variant=variant, params=params, dtype="float32", m=size, n=size, k=size,
            accumulate=False, memory="pinned", distribution="int09", seed=7,
        )  # fmt: skip
        built = cubins.setdefault(variant, {})
        if v.compiled and c.instance not in built:
            out = tmp / f"{variant}_{c.instance}.cubin"
            compile_cubin(
                ROOT / "kernels" / v.source,
                out,
                v.arch or arch,
                v.defines(c.instance_params),
                tmp / f"{c.instance}.log",
                c.instance,
            )
            built[c.instance] = str(out)
        confs[f"{c.label} {size}"] = c

    def runners():
        return {v: Runner(registry[v], built, sampling) for v, built in cubins.items()}

    made = runners()
    alive = [made]  # the old runners stay, so no new one gets their addresses
    out: dict[str, list[float]] = {k: [] for k in confs}
    for r in range(rounds):
        if fresh and r:  # a new stream, batcher and module load (the kernels' code placed anew)
            made = runners()
            alive.append(made)
        for key, c in confs.items():
            rows: list[dict] = []
            made[c.variant].run([c], lambda _c, row, rows=rows: rows.append(row))
            ms = float(rows[0]["batch_ms_median"])  # a long kernel has no batched samples
            out[key].append(1e3 * (ms if ms == ms else float(rows[0]["kernel_ms_median"])))
        if probe:
            for k, v in effective_mhz(cp).items():
                out.setdefault(k, []).append(v)
        time.sleep(pause)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--processes", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--pause", type=float, default=2.0, help="seconds between rounds")
    ap.add_argument("--placements", type=int, default=1)
    ap.add_argument(
        "--fresh", action="store_true",
        help="a new runner each round: its own stream, blocking kernel and module loads",
    )  # fmt: skip
    ap.add_argument(
        "--probe", action="store_true",
        help="also the SM clock the kernels ran at, from clock64() over %%globaltimer",
    )  # fmt: skip
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args.rounds, args.pause, args.placements, args.fresh, args.probe)))
        return 0
    runs = []
    for _ in range(args.processes):
        cmd = [sys.executable, __file__, "--child", "--rounds", str(args.rounds),
               "--pause", str(args.pause), "--placements", str(args.placements),
               *(["--fresh"] if args.fresh else []), *(["--probe"] if args.probe else [])]  # fmt: skip
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode:
            print(done.stderr[-3000:])
            return 1
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"batched median per launch (us), {args.rounds} rounds in each of {args.processes} "
          f"processes, {args.placements} placement(s)"
          + (", a new runner each round" if args.fresh else ""))  # fmt: skip
    for key in runs[0]:
        print(key)
        medians = []
        for p, run in enumerate(runs):
            r = np.array(run[key])
            medians.append(float(np.median(r)))
            print(f"  process {p}: " + " ".join(f"{x:.5f}" if x < 10 else f"{x:.3f}" for x in r)
                  + f"; rounds spread {100 * (r.max() / r.min() - 1):.2f}%")  # fmt: skip
        print(f"  between the processes' medians: {100 * (max(medians) / min(medians) - 1):.2f}%")
    probe = "SM clock by %globaltimer (MHz)"
    if probe in runs[0]:  # does the clock the kernels really ran at explain the processes?
        print("in cycles (median time x median effective clock of each process), megacycles:")
        for key in runs[0]:
            if "clock" in key:
                continue
            cyc = [np.median(run[key]) * np.median(run[probe]) * 1e-6 for run in runs]
            print(f"  {key}: " + " ".join(f"{c:.5g}" for c in cyc)
                  + f"; between the processes: {100 * (max(cyc) / min(cyc) - 1):.2f}%")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

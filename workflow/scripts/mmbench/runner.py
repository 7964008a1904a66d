"""Measures configurations on the GPU with CuPy: one process per job, many configurations.

Per configuration (nvbench's order): the first warm-up pass is verified, then timed passes are
taken until `min_samples` and `min_time_s` are both reached (or `max_time_s`, once 3 samples
exist).  Each pass is timed with CUDA events on one stream:

    e0 | H2D A, B (and C for C += A.B) | e1 | kernel | e2 | D2H C | e3

kernel = e1..e2, "global" = e0..e3 (seed 002's Tiempo Global: transfers plus kernel).

Every device buffer sits between two guard zones filled with a NaN sentinel; the output is
poisoned with the same sentinel before every pass, so unwritten elements fail verification and
writes outside the matrix are counted.  A failing configuration becomes a row that says so;
it never stops the others.
"""

from __future__ import annotations

import json
import logging
import math
import platform
import statistics
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from . import arith
from .plan import Configuration
from .registry import Variant
from .verify import verify

log = logging.getLogger("mmbench.runner")

NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}
SENTINEL = {4: 0xFFBADBAD, 8: 0xFFF4BADBADBADBAD}  # NaN as float32 / float64


def make_inputs(conf: Configuration) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Host matrices A (m x k), B (k x n) and, for C += A.B, C0 (m x n).  They depend only on
    the seed, the shape, the distribution and the dtype, never on the variant."""
    rng = np.random.default_rng([conf.seed, conf.m, conf.n, conf.k])
    dt = NP_DTYPES[conf.dtype]

    def draw(shape):
        if conf.distribution == "int09":
            return rng.integers(0, 10, size=shape, dtype=np.int8).astype(dt)
        return rng.random(size=shape, dtype=dt)

    a, b = draw((conf.m, conf.k)), draw((conf.k, conf.n))
    c0 = draw((conf.m, conf.n)) if conf.accumulate else None
    return a, b, c0


@dataclass
class Sampling:
    warmup: int = 1
    min_samples: int = 5
    max_samples: int = 100
    min_time_s: float = 0.2
    max_time_s: float = 5.0


def enough(samples_ms: list[float], s: Sampling) -> bool:
    """The stopping rule: min count and min GPU time, capped by max count, or max time once at
    least 3 samples exist."""
    n, total = len(samples_ms), sum(samples_ms) / 1e3
    if n >= s.max_samples:
        return True
    if n >= s.min_samples and total >= s.min_time_s:
        return True
    return n >= min(3, s.min_samples) and total >= s.max_time_s


def summarize(values: list[float]) -> dict:
    if not values:
        return dict(median=math.nan, min=math.nan, max=math.nan)
    return dict(median=statistics.median(values), min=min(values), max=max(values))


class GuardedBuffer:
    """A device array with `guard` sentinel elements on each side of the matrix."""

    def __init__(self, cp, elements: int, dtype: str, guard: int):
        self.cp, self.n, self.guard = cp, elements, guard
        self.raw = cp.empty(elements + 2 * guard, dtype=NP_DTYPES[dtype])
        self.uint = cp.uint32 if self.raw.itemsize == 4 else cp.uint64
        self.sentinel = SENTINEL[self.raw.itemsize]
        self.raw.view(self.uint).fill(self.sentinel)
        self.inner = self.raw[guard : guard + elements]

    def poison(self) -> None:
        self.inner.view(self.uint).fill(self.sentinel)

    def guard_writes(self) -> int:
        """Guard elements that no longer hold the sentinel (writes outside the matrix)."""
        bits = self.raw.view(self.uint)
        g = self.guard
        changed = self.cp.count_nonzero(bits[:g] != self.sentinel) + self.cp.count_nonzero(
            bits[g + self.n :] != self.sentinel
        )
        return int(changed)

    def reset_guards(self) -> None:
        bits = self.raw.view(self.uint)
        bits[: self.guard].fill(self.sentinel)
        bits[self.guard + self.n :].fill(self.sentinel)


def device_facts(cp) -> dict:
    """Provenance recorded on every row."""
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    raw_uuid = props.get("uuid", b"")
    h = raw_uuid.hex() if isinstance(raw_uuid, bytes) else ""
    uuid = f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" if len(h) == 32 else ""
    drv = cp.cuda.runtime.driverGetVersion()
    rt = cp.cuda.runtime.runtimeGetVersion()
    facts = dict(
        gpu_name=props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
        gpu_uuid=uuid,
        compute_capability=f"{props['major']}.{props['minor']}",
        driver_version=f"{drv // 1000}.{drv % 1000 // 10}",
        cuda_runtime=f"{rt // 1000}.{rt % 1000 // 10}",
        cupy_version=cp.__version__,
        hostname=platform.node(),
    )
    try:
        import pynvml

        pynvml.nvmlInit()
        facts["driver_version"] = pynvml.nvmlSystemGetDriverVersion()
        pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - NVML is optional; the CUDA driver version stays
        pass
    return facts


class Runner:
    """Runs the configurations of one variant (one Snakemake job) in one CUDA context."""

    def __init__(
        self,
        variant: Variant,
        cubins: dict[tuple[str, int, int], str],
        sampling: Sampling,
        provenance: dict | None = None,
    ):
        import cupy as cp

        self.cp = cp
        self.variant = variant
        self.cubins = cubins
        self.sampling = sampling
        self.modules: dict[str, object] = {}
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.events = [cp.cuda.Event() for _ in range(4)]
        self.facts = device_facts(cp) | (provenance or {})
        self.context_lost: str | None = None

    # -- one group of configurations shares the inputs, device buffers and reference --------
    def run(self, confs: Iterable[Configuration], on_row: Callable[[dict], None]) -> None:
        confs = list(confs)
        groups: dict[tuple, list[Configuration]] = {}
        for c in confs:
            groups.setdefault(
                (c.dtype, c.m, c.n, c.k, c.accumulate, c.distribution, c.seed), []
            ).append(c)
        done = 0
        t0 = time.monotonic()
        for group in groups.values():
            state = None
            for conf in group:
                if self.context_lost:
                    row = self.error_row(
                        conf, f"not run: the CUDA context was lost ({self.context_lost})"
                    )
                else:
                    try:
                        if state is None:
                            state = self.prepare(group)
                        row = self.measure(conf, state)
                    except Exception as err:  # noqa: BLE001 - one config's failure is its row
                        row = self.error_row(conf, f"{type(err).__name__}: {err}")
                        log.debug("%s", traceback.format_exc())
                        self.check_context(err)
                        if isinstance(err, self.cp.cuda.memory.OutOfMemoryError):
                            state = None
                            self.cp.get_default_memory_pool().free_all_blocks()
                done += 1
                on_row(row)
                elapsed = time.monotonic() - t0
                eta = elapsed / done * (len(confs) - done)
                log.info(
                    "[%*d/%d, eta %4.0fs] %s",
                    len(str(len(confs))),
                    done,
                    len(confs),
                    eta,
                    describe(row),
                )
            del state
            self.cp.get_default_memory_pool().free_all_blocks()
            self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def check_context(self, err: Exception) -> None:
        """After a CUDA error, a sticky one (illegal address, launch failure) ends the context:
        every later configuration of this job is then reported as not run."""
        try:
            self.cp.cuda.runtime.deviceSynchronize()
            self.cp.zeros(1).sum().item()
        except Exception as again:  # noqa: BLE001
            self.context_lost = f"{type(again).__name__}: {again}; first error: {err}"

    def prepare(self, group: list[Configuration]) -> dict:
        cp = self.cp
        c = group[0]
        m, n, k = c.m, c.n, c.k
        a, b, c0 = make_inputs(c)
        guard = max(arith.guard_elements(x.tile, x.coarsen, k, n, n) for x in group)
        dA = GuardedBuffer(cp, m * k, c.dtype, guard)
        dB = GuardedBuffer(cp, k * n, c.dtype, guard)
        dC = GuardedBuffer(cp, m * n, c.dtype, guard)
        dA.inner.set(a.ravel())
        dB.inner.set(b.ravel())
        # float64 reference on the device (cuBLAS DGEMM on exactly upcast inputs)
        a64 = dA.inner.reshape(m, k).astype(cp.float64)
        b64 = dB.inner.reshape(k, n).astype(cp.float64)
        ref = a64 @ b64
        nonneg = bool(a.min() >= 0 and b.min() >= 0)
        bound = ref if nonneg else cp.abs(a64) @ cp.abs(b64)
        if c0 is not None:
            c064 = cp.asarray(c0, dtype=cp.float64)
            ref += c064
            bound = ref if (nonneg and c0.min() >= 0) else bound + cp.abs(c064)
            del c064
        del a64, b64
        host = {"pageable": dict(a=a, b=b, c0=c0, out=np.empty((m, n), a.dtype))}
        return dict(dA=dA, dB=dB, dC=dC, ref=ref, bound=bound, host=host)

    def host_buffers(self, state: dict, memory: str) -> dict:
        if memory not in state["host"]:
            import cupyx

            src = state["host"]["pageable"]
            pinned = {}
            for name, arr in src.items():
                if arr is None:
                    pinned[name] = None
                    continue
                buf = cupyx.empty_pinned(arr.shape, arr.dtype)
                buf[...] = arr
                pinned[name] = buf
            state["host"][memory] = pinned
        return state["host"][memory]

    # -- one configuration -----------------------------------------------------------------
    def measure(self, conf: Configuration, state: dict) -> dict:
        cp, _v = self.cp, self.variant
        m, n, k = conf.m, conf.n, conf.k
        dA, dB, dC = state["dA"], state["dB"], state["dC"]
        host = self.host_buffers(state, conf.memory)
        launch, grid, block = self.launcher(conf, dA, dB, dC)
        itemsize = dA.raw.itemsize
        h2d = [
            (dA.inner.data.ptr, host["a"], m * k * itemsize),
            (dB.inner.data.ptr, host["b"], k * n * itemsize),
        ]
        if conf.accumulate:
            h2d.append((dC.inner.data.ptr, host["c0"], m * n * itemsize))
        out = host["out"]
        s, ev = self.stream, self.events
        rt = cp.cuda.runtime

        def one_pass() -> tuple[float, float, float, float]:
            if not conf.accumulate:
                dC.poison()
            cp.cuda.Device().synchronize()
            ev[0].record(s)
            for dst, src, nbytes in h2d:
                rt.memcpyAsync(dst, src.ctypes.data, nbytes, rt.memcpyHostToDevice, s.ptr)
            ev[1].record(s)
            with s:
                launch()
            ev[2].record(s)
            rt.memcpyAsync(
                out.ctypes.data, dC.inner.data.ptr, m * n * itemsize, rt.memcpyDeviceToHost, s.ptr
            )
            ev[3].record(s)
            ev[3].synchronize()
            el = cp.cuda.get_elapsed_time
            return el(ev[1], ev[2]), el(ev[0], ev[1]), el(ev[2], ev[3]), el(ev[0], ev[3])

        # verified warm-up pass
        dA.reset_guards(), dB.reset_guards(), dC.reset_guards()
        one_pass()
        oob = dC.guard_writes() + dA.guard_writes() + dB.guard_writes()
        scale = arith.tolerance_scale(conf.dtype, conf.distribution, k, conf.accumulate)
        result = verify(
            cp,
            dC.inner.reshape(m, n),
            state["ref"],
            state["bound"],
            scale,
            integer=arith.exact_expected(conf.dtype, conf.distribution, k, conf.accumulate),
        )
        passed = result.passed and oob == 0
        for _ in range(max(0, self.sampling.warmup - 1)):
            one_pass()
        kernel, h2d_ms, d2h_ms, glob = [], [], [], []
        while not enough(glob, self.sampling):
            t = one_pass()
            kernel.append(t[0]), h2d_ms.append(t[1]), d2h_ms.append(t[2]), glob.append(t[3])
        nflop = arith.flops(m, n, k, conf.accumulate)
        ks, gs = summarize(kernel), summarize(glob)
        return self.base_row(conf) | dict(
            grid=f"{grid[0]}x{grid[1]}x{grid[2]}",
            block=f"{block[0]}x{block[1]}x{block[2]}",
            verification="PASS" if passed else "FAIL",
            mismatches=result.mismatches,
            nonfinite=result.nonfinite,
            oob_writes=oob,
            max_abs_error=result.max_abs_error,
            rel_l2_error=result.rel_l2_error,
            tolerance=("exact" if scale == 0 else f"{scale:.3g} * (|A|.|B| + |C0|)"),
            first_mismatches=" | ".join(result.first_mismatches),
            samples=len(kernel),
            kernel_ms_median=ks["median"],
            kernel_ms_min=ks["min"],
            kernel_ms_max=ks["max"],
            h2d_ms_median=summarize(h2d_ms)["median"],
            d2h_ms_median=summarize(d2h_ms)["median"],
            global_ms_median=gs["median"],
            global_ms_min=gs["min"],
            global_ms_max=gs["max"],
            kernel_gflops=arith.gflops(nflop, ks["median"]),
            global_gflops=arith.gflops(nflop, gs["median"]),
            error="",
        )

    def launcher(self, conf: Configuration, dA, dB, dC):
        cp, v = self.cp, self.variant
        m, n, k = conf.m, conf.n, conf.k
        if v.backend == "cublas":
            from cupy import cublas

            a = dA.inner.reshape(m, k)
            b = dB.inner.reshape(k, n)
            c = dC.inner.reshape(m, n)
            beta = 1.0 if conf.accumulate else 0.0
            return (
                (lambda: cublas.gemm("N", "N", a, b, out=c, alpha=1.0, beta=beta)),
                (0, 0, 0),
                (0, 0, 0),
            )
        path = self.cubins[(conf.dtype, conf.tile, conf.coarsen)]
        if path not in self.modules:
            self.modules[path] = cp.RawModule(path=path)
        fn = self.modules[path].get_function(v.symbol)
        grid, block = v.launch(m, n, k, conf.tile, conf.coarsen)
        i32 = np.int32
        args = (
            dA.inner,
            dB.inner,
            dC.inner,
            i32(m),
            i32(n),
            i32(k),
            i32(k),
            i32(n),
            i32(n),
            i32(conf.accumulate),
        )
        if 0 in grid:  # e.g. floor(size / block) = 0: nothing is launched, nothing written
            return (lambda: None), grid, block
        return (lambda: fn(grid, block, args)), grid, block

    def base_row(self, conf: Configuration) -> dict:
        return (
            conf.as_dict()
            | dict(
                backend=self.variant.backend,
                lda=conf.k,
                ldb=conf.n,
                ldc=conf.n,
            )
            | self.facts
            | dict(timestamp=datetime.now(UTC).isoformat(timespec="seconds"))
        )

    def error_row(self, conf: Configuration, message: str) -> dict:
        return self.base_row(conf) | dict(verification="ERROR", error=message, samples=0)


def describe(row: dict) -> str:
    shape = f"{row['m']}x{row['n']}x{row['k']}"
    head = (
        f"{row['variant']} {row['dtype']} t{row['tile']} f{row['coarsen']} {shape} {row['memory']}"
    )
    if row.get("verification") == "ERROR":
        return f"{head}: ERROR {row.get('error', '')}"
    text = (
        f"{head}: kernel {row['kernel_ms_median']:.3f} ms ({row['kernel_gflops']:.0f} GFLOPS), "
        f"global {row['global_ms_median']:.3f} ms, {row['verification']}"
    )
    if row["verification"] == "FAIL":
        text += f" ({row['mismatches']} mismatches, {row['oob_writes']} guard writes"
        text += (
            f"; first: {row['first_mismatches'].split(' | ')[0]})"
            if row["first_mismatches"]
            else ")"
        )
    return text + f" [{row['samples']} samples]"


def append_jsonl(path: str | Path, row: dict) -> None:
    """Appends one finished row to the job's journal (flushed, so a crash keeps it)."""
    with open(path, "a") as fh:
        fh.write(json.dumps(row, default=str) + "\n")
        fh.flush()

"""Measures configurations on the GPU with CuPy: one process, many configurations.

Per configuration (nvbench's order): the first pass is verified, then timed passes are taken
until `min_samples` and `min_time_s` are both reached (or `max_time_s`, once 3 samples exist).
Each pass is timed with CUDA events on one stream, in segments (placement.py says what each
covers for every host-memory mode):

    e0 | h2d | e1 | [cold: L2 flush] | e1b | kernel | e2 | d2h | e3

kernel = e1b..e2; global = h2d + kernel + d2h (seed 002's Tiempo Global), the flush excluded.

Verification, twice and independently: (1) against a float64 product of the same inputs on the
device (every element, the first 10 mismatches listed), of the result as it arrived on the host;
(2) Freivalds' check on the host, in float64, trusting nothing the GPU computed.  Writes outside
C (guard zones, padding) fail the configuration too.  A failing configuration becomes a row
that says so; a CUDA error that ends the context (illegal address, launch failure) ends this
process after its row is written, and jobs.py starts a new one for the rest.
"""

from __future__ import annotations

import json
import logging
import math
import os
import platform
import time
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from . import arith, freivalds
from .placement import device_pointer, make_placement
from .plan import Configuration
from .registry import Variant
from .verify import verify

log = logging.getLogger("mmbench.runner")

NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}
# NVML clock-event reasons that mean the GPU ran below its clocks: SW power cap, HW slowdown,
# SW thermal, HW thermal, HW power brake (idle, application-clock and sync-boost are not).
THROTTLE_MASK = 0x4 | 0x8 | 0x20 | 0x40 | 0x80


# cudaDeviceAttr values (driver_types.h; stable across CUDA versions)
DEVICE_ATTRIBUTES = {
    "max_threads_per_block": 1,
    "shared_memory_per_block_bytes": 8,
    "constant_memory_bytes": 9,
    "warp_size": 10,
    "registers_per_block": 12,
    "sm_clock_khz": 13,
    "multiprocessors": 16,
    "can_map_host_memory": 19,
    "ecc_enabled": 32,
    "memory_clock_khz": 36,
    "memory_bus_width_bits": 37,
    "l2_cache_bytes": 38,
    "max_threads_per_multiprocessor": 39,
    "async_engines": 40,
    "unified_addressing": 41,
    "managed_memory": 83,
    "concurrent_managed_access": 89,
    "shared_memory_per_block_optin_bytes": 97,
}


def device_properties(cp) -> dict:
    """The facts of seed 003's deviceQuery dump, for the run manifest (E4c)."""
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"]
    out = dict(
        name=name.decode() if isinstance(name, bytes) else name,
        compute_capability=f"{props['major']}.{props['minor']}",
        total_memory_bytes=int(props["totalGlobalMem"]),
    )
    for key, attr in DEVICE_ATTRIBUTES.items():
        try:
            out[key] = int(cp.cuda.runtime.deviceGetAttribute(attr, dev.id))
        except Exception:  # noqa: BLE001 - an attribute this runtime no longer reports
            out[key] = None
    if out.get("memory_clock_khz") and out.get("memory_bus_width_bits"):
        # DDR: two transfers per clock
        out["peak_memory_bandwidth_gbs"] = round(
            2 * out["memory_clock_khz"] * 1e3 * out["memory_bus_width_bits"] / 8 / 1e9, 1
        )
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByPciBusId(dev.pci_bus_id.encode())
        out["max_sm_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_SM)
        out["max_memory_clock_mhz"] = pynvml.nvmlDeviceGetMaxClockInfo(h, pynvml.NVML_CLOCK_MEM)
        out["power_limit_w"] = pynvml.nvmlDeviceGetEnforcedPowerLimit(h) / 1000
    except Exception:  # noqa: BLE001 - NVML is optional
        pass
    return out


class ContextLost(RuntimeError):
    """The CUDA context is unusable; the process must end."""


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
        nan = math.nan
        return dict(median=nan, min=nan, max=nan, q1=nan, q3=nan, iqr=nan)
    q1, med, q3 = (float(x) for x in np.percentile(values, [25, 50, 75]))
    return dict(median=med, min=min(values), max=max(values), q1=q1, q3=q3, iqr=q3 - q1)


def device_facts(cp) -> dict:
    """Provenance recorded on every row."""
    dev = cp.cuda.Device()
    props = cp.cuda.runtime.getDeviceProperties(dev.id)
    drv = cp.cuda.runtime.driverGetVersion()
    rt = cp.cuda.runtime.runtimeGetVersion()
    name = props["name"]
    nvml = Nvml.open(dev.pci_bus_id)
    facts = dict(
        gpu_name=name.decode() if isinstance(name, bytes) else name,
        gpu_uuid=nvml.uuid or cuda_uuid(props.get("uuid", b"")),
        gpu_index=dev.id,
        gpu_pci_bus_id=dev.pci_bus_id,
        cuda_visible_devices=os.environ.get("CUDA_VISIBLE_DEVICES", ""),
        compute_capability=f"{props['major']}.{props['minor']}",
        driver_version=nvml.driver or f"{drv // 1000}.{drv % 1000 // 10}",
        cuda_runtime=f"{rt // 1000}.{rt % 1000 // 10}",
        cupy_version=cp.__version__,
        hostname=platform.node(),
    )
    return facts


def cuda_uuid(raw) -> str:
    """GPU-xxxxxxxx-... from cudaDeviceProp.uuid; '' when CuPy cut it short (it stops the 16
    bytes at the first zero byte: NVML's UUID is used first for that reason)."""
    h = raw.hex() if isinstance(raw, bytes) else ""
    return f"GPU-{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}" if len(h) == 32 else ""


class Nvml:
    """SM and memory clocks, temperature, power and throttling through NVML (nvidia-ml-py)."""

    def __init__(self, handle=None, driver: str = "", uuid: str = "", pynvml=None):
        self.handle, self.driver, self.uuid, self.nv = handle, driver, uuid, pynvml

    @classmethod
    def open(cls, pci_bus_id: str) -> Nvml:
        """The NVML device of the CUDA device with this PCI bus id (CUDA and NVML number
        devices differently under CUDA_VISIBLE_DEVICES; the bus id is the same)."""
        try:
            import pynvml

            pynvml.nvmlInit()
            handle = pynvml.nvmlDeviceGetHandleByPciBusId(pci_bus_id.encode())
            uuid = pynvml.nvmlDeviceGetUUID(handle)
            uuid = uuid.decode() if isinstance(uuid, bytes) else uuid
            driver = pynvml.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else driver
            return cls(handle, driver, uuid, pynvml)
        except Exception as err:  # noqa: BLE001 - NVML is optional: the columns stay empty
            log.warning("NVML unavailable (%s): no clocks, temperature or power recorded", err)
            return cls()

    def sample(self) -> dict | None:
        if self.handle is None:
            return None
        nv, h = self.nv, self.handle
        reasons_fn = (
            getattr(nv, "nvmlDeviceGetCurrentClocksEventReasons", None)
            or nv.nvmlDeviceGetCurrentClocksThrottleReasons
        )
        return dict(
            sm=nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_SM),
            mem=nv.nvmlDeviceGetClockInfo(h, nv.NVML_CLOCK_MEM),
            temp=nv.nvmlDeviceGetTemperature(h, nv.NVML_TEMPERATURE_GPU),
            power=nv.nvmlDeviceGetPowerUsage(h) / 1000.0,
            reasons=int(reasons_fn(h)),
        )


class Runner:
    """Runs configurations of one variant in one CUDA context."""

    def __init__(
        self,
        variant: Variant,
        cubins: dict,
        sampling: Sampling,
        provenance=None,
        freivalds_vectors: int = 2,
    ):
        import cupy as cp

        self.cp = cp
        self.variant = variant
        self.cubins = cubins
        self.sampling = sampling
        self.freivalds_vectors = freivalds_vectors
        self.modules: dict[str, object] = {}
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.events = {k: cp.cuda.Event() for k in ("e0", "e1", "e1b", "e2", "e3")}
        self.facts = device_facts(cp) | (provenance or {})
        self.nvml = Nvml.open(cp.cuda.Device().pci_bus_id)
        l2 = cp.cuda.runtime.deviceGetAttribute(
            DEVICE_ATTRIBUTES["l2_cache_bytes"], cp.cuda.Device().id
        )
        self.flush_bytes = 2 * int(l2)
        self.scratch = None

    # -- the loop ---------------------------------------------------------------------------
    def run(
        self,
        confs: Iterable[Configuration],
        on_row: Callable[[dict], None],
        on_start: Callable[[Configuration], None] | None = None,
    ) -> None:
        """Measures every configuration, calling on_row with each finished row.  Raises
        ContextLost (after that configuration's row) when the CUDA context is gone."""
        confs = list(confs)
        groups: dict[tuple, list[Configuration]] = {}
        for c in confs:
            key = (c.dtype, c.m, c.n, c.k, c.accumulate, c.distribution, c.seed)
            groups.setdefault(key, []).append(c)
        done, t0 = 0, time.monotonic()
        for group in groups.values():
            group.sort(key=lambda c: (c.memory, c.pad, c.transfer))  # one placement at a time
            state: dict = {}
            for conf in group:
                if on_start:
                    on_start(conf)
                start = time.monotonic()
                lost = None
                try:
                    row = self.measure(conf, state)
                except Exception as err:  # noqa: BLE001 - one configuration's failure is its row
                    log.debug("%s", traceback.format_exc())
                    row = self.error_row(conf, f"{type(err).__name__}: {err}")
                    state.clear()
                    lost = self.context_lost(err)
                    if isinstance(err, self.cp.cuda.memory.OutOfMemoryError):
                        self.cp.get_default_memory_pool().free_all_blocks()
                row["config_wall_ms"] = (time.monotonic() - start) * 1e3
                done += 1
                on_row(row)
                eta = (time.monotonic() - t0) / done * (len(confs) - done)
                width = len(str(len(confs)))
                log.info("[%*d/%d, eta %4.0fs] %s", width, done, len(confs), eta, describe(row))
                if lost:
                    raise ContextLost(lost)
            state.clear()
            self.cp.get_default_memory_pool().free_all_blocks()
            self.cp.get_default_pinned_memory_pool().free_all_blocks()

    def context_lost(self, err: Exception) -> str | None:
        """After a CUDA error: is the context still usable?  A sticky error (illegal address,
        launch failure) makes every later call fail."""
        try:
            self.cp.cuda.runtime.deviceSynchronize()
            self.cp.zeros(1).sum().item()
            return None
        except Exception as again:  # noqa: BLE001
            return f"{type(again).__name__}: {again} (after {type(err).__name__}: {err})"

    # -- per group and per placement ------------------------------------------------------------
    def group_state(self, conf: Configuration, state: dict) -> dict:
        if "ref" in state:
            return state
        cp = self.cp
        a, b, c0 = make_inputs(conf)
        # float64 reference on the device (cuBLAS DGEMM on exactly upcast inputs)
        a64, b64 = cp.asarray(a, dtype=cp.float64), cp.asarray(b, dtype=cp.float64)
        add = conf.operation == "add"
        ref = a64 + b64 if add else a64 @ b64
        nonneg = bool(a.min() >= 0 and b.min() >= 0)
        if add:
            bound = ref if nonneg else cp.abs(a64) + cp.abs(b64)
        else:
            bound = ref if nonneg else cp.abs(a64) @ cp.abs(b64)
        if c0 is not None:
            c064 = cp.asarray(c0, dtype=cp.float64)
            ref += c064
            bound = ref if (nonneg and c0.min() >= 0) else bound + cp.abs(c064)
            del c064
        del a64, b64
        exact = add or arith.exact_expected(conf.dtype, conf.distribution, conf.k, conf.accumulate)
        if add and conf.distribution == "uniform" and conf.dtype != "int32":
            exact = False
        gamma = arith.tolerance_scale(
            conf.dtype, conf.distribution, conf.k, conf.accumulate, conf.operation
        )
        if add and exact:
            gamma = 0.0
        nvec = self.freivalds_vectors if not add else 0  # the sum is checked element by element
        probes = freivalds.probes(a, b, c0, nvec, exact, gamma, conf.seed) if nvec else []
        state.update(a=a, b=b, c0=c0, ref=ref, bound=bound, exact=exact, gamma=gamma, probes=probes)
        return state

    def placement(self, conf: Configuration, state: dict):
        key = (conf.memory, conf.pad, conf.transfer)
        if state.get("placement_key") != key:
            state.pop("placement", None)
            guard = arith.guard_elements(
                32, 8, conf.k + conf.pad, conf.n + conf.pad, conf.n + conf.pad
            )
            state["placement"] = make_placement(
                self.cp, conf, state["a"], state["b"], state["c0"], guard
            )
            state["placement_key"] = key
        return state["placement"]

    # -- one configuration ------------------------------------------------------------------------
    def measure(self, conf: Configuration, state: dict) -> dict:
        cp = self.cp
        m, n, k = conf.m, conf.n, conf.k
        st = self.group_state(conf, state)
        pl = self.placement(conf, st)
        launch, grid, block = self.launcher(conf, pl)
        s, ev = self.stream, self.events
        if conf.cache == "cold" and self.scratch is None:
            self.scratch = cp.empty(self.flush_bytes, dtype=cp.uint8)
        el = cp.cuda.get_elapsed_time

        def one_pass() -> tuple[float, float, float]:
            pl.reset()
            cp.cuda.Device().synchronize()
            ev["e0"].record(s)
            pl.h2d(s)
            ev["e1"].record(s)
            after_flush = ev["e1"]
            if conf.cache == "cold":
                cp.cuda.runtime.memsetAsync(self.scratch.data.ptr, 0, self.flush_bytes, s.ptr)
                ev["e1b"].record(s)
                after_flush = ev["e1b"]
            with s:
                launch()
            ev["e2"].record(s)
            pl.d2h(s)
            ev["e3"].record(s)
            ev["e3"].synchronize()
            return el(ev["e0"], ev["e1"]), el(after_flush, ev["e2"]), el(ev["e2"], ev["e3"])

        # the verified pass
        pl.prepare_verified_pass()
        first = one_pass()
        busy = sum(first)
        outside = pl.outside_writes()
        host_c = np.ascontiguousarray(pl.result())
        t = time.perf_counter()
        result = verify(
            cp, cp.asarray(host_c), st["ref"], st["bound"], st["gamma"], integer=st["exact"]
        )
        verify_ms = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        fv_ok, fv_rows = freivalds.check(host_c, st["probes"]) if st["probes"] else (True, 0)
        freivalds_ms = (time.perf_counter() - t) * 1e3
        del host_c
        passed = result.passed and outside == 0 and fv_ok
        for _ in range(max(0, self.sampling.warmup - 1)):
            busy += sum(one_pass())
        kernel, h2d, d2h, glob, nvml = [], [], [], [], []
        while not enough(glob, self.sampling):
            t = one_pass()
            sample = self.nvml.sample()
            if sample:
                nvml.append(sample)
            kernel.append(t[1]), h2d.append(t[0]), d2h.append(t[2]), glob.append(sum(t))
        busy += sum(glob)
        nflop = arith.flops(m, n, k, conf.accumulate, conf.operation)
        ks, gs = summarize(kernel), summarize(glob)
        lda, ldb, ldc = pl.host_ld
        klds = tuple(x.ld for x in pl.kernel_mats)
        row = self.base_row(conf) | dict(
            lda=lda,
            ldb=ldb,
            ldc=ldc,
            kernel_ld=f"{klds[0]}/{klds[1]}/{klds[2]}",
            grid=f"{grid[0]}x{grid[1]}x{grid[2]}",
            block=f"{block[0]}x{block[1]}x{block[2]}",
            verification="PASS" if passed else "FAIL",
            mismatches=result.mismatches,
            nonfinite=result.nonfinite,
            oob_writes=outside,
            freivalds=("PASS" if fv_ok else "FAIL") if st["probes"] else "off",
            freivalds_bad_rows=fv_rows,
            max_abs_error=result.max_abs_error,
            rel_l2_error=result.rel_l2_error,
            tolerance="exact" if st["gamma"] == 0 else f"{st['gamma']:.3g} * (|A|.|B| + |C0|)",
            first_mismatches=" | ".join(result.first_mismatches),
            samples=len(kernel),
            kernel_ms_median=ks["median"],
            kernel_ms_min=ks["min"],
            kernel_ms_max=ks["max"],
            kernel_ms_iqr=ks["iqr"],
            h2d_ms_median=summarize(h2d)["median"],
            d2h_ms_median=summarize(d2h)["median"],
            global_ms_median=gs["median"],
            global_ms_min=gs["min"],
            global_ms_max=gs["max"],
            global_ms_iqr=gs["iqr"],
            kernel_gflops=arith.gflops(nflop, ks["median"]),
            global_gflops=arith.gflops(nflop, gs["median"]),
            gpu_busy_ms=busy,
            verify_ms=verify_ms,
            freivalds_ms=freivalds_ms,
            error="",
        )
        if nvml:
            row |= dict(
                sm_clock_mhz=float(np.median([x["sm"] for x in nvml])),
                mem_clock_mhz=float(np.median([x["mem"] for x in nvml])),
                temperature_c=float(np.median([x["temp"] for x in nvml])),
                power_w=float(np.median([x["power"] for x in nvml])),
                throttled_samples=sum(bool(x["reasons"] & THROTTLE_MASK) for x in nvml),
                throttle_reasons=hex(int(np.bitwise_or.reduce([x["reasons"] for x in nvml]))),
            )
        return row

    def launcher(self, conf: Configuration, pl):
        cp, v = self.cp, self.variant
        m, n, k = conf.m, conf.n, conf.k
        A, B, C = pl.kernel_mats
        pa, pb, pc = (device_pointer(cp, x) for x in (A, B, C))
        if v.backend == "cublas":
            return (
                self.cublas_launcher(conf, (pa, A.ld), (pb, B.ld), (pc, C.ld)),
                (0, 0, 0),
                (0, 0, 0),
            )
        path = self.cubins[(conf.dtype, conf.tile, conf.coarsen)]
        if path not in self.modules:
            self.modules[path] = cp.RawModule(path=path)
        fn = self.modules[path].get_function(v.symbol)
        grid, block = v.launch(m, n, k, conf.tile, conf.coarsen)
        i32, u64 = np.int32, np.uint64
        args = (
            u64(pa),
            u64(pb),
            u64(pc),
            i32(m),
            i32(n),
            i32(k),
            i32(A.ld),
            i32(B.ld),
            i32(C.ld),
            i32(conf.accumulate),
        )
        if 0 in grid:  # e.g. floor(size / block) = 0: nothing is launched, nothing written
            return (lambda: None), grid, block
        return (lambda: fn(grid, block, args)), grid, block

    def cublas_launcher(self, conf, a, b, c):
        """cuBLAS GEMM with explicit leading dimensions.  Row-major C = A.B is column-major
        C^T = B^T.A^T, so B and A swap places.  Default math mode: no TF32."""
        from cupy_backends.cuda.libs import cublas as cb

        handle = self.cp.cuda.device.get_cublas_handle()
        dt = NP_DTYPES[conf.dtype]
        alpha = np.array(1, dt)
        beta = np.array(1 if conf.accumulate else 0, dt)
        gemm = {"float32": cb.sgemm, "float64": cb.dgemm}[conf.dtype]
        op = cb.CUBLAS_OP_N

        def launch():
            cb.setStream(handle, self.stream.ptr)
            cb.setPointerMode(handle, cb.CUBLAS_POINTER_MODE_HOST)
            cb.setMathMode(handle, cb.CUBLAS_DEFAULT_MATH)
            gemm(
                handle,
                op,
                op,
                conf.n,
                conf.m,
                conf.k,
                alpha.ctypes.data,
                b[0],
                b[1],
                a[0],
                a[1],
                beta.ctypes.data,
                c[0],
                c[1],
            )

        return launch

    def base_row(self, conf: Configuration) -> dict:
        return (
            conf.as_dict()
            | dict(backend=self.variant.backend)
            | self.facts
            | dict(timestamp=datetime.now(UTC).isoformat(timespec="seconds"))
        )

    def error_row(self, conf: Configuration, message: str) -> dict:
        return self.base_row(conf) | dict(verification="ERROR", error=message, samples=0)


def describe(row: dict) -> str:
    shape = f"{row['m']}x{row['n']}x{row['k']}"
    mem = row["memory"] + (f" pad{row['pad']} {row['transfer']}" if row.get("pad") else "")
    head = f"{row['variant']} {row['dtype']} t{row['tile']} f{row['coarsen']} {shape} {mem}"
    if row.get("cache") == "cold":
        head += " cold"
    if row.get("verification") == "ERROR":
        return f"{head}: ERROR {row.get('error', '')}"
    text = (
        f"{head}: kernel {row['kernel_ms_median']:.3f} ms ({row['kernel_gflops']:.0f} GFLOPS), "
        f"global {row['global_ms_median']:.3f} ms, {row['verification']}"
    )
    if row["verification"] == "FAIL":
        text += f" ({row['mismatches']} mismatches, {row['oob_writes']} writes outside C"
        text += f", Freivalds {row.get('freivalds', '?')}"
        first = str(row.get("first_mismatches") or "")
        text += f"; first: {first.split(' | ')[0]})" if first else ")"
    return text + f" [{row['samples']} samples]"


def append_jsonl(path: str | Path, record: dict) -> None:
    """Appends one record to a job's journal, flushed, so a crash keeps it."""
    with open(path, "a") as fh:
        fh.write(json.dumps(record, default=str) + "\n")
        fh.flush()

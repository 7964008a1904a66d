"""Measures the configurations of one variant in one CUDA context (the worker process's job).

Per configuration (nvbench's order): place the inputs (placement.py), launch once and verify that
result twice (oracle.py), place the operands again for each other place the samples run from
(sampling.placements: a fresh allocation on a lane of its own, Lane), then time passes until
the stopping rule says enough (timing.py: the load's strategy), with the observers reading NVML
beside the samples (observers.py), check every other place's result, and write one Row
(row.py).  Configurations sharing inputs (same shape, element type, inputs) share one reference,
built once, and kept in the worker's session (session.py) for the next variant where one worker
measures several.  A failing configuration becomes a row that says so; a CUDA error that ends
the context (illegal address, launch failure) ends this process after its row is written, and
jobs.py starts a new one for the rest.

The host keeps the GPU fed: two worker threads do the host-only work while the GPU measures.
One draws the next group's inputs during this group's passes, and each group's Freivalds
probes once its inputs are there (the GPU starts on the inputs alone); the other
runs each configuration's Freivalds test (on a copy of the verified result) during its timed
passes.  The GPU's own order of work is unchanged: verified pass, device verification, warm-up,
timed passes.
"""

from __future__ import annotations

import contextlib
import logging
import time
import traceback
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np

from mmbench.core import arith
from mmbench.core.axes import Configuration
from mmbench.core.axes import describe as describe_axes
from mmbench.core.launch_spec import LaunchSpec
from mmbench.core.rates import rates
from mmbench.core.registry import Variant
from mmbench.core.row import AXIS_DEFAULTS, SAMPLES, Row, error_row
from mmbench.core.sampling import load_of
from mmbench.measure import observers as obs
from mmbench.measure.batcher import Batcher
from mmbench.measure.device import DEVICE_ATTRIBUTES, Nvml
from mmbench.measure.launch import Modules, Operand, launcher
from mmbench.measure.oracle import Inputs, Reference, group_key
from mmbench.measure.pass_timer import PassTimer
from mmbench.measure.placement import copy_rows, device_pointer, make_placement
from mmbench.measure.session import Session
from mmbench.measure.sites import Kernel, Site
from mmbench.measure.telemetry import DEFAULT_CLOCK_STEP_MHZ, ClockProbe, Telemetry
from mmbench.measure.timing import Sampling, launches_before_timed, measure
from mmbench.measure.verify import Verification

log = logging.getLogger("mmbench.measure.runner")


class ContextLost(RuntimeError):
    """The CUDA context is unusable; the process must end."""


class Runner:
    """Runs configurations of one variant in one CUDA context."""

    # how the batches launch a kernel that CuPy launches in its timed passes: "driver", through
    # cuLaunchKernelEx with the arguments packed once (launch.py, DriverLaunch: less host time a
    # launch, the same GPU time), or "cupy", CuPy's call as the passes
    # (lab/benchmarks/launch_paths.py measures the two side by side)
    batch_launch = "driver"

    def __init__(
        self,
        variant: Variant,
        cubins: dict[str, str],
        sampling: Sampling,
        provenance: dict | None = None,
        freivalds_vectors: int = 2,
        session: Session | None = None,
        observe: bool = True,
        hold: bool = True,
    ):
        """`observe`: read NVML beside the samples (clocks, telemetry, the clock probe); off
        for a run whose times are not kept, the profilers' target under Nsight Compute (a
        configuration's telemetry thread took 0.66 s to end there, 0.01 s without it: the
        target under cProfile on an H100, lab/gpu.sh speed OUT profiles).  `hold`: each timed
        pass's kernel held behind the blocking kernel until its launch is queued (PassTimer);
        off under Nsight Compute, which runs each launch to its end before the host goes on, so
        that a held launch would never be queued (profile/target.py)."""
        import cupy as cp

        self.cp = cp
        self.variant = variant
        self.cubins = cubins  # instantiation slug -> cubin path
        self.sampling = sampling
        self.freivalds_vectors = freivalds_vectors
        # what outlives this runner where its worker serves later jobs: the host operands'
        # buffers (kept from one placement to the next), the groups' references, the device's
        # facts and NVML handle
        self.session = session or Session(keeps=False)
        self.buffers = self.session.buffers
        self.facts = self.session.device_facts(cp) | (provenance or {})
        self.nvml = self.session.nvml(cp.cuda.Device().pci_bus_id) if observe else Nvml()
        l2 = cp.cuda.runtime.deviceGetAttribute(
            DEVICE_ATTRIBUTES["l2_cache_bytes"], cp.cuda.Device().id
        )
        # where the samples run from, one lane per placement (sampling.placements); the first
        # also runs the verified pass, the warm-up and every untimed step
        self.lanes = [
            Lane(cp, l2, first=i == 0, hold=hold) for i in range(max(1, sampling.placements))
        ]
        self.stream, self.timer = self.lanes[0].stream, self.lanes[0].timer
        device_id = cp.cuda.Device().id
        # what is read beside the samples (observers.py): NVML's clock after each, the
        # telemetry of the timed window, the clock probe after them all
        probe = clock_probe(cp, self.stream, self.nvml.sm_clock) if observe else None
        self.observers = obs.Observers(
            obs.ClockAfterSample(self.nvml.sm_clock),
            obs.Telemetry(
                Telemetry(
                    self.nvml,
                    sampling.telemetry_interval_ms,
                    lambda: cp.cuda.Device(device_id).use(),
                ),
                self.nvml.max_sm_clock(),
                self.nvml.clock_step_mhz(DEFAULT_CLOCK_STEP_MHZ),
                sampling,
            ),  # fmt: skip
            obs.ClockProbe(probe) if probe is not None else None,
        )
        # host-only work beside the GPU's: the next group's inputs, this configuration's Freivalds
        self.drawing = ThreadPoolExecutor(1, thread_name_prefix="mmbench-inputs")
        self.checking = ThreadPoolExecutor(1, thread_name_prefix="mmbench-freivalds")
        # what each configuration's timed passes run inside: nothing, or (the profilers' target
        # in a batch, profile/target.py) the range Nsight Compute profiles
        self.timed_range: Callable[[], contextlib.AbstractContextManager] = contextlib.nullcontext

    # -- the loop ---------------------------------------------------------------------------
    def run(
        self,
        confs: Iterable[Configuration],
        on_row: Callable[[Configuration, dict], None],
        on_start: Callable[[Configuration], None] | None = None,
    ) -> None:
        """Measures every configuration, calling on_row(conf, row) with each finished row.
        Raises ContextLost (after that configuration's row) when the CUDA context is gone."""
        confs = list(confs)
        groups: dict[tuple, list[Configuration]] = {}
        for c in confs:
            groups.setdefault(group_key(c), []).append(c)
        done, t0 = 0, time.monotonic()
        # the largest group first, so its host buffers serve every later one
        order = sorted(groups.values(), key=lambda g: -footprint(g[0]))
        upcoming = self.draw(order[0][0]) if order else None
        for i, group in enumerate(order):
            # one placement at a time; bursts before the sustained load heats the GPU
            group.sort(key=lambda c: (c.memory, c.pad, c.transfer, c.load_kind.heats))
            state = self.group_state(group[0], upcoming)
            if i + 1 < len(order):
                upcoming = self.draw(order[i + 1][0])
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
                    state = {k: state[k] for k in ("inputs", "probes", "reference") if k in state}
                    lost = self.context_lost(err)
                    if isinstance(err, self.cp.cuda.memory.OutOfMemoryError):
                        self.session.make_room(self.cp, 1 << 62, self.group_key(conf))
                        self.cp.get_default_memory_pool().free_all_blocks()
                row["config_wall_ms"] = (time.monotonic() - start) * 1e3
                done += 1
                on_row(conf, row)
                eta = (time.monotonic() - t0) / done * (len(confs) - done)
                width = len(str(len(confs)))
                log.info(
                    "[%*d/%d, eta %4.0fs] %s", width, done, len(confs), eta, self.describe(row)
                )
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

    def close(self) -> None:
        """Ends this runner's threads and cuBLAS handles (its worker may serve another job);
        the session's buffers and references stay."""
        self.drawing.shutdown(wait=True)
        self.checking.shutdown(wait=True)
        for lane in self.lanes:
            lane.close()

    # -- per group and per placement ------------------------------------------------------------
    def group_key(self, conf: Configuration) -> tuple:
        """What a group's inputs and reference depend on: its axes (oracle.group_key), the
        Freivalds vectors and the variant's promotion of narrow sums (the bound, FP8)."""
        promoted = self.variant.sums_promoted_every
        return (*group_key(conf), self.freivalds_vectors, promoted)

    def draw(self, conf: Configuration) -> Future | None:
        """The host inputs of conf's group, drawn on the inputs thread; None where the
        session keeps the group's reference (an earlier job of this worker built it)."""
        if self.session.reference(self.group_key(conf)) is not None:
            return None
        promoted = self.variant.sums_promoted_every  # FP8's bound (registry)
        return self.drawing.submit(Inputs.draw, conf, self.freivalds_vectors, promoted,
                                   self.session.store)  # fmt: skip

    def group_state(self, conf: Configuration, upcoming: Future | None) -> dict:
        """A group's state as it starts: its kept reference, or its inputs (drawn ahead,
        else now) and, on the inputs thread, their Freivalds probes (needed once the first
        result is there, while the next group's inputs are drawn after them).  Device memory
        for its operands comes before the references kept for later groups (session.py)."""
        key = self.group_key(conf)
        need = 8 * footprint(conf) * (len(self.lanes) + 2)
        self.session.make_room(self.cp, need, key)
        kept = self.session.reference(key)
        if kept is not None:
            self.session.reused += 1
            return {"reference": kept}
        inputs = upcoming or self.draw(conf)
        probes = self.drawing.submit(lambda inputs: inputs.result().probes(), inputs)
        return {"inputs": inputs, "probes": probes}

    def reference(self, conf: Configuration, state: dict) -> Reference:
        if "reference" not in state:
            host, probes = state["inputs"].result(), state["probes"].result
            state["reference"] = Reference.build(self.cp, conf, host, probes)
            self.session.keep(self.cp, self.group_key(conf), state["reference"])
        return state["reference"]

    def placement(self, conf: Configuration, state: dict, ref: Reference):
        """The operands in this configuration's memory mode, between guard zones sized from the
        variant's declared reach past the matrices (registry `reach`)."""
        rows, cols = self.variant.reach_of(conf.instance_params, conf.m, conf.n, conf.k)
        # B as the kernel takes it: k x n, or (registry `b_layout: n_by_k`) its transpose
        b = ref.b.T if self.variant.b_transposed else ref.b
        lds = (conf.k + conf.pad, b.shape[1] + conf.pad, conf.n + conf.pad)
        # the variant's own need, or (a library reference) its kernels' rows: plan.reference_ld_align
        align = max(self.variant.alignment(conf.instance_params), conf.ld_align or 1)
        e = conf.element
        multiple = align // min(e.input.nbytes, e.output.nbytes)  # round_up: <= 1 is none
        guard = arith.guard_elements(rows, cols, *lds, multiple=multiple)
        # instantiations with the same reach share the placement (its buffers, guard zones and
        # filled host operands): the verified pass resets guards and C, every pass copies A, B
        key = (conf.memory, conf.pad, conf.transfer, guard, align)
        if state.get("placement_key") != key:
            state.pop("placement", None)
            state["placement"] = make_placement(
                self.cp, conf, ref.a, b, ref.c0, guard, self.buffers, align
            )
            state["placement_key"] = key
        return state["placement"]

    def moved(self, pl, count: int) -> list:
        """`count` more placements of the operands (sampling.placements), fewer where device
        memory runs out (said in the log; the row's `placements` says how many were used) or
        none where the kernel uses host memory in place.  Each holds fresh device memory while
        the earlier ones are alive, so no two share an address."""
        out = []
        for _ in range(count):
            try:
                other = pl.moved()
            except self.cp.cuda.memory.OutOfMemoryError:
                log.warning(
                    "placements: device memory holds %d of the %d asked for this configuration",
                    len(out) + 1, count + 1,
                )  # fmt: skip
                break
            if other is None:
                break
            out.append(other)
        return out

    # -- one configuration ------------------------------------------------------------------------
    def measure(self, conf: Configuration, state: dict) -> dict:
        """One configuration's row: the verified pass, the timed samples from every placement,
        every other placement's result checked, then the row (measurements only: the rates are
        computed where the table is made, core/rates.py)."""
        phases = Phases()
        ref = self.reference(conf, state)
        phases.mark("inputs and reference")
        pl = self.placement(conf, state, ref)
        phases.mark("placement")
        first = self.site(conf, pl, self.lanes[0])
        # back to back needs a warm cache and a launch (a library call has no grid of its own)
        nothing = first.spec.empty and not self.variant.library_launched
        repeatable = conf.cache != "cold" and not nothing
        phases.mark("launch set-up")
        checks = self.verified_pass(conf, pl, ref, first)
        phases.mark("verified pass and its copy to the host", checks.busy)
        try:
            checks.device(ref.check_device(self.cp, checks.host_c))
            phases.mark("device verification")
            for _ in range(launches_before_timed(self.sampling) - 1):
                checks.busy += sum(first.one_pass())
            phases.mark("warm-up passes", checks.busy)
            others = self.moved(pl, len(self.lanes) - 1)
            sites = [
                self.site(conf, p, lane) for p, lane in zip(others, self.lanes[1:], strict=False)
            ]
            phases.mark("other placements")
            with self.timed_range():
                timed = measure(
                    self.kernel(first, sites, repeatable), conf.load_kind, self.sampling
                )
            checks.busy += timed.gpu_ms()
            phases.mark("timed passes", checks.busy)
            checks.freivalds.result()  # the host copy is free again
            phases.mark("wait for Freivalds")
            # a long kernel's few samples may not reach every place: check those they reached
            used = max(0, timed.placements - 1)
            for p, again in zip(others[:used], sites[:used], strict=True):
                self.check_again(conf, ref, p, again, checks)
            phases.mark("other placements' checks", checks.busy)
            verdict = ref.columns(
                checks.checked, checks.verify_ms, checks.freivalds.result(), checks.outside
            )
        finally:
            wait([checks.freivalds])  # never two checks at once, whatever failed
        row = self.row(conf, pl, first.spec, verdict, timed, checks.busy)
        phases.mark("row")
        row[SAMPLES]["host_phases_ms"] = phases.kept()
        return row

    def site(self, conf: Configuration, p, lane: Lane, cubin: str | None = None,
             variant=None) -> Placed:  # fmt: skip
        """Placement p's timed pass and launch from its lane: the launch, described once
        (registry -> LaunchSpec) and prepared once; of `cubin` where given (a paired
        comparison's other build: measure/paired.py), else of the configuration's own;
        launched as `variant`'s registry entry says where given (that build's own), else as
        this run's."""
        operands = {
            x: Operand(device_pointer(self.cp, mat), mat.ld)
            for x, mat in zip("ABC", p.kernel_mats, strict=True)
        }
        go, spec = launcher(
            self.cp, variant or self.variant, conf, lane.modules,
            cubin or self.cubins.get(conf.instance),
            operands,
            lane.stream, lane.cublas_handle() if self.variant.backend == "cublas" else None,
        )  # fmt: skip
        cold = conf.cache == "cold"
        # the batches' launch: the same one, packed once where CuPy launches it (launch.py)
        batched = getattr(go, "batched", go) if self.batch_launch == "driver" else go
        return Placed(lambda: lane.timer.one_pass(p, go, cold), batched, spec, lane)

    def verified_pass(self, conf: Configuration, pl, ref: Reference, first: Placed) -> Checks:
        """The verified pass from fresh operands: its writes outside C counted, its result
        copied to the host and handed to the Freivalds thread, which checks it during the
        timed passes (they write their results into the same buffer)."""
        pl.prepare_verified_pass()
        busy = sum(first.one_pass())
        outside = pl.outside_writes()
        # in pinned memory: the device check copies it up at the bus's speed, without CuPy's
        # staging copy of a pageable array (oracle.Reference.check_device)
        host_c = self.buffers.get("pinned", "result copy", conf.m * conf.n, pl.output_dtype)
        host_c = host_c.reshape(conf.m, conf.n)
        copy_rows(host_c, pl.result())
        freivalds = self.checking.submit(ref.check_host, host_c)
        return Checks(host_c, freivalds, busy=busy, outside=outside)

    def kernel(self, first: Placed, sites: list[Placed], repeatable: bool) -> Kernel:
        """What the load's strategy times: every placement's pass and (where it can be repeated
        back to back) launch and batcher, and the observers of the samples."""
        return Kernel(
            first.one_pass,
            lambda: any(lane.timer.in_kernel() for lane in self.lanes),
            launch=first.launch if repeatable else None,
            batcher=first.lane.batcher() if repeatable else None,
            observers=self.observers,
            more=[
                Site(
                    s.one_pass,
                    s.launch if repeatable else None,
                    s.lane.batcher() if repeatable else None,
                )
                for s in sites
            ],  # fmt: skip
        )

    def check_again(self, conf: Configuration, ref: Reference, p, again: Placed,
                    checks: Checks) -> None:  # fmt: skip
        """Another placement's result, checked on the device as the first's was: where the
        kernel wrote device memory, there, in place (the copy back to the host and up again,
        576 MB each way at 12000, was checked with the first placement: the same copy code);
        where it wrote host memory in place (managed, mapped), as the host sees it."""
        if conf.accumulate:  # its launches added to C: one more pass from C0
            checks.busy += sum(again.one_pass())
        in_device = p.device_result()
        if in_device is not None:
            again.lane.stream.synchronize()  # its last launch is done
            checks.device(ref.check_device(self.cp, in_device))
        else:
            if not conf.accumulate:
                p.d2h(self.stream)
                self.stream.synchronize()
            copy_rows(checks.host_c, p.result())
            checks.device(ref.check_device(self.cp, checks.host_c))
        checks.outside += p.outside_writes()

    def row(self, conf: Configuration, pl, spec, verdict: dict, timed, busy: float) -> dict:
        """The configuration's row of measurements, and its samples for the samples file."""
        lda, ldb, ldc = pl.host_ld
        return Row(
            axes=self.axes(conf),
            lda=lda,
            ldb=ldb,
            ldc=ldc,
            kernel_ld="/".join(str(x.ld) for x in pl.kernel_mats),
            **spec.describe(),
            **verdict,
            **timed.columns(),
            gpu_busy_ms=busy,
            **self.provenance(),
        ).to_dict() | {SAMPLES: timed.kept()}

    def axes(self, conf: Configuration) -> dict:
        """The row's axes: the configuration's, and the GPU model it is measured on."""
        return conf.axes() | dict(backend=self.variant.backend, gpu_name=self.facts["gpu_name"])

    def provenance(self) -> dict:
        """The row's provenance columns (the GPU model is an axis: axes())."""
        facts = {k: v for k, v in self.facts.items() if k != "gpu_name"}
        return facts | dict(timestamp=datetime.now(UTC).isoformat(timespec="seconds"))

    def error_row(self, conf: Configuration, message: str) -> dict:
        return error_row(self.axes(conf), message, **self.provenance())

    def describe(self, row: dict) -> str:
        """The progress line of a finished row."""
        return describe(row)


class Lane:
    """Where one placement's samples run from: a stream of its own, with the pass timer's
    events and the blocking kernel's batcher on it, its own load of the kernels' code and its
    own cuBLAS handle (the first lane: CuPy's).
    Two processes measuring the same kernel on the same data differ by up to 3% on kernels of
    10-50 us, and one process's runners (each with its stream, batcher and module loads) differ
    as much (lab/benchmarks/run_to_run.py), so each placement has a lane of its own."""

    def __init__(self, cp, l2_bytes: int, first: bool = False, hold: bool = True):
        self.cp = cp
        self.stream = cp.cuda.Stream(non_blocking=True)
        self.timer = PassTimer(cp, self.stream, l2_bytes, hold=self.batcher if hold else None)
        self.modules = Modules(cp)
        self._batcher: Batcher | None | bool = False  # made on first use (batcher())
        self._cublas: int | None = None
        self.first = first

    def cublas_handle(self) -> int | None:
        """This lane's cuBLAS handle, made on first use (None for the first lane: CuPy's)."""
        if self._cublas is None and not self.first:
            from cupy_backends.cuda.libs import cublas

            self._cublas = cublas.create()
        return self._cublas

    def close(self) -> None:
        """Destroys the cuBLAS handle this lane made (its stream and modules go with it)."""
        if self._cublas is not None:
            from cupy_backends.cuda.libs import cublas

            cublas.destroy(self._cublas)
            self._cublas = None

    def batcher(self) -> Batcher | None:
        """The blocking kernel's batcher (compiled by NVRTC on first use; None where it cannot
        be: then no batched samples, and a sustained load is an error row)."""
        if self._batcher is False:
            try:
                self._batcher = Batcher(self.cp, self.stream)
            except Exception as err:  # noqa: BLE001
                log.warning(
                    "no batched samples, and passes whose kernel segment holds the host's "
                    "launch: the blocking kernel failed to build (%s)", err,
                )  # fmt: skip
                self._batcher = None
        return self._batcher


def clock_probe(cp, stream, nvml_clock) -> ClockProbe | None:
    """The SM clock probe (telemetry.ClockProbe; None where NVRTC cannot build it: then rows
    have no sm_clock_probe_mhz and compare judges with NVML's clock, as before)."""
    try:
        return ClockProbe(cp, stream, nvml_clock)
    except Exception as err:  # noqa: BLE001
        log.warning("no SM clock probe: its kernel failed to build (%s)", err)
        return None


class Phases:
    """Where a configuration's wall time goes, phase by phase (lab/benchmarks/harness_phases.py
    reads them from the samples file): each phase's wall milliseconds and the GPU-busy
    milliseconds of the passes in it, so that wall - GPU is the host's part."""

    def __init__(self):
        self.wall: dict[str, float] = {}
        self.gpu: dict[str, float] = {}
        self.t = time.monotonic()
        self.busy = 0.0

    def mark(self, name: str, busy: float | None = None) -> None:
        """The phase `name` ends now; `busy`: the configuration's GPU-busy ms so far."""
        now = time.monotonic()
        self.wall[name] = self.wall.get(name, 0.0) + (now - self.t) * 1e3
        if busy is not None:
            self.gpu[name] = self.gpu.get(name, 0.0) + busy - self.busy
            self.busy = busy
        self.t = now

    def kept(self) -> dict:
        """{phase: [wall ms, GPU-busy ms]}, rounded to microseconds."""
        return {k: [round(v, 3), round(self.gpu.get(k, 0.0), 3)] for k, v in self.wall.items()}


@dataclass
class Placed:
    """One placement's timed pass, its launch alone, the launch's description and its lane."""

    one_pass: Callable[[], tuple[float, float, float]]
    launch: Callable[[], None]
    spec: LaunchSpec
    lane: Lane


@dataclass
class Checks:
    """What a configuration's checks found so far: the device's verdict over every placement
    checked (the first that failed), their time, writes outside C, the Freivalds test of the
    verified pass (a future) on the host copy of its result, and the GPU time of every pass."""

    host_c: np.ndarray
    freivalds: Future
    busy: float = 0.0
    outside: int = 0
    checked: Verification | None = None
    verify_ms: float = 0.0

    def device(self, got: tuple[Verification, float]) -> None:
        result, ms = got
        self.checked = result if self.checked is None else worse(self.checked, result)
        self.verify_ms += ms


def worse(a: Verification, b: Verification) -> Verification:
    """Of two placements' verifications, the first that failed (else the first)."""
    return b if a.passed and not b.passed else a


def footprint(conf: Configuration) -> int:
    """Elements of A, B and C: the order of groups, largest first."""
    return conf.m * conf.k + conf.k * conf.n + conf.m * conf.n


def describe(row: dict) -> str:
    """One line of progress for a finished row."""
    head = describe_axes(row)
    if row.get("verification") == "ERROR":
        return f"{head}: ERROR {row.get('error', '')}"
    gflops = rates(row)["kernel_gflops"]
    text = f"{head}: kernel {row['kernel_ms']:.3f} ms ({gflops:.0f} GFLOPS)"
    if row["global_ms_median"] == row["global_ms_median"]:
        text += f", global {row['global_ms_median']:.3f} ms"
    load = load_of(row.get("load") or AXIS_DEFAULTS["load"])
    if row.get("batch_samples") and not load.back_to_back:
        text += f", batched {row['batch_ms_median']:.4f} ms (x{row['batch_size']:.0f})"
    if load.back_to_back:
        # "True" as measured, or a bool where the row was read back from a table
        settle = "settled" if str(row.get("settled")) == "True" else "NOT settled"
        text += f", {settle} after {row['settle_s']:.1f} s, {row.get('sm_clock_mhz', 0):.0f} MHz"
        if row.get("power_w_median") == row.get("power_w_median"):
            text += f", {row['power_w_median']:.0f} W"
    text += f", {row['verification']}"
    if row["verification"] == "FAIL":
        text += f" ({row['mismatches']} mismatches, {row['oob_writes']} writes outside C"
        text += f", Freivalds {row.get('freivalds', '?')}"
        first = str(row.get("first_mismatches") or "")
        text += f"; first: {first.split(' | ')[0]})" if first else ")"
    return text + f" [{row['samples']} samples]"

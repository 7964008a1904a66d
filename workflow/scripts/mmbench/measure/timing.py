"""How long a kernel takes: one timing interface, `measure(kernel, load, sampling)`, with one
strategy per load (core/sampling.LOADS, which also says which question each answers), the
stopping rules, and the summary of the samples (nvbench's practice: warm up, then sample until
a minimum count and a minimum of GPU time, report median, min, max and IQR).

Placements (both loads): a configuration's samples run from `sampling.placements` places in
turn (a burst's pass i and batch i from place i mod K; a sustained load's batches likewise,
from its first settling batch, one after another).  Each place is a fresh allocation of the
operands in GPU memory and a lane of the runner's (its own stream, blocking kernel and load of
the kernels' code); the first is the verified one.  Two processes measuring the same short
kernel differ by up to 3%, set when each starts, and one process's fresh runners differ as
much (benchmarks/run_to_run.py); samples taken from several places let the interval cover part
of that, not all of it (docs/method.md).  A batch starts with one
untimed launch where there are several places, so its timed launches find their operands in
L2 as a single place's do.

The runner and the profiler's target program (which runs the runner on one configuration) both
time through here, so a profiled launch is a measured one.

Strategies:
    burst      timed passes one after another, each host-to-device copy, kernel and
               device-to-host copy in its segments (PassTimer), host work between passes (inputs
               reset, NVML read), until the stopping rule says enough.  Then, for a kernel
               shorter than sampling.batch_min_ms with a warm cache, batched samples: each
               times `batch_size()` launches queued behind a blocking kernel (Batcher), so the
               launches run back to back whatever the host's launch cost; the launch's time is
               the batch's over its count.  The single-launch samples stay the row's
               kernel_ms; compare uses whichever kind is quieter.
    sustained  batches of sampling.sustained_batch_ms back to back, the next queued while one
               runs, until the settle rule holds (measure/telemetry.settled), then timed batches
               back to back for at least sampling.sustained_window_s.  The samples are the
               launch's time in those batches, the row's kernel_ms their mean (the window's
               GPU time over its launches: core/sampling.STATISTIC); copies are not timed
               (their host work would let the GPU cool), so the copy and global columns are
               empty.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from mmbench.core.sampling import LOADS, STATISTIC, Sampling, batch_size
from mmbench.measure import telemetry as tm

__all__ = ["Sampling"]


def noise(samples_ms: list[float]) -> float:
    """Relative standard deviation of the mean: s / sqrt(n) / mean (inf below 2 samples)."""
    n = len(samples_ms)
    if n < 2:
        return math.inf
    mean = sum(samples_ms) / n
    return float(np.std(samples_ms, ddof=1)) / math.sqrt(n) / mean if mean > 0 else math.inf


class StoppingRule:
    """When a configuration has enough timed samples, as nvbench's stopping criterion is written:
    each sample is added as it is timed, then the rule is asked whether it is done.  Every rule
    stops at max_samples, and at max_time once it has at least 3 samples (a slow kernel);
    between those, the subclass's own test (Sampling.stop names it: STOPPING_RULES)."""

    def __init__(self, s: Sampling):
        self.s = s
        self.samples_ms: list[float] = []  # what each timed sample took, the copies included
        self.kernel_ms: list[float] | None = None  # the kernel alone, where it is timed apart

    def add(self, sample_ms: float, kernel_ms: float | None = None) -> None:
        self.samples_ms.append(sample_ms)
        if kernel_ms is not None:
            if self.kernel_ms is None:
                self.kernel_ms = []
            self.kernel_ms.append(kernel_ms)

    def done(self) -> bool:
        s, n = self.s, len(self.samples_ms)
        total_s = sum(self.samples_ms) / 1e3
        if n >= s.max_samples or self.enough(n, total_s):
            return True
        return n >= min(3, s.min_samples) and total_s >= s.max_time_s

    def enough(self, n: int, total_s: float) -> bool:
        raise NotImplementedError


class CountRule(StoppingRule):
    """`count` (the default): at least min_samples and min_time of GPU time."""

    def enough(self, n: int, total_s: float) -> bool:
        return n >= self.s.min_samples and total_s >= self.s.min_time_s


class NoiseRule(StoppingRule):
    """`noise` (nvbench's criterion): at least noise_min_samples, then stop as soon as the
    relative standard deviation of the mean kernel time is at most max_noise, so a long, steady
    kernel stops after a few samples and a noisy one keeps sampling; unlike nvbench (min time
    0.5 s) it asks no minimum GPU time, which is what saves samples on long kernels."""

    def enough(self, n: int, total_s: float) -> bool:
        watched = self.samples_ms if self.kernel_ms is None else self.kernel_ms
        return n >= self.s.noise_min_samples and noise(watched) <= self.s.max_noise


STOPPING_RULES = {"count": CountRule, "noise": NoiseRule}


def stopping_rule(s: Sampling) -> StoppingRule:
    return STOPPING_RULES[s.stop](s)


def enough(samples_ms: list[float], s: Sampling, kernel_ms: list[float] | None = None) -> bool:
    """The stopping rule asked about samples already taken (global and kernel-only ones)."""
    rule = stopping_rule(s)
    rule.samples_ms = list(samples_ms)
    rule.kernel_ms = None if kernel_ms is None else list(kernel_ms)
    return rule.done()


def summarize(values: list[float]) -> dict:
    if not values:
        nan = math.nan
        return dict(median=nan, min=nan, max=nan, q1=nan, q3=nan, iqr=nan)
    q1, med, q3 = (float(x) for x in np.percentile(values, [25, 50, 75]))
    return dict(median=med, min=min(values), max=max(values), q1=q1, q3=q3, iqr=q3 - q1)


class PassTimer:
    """Times one pass with CUDA events on one stream, in segments (placement.py says what each
    covers for every host-memory mode):

        e0 | h2d | e1 | [cold: L2 flush] | e1b | kernel | e2 | d2h | e3

    kernel = e1b..e2; global = h2d + kernel + d2h (seed 002's Tiempo Global), the flush excluded.
    """

    def __init__(self, cp, stream, l2_bytes: int):
        self.cp, self.stream = cp, stream
        self.events = {k: cp.cuda.Event() for k in ("e0", "e1", "e1b", "e2", "e3")}
        self.flush_bytes = 2 * int(l2_bytes)  # a memset of twice the L2, as nvbench
        self.scratch = None

    def in_kernel(self) -> bool:
        """The pass's kernel is running now (asked from the telemetry thread)."""
        ev = self.events
        return ev["e1b"].done and not ev["e2"].done

    def one_pass(self, placement, launch, cold: bool) -> tuple[float, float, float]:
        """(h2d, kernel, d2h) milliseconds of one pass."""
        cp, s, ev = self.cp, self.stream, self.events
        if cold and self.scratch is None:
            self.scratch = cp.empty(self.flush_bytes, dtype=cp.uint8)
        placement.reset()
        cp.cuda.Device().synchronize()
        ev["e0"].record(s)
        placement.h2d(s)
        ev["e1"].record(s)
        after_flush = ev["e1"]
        if cold:
            cp.cuda.runtime.memsetAsync(self.scratch.data.ptr, 0, self.flush_bytes, s.ptr)
        ev["e1b"].record(s)
        if cold:
            after_flush = ev["e1b"]
        with s:
            launch()
        ev["e2"].record(s)
        placement.d2h(s)
        ev["e3"].record(s)
        ev["e3"].synchronize()
        el = cp.cuda.get_elapsed_time
        return el(ev["e0"], ev["e1"]), el(after_flush, ev["e2"]), el(ev["e2"], ev["e3"])


# The blocking kernel of batched samples (nvbench's blocking_kernel): it waits until the host has
# queued the whole batch behind it and raised `released` to this batch's ticket, so the batch's
# launches run back to back however long the host takes to queue them.  It gives up after
# `timeout_ns` (a batch longer than the launch queue would otherwise never be released).
BLOCKER_SOURCE = r"""
extern "C" __global__ void mmbench_block(const volatile unsigned long long* released,
                                         unsigned long long ticket, unsigned long long timeout_ns,
                                         unsigned int* timed_out) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*released < ticket) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) { atomicAdd(timed_out, 1u); return; }
        __nanosleep(1000);
    }
}
"""
BLOCK_TIMEOUT_S = 10.0


class Batcher:
    """Queues batches of launches behind the blocking kernel, on one stream."""

    def __init__(self, cp, stream):
        import cupyx

        self.cp, self.stream = cp, stream
        # [released ticket, timed-out count] in pinned host memory, which the device reads and
        # writes at the same address (unified addressing)
        self.words = cupyx.empty_pinned(2, dtype=np.uint64)
        self.words[:] = 0
        address = self.words.ctypes.data
        self.released, self.timed_out = np.uint64(address), np.uint64(address + 8)
        self.kernel = cp.RawKernel(BLOCKER_SOURCE, "mmbench_block")
        self.kernel.compile()  # now, not at the first batch: Lane.batcher() catches a failure
        self.ticket = 0

    def queue(
        self, launch: Callable[[], None], count: int, warm: bool = False, after=None
    ) -> tuple:
        """Queues one batch of `count` launches (after one untimed launch if `warm`, and after
        the event `after` of another stream's batch, so that batches on several streams run
        one after another); returns its (start, end) events.  The launches run once the batch
        is released; the timed-out count is checked by `check()`."""
        cp, s = self.cp, self.stream
        self.ticket += 1
        start, end = cp.cuda.Event(), cp.cuda.Event()
        if after is not None:
            s.wait_event(after)
        with s:
            self.kernel(
                (1,), (1,),
                (self.released, np.uint64(self.ticket), np.uint64(int(BLOCK_TIMEOUT_S * 1e9)),
                 self.timed_out),
            )  # fmt: skip
            if warm:
                launch()
            start.record(s)
            for _ in range(count):
                launch()
            end.record(s)
        self.words[0] = self.ticket  # release it
        return start, end

    def check(self) -> None:
        if self.words[1]:
            raise RuntimeError(
                f"a batch was not queued within {BLOCK_TIMEOUT_S:.0f} s (the launch queue is "
                f"full?): lower sampling.batch_max"
            )


@dataclass
class Kernel:
    """What a strategy times: one pass (copies, kernel, copies: PassTimer), the kernel's launch
    alone (None where it cannot be repeated back to back: a cold cache, an empty launch), the
    same two on each other placement of the operands (`more`, taken in turn with the first),
    and the tools: the batcher, the telemetry reader, the NVML read after each timed sample
    and the clock probe."""

    one_pass: Callable[[], tuple[float, float, float]]
    in_pass_kernel: Callable[[], bool]
    launch: Callable[[], None] | None
    batcher: Batcher | None
    telemetry: tm.Telemetry | None
    clock_after: Callable[[], float | None] = lambda: None
    max_clock_mhz: float = math.nan
    clock_step_mhz: float = tm.DEFAULT_CLOCK_STEP_MHZ
    more: list[Site] = field(default_factory=list)
    # the SM clock measured right after the timed samples, and NVML's then (telemetry.ClockProbe)
    probe: Callable[[], tuple[float, float | None]] | None = None

    def sites(self) -> list[Site]:
        """Every placement's (one pass, launch), the first (verified) one first."""
        return [Site(self.one_pass, self.launch, self.batcher), *self.more]


@dataclass
class Site:
    """One placement of the operands: a timed pass on it, its launch alone (or None) and the
    batcher on its stream (None: the kernel's)."""

    one_pass: Callable[[], tuple[float, float, float]]
    launch: Callable[[], None] | None
    batcher: Batcher | None = None


@dataclass
class Samples:
    """The timed samples of one configuration (milliseconds), the SM clock after each, the
    batched ones, and the telemetry of the timed window."""

    kernel: list[float] = field(default_factory=list)
    h2d: list[float] = field(default_factory=list)
    d2h: list[float] = field(default_factory=list)
    glob: list[float] = field(default_factory=list)
    clock: list[float] = field(default_factory=list)
    batch: list[float] = field(default_factory=list)  # per launch, one per batch
    batch_clock: list[float] = field(default_factory=list)
    batch_size: int = 0
    placements: int = 1  # the operands' placements the samples took in turn (the first ones)
    load: str = "burst"
    telemetry: dict = field(default_factory=dict)  # telemetry.columns()
    trace: dict = field(default_factory=dict)  # Trace.kept() of a sustained load
    settle_s: float = math.nan
    settled: bool | None = None
    window_s: float = math.nan
    duty: float = math.nan
    probe_mhz: float = math.nan  # the SM clock the probe measured after a burst's samples
    probe_nvml_mhz: float = math.nan  # NVML's SM clock right after the probe

    def clock_probe(self, k: Kernel) -> None:
        """The SM clock, measured right after the timed samples (telemetry.ClockProbe)."""
        if k.probe is not None:
            mhz, nvml = k.probe()
            self.probe_mhz = mhz
            self.probe_nvml_mhz = math.nan if nvml is None else nvml

    def kept(self) -> dict:
        """The samples a comparison of runs needs (compare.py): each single launch's time and
        the SM clock NVML read after it (nvbench's cycles = time x clock), the batched
        per-launch times likewise, the clock probe's reading and NVML's beside it (compare.py
        scales NVML's clocks by their ratio), and a sustained load's telemetry trace."""
        out = dict(
            kernel_ms=[round(x, 6) for x in self.kernel],
            sm_clock_mhz=[c for c in self.clock if c is not None],
        )
        if self.batch_size:
            out["batch_size"] = self.batch_size
        if self.placements > 1:
            out["placements"] = self.placements
        if self.batch:
            out |= dict(
                batch_ms=[round(x, 7) for x in self.batch],
                batch_clock_mhz=[c for c in self.batch_clock if c is not None],
            )
        if self.probe_mhz == self.probe_mhz:
            out |= dict(
                sm_clock_probe_mhz=round(self.probe_mhz, 3),
                nvml_clock_at_probe_mhz=self.probe_nvml_mhz,
            )
        if self.trace:
            out["trace"] = self.trace
        return out

    def gpu_ms(self) -> float:
        """GPU time of the timed samples: passes, and every launch of every batch."""
        launches = self.kernel if self.load == "sustained" else self.batch
        return sum(self.glob) + sum(launches) * (self.batch_size or 0)

    def columns(self) -> dict:
        ks, gs, bs = summarize(self.kernel), summarize(self.glob), summarize(self.batch)
        mean = float(np.mean(self.kernel)) if self.kernel else math.nan
        out = dict(
            samples=len(self.kernel),
            kernel_ms=mean if STATISTIC[self.load] == "mean" else ks["median"],
            kernel_ms_median=ks["median"],
            kernel_ms_mean=mean,
            kernel_ms_min=ks["min"],
            kernel_ms_max=ks["max"],
            kernel_ms_iqr=ks["iqr"],
            h2d_ms_median=summarize(self.h2d)["median"],
            d2h_ms_median=summarize(self.d2h)["median"],
            global_ms_median=gs["median"],
            global_ms_min=gs["min"],
            global_ms_max=gs["max"],
            global_ms_iqr=gs["iqr"],
            batch_size=self.batch_size or math.nan,
            batch_samples=len(self.batch),
            batch_ms_median=bs["median"],
            batch_ms_iqr=bs["iqr"],
            placements=self.placements,
            settle_s=self.settle_s,
            settled="" if self.settled is None else str(self.settled),
            window_s=self.window_s,
            duty=self.duty,
        )
        return out | self.telemetry | dict(sm_clock_probe_mhz=self.probe_mhz)


class Burst:
    """Timed passes until the stopping rule says enough, then batched samples of a short kernel
    (module docstring).  NVML's SM clock is read after every timed sample."""

    name = "burst"

    def measure(self, k: Kernel, s: Sampling) -> Samples:
        sites = k.sites()
        out = Samples(load=self.name)
        if k.telemetry:
            k.telemetry.start(k.in_pass_kernel)
        stop = stopping_rule(s)  # the noise rule watches the kernel times it is given
        try:
            while not stop.done():
                h2d, kernel, d2h = sites[len(out.kernel) % len(sites)].one_pass()
                out.clock.append(k.clock_after())
                out.kernel.append(kernel)
                out.h2d.append(h2d)
                out.d2h.append(d2h)
                out.glob.append(h2d + kernel + d2h)
                stop.add(out.glob[-1], kernel)
        finally:
            trace = k.telemetry.stop() if k.telemetry else None
        if trace is not None:
            out.telemetry = tm.columns(trace, k.max_clock_mhz, power=False)
        after = [c for c in out.clock if c is not None]
        if "sm_clock_mhz" not in out.telemetry and after:
            # kernels shorter than a telemetry interval: the clock NVML read right after each
            # (the clock moves in steps of milliseconds, not microseconds)
            out.telemetry |= dict(sm_clock_mhz=float(np.median(after)), sm_clock_mhz_min=min(after))
        count = batch_size(float(np.median(out.kernel)), s) if out.kernel else 1
        if count > 1 and k.launch is not None and k.batcher is not None:
            out.batch_size = count
            totals: list[float] = []
            stop = stopping_rule(s)
            while not stop.done():
                site = sites[len(totals) % len(sites)]
                batcher = site.batcher or k.batcher
                start, end = batcher.queue(site.launch, count, warm=len(sites) > 1)
                end.synchronize()
                batcher.check()
                ms = batcher.cp.cuda.get_elapsed_time(start, end)
                totals.append(ms)
                stop.add(ms)
                out.batch.append(ms / count)
                out.batch_clock.append(k.clock_after())
        out.clock_probe(k)
        out.placements = min(len(sites), max(len(out.kernel), len(out.batch)))
        return out


class Sustained:
    """Batches back to back until the settle rule holds, then the timed window (module
    docstring).  Two batches are in flight at a time: the next is queued while one runs."""

    name = "sustained"

    def measure(self, k: Kernel, s: Sampling) -> Samples:
        if k.launch is None or k.batcher is None:
            raise ValueError(
                "load=sustained runs the kernel back to back, which this configuration cannot "
                "do (a cold cache flushes L2 before each launch; an empty grid launches nothing; "
                "or the blocking kernel failed to build: see the log): use load=burst for it"
            )
        cp = k.batcher.cp
        sites = [x for x in k.sites() if x.launch is not None]
        # one launch's time from a pass, then batches of sustained_batch_ms (batch_max at most)
        h2d, first, d2h = k.one_pass()
        window_ms = max(s.sustained_window_s, s.min_time_s) * 1e3
        count = max(1, min(s.batch_max, math.ceil(s.sustained_batch_ms / max(first, 1e-4))))
        most = max(s.max_samples, math.ceil(2 * window_ms / s.sustained_batch_ms))
        out = Samples(load=self.name, batch_size=count)
        flight: deque = deque()  # (start, end, timed, batcher) of the queued batches
        queued = 0

        def busy() -> bool:
            return any(a.done and not b.done for a, b, _, _ in list(flight))

        t0 = time.monotonic()
        if k.telemetry:
            k.telemetry.start(busy, energy=True)
        timed, window_start, window_end = False, math.nan, math.nan
        gpu_ms = 0.0
        try:
            while True:
                # batches take the placements in turn, from the first timed one on (the settling
                # ones too: each heats the GPU the same)
                site = sites[queued % len(sites)]
                queued += 1
                batcher = site.batcher or k.batcher
                # after the batch before, which may be on another placement's stream
                after = flight[-1][1] if flight and len(sites) > 1 else None
                events = batcher.queue(site.launch, count, warm=len(sites) > 1, after=after)
                flight.append((*events, timed, batcher))
                if len(flight) < 2:
                    continue
                start, end, was_timed, batcher = flight[0]
                end.synchronize()  # still in flight while it runs: busy() sees it
                flight.popleft()
                batcher.check()
                now = time.monotonic()
                ms = cp.cuda.get_elapsed_time(start, end)
                if was_timed:
                    if math.isnan(window_start):
                        window_start = now - ms / 1e3
                    out.kernel.append(ms / count)
                    gpu_ms += ms
                    window_end = now
                    n = len(out.kernel)
                    if (gpu_ms >= window_ms and n >= s.min_samples) or n >= most:
                        break
                elif not timed:
                    waited = now - t0
                    done = (
                        k.telemetry is not None
                        and k.telemetry.available
                        and tm.settled(k.telemetry.snapshot(), t0, s, k.clock_step_mhz)
                    )
                    if (
                        done
                        or waited >= s.settle_max_s
                        or not (k.telemetry and k.telemetry.available)
                    ):
                        timed, out.settle_s, out.settled = True, waited, bool(done)
            for _start, end, _, _ in flight:  # the batch queued last runs out untimed
                end.synchronize()
            # no clock probe: the moment the load stops, the clock leaves the power limit's
            # (H100: NVML read cuBLAS TF32 at 1425 MHz through the window, the probe right
            # after measured 1650); the telemetry read during the window is its clock record
            out.placements = min(len(sites), queued)
        finally:
            trace = k.telemetry.stop() if k.telemetry else None
        out.window_s = window_end - window_start
        out.duty = gpu_ms / 1e3 / out.window_s if out.window_s > 0 else math.nan
        if trace is not None and len(trace["t"]):
            out.telemetry = tm.columns(
                trace, k.max_clock_mhz, power=True, window=(window_start, window_end),
                min_steps=s.energy_min_steps,
            )  # fmt: skip
            out.trace = trace.kept(since=t0)
        return out


STRATEGIES = {s.name: s for s in (Burst(), Sustained())}
assert set(STRATEGIES) == set(LOADS), "every declared load has its strategy here"


def measure(kernel: Kernel, load: str, sampling: Sampling) -> Samples:
    """The timed samples of one configuration under `load` (core/sampling.LOADS)."""
    try:
        strategy = STRATEGIES[load]
    except KeyError:
        raise ValueError(f"unknown load {load!r}; valid values: {', '.join(STRATEGIES)}") from None
    return strategy.measure(kernel, sampling)


def launches_before_timed(sampling: Sampling) -> int:
    """Launches of the kernel before its first timed one: the verified pass, then the warm-up
    passes less one (the verified pass warms up too).  Nsight Compute skips these and profiles
    the next (profiling.py)."""
    return 1 + max(0, sampling.warmup - 1)

"""How long a kernel takes: one timing interface, `measure(one_pass, sampling)`, whose strategy
the sampling settings name (STRATEGIES, declared once), the stopping rules, and the summary of
the samples (nvbench's practice: warm up, then sample until a minimum count and a minimum of GPU
time, report median, min, max and IQR).

The runner and the profiler's target program (which runs the runner on one configuration) both
time through here, so a profiled launch is a measured one.

Strategies:
    passes  the first: timed passes one after another, each host-to-device copy, kernel and
            device-to-host copy in its segments (PassTimer), host work between passes (inputs
            reset, NVML read), until the stopping rule says enough.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from mmbench.core.sampling import STRATEGY_NAMES, Sampling

__all__ = ["Sampling"]


def noise(samples_ms: list[float]) -> float:
    """Relative standard deviation of the mean: s / sqrt(n) / mean (inf below 2 samples)."""
    n = len(samples_ms)
    if n < 2:
        return math.inf
    mean = sum(samples_ms) / n
    return float(np.std(samples_ms, ddof=1)) / math.sqrt(n) / mean if mean > 0 else math.inf


def enough(samples_ms: list[float], s: Sampling, kernel_ms: list[float] | None = None) -> bool:
    """The stopping rule, on the global samples (`samples_ms`) and the kernel-only ones.
    `count` (the default): min count and min GPU time.  `noise` (nvbench's criterion): at least
    noise_min_samples, then stop as soon as the relative standard deviation of the mean kernel
    time is at most max_noise, so a long, steady kernel stops after a few samples and a noisy
    one keeps sampling; unlike nvbench (min time 0.5 s) it asks no minimum GPU time, which is
    what saves samples on long kernels.  Both are capped by max count, and by max time once at
    least 3 samples exist."""
    n, total = len(samples_ms), sum(samples_ms) / 1e3
    if n >= s.max_samples:
        return True
    if s.stop == "noise":
        watched = samples_ms if kernel_ms is None else kernel_ms
        if n >= s.noise_min_samples and noise(watched) <= s.max_noise:
            return True
    elif n >= s.min_samples and total >= s.min_time_s:
        return True
    return n >= min(3, s.min_samples) and total >= s.max_time_s


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
            after_flush = ev["e1b"]
        with s:
            launch()
        ev["e2"].record(s)
        placement.d2h(s)
        ev["e3"].record(s)
        ev["e3"].synchronize()
        el = cp.cuda.get_elapsed_time
        return el(ev["e0"], ev["e1"]), el(after_flush, ev["e2"]), el(ev["e2"], ev["e3"])


@dataclass
class Samples:
    """The timed passes of one configuration (milliseconds) and what was sampled after each."""

    kernel: list[float]
    h2d: list[float]
    d2h: list[float]
    glob: list[float]
    after: list

    def kept(self) -> dict:
        """The samples a comparison of runs needs (compare.py): each timed kernel's time and the
        SM clock NVML read after its pass (nvbench's cycles = time x clock)."""
        return dict(
            kernel_ms=[round(x, 6) for x in self.kernel],
            sm_clock_mhz=[a["sm"] for a in self.after if a and "sm" in a],
        )

    def columns(self) -> dict:
        ks, gs = summarize(self.kernel), summarize(self.glob)
        return dict(
            samples=len(self.kernel),
            kernel_ms_median=ks["median"],
            kernel_ms_min=ks["min"],
            kernel_ms_max=ks["max"],
            kernel_ms_iqr=ks["iqr"],
            h2d_ms_median=summarize(self.h2d)["median"],
            d2h_ms_median=summarize(self.d2h)["median"],
            global_ms_median=gs["median"],
            global_ms_min=gs["min"],
            global_ms_max=gs["max"],
            global_ms_iqr=gs["iqr"],
        )


class Passes:
    """Timed passes until the stopping rule says enough; `after_each()` (NVML, say) is called
    after every pass and what it returns is kept (None is dropped)."""

    name = "passes"

    def measure(self, one_pass, sampling: Sampling, after_each=None) -> Samples:
        return _passes(one_pass, sampling, after_each)


STRATEGIES = {s.name: s for s in (Passes(),)}
assert set(STRATEGIES) == set(STRATEGY_NAMES), "every declared strategy is implemented here"


def measure(one_pass, sampling: Sampling, after_each=None) -> Samples:
    """The timed samples of one configuration, by the strategy its sampling names."""
    try:
        strategy = STRATEGIES[sampling.strategy]
    except KeyError:
        raise ValueError(
            f"unknown timing strategy {sampling.strategy!r}; valid values: {', '.join(STRATEGIES)}"
        ) from None
    return strategy.measure(one_pass, sampling, after_each)


def launches_before_timed(sampling: Sampling) -> int:
    """Launches of the kernel before its first timed one: the verified pass, then the warm-up
    passes less one (the verified pass warms up too).  Nsight Compute skips these and profiles
    the next (profiling.py)."""
    return 1 + max(0, sampling.warmup - 1)


def _passes(one_pass, sampling: Sampling, after_each=None) -> Samples:
    out = Samples([], [], [], [], [])
    while not enough(out.glob, sampling, out.kernel):
        h2d, kernel, d2h = one_pass()
        extra = after_each() if after_each else None
        if extra is not None:
            out.after.append(extra)
        out.kernel.append(kernel)
        out.h2d.append(h2d)
        out.d2h.append(d2h)
        out.glob.append(h2d + kernel + d2h)
    return out

"""Clocks, power and energy while the timed kernels run.

A thread reads NVML every `sampling.telemetry_interval_ms` during a configuration's timed
window (Telemetry), and marks each read with whether a timed kernel was in flight then (the
strategy's `busy()`, which asks the CUDA events around the kernel).  Each read holds:

    t       seconds (time.monotonic)
    sm      SM clock, MHz                  mem     memory clock, MHz
    temp    GPU temperature, C             power   instantaneous board power, W (NVML's
                                                   POWER_INSTANT field, not the 1 s average)
    reasons clock-event reasons (bitmask)  energy  total-energy counter, mJ (sustained only:
                                                   one read of it costs about 4 ms)
    busy    a timed kernel was running

The rules that turn reads into a row's columns are plain functions of a recorded trace, so CI
checks them on real recordings (tests/data): `settled()` (the sustained load's settle rule),
`energy()` (the energy rule) and `columns()`.  core/sampling.py states both rules.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

import numpy as np

from mmbench.core.sampling import Sampling

log = logging.getLogger("mmbench.measure.telemetry")

FIELDS = ("t", "sm", "mem", "temp", "power", "reasons", "energy", "busy")

# NVML clock-event reasons that mean the GPU ran below its clocks (nvml.h), by name
SLOWDOWN_REASONS = {
    0x4: "sw_power_cap",
    0x8: "hw_slowdown",
    0x20: "sw_thermal",
    0x40: "hw_thermal",
    0x80: "hw_power_brake",
}
DEFAULT_CLOCK_STEP_MHZ = 15.0  # Hopper's SM clock table; the GPU's own is used when NVML has it


def reason_names(mask: int) -> str:
    """'sw_power_cap+sw_thermal' for a reasons bitmask ('' for none of the slowdown reasons)."""
    return "+".join(name for bit, name in SLOWDOWN_REASONS.items() if mask & bit)


class Trace(dict):
    """A telemetry recording: field -> numpy array (FIELDS), all of one length."""

    @classmethod
    def of(cls, reads: list[tuple]) -> Trace:
        cols = list(zip(*reads, strict=True)) if reads else [[] for _ in FIELDS]
        return cls({f: np.asarray(c, dtype=float) for f, c in zip(FIELDS, cols, strict=True)})

    def within(self, start: float, end: float) -> Trace:
        keep = (self["t"] >= start) & (self["t"] <= end)
        return Trace({f: v[keep] for f, v in self.items()})

    def kept(self, since: float) -> dict:
        """Compact lists for the samples file: times in ms from `since`, whole MHz, watts to
        0.1, energy in mJ, busy as 0/1."""
        r = {
            "t_ms": np.round((self["t"] - since) * 1e3, 1),
            "sm": self["sm"].round(),
            "power": self["power"].round(1),
            "reasons": self["reasons"],
            "energy": self["energy"],
            "busy": self["busy"],
        }
        return {
            k: [float(x) if k in ("t_ms", "power") else int(x) for x in v] for k, v in r.items()
        }

    @classmethod
    def from_kept(cls, kept: dict) -> Trace:
        """The trace of a samples-file record (kept()), times in seconds from its start."""
        n = len(kept["t_ms"])
        out = {f: np.full(n, np.nan) for f in FIELDS}
        out["t"] = np.asarray(kept["t_ms"], dtype=float) / 1e3
        for f in ("sm", "power", "reasons", "energy", "busy"):
            out[f] = np.asarray(kept[f], dtype=float)
        return cls(out)


# -- the rules ---------------------------------------------------------------------------------


def settled(trace: Trace, since: float, s: Sampling, step_mhz: float) -> bool:
    """The settle rule (core/sampling.py) on the busy reads since `since`: at least
    settle_min_s (and two windows) have passed, and the median SM clocks of the last two
    windows of settle_window_s differ by at most one clock step."""
    busy = trace["busy"] > 0
    t, sm = trace["t"][busy], trace["sm"][busy]
    if not len(t) or t[-1] - since < max(s.settle_min_s, 2 * s.settle_window_s):
        return False
    end, w = t[-1], s.settle_window_s
    last = sm[t > end - w]
    prev = sm[(t > end - 2 * w) & (t <= end - w)]
    if len(last) < 3 or len(prev) < 3:
        return False
    return abs(float(np.median(last)) - float(np.median(prev))) <= step_mhz


def settle_time(trace: Trace, since: float, s: Sampling, step_mhz: float) -> float | None:
    """Seconds from `since` to the first read at which the settle rule held (None: never)."""
    for i in range(len(trace["t"])):
        part = Trace({f: v[: i + 1] for f, v in trace.items()})
        if settled(part, since, s, step_mhz):
            return float(trace["t"][i] - since)
    return None


def energy(trace: Trace, start: float, end: float, min_steps: int) -> tuple[float, float] | None:
    """The energy rule (core/sampling.py): (joules, seconds) between the first and the last
    advance of the energy counter seen in [start, end], or None when fewer than `min_steps`
    advances lie between them."""
    w = trace.within(start, end)
    e, t = w["energy"], w["t"]
    ok = np.isfinite(e)
    e, t = e[ok], t[ok]
    if len(e) < 2:
        return None
    advanced = np.nonzero(np.diff(e) > 0)[0] + 1  # the reads that saw a new value
    if len(advanced) < min_steps + 1:
        return None
    first, last = advanced[0], advanced[-1]
    seconds = float(t[last] - t[first])
    return (float(e[last] - e[first]) / 1e3, seconds) if seconds > 0 else None


def step_period_ms(trace: Trace) -> float:
    """The energy counter's update period seen in a trace (median time between advances)."""
    e, t = trace["energy"], trace["t"]
    ok = np.isfinite(e)
    advanced = np.nonzero(np.diff(e[ok]) > 0)[0] + 1
    return float(np.median(np.diff(t[ok][advanced])) * 1e3) if len(advanced) > 2 else np.nan


def columns(
    trace: Trace,
    max_clock_mhz: float,
    power: bool,
    window: tuple[float, float] | None = None,
    min_steps: int = 10,
) -> dict:
    """A row's clock, power and energy columns from the busy reads of a timed window.

    Clocks (both loads): median and minimum SM clock, median memory clock and temperature, the
    share of reads below the GPU's maximum SM clock and the slowdown reasons NVML gave in them.
    Power and energy (`power`: only where the window ran the kernel back to back, the sustained
    load): median and minimum instantaneous power, and the mean power over the counter's steps
    (energy()), where the energy rule allows it."""
    w = trace.within(*window) if window else trace
    busy = w["busy"] > 0
    out: dict = dict(telemetry_reads=int(busy.sum()))
    if not busy.any():
        return out
    sm = w["sm"][busy]
    below = sm < max_clock_mhz if max_clock_mhz and max_clock_mhz > 0 else np.zeros(len(sm), bool)
    mask = (
        int(np.bitwise_or.reduce(w["reasons"][busy][below].astype(np.int64))) if below.any() else 0
    )
    out |= dict(
        sm_clock_mhz=float(np.median(sm)),
        sm_clock_mhz_min=float(sm.min()),
        mem_clock_mhz=float(np.nanmedian(w["mem"][busy]))
        if np.isfinite(w["mem"]).any()
        else np.nan,
        temperature_c=float(np.nanmedian(w["temp"][busy]))
        if np.isfinite(w["temp"]).any()
        else np.nan,
        below_max_clock=float(below.mean()),
        slowdown_reasons=reason_names(mask),
    )
    if power:
        p = w["power"][busy]
        out |= dict(power_w_median=float(np.median(p)), power_w_min=float(p.min()))
        if window:
            got = energy(trace, *window, min_steps)
            if got:
                joules, seconds = got
                out |= dict(energy_power_w=joules / seconds, energy_window_s=seconds)
    return out


# -- the reader --------------------------------------------------------------------------------


class Telemetry:
    """Reads NVML on a thread while a timed window runs: start(busy), then stop() -> Trace."""

    def __init__(self, nvml, interval_ms: float, setup: Callable[[], None] | None = None):
        self.nvml, self.interval = nvml, interval_ms / 1e3
        self.setup = setup  # run first on the thread (make the CUDA device current)
        self.reads: list[tuple] = []
        self.thread: threading.Thread | None = None
        self.running = False

    @property
    def available(self) -> bool:
        return self.nvml is not None and self.nvml.handle is not None

    def start(self, busy: Callable[[], bool], energy: bool = False) -> None:
        self.reads = []
        if not self.available:
            return
        self.running = True
        self.thread = threading.Thread(
            target=self._run, args=(busy, energy), name="mmbench-telemetry", daemon=True
        )
        self.thread.start()

    def snapshot(self) -> Trace:
        return Trace.of(list(self.reads))

    def stop(self) -> Trace:
        self.running = False
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        return Trace.of(self.reads)

    def _run(self, busy: Callable[[], bool], with_energy: bool) -> None:
        if self.setup:
            self.setup()
        read = self.nvml.read
        while self.running:
            try:
                t = time.monotonic()
                b = busy()
                r = read(with_energy)
                self.reads.append((t, r["sm"], r["mem"], r["temp"], r["power"], r["reasons"],
                                   r["energy"], b))  # fmt: skip
            except Exception as err:  # noqa: BLE001 - telemetry never ends a measurement
                log.warning("NVML read failed (%s); no more telemetry in this window", err)
                return
            time.sleep(self.interval)


# The SM clock the kernels ran at, measured: one block spins for PROBE_CYCLES clock64() cycles
# and reads %globaltimer (ns) around the spin.  NVML reports the clock it set, which is not
# always the clock the SMs ran at: on an H100 (driver 580) NVML read 1980 MHz throughout while
# this probe measured 1973-2008 MHz, constant for seconds, and the kernels' times moved with it
# (docs/method.md, "The clock the kernels ran at").
PROBE_SOURCE = r"""
extern "C" __global__ void mmbench_clock_probe(long long cycles, unsigned long long* out) {
    unsigned long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    long long c0 = clock64(), c1 = c0;
    while (c1 - c0 < cycles) c1 = clock64();
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
    if (threadIdx.x == 0) { out[0] = (unsigned long long)(c1 - c0); out[1] = t1 - t0; }
}
"""
PROBE_CYCLES = 10_000_000  # 5 ms at 2 GHz: %globaltimer's microsecond steps are 2e-4 of it


def probe_mhz(cycles: int, ns: int) -> float:
    """The clock a probe measured: its clock64() cycles over its %globaltimer nanoseconds."""
    return cycles / ns * 1e3 if ns > 0 else float("nan")


class ClockProbe:
    """Measures the SM clock on `stream` (PROBE_SOURCE), and what NVML reads right after."""

    def __init__(self, cp, stream, nvml_clock: Callable[[], float | None]):
        self.cp, self.stream, self.nvml_clock = cp, stream, nvml_clock
        self.kernel = cp.RawKernel(PROBE_SOURCE, "mmbench_clock_probe")
        self.kernel.compile()  # now, not at the first call: a failure here is the runner's to catch
        self.out = cp.zeros(2, dtype=cp.uint64)

    def __call__(self) -> tuple[float, float | None]:
        """(the measured SM clock, NVML's SM clock right after), both in MHz; run right after
        a burst's timed samples, so the GPU is in the state they left it in (not after a
        sustained load: its clock rises as soon as the load stops)."""
        with self.stream:
            self.kernel((1,), (32,), (np.int64(PROBE_CYCLES), self.out))
        self.stream.synchronize()
        nvml = self.nvml_clock()
        cycles, ns = (int(x) for x in self.out.get(stream=self.stream))
        return probe_mhz(cycles, ns), nvml

"""The timed samples of one configuration and what they become: the row's timing columns
(median, mean, min, max, IQR of the kernel and global times; batches; the load's window) and
what the samples file keeps for a later comparison (kept())."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from mmbench.core.sampling import BURST, Load


def summarize(values: list[float]) -> dict:
    if not values:
        nan = math.nan
        return dict(median=nan, min=nan, max=nan, q1=nan, q3=nan, iqr=nan)
    q1, med, q3 = (float(x) for x in np.percentile(values, [25, 50, 75]))
    return dict(median=med, min=min(values), max=max(values), q1=q1, q3=q3, iqr=q3 - q1)


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
    load: Load = BURST
    telemetry: dict = field(default_factory=dict)  # telemetry.columns()
    trace: dict = field(default_factory=dict)  # Trace.kept() of a sustained load
    settle_s: float = math.nan
    settled: bool | None = None
    window_s: float = math.nan
    duty: float = math.nan
    probe_mhz: float = math.nan  # the SM clock the probe measured after a burst's samples
    probe_nvml_mhz: float = math.nan  # NVML's SM clock right after the probe

    def observed(self, fields: dict) -> None:
        """The fields the observers filled (observers.py: clocks, telemetry, probe, trace)."""
        for name, value in fields.items():
            setattr(self, name, value)

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
        # a back-to-back load's samples are its batches' launches; a burst's batches are apart
        launches = self.kernel if self.load.back_to_back else self.batch
        return sum(self.glob) + sum(launches) * (self.batch_size or 0)

    def columns(self) -> dict:
        ks, gs, bs = summarize(self.kernel), summarize(self.glob), summarize(self.batch)
        mean = float(np.mean(self.kernel)) if self.kernel else math.nan
        out = dict(
            samples=len(self.kernel),
            kernel_ms=mean if self.load.statistic == "mean" else ks["median"],
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
        return out | self.clocks() | dict(sm_clock_probe_mhz=self.probe_mhz)

    def clocks(self) -> dict:
        """The telemetry's columns; for kernels shorter than a telemetry interval, the SM clock
        NVML read right after each pass instead (the clock moves in steps of milliseconds, not
        microseconds)."""
        after = [c for c in self.clock if c is not None]
        if "sm_clock_mhz" not in self.telemetry and after:
            return self.telemetry | dict(
                sm_clock_mhz=float(np.median(after)), sm_clock_mhz_min=min(after)
            )
        return self.telemetry

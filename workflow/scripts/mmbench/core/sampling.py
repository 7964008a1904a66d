"""How a configuration is sampled: the settings of the timing (config `sampling:`) and the loads
a kernel is timed under, declared once (the `load` axis takes its values from LOADS;
measure/burst.py and sustained.py implement each, measure/telemetry.py reads the clocks, power and energy).

Three questions, three loads:
    burst      what one call costs when the GPU is fresh: timed passes, host work (inputs
               reset, NVML read) between them, so the clocks stay up.  The reports' seed
               experiments and the edit loop's comparisons use it.
    sustained  what a steady workload sees: the kernel runs back to back until the SM clock
               has settled (SETTLE RULE below), then the timed batches run back to back with no
               host work between them; clocks, power and energy are those of that window.
    flushed    the sustained load with L2 flushed before every launch (a memset of twice its
               size, as a cold cache's passes do), the way mamf-finder measures its MSMF: the
               GPU writes memory between products rather than multiplying, so it runs cooler
               and its clock higher.  Each launch is timed alone (its own events, the memset
               outside them); `duty` is the launches' share of the window's wall time.

The row's kernel time (kernel_ms, and its rates) is the samples' median under burst load and
their mean under sustained load (Load.statistic below).

Batches (both loads): a sample that times `batch` back-to-back launches behind a blocking
kernel (nvbench's batch measurement), the launch's time being the batch's over its count;
`batch_size()` says how many.

PLACEMENTS (both loads): a configuration's samples run from `placements` (4) places in turn,
each a fresh allocation of A, B and C in GPU memory (all alive together) with a stream and a
load of the kernel's code of its own; every place's result is verified.  Two processes timing
the same short kernel on the same data differ by up to 3% (set when each starts), while one
process's samples spread by 0.1-0.4%; samples from several places let a run's interval cover
part of that (on an H100 the processes' difference fell to 1-1.7% for cuBLAS at 512 and 768,
docs/method.md), not all of it.

SETTLE RULE (sustained): the SM clock is read every telemetry interval while the kernel runs
back to back; the load has settled when the medians of the last two windows of
`settle_window_s` (1 s) differ by at most one clock step (15 MHz on an H100; the GPU's own
step otherwise), and at least `settle_min_s` (2 s) has passed; after `settle_max_s` the timed window
starts anyway and the row says `settled = False`.

ENERGY RULE: NVML's total-energy counter advances in steps (every 100 ms on an H100, measured);
the energy of the timed window is taken between the first and the last step seen inside it, and
is reported only when at least `energy_min_steps` steps fall inside it (timing of a step is
known to one telemetry read, a few ms: 10 steps keep that under 1%).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Load:
    """One value of the load axis: the question it answers and everything that differs between
    loads, so that code asks the load (`conf.load_kind.back_to_back`) instead of its name.
    measure/timing.py dispatches to one strategy per load, keyed by the load."""

    name: str
    question: str
    # the statistic of the timed samples that the row's kernel_ms (and every rate computed from
    # it) is.  Burst: the median, robust to a pass that an interrupt or a clock change hit.
    # Sustained: the mean, i.e. the window's GPU time over its launches: at the power limit the
    # SM clock moves every ~70 ms (H100: 1335-1605 MHz within one second of cuBLAS TF32), so the
    # median of a few dozen 100 ms batches lands on whichever clock step is most frequent, and
    # two runs' medians were up to 2.2% apart where their means were 0.5% apart
    statistic: str
    # every timed launch runs right after the one before (needs a warm cache and a launch)
    back_to_back: bool
    # the copies are timed too (the h2d, d2h and global columns)
    times_copies: bool
    # board power and energy over the timed window (the kernel runs back to back through it)
    measures_power: bool
    # the SM clock probe runs right after the samples (not after a sustained load: its clock
    # rises as soon as the load stops)
    probes_clock: bool
    # leaves the GPU hot: run after the other loads of the same placement
    heats: bool
    # the config key that may name the square sizes it runs at (empty: every product), or None
    sizes_key: str | None = None

    def __str__(self) -> str:
        return self.name


BURST = Load(
    "burst",
    "timed passes with host work between them: one call on a fresh GPU",
    statistic="median",
    back_to_back=False,
    times_copies=True,
    measures_power=False,
    probes_clock=True,
    heats=False,
)
SUSTAINED = Load(
    "sustained",
    "back to back until the clocks settle, then timed back to back: a steady workload",
    statistic="mean",
    back_to_back=True,
    times_copies=False,
    measures_power=True,
    probes_clock=False,
    heats=True,
    sizes_key="sustained_sizes",
)
# the sustained load in every respect but its question (measure/flushed.py flushes L2)
FLUSHED = replace(
    SUSTAINED,
    name="flushed",
    question="as sustained, with L2 flushed by a memset before every launch: mamf-finder's MSMF",
)
# the load axis's values, by name
LOADS: dict[str, Load] = {x.name: x for x in (BURST, SUSTAINED, FLUSHED)}


def load_of(name: str) -> Load:
    """The declared load of a name (the load axis's value)."""
    try:
        return LOADS[name]
    except KeyError:
        raise ValueError(f"unknown load {name!r}; valid values: {', '.join(LOADS)}") from None


@dataclass
class Sampling:
    warmup: int = 1
    min_samples: int = 5
    max_samples: int = 100
    min_time_s: float = 0.2
    max_time_s: float = 5.0
    stop: str = "count"  # "count": min_samples and min_time_s; "noise": the kernel's noise
    max_noise: float = 0.005  # "noise": relative standard deviation of the mean
    noise_min_samples: int = 3
    # batches: a sample of launches back to back spans at least this much GPU time; a kernel
    # this long or longer is its own batch (batch_size 1)
    batch_min_ms: float = 1.0
    batch_max: int = 500  # launches queued behind one blocking kernel at most
    # the samples run from this many places in turn (PLACEMENTS above)
    placements: int = 4
    # sustained load (SETTLE RULE, ENERGY RULE above)
    settle_window_s: float = 1.0
    settle_min_s: float = 2.0
    settle_max_s: float = 30.0
    sustained_window_s: float = 3.0  # the timed window at least
    # a sustained sample spans at least this much GPU time, so that each averages over the
    # power controller's clock changes (about every 100 ms on an H100 at its power limit)
    sustained_batch_ms: float = 100.0
    energy_min_steps: int = 10
    telemetry_interval_ms: float = 2.0  # pause between two telemetry reads


def batch_size(launch_ms: float, s: Sampling) -> int:
    """Launches per batched sample: enough that the batch spans s.batch_min_ms of GPU time,
    capped at s.batch_max; 1 for a kernel at least that long (or of unknown length)."""
    if not launch_ms > 0 or launch_ms >= s.batch_min_ms:
        return 1
    return max(1, min(s.batch_max, math.ceil(s.batch_min_ms / launch_ms)))

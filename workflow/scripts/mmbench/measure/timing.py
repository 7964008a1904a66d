"""How long a kernel takes: one timing interface, `measure(kernel, load, sampling)`, with one
strategy per load (core/sampling.LOADS says which question each answers; burst.py,
sustained.py and flushed.py implement them), the stopping rules in stopping.py, the pass and batch timers in
pass_timer.py and batcher.py, what is read beside the samples in observers.py, and what the
samples become in samples.py (nvbench's practice: warm up, then sample until a minimum count
and a minimum of GPU time, report median, min, max and IQR).

Placements (both loads): a configuration's samples run from `sampling.placements` places in
turn (a burst's pass i and batch i from place i mod K; a sustained load's batches likewise,
from its first settling batch, one after another).  Each place is a fresh allocation of the
operands in GPU memory and a lane of the runner's (its own stream, blocking kernel and load of
the kernels' code); the first is the verified one.  Two processes measuring the same short
kernel differ by up to 3%, set when each starts, and one process's fresh runners differ as
much (lab/benchmarks/run_to_run.py); samples taken from several places let the interval cover part
of that, not all of it (docs/method.md).

The runner and the profiler's target program (which runs the runner on one configuration) both
time through here, so a profiled launch is a measured one.
"""

from __future__ import annotations

from mmbench.core.sampling import LOADS, Load, Sampling
from mmbench.measure.burst import Burst
from mmbench.measure.flushed import Flushed
from mmbench.measure.samples import Samples
from mmbench.measure.sites import Kernel
from mmbench.measure.sustained import Sustained

__all__ = ["Sampling", "measure", "launches_before_timed"]

STRATEGIES = {s.load: s for s in (Burst(), Sustained(), Flushed())}
assert set(STRATEGIES) == set(LOADS.values()), "every declared load has its strategy here"


def measure(kernel: Kernel, load: Load, sampling: Sampling) -> Samples:
    """The timed samples of one configuration under `load` (core/sampling.LOADS; a name is
    resolved where it is read: Configuration.load_kind, core/sampling.load_of)."""
    return STRATEGIES[load].measure(kernel, sampling)


def launches_before_timed(sampling: Sampling) -> int:
    """Launches of the kernel before its first timed one: the verified pass, then the warm-up
    passes less one (the verified pass warms up too).  Nsight Compute skips these and profiles
    the next (profiling.py)."""
    return 1 + max(0, sampling.warmup - 1)

"""What a load's strategy times (burst.py, sustained.py): the configuration's placements of the
operands (Site), each with a timed pass and the launch alone, and what observes the samples."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mmbench.measure.batcher import Batcher
from mmbench.measure.observers import Observers


@dataclass
class Site:
    """One placement of the operands: a timed pass on it, its launch alone (or None) and the
    batcher on its stream (None: the kernel's)."""

    one_pass: Callable[[], tuple[float, float, float]]
    launch: Callable[[], None] | None
    batcher: Batcher | None = None


@dataclass
class Kernel:
    """What a strategy times: one pass (copies, kernel, copies: PassTimer), the kernel's launch
    alone (None where it cannot be repeated back to back: a cold cache, an empty launch), the
    same two on each other placement of the operands (`more`, taken in turn with the first),
    the batcher, and the observers of the samples (observers.py: the NVML clock read after
    each, the telemetry of the window, the clock probe after them all)."""

    one_pass: Callable[[], tuple[float, float, float]]
    in_pass_kernel: Callable[[], bool]
    launch: Callable[[], None] | None
    batcher: Batcher | None
    observers: Observers = field(default_factory=Observers)
    more: list[Site] = field(default_factory=list)

    def sites(self) -> list[Site]:
        """Every placement's (one pass, launch), the first (verified) one first."""
        return [Site(self.one_pass, self.launch, self.batcher), *self.more]

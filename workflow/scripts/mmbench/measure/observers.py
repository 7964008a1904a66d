"""What is read beside the timed samples, behind one interface (Kernel Tuner's observers): the
NVML clock read after each sample, the telemetry thread during the timed window, and the SM
clock probe after the samples.  A strategy (burst.py, sustained.py) calls, in this order:

    before_start(busy, load)   the timed window starts; busy() says whether a timed kernel is
                               in flight now (the telemetry marks its reads with it)
    during(series)             right after each timed sample of a series ("pass", "batch")
    after_finish()             the timed window has ended
    after_all(load)            every timed sample of the configuration is taken
    results(window, since)     what the observer saw, as fields of the configuration's
                               Samples (samples.py), which turns them into columns

Each observer adds its own fields; none touches another's.  The GPU's order of work is the
strategy's: an observer never launches anything except the probe, which runs after all.
"""

from __future__ import annotations

from collections.abc import Callable

from mmbench.core.sampling import Load, Sampling
from mmbench.measure import telemetry as tm


class Observer:
    """Does nothing at every event; an observer overrides the events it needs."""

    def before_start(self, busy: Callable[[], bool], load: Load) -> None:
        pass

    def during(self, series: str) -> None:
        pass

    def after_finish(self) -> None:
        pass

    def after_all(self, load: Load) -> None:
        pass

    def results(self, window: tuple[float, float] | None, since: float) -> dict:
        return {}


class ClockAfterSample(Observer):
    """NVML's SM clock read right after each timed sample (nvbench's cycles = time x clock):
    Samples.clock for the passes, Samples.batch_clock for the batches."""

    SERIES = {"pass": "clock", "batch": "batch_clock"}

    def __init__(self, read: Callable[[], float | None]):
        self.read = read
        self.seen: dict[str, list] = {}

    def before_start(self, busy, load) -> None:
        self.seen = {field: [] for field in self.SERIES.values()}

    def during(self, series: str) -> None:
        self.seen[self.SERIES[series]].append(self.read())

    def results(self, window, since) -> dict:
        return dict(self.seen)


class Telemetry(Observer):
    """NVML read on a thread through the timed window (telemetry.Telemetry), its reads turned
    into the row's clock, power and energy columns (telemetry.columns): power and energy where
    the load measures them (core/sampling.Load.measures_power), over the window the strategy
    names.  It also answers the sustained load's settle rule while the load runs."""

    def __init__(self, reader: tm.Telemetry, max_clock_mhz: float, clock_step_mhz: float,
                 sampling: Sampling):  # fmt: skip
        self.reader, self.max_clock_mhz = reader, max_clock_mhz
        self.clock_step_mhz, self.sampling = clock_step_mhz, sampling
        self.load: Load | None = None
        self.trace: tm.Trace | None = None

    @property
    def available(self) -> bool:
        return self.reader.available

    def before_start(self, busy, load) -> None:
        self.load, self.trace = load, None
        self.reader.start(busy, energy=load.measures_power)

    def settled(self, since: float) -> bool:
        """The settle rule (core/sampling.py) on the reads so far."""
        return tm.settled(self.reader.snapshot(), since, self.sampling, self.clock_step_mhz)

    def after_finish(self) -> None:
        self.trace = self.reader.stop()

    def results(self, window, since) -> dict:
        trace, power = self.trace, self.load is not None and self.load.measures_power
        if trace is None or (power and not len(trace["t"])):
            return {}
        out = dict(
            telemetry=tm.columns(
                trace,
                self.max_clock_mhz,
                power=power,
                window=window if power else None,
                min_steps=self.sampling.energy_min_steps,
            )
        )
        if power:  # the whole trace of a sustained load, for the samples file
            out["trace"] = trace.kept(since=since)
        return out


class ClockProbe(Observer):
    """The SM clock measured right after the samples (telemetry.ClockProbe), and NVML's beside
    it, where the load asks for it (core/sampling.Load.probes_clock)."""

    def __init__(self, probe: tm.ClockProbe):
        self.probe = probe
        self.got: dict = {}

    def before_start(self, busy, load) -> None:
        self.got = {}

    def after_all(self, load: Load) -> None:
        if load.probes_clock:
            mhz, nvml = self.probe()
            self.got = dict(probe_mhz=mhz, probe_nvml_mhz=float("nan") if nvml is None else nvml)

    def results(self, window, since) -> dict:
        return dict(self.got)


class Observers(Observer):
    """Several observers as one, called in order."""

    def __init__(self, *observers: Observer | None):
        self.items = [o for o in observers if o is not None]

    def before_start(self, busy, load) -> None:
        for o in self.items:
            o.before_start(busy, load)

    def during(self, series: str) -> None:
        for o in self.items:
            o.during(series)

    def after_finish(self) -> None:
        for o in self.items:
            o.after_finish()

    def after_all(self, load: Load) -> None:
        for o in self.items:
            o.after_all(load)

    def results(self, window=None, since: float = 0.0) -> dict:
        out: dict = {}
        for o in self.items:
            out |= o.results(window, since)
        return out

    @property
    def telemetry(self) -> Telemetry | None:
        """The telemetry observer where there is one that can read (the settle rule's source)."""
        return next((o for o in self.items if isinstance(o, Telemetry) and o.available), None)

"""measure/observers.py: what the strategies tell the observers, in which order, and what each
observer adds to the configuration's samples."""

import math

from mmbench.core.sampling import BURST, SUSTAINED
from mmbench.measure.observers import ClockAfterSample, ClockProbe, Observer, Observers
from mmbench.measure.sites import Kernel
from mmbench.measure.timing import Sampling, measure


class Recorder(Observer):
    """Writes down every event it is told, in order."""

    def __init__(self):
        self.events = []

    def before_start(self, busy, load):
        self.events.append(("before_start", load.name))

    def during(self, series):
        self.events.append(("during", series))

    def after_finish(self):
        self.events.append(("after_finish",))

    def after_all(self, load):
        self.events.append(("after_all", load.name))

    def results(self, window, since):
        return {}


def test_a_burst_tells_its_observers_each_pass_then_the_end_of_the_window_then_the_end():
    """Three 100 ms passes reach min_time 0.2 s after min_samples=3 (hand count: 3 x 100.5 ms);
    a 100 ms kernel is its own batch, so no batches."""
    rec = Recorder()
    kernel = Kernel(lambda: (0.25, 100.0, 0.25), lambda: False, None, None, Observers(rec))
    got = measure(kernel, BURST, Sampling(min_samples=3, min_time_s=0.2))
    assert len(got.kernel) == 3
    assert rec.events == [
        ("before_start", "burst"),
        ("during", "pass"),
        ("during", "pass"),
        ("during", "pass"),
        ("after_finish",),
        ("after_all", "burst"),
    ]


def test_the_nvml_clock_after_each_pass_becomes_the_rows_clock_where_no_telemetry_read():
    """Clocks 1980, 1965, 1980 read after three passes: the row's SM clock is their median
    (1980) and its minimum 1965, and the samples file keeps the three."""
    clocks = iter([1980.0, 1965.0, 1980.0])
    kernel = Kernel(
        lambda: (0.0, 100.0, 0.0),
        lambda: False,
        None,
        None,
        Observers(ClockAfterSample(lambda: next(clocks))),
    )
    got = measure(kernel, BURST, Sampling(min_samples=3, min_time_s=0.0))
    cols = got.columns()
    assert cols["sm_clock_mhz"] == 1980.0 and cols["sm_clock_mhz_min"] == 1965.0
    assert got.kept()["sm_clock_mhz"] == [1980.0, 1965.0, 1980.0]


def test_the_clock_probe_runs_after_a_burst_and_never_after_a_sustained_load():
    calls = []

    def probe():
        calls.append(1)
        return 1995.0, None

    obs = ClockProbe(probe)
    obs.before_start(lambda: False, SUSTAINED)
    obs.after_all(SUSTAINED)
    assert calls == [] and obs.results(None, 0.0) == {}
    obs.before_start(lambda: False, BURST)
    obs.after_all(BURST)
    got = obs.results(None, 0.0)
    assert calls == [1] and got["probe_mhz"] == 1995.0 and math.isnan(got["probe_nvml_mhz"])


def test_observers_without_telemetry_offer_no_settle_rule():
    assert Observers(ClockAfterSample(lambda: None)).telemetry is None

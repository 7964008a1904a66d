"""The sampling rules (core/sampling.py) on recorded samples: the batch sizing of short kernels,
the sustained load's settle rule, the energy rule and the telemetry columns.  The recordings:
tests/data/compare/h100-idle-{a,b} (the compare preset twice on an H100, burst, with batched
samples) and tests/data/h200-ladder (the ladder preset on an H200; the cuBLAS and mma_tf32
samples files keep the telemetry trace of every sustained configuration)."""

import numpy as np
import pytest

from mmbench.compare.compare import load_folder, quieter, spread
from mmbench.core.row import config_id, upgraded
from mmbench.core.sampling import Sampling, batch_size
from mmbench.core.tables import read_samples
from mmbench.measure import telemetry as tm

from .conftest import DATA, compare_run, read_csv

LADDER = DATA / "h200-ladder" / "results" / "ladder"


def sustained(variant: str, dtype: str, m: int, distribution: str = "normal"):
    """A sustained row of the recorded ladder and its samples (with the telemetry trace)."""
    t = upgraded(read_csv(LADDER / "tables" / "timings.csv"))
    r = t[(t.variant == variant) & (t.dtype == dtype) & (t.m == m) & (t.n == m)
          & (t.load == "sustained") & (t.distribution == distribution)].iloc[0]  # fmt: skip
    return r, read_samples(LADDER / "runs" / f"{variant}.samples.json.gz")[config_id(r)]


def test_a_batch_spans_the_minimum_time_and_a_long_kernel_is_its_own_batch():
    s = Sampling(batch_min_ms=1.0, batch_max=500)
    assert batch_size(0.02, s) == 50 and batch_size(0.3, s) == 4
    assert batch_size(1.0, s) == 1 and batch_size(25.0, s) == 1
    assert batch_size(0.0001, s) == 500  # capped: the launch queue holds about a thousand
    assert batch_size(float("nan"), s) == 1


def test_recorded_batches_were_sized_by_the_rule_and_are_quieter_than_single_launches():
    run = load_folder(compare_run("h100-idle-a"))
    s = Sampling()
    batched = [(cid, x) for cid, x in run.samples.items() if x.get("batch_ms")]
    assert len(batched) >= 20  # the compare preset's kernels under 1 ms
    quieter_count = 0
    for cid, x in batched:
        single = float(np.median(x["kernel_ms"]))
        assert x["batch_size"] == batch_size(single, s), cid
        # back to back, a launch takes at most a single launch's time (no launch gap), so a
        # batch sized from the single launch spans a little less than the minimum time
        batched_ms = float(np.median(x["batch_ms"]))
        assert batched_ms <= 1.02 * single, cid
        assert 0.5 * s.batch_min_ms <= batched_ms * x["batch_size"], cid
        quieter_count += spread(x["batch_ms"]) < spread(x["kernel_ms"])
    assert quieter_count >= 0.9 * len(batched)
    # long kernels have no batched samples: they are judged on their single launches
    long_ = [x for x in run.samples.values() if np.median(x["kernel_ms"]) >= 1.0]
    assert long_ and not any(x.get("batch_ms") for x in long_)


def test_compare_judges_short_kernels_on_their_batches():
    a, b = (load_folder(compare_run(f"h100-idle-{x}")) for x in "ab")
    kinds = [quieter(a.samples[c], b.samples[c]) for c in a.samples if c in b.samples]
    assert kinds.count("batched") >= 20 and kinds.count("single") >= 20


def test_the_settle_rule_holds_where_the_run_started_its_timed_window():
    """cuBLAS DGEMM at 8192 on normal inputs: the clock falls from 1980 MHz to the power
    limit's ~1600 within the first second, then dithers; the rule holds once two 1 s windows
    agree within a 15 MHz step, and the runner (which asks after each ~100 ms batch) started
    timing after that.  Over the recorded run's 100 sustained rows (an H200) the runner started
    a median 0.052 s after the rule first held (computed here from each recorded trace), nine
    in ten within 0.113 s, two rows later than 0.25 s (DGEMM here 0.43 s, mma_f64 at 8192 on
    normal inputs 0.89 s); the H100 run recorded before it had one of 100 (0.38 s), the runs
    before that four of 96 (0.25-1.25 s) and one of 92 (0.30 s)."""
    r, x = sustained("cublas", "float64", 8192)
    trace = tm.Trace.from_kept(x["trace"])
    s = Sampling()
    at = tm.settle_time(trace, 0.0, s, 15.0)
    assert at is not None and s.settle_min_s <= at <= r.settle_s
    assert r.settled
    t = upgraded(read_csv(LADDER / "tables" / "timings.csv"))
    lags = []
    for v, rows in t[t.load == "sustained"].groupby("variant"):
        samples = read_samples(LADDER / "runs" / f"{v}.samples.json.gz")
        for _, row in rows.iterrows():
            held = tm.settle_time(
                tm.Trace.from_kept(samples[config_id(row)]["trace"]), 0.0, s, 15.0
            )
            assert held is not None and held <= row.settle_s + 1e-6, (v, row.m)
            lags.append(row.settle_s - held)
    assert len(lags) == 100
    assert np.median(lags) < 0.1 and np.percentile(lags, 90) < 0.15
    assert sum(lag > 0.25 for lag in lags) == 2
    early = tm.Trace({f: v[trace["t"] < 1.5] for f, v in trace.items()})
    assert not tm.settled(early, 0.0, s, 15.0)  # before the minimum time, never
    # the clock did move: it started at the maximum and settled below it
    busy = trace["sm"][trace["busy"] > 0]
    assert busy[:5].max() >= 1900 and np.median(busy[-100:]) < 1700


def test_the_energy_rule_needs_ten_counter_steps_and_gives_the_recorded_power():
    r, x = sustained("cublas", "float64", 8192)
    trace = tm.Trace.from_kept(x["trace"])
    assert tm.step_period_ms(trace) == pytest.approx(
        100, rel=0.05
    )  # the H200's counter, as the H100's
    end = trace["t"][-1]
    joules, seconds = tm.energy(trace, end - r.window_s, end, 10)
    assert joules / seconds == pytest.approx(r.energy_power_w, rel=0.01)
    # the window rebuilt from the trace's end: the runner's ended a read or two before it, so
    # the counter's advances inside the two windows may differ by one step (~100 ms)
    step_s = tm.step_period_ms(trace) / 1e3
    assert abs(seconds - r.energy_window_s) <= 1.05 * step_s
    # the mean power over the counter's steps agrees with the instantaneous reads' median
    assert joules / seconds == pytest.approx(r.power_w_median, rel=0.05)
    # a window of fewer than ten steps reports no energy
    assert tm.energy(trace, end - 0.8, end, 10) is None
    assert tm.energy(trace, end - 0.8, end, 5) is not None


def test_the_telemetry_columns_come_from_the_busy_reads_of_the_window():
    r, x = sustained("cublas", "float64", 8192)
    trace = tm.Trace.from_kept(x["trace"])
    end = trace["t"][-1]
    cols = tm.columns(trace, 1980.0, power=True, window=(end - r.window_s, end), min_steps=10)
    assert cols["sm_clock_mhz"] == pytest.approx(r.sm_clock_mhz, abs=15)
    assert cols["power_w_median"] == pytest.approx(r.power_w_median, rel=0.02)
    assert cols["below_max_clock"] == 1.0 and cols["slowdown_reasons"] == "sw_power_cap"
    # burst rows: clocks only, no power (their window is not the kernel back to back)
    assert "power_w_median" not in tm.columns(trace, 1980.0, power=False)
    assert tm.reason_names(0x4 | 0x20) == "sw_power_cap+sw_thermal"


def test_an_unthrottled_kernel_runs_at_the_maximum_clock_with_no_reason():
    r, x = sustained("mma_tf32", "float32", 4096, "int09")
    trace = tm.Trace.from_kept(x["trace"])
    t = read_csv(LADDER / "tables" / "timings.csv")
    fp32 = t[(t.load == "sustained") & (t.variant == "tiled_guarded") & (t.m == 8192)].iloc[0]
    assert fp32.below_max_clock == 0 and fp32.sm_clock_mhz == 1980
    # the window is the GPU's but for one warm launch before each batch (four placements in
    # turn, measure/sustained.py): a duty of batch / (batch + 1) launches
    assert len(trace["t"]) > 100
    assert r.duty == pytest.approx(r.batch_size / (r.batch_size + 1), abs=0.015)
    assert r.duty > 0.98


def test_a_trace_survives_the_samples_file_and_the_progress_line_names_the_load():
    from mmbench.measure.runner import describe

    r, x = sustained("cublas", "float64", 8192)
    trace = tm.Trace.from_kept(x["trace"])
    again = tm.Trace.from_kept(trace.kept(since=0.0))
    for f in ("t", "sm", "power", "energy", "busy"):
        assert np.allclose(again[f], trace[f], atol=1e-3, equal_nan=True), f
    line = describe(r.to_dict())
    # the row's own figures, read from the recorded table: 3.22 s, 1620 MHz, 708.4 W
    assert "normal" in line and "sustained" in line and "settled after 3.2 s" in line
    assert "1620 MHz" in line and "708 W" in line and "global" not in line

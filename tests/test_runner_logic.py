"""The GPU-free parts of a measurement: inputs, the stopping rule, statistics, rows, progress
lines."""

import numpy as np
import pandas as pd
import pytest

from mmbench.core.axes import Configuration
from mmbench.core.row import COLUMNS, Row, error_row, ordered, upgraded
from mmbench.core.sampling import LOADS, load_of
from mmbench.measure.observers import ClockAfterSample, Observers
from mmbench.measure.oracle import make_inputs
from mmbench.measure.runner import describe
from mmbench.measure.samples import Samples, summarize
from mmbench.measure.sites import Kernel, Site
from mmbench.measure.stopping import enough
from mmbench.measure.timing import Sampling, launches_before_timed, measure

from .conftest import DATA, read_csv


def nvml_clock(mhz: float) -> Observers:
    """Observers with one NVML clock read after each sample, reading `mhz`."""
    return Observers(ClockAfterSample(lambda: mhz))


def conf(**kw):
    base = dict(
        variant="naive_guarded",
        params={"TILE": 16},
        dtype="float32",
        m=5,
        n=4,
        k=3,
        accumulate=False,
        memory="pinned",
        distribution="int09",
        seed=1,
    )
    return Configuration(**(base | kw))


def test_inputs_are_deterministic_and_shared_by_variants():
    a1, b1, c1 = make_inputs(conf())
    a2, b2, _ = make_inputs(conf(variant="tiled_guarded", params={"TILE": 32}, memory="pageable"))
    assert np.array_equal(a1, a2) and np.array_equal(b1, b2) and c1 is None
    assert a1.shape == (5, 3) and b1.shape == (3, 4) and a1.dtype == np.float32
    assert set(np.unique(a1)) <= set(range(10))
    a3, _, _ = make_inputs(conf(seed=2))
    assert not np.array_equal(a1, a3)


def test_input_distributions_and_accumulate():
    a, b, c0 = make_inputs(
        conf(dtype="float64", distribution="uniform", accumulate=True, m=50, n=50, k=50)
    )
    assert c0.shape == (50, 50) and a.dtype == np.float64
    assert 0 <= a.min() and a.max() < 1 and len(np.unique(a)) > 100
    ai, _, _ = make_inputs(conf(dtype="int32", m=100, n=100, k=100))
    assert ai.dtype == np.int32 and ai.min() == 0 and ai.max() == 9


def test_stopping_rule():
    s = Sampling(min_samples=5, max_samples=10, min_time_s=0.2, max_time_s=2.0)
    assert not enough([1.0] * 4, s)
    assert not enough([1.0] * 5, s)  # 5 ms < 0.2 s
    assert enough([50.0] * 5, s)
    assert enough([0.1] * 10, s)  # max_samples
    assert not enough([1000.0] * 2, s)  # slow kernel: still needs 3 samples
    assert enough([1000.0] * 3, s)  # ... then max_time stops it


def test_summarize():
    assert summarize([3.0, 1.0, 2.0]) == dict(median=2.0, min=1.0, max=3.0, q1=1.5, q3=2.5, iqr=1.0)
    assert np.isnan(summarize([])["median"])


def test_progress_line_from_a_recorded_row():
    df = upgraded(
        read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv", keep_default_na=False)
    )
    row = df[(df.variant == "naive_unguarded") & (df.m == 641)].iloc[0].to_dict()
    line = describe(row)
    assert line.startswith("naive_unguarded TILE=16 float32 641x641x641")
    assert "FAIL" in line and "first: 0:640:" in line


def test_sampling_loop_stops_by_the_rule_and_keeps_the_clock_read_after_each_pass():
    passes = iter([(0.5, 10.0, 0.25)] * 100)
    kernel = Kernel(lambda: next(passes), lambda: False, None, None, nvml_clock(1980.0))
    got = measure(kernel, LOADS["burst"], Sampling(min_samples=3, max_samples=100, min_time_s=0.05))
    assert got.kernel == [10.0] * 5  # 5 passes of 10.75 ms reach 0.05 s
    assert got.glob == [10.75] * 5 and got.clock == [1980.0] * 5
    cols = got.columns()
    assert (
        cols["samples"] == 5 and cols["kernel_ms_median"] == 10.0 and cols["h2d_ms_median"] == 0.5
    )
    # a 10 ms kernel is its own batch: no batched samples
    assert cols["batch_samples"] == 0 and got.kept() == {
        "kernel_ms": [10.0] * 5,
        "sm_clock_mhz": [1980.0] * 5,
    }


def test_a_row_is_the_configuration_axes_then_the_declared_columns():
    c = conf(variant="coarsened", params={"TILE": 32, "COARSEN": 4})
    axes = c.axes()
    assert axes["label"] == "coarsened TILE=32 COARSEN=4"
    assert axes["instance"] == "float32_TILE32_COARSEN4"
    assert axes["TILE"] == 32 and axes["COARSEN"] == 4 and "params" in axes
    row = Row(axes=axes, verification="PASS", kernel_ms_median=1.0).to_dict()
    assert row["kernel_ms_median"] == 1.0 and row["COARSEN"] == 4
    try:
        Row(axes=axes, not_a_column=1)
        raise AssertionError("an undeclared column was accepted")
    except TypeError:
        pass
    err = error_row(axes, "boom")
    assert err["verification"] == "ERROR" and err["samples"] == 0
    df = ordered(pd.DataFrame([row, err]))
    cols = list(df.columns)
    assert cols[:6] == ["variant", "label", "params", "instance", "TILE", "COARSEN"]
    assert [c for c in cols if c in COLUMNS] == COLUMNS
    assert Configuration.from_dict(c.as_dict()) == c


def test_a_groups_host_inputs_carry_its_tolerance_and_probes():
    """oracle.Inputs (drawn on the runner's inputs thread): the inputs of make_inputs, exactness
    and the tolerance of arith, and one Freivalds probe per vector; the sum has none."""
    from mmbench.measure.oracle import Inputs, nonnegative

    c = conf(m=40, n=30, k=20, accumulate=True)
    h = Inputs.draw(c, 2)
    a, b, c0 = make_inputs(c)
    assert np.array_equal(h.a, a) and np.array_equal(h.b, b) and np.array_equal(h.c0, c0)
    assert nonnegative(h.a, h.b, h.c0) and h.exact and h.gamma == 0.0 and len(h.probes()) == 2
    u = Inputs.draw(conf(m=40, n=30, k=20, distribution="uniform"), 1)
    assert not u.exact and len(u.probes()) == 1
    # Higham's gamma for k = 20 float32 products plus the two roundings of C0's addition and the
    # store, u = 2^-24 (by hand)
    assert u.gamma == pytest.approx(22 * 2**-24 / (1 - 22 * 2**-24), rel=1e-12)
    s = Inputs.draw(conf(m=40, n=30, k=30, operation="add"), 2)
    assert s.probes() == [] and s.exact and s.gamma == 0.0


def test_an_fp8_kernels_promotion_tightens_its_groups_bound():
    """FP8 inputs at k = 300 (int09, sums up to 300 * 81 = 24300 >= 2^14): a kernel that never
    moves the tensor cores' sums to FP32 is not expected exact (bound by hand: the wgmmas of
    ceil(300 / 128) = 3 k-tiles of 128, 3 * 128 / 32 = 12 instructions of 2^-13, and 3 FP32
    adds of 2^-23); one that moves them every 128 products
    is (128 * 81 = 10368 < 2^14, and 24300 < 2^24 in FP32).  The registry's persistent_fp8
    moves them every k-tile: 128 products, its BK (128 e4m3 values of one 128-byte row)."""
    from mmbench.core.registry import load_registry
    from mmbench.measure.oracle import Inputs

    c = conf(variant="persistent_fp8", params={"BM": 128, "BN": 64, "STAGES": 4, "CLUSTER": 1,
             "GROUP": 8}, dtype="float8_e4m3", m=8, n=8, k=300)  # fmt: skip
    never = Inputs.draw(c, 1)
    assert not never.exact
    assert never.gamma == pytest.approx((1 + 12 * 2**-13) * (1 + 3 * 2**-23) - 1, rel=1e-9)
    v = load_registry()["persistent_fp8"]
    every = Inputs.draw(c, 1, v.sums_promoted_every)
    assert every.exact and every.gamma == 0.0
    assert all(v.facts(p)["BK"] == v.sums_promoted_every == 128 for p in v.instantiations())


def test_the_passes_take_the_placements_in_turn():
    """Four placements, one 10 ms kernel each a little slower than the last: pass i runs on
    placement i mod 4, so the samples (and their interval) span all four."""
    used = []

    def on(p):
        def one_pass():
            used.append(p)
            return (0.5, 10.0 + p / 100, 0.25)

        return one_pass

    kernel = Kernel(
        on(0), lambda: False, None, None, nvml_clock(1980.0),
        more=[Site(on(p), None) for p in (1, 2, 3)],
    )  # fmt: skip
    got = measure(kernel, LOADS["burst"], Sampling(min_samples=6, max_samples=100, min_time_s=0.0))
    assert used == [0, 1, 2, 3, 0, 1]
    assert got.kernel == [10.0, 10.01, 10.02, 10.03, 10.0, 10.01]
    assert got.columns()["placements"] == 4 and got.kept()["placements"] == 4
    # one placement: as before, and the samples file does not say so
    one = Kernel(on(0), lambda: False, None, None, nvml_clock(1980.0))
    got = measure(one, LOADS["burst"], Sampling(min_samples=2, max_samples=100, min_time_s=0.0))
    assert got.columns()["placements"] == 1 and "placements" not in got.kept()


def test_the_noise_rule_stops_a_steady_long_kernel_early_and_keeps_a_noisy_one_going():
    from mmbench.measure.stopping import noise

    s = Sampling(min_samples=5, min_time_s=0.2, stop="noise", max_noise=0.005)
    steady = [10.0, 10.01, 9.99]  # 30 ms of GPU time, noise 0.06%: no minimum time asked
    assert noise(steady) < 0.001 and enough(steady, s)
    assert not enough(steady, Sampling(min_samples=5, min_time_s=0.2))  # count: 5 samples
    assert not enough(steady[:2], s)  # noise_min_samples first
    noisy = [100.0, 130.0, 80.0]
    assert not enough(noisy, s)  # 14% noise: keep sampling
    # the kernel-only samples decide when given: steady kernel, noisy transfers around it
    assert enough(noisy, s, kernel_ms=steady) and not enough(steady, s, kernel_ms=noisy)
    assert enough([1.0] * 100, s)  # max_samples still caps
    assert noise([5.0]) == float("inf")


def test_an_unknown_load_is_refused_with_the_valid_ones():
    # a load's name is resolved where it is read (Configuration.load_kind): one place refuses it
    with pytest.raises(ValueError, match="valid values: burst, sustained, flushed"):
        load_of("graph")


@pytest.mark.parametrize("load", ["sustained", "flushed"])
def test_a_sustained_load_needs_a_kernel_it_can_repeat(load):
    kernel = Kernel(lambda: (0.0, 1.0, 0.0), lambda: False, None, None)
    with pytest.raises(ValueError, match=f"load={load} runs the kernel back to back.*cold cache"):
        measure(kernel, LOADS[load], Sampling())


def test_the_profiled_launch_is_the_first_timed_one():
    # the verified pass, then warmup - 1 warm-up passes: Nsight Compute skips these
    assert launches_before_timed(Sampling(warmup=1)) == 1
    assert launches_before_timed(Sampling(warmup=3)) == 3
    assert launches_before_timed(Sampling(warmup=0)) == 1


def test_the_rows_kernel_time_is_the_median_of_a_burst_and_the_mean_of_a_sustained_load():
    """At the power limit the clock moves every ~70 ms: a sustained window's batches take
    bimodal times, and the row's time is their mean (the window's GPU time over its launches)."""
    times = [1.0] * 6 + [1.2] * 4  # median 1.0, mean 1.08
    for load, want in (("burst", 1.0), ("sustained", 1.08)):
        cols = Samples(load=LOADS[load], kernel=list(times)).columns()
        assert cols["kernel_ms"] == pytest.approx(want)
        assert cols["kernel_ms_median"] == 1.0 and cols["kernel_ms_mean"] == pytest.approx(1.08)


def test_the_stopping_rule_is_asked_after_each_sample_as_nvbench_asks_its_criterion():
    """Hand count: 30 ms samples under min_samples=5 and min_time 0.2 s stop after the 7th
    (7 x 30 = 210 ms, the first total at or above 200 ms); under the noise rule with
    noise_min_samples=3, three equal samples have no noise and stop at once."""
    from mmbench.measure.stopping import CountRule, NoiseRule, stopping_rule

    rule = stopping_rule(Sampling(min_samples=5, min_time_s=0.2))
    assert isinstance(rule, CountRule)
    taken = 0
    while not rule.done():
        rule.add(30.0)
        taken += 1
    assert taken == 7
    noise_rule = stopping_rule(Sampling(stop="noise", noise_min_samples=3, max_noise=0.005))
    assert isinstance(noise_rule, NoiseRule)
    for _ in range(3):
        assert not noise_rule.done()
        noise_rule.add(2.0, kernel_ms=1.0)
    assert noise_rule.done()


def test_inputs_are_drawn_once_per_run_and_read_back_bit_for_bit(tmp_path, monkeypatch):
    """The first job draws a group and keeps it; a later job maps the same bits read-only (for
    every element type, bfloat16's raw bytes included, and C0); an entry of another shape is
    drawn again; inside a SLURM job nothing is kept unless a folder is named."""
    from mmbench.measure.oracle import shared_inputs
    from mmbench.service import input_cache

    monkeypatch.setenv("MMBENCH_INPUTS_CACHE", str(tmp_path / "cache"))
    for c in (conf(m=64, n=48, k=32), conf(dtype="bfloat16", distribution="normal", m=40, n=30,
              k=20), conf(dtype="float64", accumulate=True, m=16, n=16, k=16)):  # fmt: skip
        fresh = make_inputs(c)
        first = shared_inputs(c, input_cache)
        again = shared_inputs(c, input_cache)
        for x, y, z in zip(fresh, first, again, strict=True):
            if x is None:
                assert y is None and z is None
                continue
            assert x.dtype == z.dtype and x.shape == z.shape
            assert x.tobytes() == z.tobytes()  # bit for bit
        assert isinstance(again[0], np.memmap) and not again[0].flags.writeable
    assert len(list((tmp_path / "cache").glob("*.npy"))) == 2 + 2 + 3
    # a kept file whose shape is not the configuration's is not read
    c = conf(m=64, n=48, k=32)
    stem = input_cache.key(c)
    np.save(tmp_path / "cache" / f"{stem}.a.npy", np.zeros((2, 2), np.uint32))
    a, _, _ = shared_inputs(c, input_cache)
    assert a.shape == (64, 32) and a.tobytes() == make_inputs(c)[0].tobytes()
    input_cache.clear()
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv("MMBENCH_INPUTS_CACHE")
    monkeypatch.setenv("SLURM_JOB_ID", "1")
    assert not input_cache.enabled()


def test_a_jobs_groups_are_drawn_ahead_into_the_cache_once_each(tmp_path, monkeypatch):
    """draw_ahead (a job's groups, drawn by a program of its own while the job waits for the
    GPU): two groups among three configurations are kept, each bit for bit what make_inputs
    draws, and the list file is gone.  A worker that needs a group while another holds its
    lock waits, then maps what the other kept rather than drawing it."""
    import threading

    from mmbench.measure import oracle
    from mmbench.service import input_cache, predraw

    monkeypatch.setenv("MMBENCH_INPUTS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    one, two = conf(m=64, n=48, k=32), conf(dtype="float64", m=40, n=30, k=20)
    proc = predraw.draw_ahead([one.as_dict(), two.as_dict(), one.as_dict()], processes=2,
                              vectors=2)  # fmt: skip
    assert proc.wait(timeout=120) == 0
    assert sorted(p.name.split(".", 1)[1] for p in (tmp_path / "cache").glob("*.npy")) == [
        "a.npy",
        "a.npy",
        "b.npy",
        "b.npy",
    ]
    # and each group's Freivalds probes (integers 0-9: exact, two vectors), the very probes
    # a worker computes with no cache at all (a SLURM job's)
    assert len(list((tmp_path / "cache").glob("*.probes2x.npz"))) == 2
    for c in (one, two):
        cached = oracle.Inputs.draw(c, 2, store=input_cache).probes()
        with monkeypatch.context() as m:
            m.setenv("SLURM_JOB_ID", "1")
            m.delenv("MMBENCH_INPUTS_CACHE")
            fresh = oracle.Inputs.draw(c, 2, store=input_cache)
            assert fresh.kept is None
            fresh = fresh.probes()
        for p, q in zip(cached, fresh, strict=True):
            assert p.x.tobytes() == q.x.tobytes() and p.expected.tobytes() == q.expected.tobytes()
            assert p.tolerance.tobytes() == q.tolerance.tobytes()
    # normal inputs (not exact: the bound kept too), kept by the first worker that needs them
    four = conf(distribution="normal", m=40, n=24, k=16)
    first = oracle.Inputs.draw(four, 1, store=input_cache).probes()
    assert len(list((tmp_path / "cache").glob("*.probes1r.npz"))) == 1
    again = oracle.Inputs.draw(four, 1, store=input_cache).probes()
    assert first[0].tolerance.tobytes() == again[0].tolerance.tobytes()
    assert (first[0].tolerance > 0).all()
    assert not list((tmp_path / "cache").glob("draw-*.json"))
    for c in (one, two):
        kept = input_cache.load(c, {"a": c.element.input.np_dtype, "b": c.element.input.np_dtype},
                                {"a": (c.m, c.k), "b": (c.k, c.n)})  # fmt: skip
        fresh = oracle.make_inputs(c)
        assert kept["a"].tobytes() == fresh[0].tobytes()
        assert kept["b"].tobytes() == fresh[1].tobytes()
    three = conf(m=24, n=16, k=8)
    drawn = oracle.make_inputs(three)
    got = []
    with input_cache.drawing(three):  # another drawer holds the group
        waiter = threading.Thread(
            target=lambda: got.append(oracle.shared_inputs(three, input_cache))
        )
        waiter.start()
        waiter.join(0.5)
        assert waiter.is_alive()  # it waits for the lock
        input_cache.keep(three, {"a": drawn[0], "b": drawn[1]})
        monkeypatch.setattr(oracle, "make_inputs", lambda c: 1 / 0)  # it must not draw
    waiter.join(10)
    assert got and got[0][0].tobytes() == drawn[0].tobytes()


# -- where a configuration's wall time goes (runner.Phases, lab/benchmarks/harness_phases.py) --------


def test_phases_split_wall_time_and_the_gpu_busy_time_of_their_passes(monkeypatch):
    """A hand-timed configuration: inputs 0 -> 2 ms, verified pass 2 -> 7 ms with 4 ms of GPU
    work, timed passes 7 -> 107 ms with 96 ms more (100 ms busy so far), inputs again 1 ms."""
    from mmbench.measure import runner

    clock = iter([0.000, 0.002, 0.007, 0.107, 0.108])
    monkeypatch.setattr(runner.time, "monotonic", lambda: next(clock))
    phases = runner.Phases()
    phases.mark("inputs")
    phases.mark("verified pass", 4.0)
    phases.mark("timed passes", 100.0)
    phases.mark("inputs")
    assert phases.kept() == {"inputs": [3.0, 0.0], "verified pass": [5.0, 4.0],
                             "timed passes": [100.0, 96.0]}  # fmt: skip


def test_a_flushed_batch_holds_a_quarter_of_the_launches_behind_the_blocking_kernel():
    """Hand count: a 0.2 ms launch fills sustained_batch_ms (100 ms) with 500 launches, which is
    batch_max (500); each flushed launch queues a memset, two event records and itself, so its
    batches hold 500 // 4 = 125; a 10 ms launch needs 10 under either."""
    from mmbench.measure.flushed import Flushed
    from mmbench.measure.sustained import Sustained

    s = Sampling()
    assert Sustained().batch_count(s, 0.2) == 500 and Flushed().batch_count(s, 0.2) == 125
    assert Sustained().batch_count(s, 10.0) == 10 == Flushed().batch_count(s, 10.0)

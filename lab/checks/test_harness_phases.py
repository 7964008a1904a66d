"""lab/benchmarks/harness_phases.py: where a run's wall time goes, read from recorded runs."""

from __future__ import annotations

import pandas as pd
import pytest

from .conftest import EVIDENCE as DATA
from .conftest import LAB, LAB_DATA


@pytest.fixture
def bench(monkeypatch):
    """lab/benchmarks/harness_phases.py as a module (the benchmarks are scripts, not a package)."""
    import importlib.util

    path = LAB / "benchmarks" / "harness_phases.py"
    monkeypatch.syspath_prepend(str(path.parent))  # its shared helper, _snakemake
    spec = importlib.util.spec_from_file_location("harness_phases", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_phases_benchmark_sums_host_time_over_every_samples_file(tmp_path, bench):
    """Two samples files, ids from a recorded run: host time is wall less GPU, summed by phase:
    placement 30 + 10 ms, timed passes (1000 - 990) + (500 - 480) ms; a record without phases
    (a run made before them) adds nothing."""
    from mmbench.core.tables import read_samples, write_samples

    recorded = read_samples(DATA / "compare" / "h100-b" / "runs" / "naive_guarded.samples.json.gz")
    ids = list(recorded)[:3]
    (tmp_path / "runs").mkdir()
    write_samples(tmp_path / "runs" / "a.samples.json.gz", [
        dict(id=ids[0], kernel_ms=[1.0], host_phases_ms={"placement": [30.0, 0.0],
                                                         "timed passes": [1000.0, 990.0]}),
        dict(id=ids[1], kernel_ms=[1.0])])  # fmt: skip
    write_samples(tmp_path / "runs" / "b.samples.json.gz", [
        dict(id=ids[2], kernel_ms=[1.0], host_phases_ms={"placement": [10.0, 0.0],
                                                         "timed passes": [500.0, 480.0]})])  # fmt: skip
    got = bench.host_phases(tmp_path)
    assert got == pytest.approx({"placement": 0.040, "timed passes": 0.030})


def test_the_phases_benchmark_counts_a_job_only_where_no_gpu_job_ran_beside_it(bench):
    """A Snakemake log recorded here (tests/data/phases/snakemake-overlap.log), read by hand from
    its stamps, seconds from 21:07:49: compiles 0-2, 2-4, 4-6; measurements 2-5, 6-9, 9-12; the
    timings table 12-14.  The GPU ran 2-5 and 6-12, so the compiles count 0-2 and 5-6 (3 s), the
    table 2 s, no render job."""
    stamped = bench.job_intervals(DATA / "phases" / "snakemake-overlap.log")
    t0 = min(a for _, a, _ in stamped)  # the stamps are seconds since the epoch
    jobs = [(r, a - t0, b - t0) for r, a, b in stamped]
    assert sorted((r, a, b) for r, a, b in jobs if r == "measure_variant") == [
        ("measure_variant", 2, 5), ("measure_variant", 6, 9), ("measure_variant", 9, 12)]  # fmt: skip
    assert len(jobs) == 8  # 3 compiles, 3 measurements, the table, all
    assert bench.beside_the_gpu(jobs) == {"compile": 3, "aggregate": 2, "render": 0}


def test_the_phases_benchmark_reads_a_recorded_runs_cores_from_its_log(bench, tmp_path):
    """A run read with --from was labelled "--cores 1" whatever it had been given.  The recorded
    ladder's Snakemake log says "Provided cores: 16" (line 22, read by hand); a folder without
    a log says nothing."""
    assert bench.provided_cores(LAB_DATA / "h200-ladder") == 16
    assert bench.provided_cores(tmp_path) is None


def test_the_phases_benchmark_counts_settling_with_the_passes(bench):
    """The ladder preset's target counts what its sampling rules keep the GPU busy: the passes
    (gpu_busy_ms) and, under sustained load, the settling before the windows (settle_s), which
    gpu_busy_ms leaves out.  By hand: bursts of 100 and 40 ms, a sustained row of 2000 ms of
    passes after 3 s of settling: 2.14 s of passes, 3 s of settling; a table without the column
    (older runs) settles nothing."""

    rows = pd.DataFrame({"gpu_busy_ms": [100.0, 40.0, 2000.0], "settle_s": [None, None, 3.0]})
    assert bench.sampling_busy(rows) == pytest.approx((2.14, 3.0))
    assert bench.sampling_busy(rows.drop(columns="settle_s")) == pytest.approx((2.14, 0.0))


def test_the_phases_benchmark_reads_a_run_resumed_over_several_calls(bench):
    """An earlier recorded ladder run (tests/data/h100-ladder-resumed: its logs and timings,
    2026-11-27 on an H100) went over three calls: the first was
    stopped at 12:41:09, two measurement jobs failing with it, the second found the lock, the
    third finished.  Read by hand from its logs: persistent_fp8's job ran 12:40:41 to 12:41:10
    (its error's stamp), cublaslt_fp8's 12:41:09 to 12:41:10; the first log finished 94 jobs
    and the last 19.  On one axis (seconds since the epoch) no job of the third call starts
    before the first call's last end.  The sustained windows' untimed time, by hand for
    tiled_guarded at 8192 (normal inputs): 25 batches of one launch of 124.6 ms, each after
    one warm launch: about 25 x 124.6 ms = 3.1 s of its 6.1 s window."""
    from datetime import datetime

    logs = bench.snakemake_logs(LAB_DATA / "h100-ladder-resumed")
    first, last = bench.job_intervals(logs[0]), bench.job_intervals(logs[-1])

    def at(hms: str) -> float:
        return datetime.strptime(f"2026-11-27 {hms}", "%Y-%m-%d %H:%M:%S").timestamp()

    measured = [(a, b) for r, a, b in first if r == "measure_variant"]
    assert (at("12:40:41"), at("12:41:10")) in measured  # persistent_fp8, failed with the stop
    assert (at("12:41:09"), at("12:41:10")) in measured  # cublaslt_fp8, failed with the stop
    assert len(first) == 94 + 2 and len(last) == 19
    assert max(b for _, _, b in first) <= min(a for _, a, _ in last)
    t = pd.read_csv(DATA / "h100-ladder-resumed" / "results" / "ladder" / "tables" / "timings.csv")
    row = t[(t.variant == "tiled_guarded") & (t.m == 8192) & (t.load == "sustained")
            & (t.distribution == "normal")]  # fmt: skip
    assert row.batch_size.iloc[0] == 1 and row.samples.iloc[0] == 25
    assert bench.window_rest(row) == pytest.approx(25 * 0.1246, rel=0.05)
    assert bench.window_rest(row.drop(columns="duty")) == 0.0  # a run before the windows


def test_the_phases_benchmark_splits_host_time_by_load_and_size(tmp_path, bench):
    """Three rows of the recorded ladder run, their host phases written by hand: a burst at
    4096 with 50 ms of inputs and 300 ms of timed passes of which 250 ms on the GPU (0.05 s
    outside, 0.05 s inside); a sustained row at 8192 with 20 + 10 ms outside and 5500 ms of
    passes of which 3000 on the GPU, after 2.0 s of settling and in a 3.0 s window 90% timed
    (2.5 - 2.0 - 0.3 = 0.2 s inside); a third row without phases, which counts nowhere."""

    from mmbench.core.row import config_id
    from mmbench.core.tables import write_samples

    t = pd.read_csv(DATA / "h200-ladder" / "results" / "ladder" / "tables" / "timings.csv")
    pick = t[(t.variant == "warptile_db") & (t.distribution == "normal")]
    burst = pick[(pick.m == 4096) & (pick.load == "burst")].iloc[[0]]
    steady = (
        pick[(pick.m == 8192) & (pick.load == "sustained")]
        .iloc[[0]]
        .assign(settle_s=2.0, window_s=3.0, duty=0.9)
    )
    other = pick[(pick.m == 31)].iloc[[0]]
    rows = pd.concat([burst, steady, other])
    (tmp_path / "runs").mkdir()
    write_samples(tmp_path / "runs" / "warptile_db.samples.json.gz", [
        dict(id=config_id(burst.iloc[0]), kernel_ms=[1.0],
             host_phases_ms={"inputs and reference": [50.0, 0.0],
                             "timed passes": [300.0, 250.0]}),
        dict(id=config_id(steady.iloc[0]), kernel_ms=[1.0],
             host_phases_ms={"placement": [20.0, 0.0], "wait for Freivalds": [10.0, 0.0],
                             "timed passes": [5500.0, 3000.0]}),
        dict(id=config_id(other.iloc[0]), kernel_ms=[1.0])])  # fmt: skip
    groups, most = bench.host_by_group(tmp_path, rows)
    assert set(groups) == {"burst 4096", "sustained 8192"}
    assert groups["burst 4096"] == pytest.approx(
        dict(configurations=1, outside_s=0.05, inside_s=0.05)
    )
    assert groups["sustained 8192"] == pytest.approx(
        dict(configurations=1, outside_s=0.03, inside_s=0.2)
    )
    assert [cid for cid, _ in most] == [config_id(burst.iloc[0]), config_id(steady.iloc[0])]


def test_the_host_split_by_load_and_size_agrees_with_the_rows_of_the_recorded_ladder(bench):
    """Two records of one run that the runner keeps apart: each configuration's phase stamps
    (samples files) and its row's wall time, GPU-busy time, settling and window (timings
    table).  On the recorded ladder run (an H200) every one of its 440 configurations has
    phases, and their host time, summed by load and size, is the rows' wall time less their
    sampling GPU time within 0.1% (61.51 against 61.56 s: the row's wall time also covers its
    last stamp to its end)."""

    res = DATA / "h200-ladder" / "results" / "ladder"
    t = pd.read_csv(res / "tables" / "timings.csv")
    groups, most = bench.host_by_group(res, t)
    assert sum(g["configurations"] for g in groups.values()) == len(t) == 440
    split = sum(g["outside_s"] + g["inside_s"] for g in groups.values())
    rows = (t.config_wall_ms.sum() - t.gpu_busy_ms.sum()) / 1e3
    rows -= t.settle_s.fillna(0).sum() + bench.window_rest(t)
    assert split == pytest.approx(rows, rel=1e-3)
    assert split < rows
    assert len(most) == 440 and most[0][1] >= most[-1][1]

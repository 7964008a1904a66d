"""Profiler parsers on real output (tests/data/profilers/README.md says where each is from)."""

import pandas as pd
import pytest

from mmbench.profile import profilers, roofline

from .conftest import DATA

P = DATA / "profilers"


@pytest.fixture(scope="module")
def mapping():
    return profilers.load_mapping()


def launch(name):
    (one,) = profilers.parse_ncu_raw((P / name).read_text())
    return one


def test_ncu_raw_is_parsed_with_units(mapping):
    naive = launch("ncu_raw_naive_unguarded_2048.csv")
    assert naive["Kernel Name"] == "naive_unguarded"
    assert naive["launch__registers_per_thread"] == (32.0, "register/thread")
    dur, unit = naive["gpu__time_duration.sum"]
    assert unit == "ns" and 1e6 < dur < 1e7  # a few ms


def test_ncu_rows_in_nvprof_units(mapping):
    rows = {
        r["metric"]: r
        for r in profilers.ncu_rows(
            launch("ncu_raw_tiled_unguarded_2048.csv"), mapping, "e3f", "2025.3.1"
        )
    }
    assert set(rows) == set(mapping["sets"]["e3f"])
    assert all(r["status"] == "ok" for r in rows.values())
    occ = rows["achieved_occupancy"]
    assert occ["unit"] == "ratio" and occ["value"] == pytest.approx(occ["raw_value"] / 100)
    assert 0 < occ["value"] <= 1
    util = rows["dram_utilization"]
    assert util["value"] == pytest.approx(util["raw_value"] / 10) and 0 <= util["value"] <= 10
    assert rows["duration"]["unit"] == "ms" and 1 < rows["duration"]["value"] < 10
    assert rows["shared_memory_per_block"]["value"] == 2 * 32 * 32 * 4
    assert rows["flop_count_sp"]["value"] == 2 * 2048**3  # one FFMA per multiply-add
    assert rows["shared_load_throughput"]["value"] > 0


def test_naive_kernel_has_no_shared_traffic(mapping):
    rows = {
        r["metric"]: r
        for r in profilers.ncu_rows(launch("ncu_raw_naive_unguarded_2048.csv"), mapping, "e3f", "x")
    }
    assert rows["shared_load_transactions"]["value"] == 0
    assert rows["shared_memory_per_block"]["value"] == 0
    assert rows["flop_count_dp"]["value"] == 0


def test_missing_metric_is_reported_not_guessed(mapping):
    naive = launch("ncu_raw_naive_unguarded_2048.csv")
    del naive["dram__bytes_read.sum"]
    rows = {r["metric"]: r for r in profilers.ncu_rows(naive, mapping, "e3f", "x")}
    assert (
        rows["dram_read_bytes"]["status"] == "unavailable"
        and "value" not in rows["dram_read_bytes"]
    )


def test_ncu_error_names_the_missing_metric():
    err = "==ERROR== Failed to find metric smsp__sass_data_bytes_mem_shared_op_ld.sum.per_second"
    assert profilers.ncu_missing_metrics(
        err, ["smsp__sass_data_bytes_mem_shared_op_ld.sum.per_second", "x__y"]
    ) == ["smsp__sass_data_bytes_mem_shared_op_ld.sum.per_second"]


def test_nsys_kernel_summary_after_progress_lines():
    rows = profilers.parse_nsys_stats((P / "nsys_cuda_gpu_kern_sum.csv").read_text())
    assert [r["name"] for r in rows] == ["main_kernel", "void reduce<float>(float*, int)"]
    assert rows[0]["total_time_ms"] == pytest.approx(0.1824)
    split = profilers.time_split_rows(
        rows,
        [
            dict(operation="[CUDA memcpy Host-to-Device]", total_time_ms=0.5),
            dict(operation="[CUDA memcpy DtoH]", total_time_ms=0.25),
        ],
        "nsys",
        "x",
    )
    assert {r["metric"]: r["value"] for r in split} == pytest.approx(
        {"time_kernel": 0.2, "time_memcpy_htod": 0.5, "time_memcpy_dtoh": 0.25}
    )


def test_e3f_table_and_roofline_from_recorded_metrics():
    metrics = pd.read_csv(P / "h200_metrics.csv")
    table = profilers.e3f_table(metrics)
    assert list(table.columns) == [
        "metric",
        "unit",
        "naive_unguarded TILE=32 N=2048",
        "tiled_unguarded TILE=32 N=2048",
    ]
    assert table.metric.iloc[0] == "duration"
    ceil = pd.DataFrame(
        [
            dict(
                gpu_name="NVIDIA H200",
                peak_fp32_gflops=56781.5,
                peak_fp64_gflops=33165.5,
                dram_bandwidth_gbs=4257.6,
            )
        ]
    )
    roof = roofline.table(metrics, ceil)
    assert list(roof.variant) == ["naive_unguarded", "tiled_unguarded"]
    tiled = roof.iloc[1]
    assert tiled.achieved_gflops > roof.iloc[0].achieved_gflops
    assert tiled.arithmetic_intensity == pytest.approx(tiled.flops / tiled.dram_bytes)
    assert tiled.bound == "compute" and 0 < tiled.fraction_of_attainable < 1


def test_a_profiled_run_takes_no_batched_samples():
    """The profiler's target times the passes only: batches of back-to-back launches (and their
    blocking kernel) would enter Nsight Systems' and CUPTI's activity tables."""
    from mmbench.core.sampling import batch_size
    from mmbench.profile.target import sampling_of

    for timed in (True, False):
        s = sampling_of({"sampling": {"batch_min_ms": 1.0}}, timed)
        assert batch_size(0.01, s) == 1

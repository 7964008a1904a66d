"""nvprof's GPU-activities table from CUPTI (mmbench/cupti.py) on activity records recorded on
an H100 (tests/data/profilers/cupti, see its README), and the profiler rows without CUPTI."""

import json

import pytest

from mmbench.profile import cupti, profiling
from mmbench.report import report_tables

from .conftest import DATA, read_csv

REC = DATA / "profilers" / "cupti"


def record(name):
    return json.loads((REC / f"{name}.json").read_text())


def test_activity_table_has_nvprofs_shape_kernel_and_copies():
    t = cupti.activity_table(
        record("main_naive_unguarded_float32_TILE32_2048x2048x2048")["records"]
    )
    assert list(t.columns) == ["Type", "Time(%)", "Time", "Calls", "Avg", "Min", "Max", "Name"]
    by = t.set_index("Name")
    # 4 warm-up and profiled launches, 1 to keep the GPU busy, 20 timed
    assert by.loc["naive_unguarded", "Calls"] == 25
    assert by.loc["[CUDA memcpy HtoD]", "Calls"] == 2  # A and B
    assert by.loc["[CUDA memcpy DtoH]", "Calls"] == 1  # C
    assert t["Time(%)"].sum() == pytest.approx(100)
    assert t.Name.iloc[0] == "naive_unguarded"  # sorted by total time, as nvprof
    k = by.loc["naive_unguarded"]
    assert k.Min <= k.Avg <= k.Max and k.Time == pytest.approx(k.Avg * k.Calls)
    assert 2.6 < k.Avg < 2.7  # ms, seed 002's kernel00 at 2048 on the H100


def test_cublas_kernels_are_found_by_the_registrys_pattern():
    rec = record("sizes_cublas_float32_8192x8192x8192")
    times = cupti.kernel_times(rec["records"], "regex:gemm|xmma|cutlass|sm90", 20)
    assert len(times) == 20 and 21 < sorted(times)[10] < 22
    assert cupti.kernel_times(rec["records"], "tiled_guarded", 20) == []


@pytest.mark.parametrize(
    "name",
    [
        "main_naive_unguarded_float32_TILE32_2048x2048x2048",
        "e3f_coarsened_float32_TILE32_COARSEN4_2048x2048x2048",
        "sizes_cublas_float32_4096x4096x4096",
        "sizes_tiled_guarded_float32_TILE32_8192x8192x8192",
    ],
)
def test_cupti_and_event_times_of_the_same_launches_agree_within_1pct_from_1ms(name):
    rows = {r["metric"]: r for r in cupti.rows(record(name), "13.0.1")}
    assert rows["cupti_kernel_time"]["value"] >= 1.0
    assert rows["cupti_over_event_time"]["value"] == pytest.approx(1, abs=0.01)


def test_short_kernels_differ_by_the_event_overhead():
    """Recorded, not hidden: at 0.055 ms the events add a few microseconds."""
    rows = {r["metric"]: r for r in cupti.rows(record("sizes_cublas_float32_1024x1024x1024"), "x")}
    assert 0.9 < rows["cupti_over_event_time"]["value"] < 0.99


def test_records_without_timestamps_are_left_out_and_said():
    rec = record("old_target_cublas_other_stream_4096")
    rows = cupti.rows(rec, "13.0.1")
    statuses = {r["metric"]: r["status"] for r in rows}
    assert statuses["gpu_activities"] == "incomplete: 20 records without timestamps"
    assert statuses["cupti_kernel_time"].startswith("incomplete: CUPTI timed 4 of the 20")
    t = cupti.activity_table(rec["records"])
    kern = t[t.Name.str.contains("gemm")].iloc[0]
    assert kern.Calls == 4 and kern.Min > 2.6


def test_report_tables_from_a_recorded_metrics_table():
    metrics = read_csv(REC / "e3f_metrics.csv")
    acts = report_tables.gpu_activities(metrics)
    assert len(acts) == 15  # 5 kernels x (kernel, HtoD, DtoH)
    assert set(acts.Name) >= {"[CUDA memcpy HtoD]", "[CUDA memcpy DtoH]", "tiled_guarded"}
    src = report_tables.kernel_time_sources(metrics)
    assert len(src) == 5 and src["CUPTI / events"].between(0.99, 1.01).all()
    none = report_tables.gpu_activities(None)
    assert none.CUPTI.tolist() == ["not collected: this run profiled nothing"]
    old = report_tables.kernel_time_sources(read_csv(DATA / "profilers" / "h200_metrics.csv"))
    assert old.CUPTI.iloc[0].startswith("not collected: this run's metrics table has no CUPTI")


def test_without_cupti_python_the_rows_say_so(tmp_path):
    pytest.importorskip("mmbench")
    try:
        import cupti as _  # noqa: F401

        pytest.skip("cupti-python is installed here")
    except ImportError:
        pass
    rows = profiling.cupti_rows(tmp_path)
    assert rows == [
        dict(
            metric="gpu_activities",
            tool="cupti",
            tool_version="",
            status="not collected: cupti-python is not installed (pip install '.[cupti]')",
        )
    ]


def test_the_cupti_run_is_made_where_a_table_of_the_run_shows_it(registry):
    """profile.cupti auto: by hand, config/config.yaml's report tables name gpu_activities and
    kernel_time_sources (so each profiled configuration runs under CUPTI too); the ladder
    preset's (ladder, ladder_profile, verification, device_properties, provenance) name
    neither, so its 21 profiled configurations skip that run; on and off (or true and false,
    as YAML reads a bare on/off in a file) decide it either way."""
    import yaml

    from mmbench.plan.config import validate
    from mmbench.plan.plan import cupti_wanted

    root = DATA.parents[1] / "config"
    default = yaml.safe_load((root / "config.yaml").read_text())
    ladder = yaml.safe_load((root / "presets" / "ladder.yaml").read_text())
    assert cupti_wanted(validate(default, registry)) is True
    assert cupti_wanted(validate(ladder, registry)) is False
    for value, wanted in (("on", True), (True, True), ("off", False), (False, False)):
        cfg = dict(ladder, profile=dict(ladder["profile"], cupti=value))
        assert cupti_wanted(validate(cfg, registry)) is wanted
        cfg = dict(default, profile=dict(cupti=value))
        assert cupti_wanted(validate(cfg, registry)) is wanted


def test_the_plan_knows_the_report_tables_drawn_from_cupti():
    """plan.CUPTI_TABLES (the plan may not import the report) names the tables the report's
    catalogue marks as drawn from CUPTI's records: by hand, gpu_activities and
    kernel_time_sources, the two E3b tables."""
    from mmbench.plan.plan import CUPTI_TABLES
    from mmbench.report.catalogue import OUTPUTS

    marked = {o.name for o in OUTPUTS.values() if o.cupti}
    assert marked == set(CUPTI_TABLES) == {"gpu_activities", "kernel_time_sources"}
    assert all(o.kind == "table" for o in OUTPUTS.values() if o.cupti)

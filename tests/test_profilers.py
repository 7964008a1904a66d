"""Profiler parsers on real output (tests/data/profilers/README.md says where each is from)."""

import gzip

import pandas as pd
import pytest

from mmbench.profile import profilers, roofline
from mmbench.service import programs

from .conftest import DATA, read_csv, recorded

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
    metrics = read_csv(P / "h200_metrics.csv")
    table = profilers.e3f_table(metrics)
    assert list(table.columns) == [
        "metric",
        "unit",
        "naive_unguarded TILE=32 N=2048",
        "tiled_unguarded TILE=32 N=2048",
    ]
    assert table.metric.iloc[0] == "duration"
    # the same rows as two element types at a product of one small side: a column each, named
    # by the whole product (a column per m alone merged FP32's and FP64's kernels)
    other = metrics.assign(dtype="float64", value=metrics.value * 2)
    both = pd.concat([metrics, other]).assign(m=21, n=4252, k=4592)
    wide = profilers.e3f_table(both).set_index("metric")
    assert "naive_unguarded TILE=32 21x4252x4592 float64" in wide
    mine = metrics[(metrics.metric == "duration") & (metrics.label == "naive_unguarded TILE=32")]
    assert wide.loc["duration", "naive_unguarded TILE=32 21x4252x4592 float64"] == pytest.approx(
        2 * mine.value.iloc[0]
    )
    assert len(wide.columns) == 1 + 4  # unit, two kernels in two types
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


# -- one Nsight Compute run for the whole profile section (profiling.*_batch, profile_batch.py) --
def test_the_batch_filter_names_the_marker_and_each_kernel_once():
    from mmbench.profile.profiling import kernel_filter

    got = kernel_filter(["naive_unguarded", "regex:gemm|xmma|cutlass|sm90", "naive_unguarded"])
    # by hand: the marker and each configuration's filter, anchored where it is a plain name
    assert got == "regex:(^mmbench_profile_marker$)|(^naive_unguarded$)|(gemm|xmma|cutlass|sm90)"
    import re

    expr = re.compile(got.removeprefix("regex:"))
    for name in ("mmbench_profile_marker", "naive_unguarded", "sm90_xmma_gemm_f32f32_tf32"):
        assert expr.search(name), name
    for name in ("naive_unguarded_x", "tiled_unguarded", "cupy_copy__float32_float32"):
        assert not expr.search(name), name


def batch_report(*names):
    """A batch's launches in the report's order: a marker launch opening each range, then the
    recorded launches of the kernels named (real Nsight Compute output, tests/data/profilers)."""
    launches = []
    for group in names:
        launches.append({"ID": str(len(launches)), "Kernel Name": "mmbench_profile_marker"})
        launches += [launch(f"ncu_raw_{n}_2048.csv") for n in group]
    return launches


def test_a_batch_report_gives_each_configuration_the_launch_of_its_range(mapping):
    """Two ranges: naive_unguarded's, then tiled_unguarded's.  Each configuration's rows are
    its own kernel's: the DRAM bytes read of the pipeline's own table of the same recording
    (h200_metrics.csv), not the other kernel's."""
    from mmbench.profile.profiling import batch_rows

    specs = {"a": {"kernel_name": "naive_unguarded"}, "b": {"kernel_name": "tiled_unguarded"}}
    done = [dict(stem="a", ranged=True, code=0), dict(stem="b", ranged=True, code=0)]
    rows = batch_rows(
        batch_report(["naive_unguarded"], ["tiled_unguarded"]),
        done, specs, mapping, "e3f", "2025.3.1",
    )  # fmt: skip
    recorded = read_csv(P / "h200_metrics.csv")
    for stem, variant in (("a", "naive_unguarded"), ("b", "tiled_unguarded")):
        got = {r["metric"]: r for r in rows[stem]}
        want = recorded[(recorded.variant == variant) & (recorded.metric == "dram_read_bytes")]
        assert got["dram_read_bytes"]["value"] == pytest.approx(float(want.value.iloc[0]))
        assert got["dram_read_bytes"]["tool_version"] == "2025.3.1"


def test_a_batch_report_whose_ranges_do_not_match_the_target_gives_no_rows(mapping):
    """Rows only where the report and the target agree: a range more or less than the target
    opened, and every configuration is profiled alone by its own job instead; a range whose
    result did not verify (exit code 4) or that holds no launch of its kernel gives none."""
    from mmbench.profile.profiling import batch_rows

    specs = {s: {"kernel_name": k} for s, k in
             (("a", "naive_unguarded"), ("b", "tiled_unguarded"), ("c", "naive_unguarded"))}  # fmt: skip
    report = batch_report(["naive_unguarded"], ["tiled_unguarded"])
    one_range_short = [dict(stem="a", ranged=True, code=0)]
    assert batch_rows(report, one_range_short, specs, mapping, "e3f", "v") == {}
    not_verified = [dict(stem="a", ranged=True, code=4), dict(stem="b", ranged=True, code=0)]
    assert set(batch_rows(report, not_verified, specs, mapping, "e3f", "v")) == {"b"}
    # "c" expects naive_unguarded, and its range holds tiled_unguarded's launch only
    wrong_kernel = [dict(stem="a", ranged=True, code=0), dict(stem="c", ranged=True, code=0)]
    assert set(batch_rows(report, wrong_kernel, specs, mapping, "e3f", "v")) == {"a"}
    # a configuration that never reached its range (it failed first) holds none of them
    skipped = [dict(stem="a", ranged=True, code=0), dict(stem="c", ranged=False, code=1),
               dict(stem="b", ranged=True, code=0)]  # fmt: skip
    assert set(batch_rows(report, skipped, specs, mapping, "e3f", "v")) == {"a", "b"}


BATCH = P / "h100_ladder_batch"


def test_the_ladders_batch_gives_each_library_configuration_a_stretch_of_its_own():
    """The ladder's 25 profiled configurations: 19 of the pipeline's kernels, each filtered by
    its own name, and 6 of the libraries' (cuBLAS, cuBLASLt: one expression for all their
    kernels).  A library range may hold no launch its filter names, so two of them never share
    a stretch of the report without a MARKER between them: five MARKERs at least (six library
    configurations, a hand count), and in no stretch two configurations that one kernel's
    launch could belong to (deep_bf16 runs persistent_bf16's kernel)."""
    import json

    from mmbench.core.registry import load_registry
    from mmbench.profile.profiling import batch_plan, stretches, told_apart

    ran = json.loads((BATCH / "batch-done.json").read_text())
    reg = load_registry()
    library = {"cublas", "cublas_tf32", "cublas_tf32_tn", "cublaslt_fp8"}
    for stems in (sorted(d["stem"] for d in ran), sorted(d["stem"] for d in ran)[::-1]):
        variants = [s.split("/")[0] for s in stems]
        filters = [reg[v].profile_kernel or v for v in variants]
        order, marks = batch_plan(filters)
        assert sorted(order) == list(range(25)) and not marks[0]
        assert 5 <= sum(marks) <= 6, marks
        ranged = [(filters[i], m) for i, m in zip(order, marks, strict=True)]
        for part in stretches(ranged):
            ran_as = [variants[order[k]] for k in part]
            assert sum(v in library for v in ran_as) <= 1, ran_as
            assert not {"deep_bf16", "persistent_bf16"} <= set(ran_as), ran_as
            for x in part:
                for y in part:
                    assert x == y or told_apart(ranged[x][0], ranged[y][0]), ran_as
    # two cuBLAS configurations with nothing between them cannot be told apart
    assert batch_plan(["regex:gemm|sm90", "regex:gemm|sm90"])[1] == [False, True]
    # nor one kernel of the pipeline's twice, with another between them
    assert batch_plan(["regex:^ws_f64(_split)?$", "regex:gemm", "ws_f64"])[1] == [
        False,
        False,
        True,
    ]


def test_a_batch_report_without_markers_between_library_ranges_gives_no_rows(mapping):
    """The H100 run of the ladder's batch, no range opened by a MARKER: its six library
    configurations share one stretch, so a cuBLAS launch there matches six filters and the
    report cannot say whose it is (had one of their ranges held no launch, the next one's would
    have been taken for it).  No configuration takes rows; each one's job profiles it alone."""
    import json

    from mmbench.profile.profiling import batch_rows

    ran = json.loads((BATCH / "batch-done.json").read_text())
    assert [d["marker"] for d in ran] == [False] * 25
    launches = profilers.parse_ncu_raw(
        gzip.decompress(recorded(BATCH / "ncu_raw.csv").read_bytes()).decode()
    )
    specs = {d["stem"]: {"kernel_name": d["kernel_name"]} for d in ran}
    assert batch_rows(launches, ran, specs, mapping, "ladder", "2025.3.1") == {}


MISSES = P / "h200_misses_batch"


def batch_page(folder):
    import json

    ran = json.loads((folder / "batch-done.json").read_text())
    launches = profilers.parse_ncu_raw(
        gzip.decompress(recorded(folder / "ncu_raw.csv").read_bytes()).decode()
    )
    return ran, launches


def test_each_configuration_takes_the_launch_of_its_range_where_ranges_hold_none(mapping):
    """The H200 batch of the FP32/FP64 misses (27 configurations, each library one in a
    stretch of its own): each configuration's group is the launch of its own range, told by the
    launch's grid, counted by hand from the tiles: warptile_db 64 x 256 at 5624 x 77 x 182 is
    (ceil(77/256), ceil(5624/64)) = (1, 88); warptile_db 64 x 64 at 312 x 197 x 924 with three
    k splits (4, 5 x 3); cutlass_f64 128 x 64 at 5624 x 77 x 182 (44, 2); cuBLAS's DGEMM with
    32 x 32 tiles at 312 x 197 x 924 (10, 7) and three splits; ws_f64 128 x 64 at 5624 x 77 x
    182 one 256-thread block per tile, (44 x 2)."""
    from mmbench.profile.profiling import batch_rows, split_by_config

    ran, launches = batch_page(MISSES)
    ranged = [(d["kernel_name"], d["marker"]) for d in ran if d["ranged"]]
    groups = split_by_config(launches, ranged)
    grids = {d["stem"]: [x["Grid Size"] for x in g] for d, g in zip(ran, groups, strict=True)}
    by_hand = {
        "warptile_db/float32_BM64_BN256_BK8_WM64_WN64_WNITER2_TM8_TN4_5624x77x182": "(1, 88, 1)",
        "warptile_db/float32_BM64_BN64_BK16_WM64_WN32_WNITER2_TM8_TN4_312x197x924": "(4, 15, 1)",
        "cutlass_f64/float64_BM128_BN64_5624x77x182": "(44, 2, 1)",
        "cutlass_f64/float64_BM128_BN128_312x197x924": "(3, 2, 1)",
        "cutlass_f64/float64_BM128_BN64_18x152x2881": "(1, 3, 1)",
        "cublas/float64_312x197x924": "(10, 7, 3)",
        "ws_f64/float64_BM128_BN64_WM64_WN32_STAGES4_BLOCKS2_5624x77x182": "(88, 1, 1)",
    }
    for stem, grid in by_hand.items():
        assert grids[stem] == [grid], stem
    assert all(len(g) == 1 for g in grids.values()), grids
    rows = batch_rows(launches, ran, {d["stem"]: d for d in ran}, mapping, "ladder", "v")
    assert len(rows) == 27


def test_a_range_that_held_no_launch_no_longer_gives_its_neighbours_launch_away(mapping):
    """The H200 batch whose rows did not hold (lab entry "Misses profiled at seed 755700"):
    cuBLAS at 18 x 152 x 2881 ran CUTLASS 2.x's Kernel2, which its filter then did not name, so
    its range held no launch, and warptile_db at 18 x 152 x 2881 was given the launch of
    312 x 197 x 924 (grid (4, 15): 5 x 64-row tiles in three k splits) while skinny_simt's
    float32 build took a float64 launch.  Its nine cuBLAS configurations shared one stretch:
    the split now gives no rows at all, and each job profiles its configuration alone."""
    from mmbench.profile.profiling import batch_rows, split_by_config

    ran, launches = batch_page(P / "h200_misses_batch_unmarked")
    assert [x["Grid Size"] for x in launches if x["Kernel Name"] == "warptile_db"] == [
        "(1, 88, 1)", "(3, 11, 1)", "(4, 15, 1)"
    ]  # fmt: skip
    ranged = [(d["kernel_name"], d["marker"]) for d in ran if d["ranged"]]
    assert split_by_config(launches, ranged) is None
    assert batch_rows(launches, ran, {d["stem"]: d for d in ran}, mapping, "ladder", "v") == {}


def test_a_filter_is_matched_to_the_function_name_as_nsight_compute_does():
    """Nsight Compute filters kernels by their function name (its kernel-name base, as its log's
    list of the kernels it saw prints them: Kernel2, DeviceReduceKernel, splitKreduce_kernel),
    while its report prints the demangled name."""
    from mmbench.core.registry import load_registry
    from mmbench.profile.profilers import function_name
    from mmbench.profile.profiling import matches

    ran, launches = batch_page(MISSES)
    names = [x["Kernel Name"] for x in launches]
    cutlass = next(n for n in names if "cutlass_80_simt_sgemm_64x64" in n)
    assert cutlass.startswith("void cutlass::Kernel2<") and function_name(cutlass) == "Kernel2"
    assert function_name("warptile_db") == "warptile_db"
    # the same names mangled (c++filt reads them back: cutlass::Kernel2<...>, warptile_db(...))
    assert (
        function_name("_ZN7cutlass7Kernel2I34cutlass_80_simt_sgemm_64x64_8x5_nnEEvNT_6ParamsE")
        == "Kernel2"
    )
    assert function_name("_Z11warptile_dbPKfS0_Pfiii") == "warptile_db"
    library = load_registry()["cublas"].profile_kernel
    assert matches(library, cutlass) and matches(
        library, "nvjet_sm90_tss_256x128_64x4_1x2_h_bz_coop"
    )
    for other in ("splitKreduce_kernel", "DeviceReduceKernel", "cupy_fill", "verify_float32"):
        assert not matches(library, other), other
    f64 = next(n for n in names if n.startswith("void cutlass::Kernel<"))
    assert matches(load_registry()["cutlass_f64"].profile_kernel, f64)
    assert not matches("regex:^ws_f64(_split)?$", f64)


def test_a_profile_job_with_the_batchs_rows_and_target_does_not_hold_the_gpu(tmp_path):
    """A profile job whose Nsight Compute rows and event-timed run the batch made (and no
    Nsight Systems): its rows are the batch's, the target's files are copied beside its reports,
    and it never asks for the GPU (hold raises here)."""
    import json

    from mmbench.profile.profiling import profile

    folder = tmp_path / "batch" / "targets" / "3"
    folder.mkdir(parents=True)
    (folder / "event.json").write_text(json.dumps(dict(event_kernel_ms=1.25, samples=20,
                                                       verified=True)))  # fmt: skip
    event = dict(metric="event_time", value=1.25, unit="ms", tool="cuda_events", status="ok")
    ncu_rows = [dict(metric="duration", value=1.3, unit="ms", tool="ncu", status="ok")]

    def hold():
        raise AssertionError("the GPU was asked for")

    spec = dict(metric_set="ladder", kernel_name="warptile")
    tools = dict(ncu="off", nsys="off", cupti=False)
    rows = profile(spec, tmp_path / "job", tools, hold, programs.Launch(), ncu_rows,
                   dict(event=event, folder=str(folder)))  # fmt: skip
    assert rows[0] == event and rows[1] == ncu_rows[0]
    assert json.loads((tmp_path / "job" / "event.json").read_text())["event_kernel_ms"] == 1.25


def test_launches_two_neighbours_filters_both_match_are_not_split(mapping):
    """Two library configurations in a row with no MARKER between them: the first launch
    matches both filters, so the report cannot say whose it is, and no rows are taken (each
    configuration's job then profiles it alone).  With a MARKER opening the second range they
    split."""
    from mmbench.profile.profiling import split_by_config

    sgemm = {"ID": "1", "Kernel Name": "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n"}
    dgemm = {"ID": "3", "Kernel Name": "sm90_xmma_gemm_f64f64_f64f64_f64_nn_n"}
    marker = {"ID": "2", "Kernel Name": "mmbench_profile_marker"}
    lib = "regex:gemm|xmma|cutlass|sm90"
    assert split_by_config([sgemm, dgemm], [(lib, False), (lib, False)]) is None
    assert split_by_config([sgemm, marker, dgemm], [(lib, False), (lib, True)]) == [
        [sgemm],
        [dgemm],
    ]
    # a range that held no launch of its kernel (it failed inside): the next one's launch
    # goes to the next configuration whose filter names it
    own = {"ID": "4", "Kernel Name": "ws_f64"}
    assert split_by_config([own], [("coarsened", False), ("ws_f64", False)]) == [[], [own]]


def test_a_configurations_batch_rows_are_kept_under_what_made_them(tmp_path):
    """The journal's key: the same cubin bytes at another path keep it; other bytes, another
    launch or another profiler version change it."""
    from mmbench.profile.profiling import batch_key

    one, same, other = (tmp_path / n for n in ("one.cubin", "same.cubin", "other.cubin"))
    one.write_bytes(b"\x7fELF kernel")
    same.write_bytes(b"\x7fELF kernel")
    other.write_bytes(b"\x7fELF kernel, edited")
    spec = dict(configuration={"variant": "naive_unguarded", "m": 2048}, kernel_name="k",
                warmup=3, metric_set="e3f")  # fmt: skip
    key = batch_key(spec | {"cubin": str(one)}, "launch1", "2025.3.1")
    assert batch_key(spec | {"cubin": str(same)}, "launch1", "2025.3.1") == key
    assert batch_key(spec | {"cubin": str(other)}, "launch1", "2025.3.1") != key
    assert batch_key(spec | {"cubin": str(one)}, "launch2", "2025.3.1") != key
    assert batch_key(spec | {"cubin": str(one)}, "launch1", "2025.3.2") != key
    assert batch_key(spec | {"cubin": None}, "launch1", "2025.3.1") != key


def test_one_nsight_compute_run_gave_each_ladder_rung_its_own_kernel():
    """The ladder's 23 profiles from one Nsight Compute run on an H100 (profile_ncu,
    profilers/h100_ladder_metrics.csv): each configuration's profiled launch lasted what CUDA
    events timed for the same configuration in the target's run without the profiler (within
    15%: the profiled launch is one, with clocks not locked), and the kernels' times span more
    than 50x (0.11 to 15.7 ms), so a launch given to the wrong configuration shows."""
    m = read_csv(P / "h100_ladder_metrics.csv", low_memory=False)
    keys = ["variant", "instance", "dtype"]
    t = m.pivot_table(index=keys, columns="metric", values="value", aggfunc="first")
    assert len(t) == 23  # the ladder preset's profiles at 4096 (its log: "23 of 23 profiled")
    assert (m[m.tool == "ncu"].status == "ok").all()
    ratio = t["duration"] / t["event_time"]
    assert ratio.between(0.85, 1.15).all(), ratio[~ratio.between(0.85, 1.15)]
    assert t["event_time"].max() / t["event_time"].min() > 50
    # by hand from the table: tiled_guarded 15.67 ms by events, the slowest rung
    assert t["event_time"].idxmax()[0] == "tiled_guarded"


def test_a_profile_that_caught_no_launch_names_the_kernels_the_target_ran():
    """Nsight Compute's log where cuBLAS's filter named none of its kernels (H200, bfloat16
    at 18 x 152 x 2881): the kernels it lists, in its order, for the metrics row's reason."""
    from mmbench.profile.profiling import launched

    seen = launched(P / "ncu_no_kernels_profiled.log")
    assert len(seen) == 9 and seen[2] == "Kernel2" and seen[-1] == "verify_float32"
    assert launched(P / "ncu_raw_naive_unguarded_2048.csv") == []


def test_a_launch_whose_grid_is_not_the_one_its_configuration_launched_gives_no_rows(mapping):
    """The target says the grid each configuration launched (its row's `grid`); a report's
    launch with another grid is not that configuration's (a split that went wrong), and it
    takes no rows from it.  The H200 misses batch, with each own kernel's grid counted by hand
    from its tiles (warptile_db 64 x 64 at 312 x 197 x 924: 4 column tiles, 5 row tiles in
    three k splits), a library's not known (0x0x0): every configuration keeps its rows; told
    the grid of the 18 x 152 x 2881 build instead, that configuration alone loses them."""
    from mmbench.profile.profiling import batch_rows, same_grid

    ran, launches = batch_page(MISSES)
    stem = "warptile_db/float32_BM64_BN64_BK16_WM64_WN32_WNITER2_TM8_TN4_312x197x924"
    told = [dict(d, grid="4x15x1" if d["stem"] == stem else "0x0x0") for d in ran]
    specs = {d["stem"]: d for d in ran}
    assert len(batch_rows(launches, told, specs, mapping, "ladder", "v")) == 27
    wrong = [dict(d, grid="3x11x1") if d["stem"] == stem else d for d in told]
    rows = batch_rows(launches, wrong, specs, mapping, "ladder", "v")
    assert len(rows) == 26 and stem not in rows
    assert same_grid("", "(3, 11, 1)") and same_grid("0x0x0", "(3, 11, 1)")
    assert not same_grid("3x11x1", "(4, 15, 1)") and same_grid("132x1x1", "(132, 1, 1)")

"""What the recorded runs of the lab notebook show, read as data (lab/data, compressed): two
sustained runs within 1%, the held pass's effect on pageable and pinned passes, the steps
measured side by side on H200s, the recorded ladder's figures.  Each test's docstring names the
entry and the figures it checks; none runs pipeline code the product's tests do not."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import gmean

from .conftest import EVIDENCE as DATA
from .conftest import LAB, ROOT, compare_times, memory_modes, open_text, read_csv, read_text

LADDER = DATA / "h200-ladder" / "results" / "ladder" / "tables"
PAIR = DATA / "h100-sustained-pair"
# the ladder run of 2026-11-23 and its sustained configurations measured again right after
AGAIN = DATA / "h100-ladder-again"


def test_two_sustained_runs_on_normal_inputs_agree_within_one_percent_or_two():
    """The ladder's normal-input, sustained configurations at 4096 and 8192 measured again
    right after the ladder run (lab/gpu.sh ladder again), on the same H100: 33 of 36 agree
    within 1% (the issue's target); three, each a few milliseconds or less, differ by 1.3-1.7%
    (recorded as measured: the target is missed for them in this run)."""
    timings = read_csv(AGAIN / "first" / "timings.csv")
    again = read_csv(AGAIN / "again" / "timings.csv")
    key = ["variant", "instance", "dtype", "m", "n", "k", "distribution", "load"]
    first = timings[(timings.load == "sustained") & (timings.distribution == "normal")]
    both = first.merge(again, on=key, suffixes=("", "_again"))
    assert len(both) == 36  # 15 rungs and 3 references, at 4096 and 8192
    off = abs(both.kernel_ms_median_again / both.kernel_ms_median - 1)
    assert off.max() < 0.02
    beyond = sorted(zip(both.variant[off >= 0.01], both.m[off >= 0.01], strict=True))
    assert beyond == [("cublas_tf32", 8192), ("mma_f64", 4096), ("wgmma_tf32", 4096)]


def test_two_sustained_runs_agree_within_one_percent_in_their_window_means():
    """The same 36 configurations run twice on one H100 with the code that takes a sustained
    row's kernel_ms as the window's mean (lab/gpu.sh ladder pair_a, then pair_b): every
    configuration within 1%, the largest 0.78%; the medians of the same samples were up to 1.93%
    apart (cuBLAS TF32 at 4096, its clock moving between 1335 and 1605 MHz within a second)."""
    a, b = (read_csv(PAIR / x / "timings.csv") for x in "ab")
    for t in (a, b):
        assert set(t.load) == {"sustained"} and set(t.distribution) == {"normal"}
        assert (t.kernel_ms == t.kernel_ms_mean).all()
        flops = 2.0 * t.m * t.n * t.k
        assert (abs(flops / (t.kernel_ms * 1e6) / t.kernel_gflops - 1) < 1e-9).all()
    key = ["variant", "instance", "dtype", "m"]
    both = a.merge(b, on=key, suffixes=("_a", "_b"))
    assert len(both) == 36
    mean = abs(both.kernel_ms_b / both.kernel_ms_a - 1)
    median = abs(both.kernel_ms_median_b / both.kernel_ms_median_a - 1)
    assert mean.max() < 0.01 < median.max()
    ok = compare_times(PAIR / "a" / "timings.csv", PAIR / "b" / "timings.csv", "1")
    assert (
        ok.returncode == 0 and "largest deviation 0.78%" in ok.stdout and "0 beyond 1%" in ok.stdout
    )
    strict = compare_times(PAIR / "a" / "timings.csv", PAIR / "b" / "timings.csv", "0.5")
    assert strict.returncode == 1, strict.stdout[-500:]


def test_batches_queued_ahead_ran_slower_than_batches_queued_alone():
    """The recorded pair behind measure/burst.py's note (tests/data/queued-ahead, one H100, one
    run after the other): every burst's batched median at 1, 31 and 33 is slower with the next
    batch queued while one runs, by 1.4% at least and 6.7% at the median, while NVML read the
    same 1980 MHz in both.  Counted here from the two tables."""
    import csv
    import statistics

    key = ("variant", "params", "dtype", "m", "distribution")
    runs = []
    for name in ("before", "after"):
        with open_text(DATA / "queued-ahead" / name / "timings.csv") as fh:
            runs.append({tuple(r[c] for c in key): r for r in csv.DictReader(fh)
                         if r["load"] == "burst"})  # fmt: skip
    before, after = runs
    assert set(before) == set(after) and len(before) == 18
    ratio = [float(after[c]["batch_ms_median"]) / float(before[c]["batch_ms_median"])
             for c in before]  # fmt: skip
    assert min(ratio) > 1.014 and 1.06 < statistics.median(ratio) < 1.07
    assert {before[c]["sm_clock_mhz"] for c in before} == {after[c]["sm_clock_mhz"] for c in after}
    assert all(r["verification"] == "PASS" for t in runs for r in t.values())


def test_freivalds_checks_at_8192_ran_six_times_faster_with_one_blas_thread():
    """The ladder preset whole before and after the processes that check and draw ran one BLAS
    thread each (measure/freivalds.py BLAS_THREADS): the H100 ladder of 06:17 (default pools,
    16 threads each, tests/data/h100-ladder-0617) against an H200 one (tests/data/phases/
    h200-ladder-timings.csv; the same 132-SM chip, its host another machine's).  The 100
    configurations at 8192 took a median 496.5 ms for their check, and 81.1 ms; the whole run's
    checks 80.2 s and 11.9 s.  Counted here from the two tables; every row verified."""
    import statistics

    before = read_csv(DATA / "h100-ladder-0617" / "timings.csv")
    after = read_csv(DATA / "phases" / "h200-ladder-timings.csv")
    assert set(before.gpu_name) == {"NVIDIA H100 80GB HBM3"} and set(after.gpu_name) == {
        "NVIDIA H200"}  # fmt: skip
    medians = [statistics.median(t.freivalds_ms[t.m == 8192]) for t in (before, after)]
    assert [len(t[t.m == 8192]) for t in (before, after)] == [100, 100]
    assert 496 < medians[0] < 497 and 81 < medians[1] < 81.2
    assert medians[0] / medians[1] > 6
    assert (
        80 < before.freivalds_ms.sum() / 1e3 < 80.5 and 11.8 < after.freivalds_ms.sum() / 1e3 < 12
    )
    assert set(after.verification) == {"PASS"} and len(after) == 440
    # the H200 ran the H100's tuning (config tuned_gpu): every row of a rung the table tunes
    # says so, and the rest (deep_bf16, one instantiation; the libraries) nothing
    rungs = set(read_csv(ROOT / "kernels" / "tuned.csv").variant)
    said = after.tuned_for.fillna("").str.startswith("tuned on NVIDIA H100 80GB HBM3")
    assert (said == after.variant.isin(rungs)).all() and said.sum() > 300


def test_held_passes_made_the_ladders_short_batches_longer():
    """docs/method.md, the held pass's cost: the ladder preset on an H200 before it (0fcd71b's
    code, tests/data/phases/h200-ladder*) and after it (45ad733's, another H200,
    the recorded ladder, tests/data/h200-ladder).  SGEMM at 1 x 1 x 1: its single launch 0.0190 ms,
    then 0.0056 (the host's launch no longer in it), so its batches, sized from it, grew from 53
    launches (0.23 ms of GPU time) to 180 (0.74 ms); in all bursts 1.12 M launches in batches
    became 2.62 M, 12.5 s of batched GPU time 20.6 s, and the wall time of the bursts at 1, 31
    and 33 grew by 23.5 s, of all bursts by 30.3 s; the run's wall time over its sampling GPU
    time 1.16, then 1.21."""
    before = read_csv(DATA / "phases" / "h200-ladder-timings.csv")
    after = read_csv(LADDER / "timings.csv")
    key = ["variant", "instance", "dtype", "m", "n", "k", "distribution", "load"]
    both = before.merge(after, on=key, suffixes=("_b", "_a"))
    assert len(both) == 440
    bursts = both[both.load == "burst"]
    sgemm = bursts[(bursts.variant == "cublas") & (bursts.dtype == "float32") & (bursts.m == 1)
                   & (bursts.distribution == "int09")].iloc[0]  # fmt: skip
    assert (round(sgemm.kernel_ms_b, 4), round(sgemm.kernel_ms_a, 4)) == (0.0190, 0.0056)
    assert (sgemm.batch_size_b, sgemm.batch_size_a) == (53, 180)
    tiny = bursts[bursts.m.isin([1, 31, 33])]
    cublas = tiny[tiny.variant == "cublas"]
    assert (cublas.batch_size_b.median(), cublas.batch_size_a.median()) == (25, 143)
    gpu = [round(sgemm[f"batch_size_{x}"] * sgemm[f"batch_ms_median_{x}"], 2) for x in "ba"]
    assert gpu == [0.23, 0.74]
    for x, launches, seconds in (("b", 1_123_000, 12.5), ("a", 2_615_900, 20.6)):
        count = bursts[f"batch_samples_{x}"] * bursts[f"batch_size_{x}"]
        assert count.sum() == launches
        assert round((count * bursts[f"batch_ms_median_{x}"]).sum() / 1e3, 1) == seconds
    grew = bursts.config_wall_ms_a - bursts.config_wall_ms_b
    assert round(grew[tiny.index].sum() / 1e3, 1) == 23.5
    assert round(grew.sum() / 1e3, 1) == 30.3
    added = tiny.batch_samples_a * tiny.batch_size_a - tiny.batch_samples_b * tiny.batch_size_b
    per_launch_us = 1e3 * grew[tiny.index].groupby(tiny.variant).sum() / added.groupby(
        tiny.variant).sum()  # fmt: skip
    assert (round(per_launch_us.min()), round(per_launch_us.max())) == (8, 31)
    ratios = [json.loads(read_text(p))["ratio"] for p in (
        DATA / "phases" / "h200-ladder.json", DATA / "phases" / "h200-ladder-sts.json")]  # fmt: skip
    assert [round(r, 2) for r in ratios] == [1.16, 1.21]


def test_the_main_command_beside_the_issues_code_on_one_h200_within_one_percent():
    """Issue 41's check, recorded (tests/data/phases/h200-main-pair*): the main command with
    a05b4dd's code, then with 5d55a65's, one after the other on one H200 (GPU-601ce105).  Every
    configuration's kernel time within 1% (the largest 0.09%), the wall time 1.13 x the GPU-busy
    time against 1.34.  The same old code on another H200 (GPU-d9c94814) against the new run:
    24 of 88 beyond 1%, the machines' difference, which is why the pair is on one machine."""
    phases = DATA / "phases"
    new, old, other = (phases / f"h200-main-{x}-timings.csv"
                       for x in ("pair", "pair-old", "old-other-machine"))  # fmt: skip
    uuids = [set(read_csv(t).gpu_uuid) for t in (new, old, other)]
    assert uuids[0] == uuids[1] == {"GPU-601ce105-c294-3955-42bd-437ed6d688c8"} != uuids[2]
    split = {x: json.loads(read_text(phases / f"h200-main-{x}.json")) for x in ("pair", "pair-old")}
    assert [split[x]["configurations"] for x in split] == [88, 88]
    assert split["pair"]["wall_s"] <= 1.15 * split["pair"]["gpu_busy_s"]
    assert split["pair-old"]["wall_s"] > 1.3 * split["pair-old"]["gpu_busy_s"]
    same = compare_times(old, new, "1")
    assert same.returncode == 0, same.stdout[-500:]
    assert "88 configurations in both" in same.stdout and "largest deviation 0.09%" in same.stdout
    assert "0 beyond 1%" in same.stdout
    across = compare_times(other, new, "1")
    assert across.returncode == 1 and "24 beyond 1%" in across.stdout, across.stdout[-500:]


def test_the_default_experiment_beside_the_issues_code_on_one_h200():
    """The default experiment with a05b4dd's code and then 5d55a65's on one H200 (GPU-8ea5a1b4,
    tests/data/phases/h200-default-pair*): 48.5 s against 73.8 s for the same 20.0 s of GPU
    work.  Its short kernels' single-launch medians moved between the two runs (the pinned rows
    within 6.1%, the pageable ones up to 36.5%); their batched medians within 1.58%, 2 of 82
    beyond 1% (docs/method.md says so)."""
    phases = DATA / "phases"
    split = {x: json.loads(read_text(phases / f"h200-default-{x}.json")) for x in ("pair", "pair-old")}  # fmt: skip
    assert 48 < split["pair"]["wall_s"] < 49 and 73 < split["pair-old"]["wall_s"] < 74
    assert all(19.9 < s["gpu_busy_s"] < 20.1 and s["configurations"] == 116 for s in split.values())
    new, old = (read_csv(phases / f"h200-default-{x}-timings.csv") for x in ("pair", "pair-old"))
    assert set(new.gpu_uuid) == set(old.gpu_uuid) == {"GPU-8ea5a1b4-5bf9-4e4a-6992-1fcb457114a6"}
    both = old.merge(new, on=["variant", "params", "dtype", "m", "memory"], suffixes=("_o", "_n"))
    assert len(both) == 116
    apart = (both.kernel_ms_n / both.kernel_ms_o - 1).abs().groupby(both.memory).max()
    assert 0.06 < apart["pinned"] < 0.061 and 0.365 < apart["pageable"] < 0.366
    batched = both.dropna(subset=["batch_ms_median_o", "batch_ms_median_n"])
    moved = (batched.batch_ms_median_n / batched.batch_ms_median_o - 1).abs()
    assert len(batched) == 82 and 0.0158 < moved.max() < 0.0159 and (moved > 0.01).sum() == 2


def test_a_pageable_pass_counted_the_hosts_launch_in_a_short_kernels_time_before_the_hold():
    """docs/method.md's mended limit, from the tables recorded before it: after a pageable copy (which
    returns to the host near its end) the kernel segment holds the host's launch, after a
    pinned one (queued behind the running copy) it does not.  In the default experiment on one
    H200 cuBLAS's pageable rows are 20-63 us above its pinned ones (+116% at 641, +17.5% at
    2048); its batched medians, queued behind the blocking kernel, lie below both.  In the main
    command (kernels of 20 ms and more) the two modes agree within 0.9%."""
    pageable, pinned = memory_modes(read_csv(DATA / "phases" / "h200-default-pair-timings.csv"))
    pg = pageable.xs("cublas", level="variant")
    pn = pinned.xs("cublas", level="variant")
    gap_us = ((pg.kernel_ms - pn.kernel_ms) * 1e3).droplevel(["params", "dtype"])
    assert 19.8 < gap_us.min() < 20 and 63 < gap_us.max() < 63.2 and len(gap_us) == 4
    ratio = (pg.kernel_ms / pn.kernel_ms).droplevel(["params", "dtype"])
    assert 2.16 < ratio[641] < 2.17 and 1.17 < ratio[2048] < 1.18
    assert (pn.batch_ms_median < pn.kernel_ms).all() and (pg.batch_ms_median < pn.kernel_ms).all()
    for name in ("main-pair", "main-pair-old"):
        pageable, pinned = memory_modes(read_csv(DATA / "phases" / f"h200-{name}-timings.csv"))
        apart = (pageable.kernel_ms / pinned.kernel_ms - 1).abs()
        assert len(apart) == 44 and apart.max() < 0.009 and pinned.kernel_ms.min() > 20


def test_a_held_pass_times_a_short_kernel_alike_after_pageable_and_pinned_copies():
    """The mend (each timed pass's kernel held behind the blocking kernel until its launch is
    queued), from the default experiment recorded with it on an H200: every kernel's pageable
    `kernel_ms` within 0.4% of its pinned one (up to 2.16 times before), cuBLAS at 641 0.0261
    against 0.0260 ms; the seed's four FAIL rows and nothing else failed."""
    t = read_csv(DATA / "phases" / "h200-default-held-timings.csv")
    assert list(t.gpu_uuid.unique()) == ["GPU-742d5d88-91e2-9768-0131-704cecf3d336"]
    assert (t.verification != t.expected).sum() == 0 and (t.verification == "FAIL").sum() == 4
    pageable, pinned = memory_modes(t)
    ratio = (pageable.kernel_ms / pinned.kernel_ms).dropna()
    assert len(ratio) == 58 and 0.997 < ratio.min() and ratio.max() < 1.0041
    cublas = ratio.xs("cublas", level="variant").droplevel(["params", "dtype"])
    assert abs(cublas[641] - 1) < 0.003
    pageable, pinned = memory_modes(read_csv(DATA / "phases" / "h200-default-pair-timings.csv"))
    old = (pageable.kernel_ms / pinned.kernel_ms).dropna()
    assert old.max() > 2.16 and (old > 1.0041).sum() > 40


def test_warptile_dbs_serpentine_ffmas_on_two_h200s():
    """docs/ladder.md, the serpentine FFMA order: side by side x0.955 at 4096 and 8192 (95%
    intervals inside x0.9535-x0.956), all PASS; sustained, normal inputs, SGEMM in the same run:
    94.2% and 98.5% of SGEMM before, 98.7% and 102.8% after (one H200), and the FP32 part of the
    ladder preset on another H200: 98.8% and 102.7%, 36 of 36 PASS."""
    folder = DATA / "h200-fp32-serpentine"
    paired = read_csv(folder / "paired-compare.csv")
    large = paired[paired.m >= 4096]
    assert len(large) == 4 and (large.verdict == "FASTER").all()
    assert (large.ratio_low > 0.9535).all() and (large.ratio_high < 0.956).all()
    assert ((paired.base_verification == "PASS") & (paired.this_verification == "PASS")).all()

    def share(name):  # % of SGEMM per size, normal inputs, sustained
        t = read_csv(folder / f"{name}.csv")
        t = t[(t.load == "sustained") & (t.distribution == "normal")].set_index(["variant", "m"])
        return (100 * t.kernel_ms.xs("cublas") / t.kernel_ms.xs("warptile_db")).round(1)

    assert share("sustained-before").tolist() == [94.2, 98.5]
    assert share("sustained-after").tolist() == [98.7, 102.8]
    assert share("timings").tolist() == [98.8, 102.7]
    ladder = read_csv(folder / "ladder.csv").set_index("rung")
    assert ladder.loc["warptile_db", ["4096: % of ref", "8192: % of ref"]].tolist() == [98.8, 102.7]
    per_watt = ladder["4096: GFLOP/s per W"]
    assert per_watt["warptile_db"] > per_watt["cublas"]
    assert (read_csv(folder / "timings.csv").verification == "PASS").sum() == 36
    assert read_text(folder / "memcheck.log").count("ERROR SUMMARY: 0 errors") == 22


def test_shared_memory_as_shared_side_by_side_on_an_h200():
    """docs/ladder.md, align_1024_shared: with LDS and STS the tmastore rungs ran faster at 4096
    and 8192 (x0.980-x0.991) and at 1000 x 1100 x 37 (x0.91, x0.925), ws_f64 slower at 4096
    and 8192 (x1.009-x1.040); every row of both builds PASS.  So ws_f64 kept align_1024."""
    folder = DATA / "h200-lds-sts"

    def ratios(v):
        t = read_csv(folder / f"{v}-compare.csv")
        assert ((t.base_verification == "PASS") & (t.this_verification == "PASS")).all()
        assert len(t) == 6
        return t.set_index(["m", "distribution"])

    for v in ("tmastore_tf32_tn", "tmastore_bf16"):
        t = ratios(v)
        assert (t.verdict == "FASTER").all()
        large = t.loc[[4096, 8192]]
        assert (large.ratio_high < 0.992).all() and (large.ratio_low > 0.978).all()
    f64 = ratios("ws_f64")
    assert (f64.loc[[4096, 8192]].verdict == "SLOWER").all()
    assert f64.loc[(4096, "int09"), "ratio_low"] > 1.039


def test_shared_memory_as_shared_under_sustained_load_and_memcheck_on_an_h200():
    """docs/ladder.md, align_1024_shared under sustained load (normal inputs, one H200,
    GPU-d255f6f5; lab/gpu.sh builds before/after): the two tmastore rungs x0.990-x0.997, the
    cuBLAS references in the same runs within 0.3%; after it TF32 98.8% and 98.3% of cuBLAS
    TF32, bfloat16 97.7% and 100.0% of cuBLAS.  compute-sanitizer memcheck of the first and the
    tuned instantiations at 129 x 1001 x 3001 and 3001 x 3001 x 1000: 12 runs, 0 errors."""
    folder = DATA / "h200-lds-sts"

    def sustained(name):
        t = read_csv(folder / f"sustained-{name}.csv")
        assert set(t.verification) == {"PASS"} and len(t) == 16
        assert set(t.gpu_uuid) == {"GPU-d255f6f5-030b-daa3-748b-52b2aa0dcd35"}
        t = t[(t.load == "sustained") & (t.distribution == "normal")]
        return t.set_index(["variant", "m"]).kernel_ms

    before, after = sustained("before"), sustained("after")
    ratio = (after / before).round(4)
    rungs = ratio[["tmastore_tf32_tn", "tmastore_bf16"]]
    assert (rungs < 0.998).all() and (rungs > 0.989).all(), rungs
    refs = ratio[["cublas", "cublas_tf32"]]
    assert ((refs - 1).abs() < 0.003).all(), refs
    share = (100 * after.xs("cublas_tf32") / after.xs("tmastore_tf32_tn")).round(1)
    assert share.tolist() == [98.8, 98.3]
    share = (100 * after.xs("cublas") / after.xs("tmastore_bf16")).round(1)
    assert share.tolist() == [97.7, 100.0]
    log = read_text(folder / "memcheck.log")
    assert log.count("ERROR SUMMARY: 0 errors") == 12 and "ERROR SUMMARY: 1" not in log


def limiters(path) -> pd.Series:
    """A ladder_profile table's limiter column, indexed by the rung's name (its parameters
    dropped)."""
    profile = read_csv(path)
    return profile.set_index(profile.rung.str.split().str[0])["limiter (Nsight Compute)"]


def test_the_recorded_ladder_an_h200_with_serpentine_ffmas_and_shared_stores():
    """docs/ladder.md, the recorded ladder: the ladder preset run whole on an H200
    (GPU-1670f322) with the H100's tuning, after the serpentine FFMAs and the tmastore rungs'
    STS: 440 of 440 PASS.  Each
    class's best rung against its class's reference, normal inputs, sustained, by hand from the
    rows' kernel times: FP32 99.4% / 103.1%, TF32 98.7% / 97.6% (of cuBLAS TF32), bfloat16
    98.5% / 100.7%, FP8 94.6% / 92.5%, FP64 100.6% / 99.3% at 4096 / 8192; six of the ten meet
    the issue's targets.  The ladder table prints the same figures (TF32 against its TN
    reference)."""
    report = LADDER.parent / "report"
    t = read_csv(LADDER / "timings.csv")
    assert len(t) == 440 and set(t.verification) == {"PASS"}
    assert set(t.gpu_uuid) == {"GPU-1670f322-03df-4f24-5c2e-c6e200cd4335"}
    s = t[(t.load == "sustained") & (t.distribution == "normal")]
    ms = s.set_index(["variant", "dtype", "m"]).kernel_ms
    classes = {  # rung, reference, element type, target (% of the reference)
        "FP32": ("warptile_db", "cublas", "float32", 97),
        "TF32": ("tmastore_tf32_tn", "cublas_tf32", "float32", 100),
        "BF16": ("tmastore_bf16", "cublas", "bfloat16", 100),
        "FP8": ("persistent_fp8", "cublaslt_fp8", "float8_e4m3", 90),
        "FP64": ("ws_f64", "cublas", "float64", 100),
    }
    shares, met = {}, 0
    for name, (rung, ref, dtype, target) in classes.items():
        for m in (4096, 8192):
            share = 100 * ms[(ref, dtype, m)] / ms[(rung, dtype, m)]
            shares[name, m] = round(share, 1)
            met += share >= target
    assert shares == {
        ("FP32", 4096): 99.4, ("FP32", 8192): 103.1,
        ("TF32", 4096): 98.7, ("TF32", 8192): 97.6,
        ("BF16", 4096): 98.5, ("BF16", 8192): 100.7,
        ("FP8", 4096): 94.6, ("FP8", 8192): 92.5,
        ("FP64", 4096): 100.6, ("FP64", 8192): 99.3,
    }  # fmt: skip
    assert met == 6
    table = read_csv(report / "ladder.csv").set_index(["precision", "rung"])
    cols = ["4096: % of ref", "8192: % of ref"]
    assert table.loc[("FP32", "warptile_db"), cols].tolist() == [99.4, 103.1]
    assert table.loc[("BF16", "tmastore_bf16"), cols].tolist() == [98.5, 100.7]
    assert table.loc[("FP64", "ws_f64"), cols].tolist() == [100.6, 99.3]
    tf32 = table.loc[("TF32", "tmastore_tf32_tn")]
    assert tf32.reference == "cublas_tf32_tn" and tf32[cols].tolist() == [96.3, 97.7]
    # the limiter quoted for each missed target, from the run's Nsight Compute profile
    limiter = limiters(report / "ladder_profile.csv")
    assert "long scoreboard) 7.8 of 12.4" in limiter["tmastore_tf32_tn"]
    assert "(barrier) 8.1 of 13.9" in limiter["tmastore_bf16"]
    assert "(wait) 4.7 of 9.7" in limiter["ws_f64"]


def test_the_missed_targets_profiled_at_8192_on_an_h200():
    """docs/ladder.md: the ladder's profile alone at 8192 (lab/gpu.sh ladder OUT profile,
    another H200, GPU-aea83523), int09 bursts, every row PASS.  Nsight Compute's clocks are
    fixed, so its durations count cycles: tmastore_tf32_tn 2.0% and 3.6% more than cuBLAS TF32
    and TF32 with B transposed for the same DRAM reads (2.45 GB against 2.44 and 2.33), ws_f64
    6.4% more than DGEMM for 6.85 GB of DRAM reads against 10.53."""
    folder = DATA / "h200-profile-8192"
    t = read_csv(folder / "timings.csv")
    assert len(t) == 5 and set(t.verification) == {"PASS"} and set(t.m) == {8192}
    m = read_csv(folder / "metrics.csv")
    assert set(m.gpu_name) == {"NVIDIA H200"}
    m = m.set_index(["variant", "dtype", "metric"]).value
    ms = m.xs("duration", level="metric")
    dram = m.xs("dram_read_bytes", level="metric") / 1e9
    tf32 = ms[("tmastore_tf32_tn", "float32")]
    assert round(tf32 / ms[("cublas_tf32", "float32")], 3) == 1.020
    assert round(tf32 / ms[("cublas_tf32_tn", "float32")], 3) == 1.036
    assert [round(dram[(v, "float32")], 2) for v in ("tmastore_tf32_tn", "cublas_tf32",
                                                     "cublas_tf32_tn")] == [2.45, 2.44, 2.33]  # fmt: skip
    assert round(ms[("ws_f64", "float64")] / ms[("cublas", "float64")], 3) == 1.064
    assert [round(dram[(v, "float64")], 2) for v in ("ws_f64", "cublas")] == [6.85, 10.53]
    limiter = limiters(folder / "ladder_profile.csv")
    assert "(SM 91%" in limiter["tmastore_tf32_tn"] and "7.9 of 12.3" in limiter["tmastore_tf32_tn"]
    assert "(SM 91%" in limiter["ws_f64"] and "(wait) 4.7 of 9.7" in limiter["ws_f64"]


def test_four_chunk_buffers_changed_nothing_side_by_side():
    """docs/ladder.md, "Tried, not kept: four chunk buffers": tmastore_tf32_tn's tuned
    instantiation (128 x 256, 3 stages) with four chunk buffers a consumer against two, side by
    side on an H200 (GPU-b2d14459): SAME at every shape, the ratios new / old 0.9984-1.0004 (read
    by hand from the table), none of the 95% intervals past 0.9974-1.0012."""
    t = read_csv(DATA / "h200-chunk-bufs" / "compare.csv")
    assert len(t) == 6 and set(t.verdict) == {"SAME"}
    assert set(t.this_verification) == set(t.base_verification) == {"PASS"}
    assert sorted(zip(t.m, t.distribution, strict=True)) == [
        (1000, "int09"), (1000, "normal"), (4096, "int09"), (4096, "normal"),
        (8192, "int09"), (8192, "normal")]  # fmt: skip
    assert round(t.ratio_centre.min(), 4) == 0.9984 and round(t.ratio_centre.max(), 4) == 1.0004
    assert t.ratio_low.min() > 0.9974 and t.ratio_high.max() < 1.0012


def test_the_h200s_own_sustained_tuning_picks_the_h100s_instantiations():
    """docs/ladder.md, "An H200's own tuning of the tmastore rungs": every instantiation of
    tmastore_tf32_tn (12) and tmastore_bf16 (24) at 4096 and 8192 on normal inputs, bursts and
    sustained (152 PASS, GPU-31b5a2eb).  Under sustained load the fastest are the rows
    kernels/tuned.csv holds for the H100 (TF32: 128 x 256, 3 stages, single blocks; bfloat16:
    128 x 256, 4 stages, clusters of 2, groups of 8); in bursts at 4096 TF32's 4 stages lead by
    2.3%.  Against cuBLAS in the same run (sustained): TF32 98.9% / 97.9%, bfloat16 97.0% /
    101.0% at 4096 / 8192."""
    t = read_csv(DATA / "h200-tune-tmastore" / "timings.csv")
    assert len(t) == 152 and set(t.verification) == {"PASS"}
    counts = t[(t.load == "sustained") & (t.m == 4096)].variant.value_counts().to_dict()
    assert counts == {"tmastore_bf16": 24, "tmastore_tf32_tn": 12, "cublas": 1, "cublas_tf32": 1}
    h100 = read_csv(ROOT / "kernels" / "tuned.csv")
    h100 = h100[h100.gpu_name == "NVIDIA H100 80GB HBM3"]
    h100 = dict(zip(zip(h100.variant, h100.m, strict=True), h100.params, strict=True))
    rungs = t[t.variant.str.startswith("tmastore")].sort_values("kernel_ms")
    fastest = rungs.groupby(["load", "variant", "m"]).params.first().to_dict()
    for v in ("tmastore_tf32_tn", "tmastore_bf16"):
        for m in (4096, 8192):
            assert fastest["sustained", v, m] == h100[(v, m)]
    assert fastest["burst", "tmastore_tf32_tn", 4096] == "BM=128 BN=256 STAGES=4 CLUSTER=1 GROUP=16"
    # the fastest of each variant and size (cuBLAS has one row of each)
    best = t[t.load == "sustained"].groupby(["variant", "m"]).kernel_ms.min().to_dict()
    shares = {
        (v, m): round(100 * best[(ref, m)] / best[(v, m)], 1)
        for v, ref in (("tmastore_tf32_tn", "cublas_tf32"), ("tmastore_bf16", "cublas"))
        for m in (4096, 8192)
    }
    assert shares == {("tmastore_tf32_tn", 4096): 98.9, ("tmastore_tf32_tn", 8192): 97.9,
                      ("tmastore_bf16", 4096): 97.0, ("tmastore_bf16", 8192): 101.0}  # fmt: skip


def test_the_two_launch_paths_time_a_batch_the_same_and_the_driver_costs_the_host_less():
    """docs/method.md, "the batches' launch made cheaper": lab/benchmarks/launch_paths.py on an H200
    (GPU-d41bdc87), the ladder's ten CuPy-launched rungs at 1, 31 and 33 on integers and normal
    inputs.  Read here from each configuration's line: 60 of them, the driver's time a launch
    over CuPy's within x0.9988 to x1.0012, every 95% interval at most +-0.04%; the host's time
    to queue a launch a median 13.9 us through CuPy and 8.9 us through the driver from the lines'
    rounded figures (8.8 in the summary line, from the unrounded ones), the driver's the less in
    every one of the 60."""
    import re
    import statistics

    text = read_text(DATA / "h200-launch-paths" / "launch_paths.txt")
    line = re.compile(
        r": CuPy ([\d.]+) us, driver ([\d.]+) us a launch, x([\d.]+) \+-([\d.]+)% "
        r"\(\d+ rounds of \d+\); host ([\d.]+) against ([\d.]+) us a launch$"
    )
    rows = [m.groups() for m in map(line.search, text.splitlines()) if m]
    rows = [tuple(map(float, r)) for r in rows]
    assert len(rows) == 60
    assert min(r[2] for r in rows) == 0.9988 and max(r[2] for r in rows) == 1.0012
    assert max(r[3] for r in rows) == 0.04
    cupy, driver = [r[4] for r in rows], [r[5] for r in rows]
    assert (round(statistics.median(cupy), 1), round(statistics.median(driver), 1)) == (13.9, 8.9)
    assert "host 13.9 against 8.8 us a launch (medians)" in text
    assert all(d < c for c, d in zip(cupy, driver, strict=True))
    assert "60 configurations of 10 variants" in text and "0 beyond +-0.5%" in text


def test_fp8_from_one_place_runs_as_from_four_and_integer_inputs_run_faster():
    """Entry "FP8 from one place against four, the ladder's odd sizes under the k-tile bound,
    and what CUTLASS's profiler fed its kernels" (an H200): at 4096, normal inputs, each build
    from four placements against one within -0.4% to +0.9%; integer inputs (int09) against
    normal ones, one place, +4.4% to +8.5%; all 96 configurations PASS (the ladder's odd sizes
    among them, 1000 x 1100 x 37 run padded to 1000 x 1104 x 48 by cuBLASLt and CUTLASS)."""
    t = read_csv(DATA / "h200-fp8-one-place" / "one-place.csv")
    assert len(t) == 104 and (t.verification == "PASS").all()  # 96 + 8 rows of the 4-place run
    at = t[t.m == 4096].assign(build=lambda d: d.variant + " " + d.instance)
    rate = at.set_index(["build", "memory", "distribution", "placements"]).kernel_gflops
    builds = sorted(set(at.build))
    assert len(builds) == 4
    four = [rate[b, mem, "normal", 4.0] / rate[b, mem, "normal", 1.0] - 1
            for b in builds for mem in ("pageable", "pinned")]  # fmt: skip
    assert -0.005 < min(four) and max(four) < 0.01
    ints = [rate[b, mem, "int09", 1.0] / rate[b, mem, "normal", 1.0] - 1
            for b in builds for mem in ("pageable", "pinned")]  # fmt: skip
    assert round(min(ints), 3) == 0.044 and round(max(ints), 3) == 0.085
    padded = t[(t.m == 1000) & t.variant.isin(["cublaslt_fp8", "cutlass_fp8"])]
    assert set(zip(padded.n, padded.k, strict=True)) == {(1104, 48)}


def test_the_second_seeds_fp32_fp64_bf16_part_as_its_entry_quotes_it():
    """Entry "The shapes preset at a second seed, 755700: FP32, FP64 and BF16" (an H200): its
    sweep table's 64 products per class; the best rung's geometric mean and least share of
    cuBLAS per class, FP32 84.6 / 38.7, FP64 98.2 / 33.0, BF16 191.2 / 62.1; 27, 11 and 3
    products below 85%; none seen by the tuning."""
    import numpy as np

    s = read_csv(DATA / "h200-shapes-755700" / "fp32_fp64_bf16-sweep.csv")
    assert (s.groupby("precision").size() == 64).all() and set(s["tuning saw it"]) == {"no"}
    share = s.groupby("precision")["% of ref"]
    gmean = share.apply(lambda x: 100 * np.exp(np.log(x / 100).mean())).round(1).to_dict()
    assert gmean == {"BF16": 191.2, "FP32": 84.6, "FP64": 98.2}
    assert share.min().to_dict() == {"BF16": 62.1, "FP32": 38.7, "FP64": 33.0}
    assert (s[s["% of ref"] < 85].groupby("precision").size().to_dict()
            == {"BF16": 3, "FP32": 27, "FP64": 11})  # fmt: skip


def test_the_second_seed_whole_as_its_entry_quotes_it():
    """Entry "The shapes preset at seed 755700 whole" (H200s): the five classes' sweep, 64
    products each, none seen by the tuning; TF32 148.3 / 72.0 and FP8 81.1 / 51.7 (geometric
    mean / least % of the class's cuBLAS), 1 and 29 products below 85%; FP8's least at
    129 x 14712 x 5968 by persistent_fp8."""
    import numpy as np

    s = read_csv(DATA / "h200-shapes-755700" / "all-classes-sweep.csv")
    assert (s.groupby("precision").size() == 64).all() and len(set(s.precision)) == 5
    assert set(s["tuning saw it"]) == {"no"}
    share = s.groupby("precision")["% of ref"]
    gmean = share.apply(lambda x: 100 * np.exp(np.log(x / 100).mean())).round(1).to_dict()
    assert gmean["TF32"] == 148.3 and gmean["FP8"] == 81.1 and gmean["FP32"] == 84.6
    assert share.min()["TF32"] == 72.0 and share.min()["FP8"] == 51.7
    below = s[s["% of ref"] < 85].groupby("precision").size().to_dict()
    assert below["TF32"] == 1 and below["FP8"] == 29
    least = s[s.precision == "FP8"].sort_values("% of ref").iloc[0]
    assert (least["shape"], least["best rung"]) == ("129 x 14712 x 5968", "persistent_fp8")


def test_cutlass_f64_on_an_h200_as_its_entry_quotes_it():
    """Entry "CUTLASS's FP64 GEMM (cutlass_f64) on an H200": the ladder subset's 24 rows PASS;
    sustained, normal inputs, its best build 49.8 and 48.1 TFLOP/s at 4096 and 8192 against
    cuBLAS's 51.3 and 52.7 (97.1% and 91.1%); the 65 journalled shapes rows PASS."""
    t = read_csv(DATA / "h200-cutlass-f64" / "ladder-timings.csv.xz")
    assert len(t) == 24 and (t.verification == "PASS").all()
    best = t[t.load == "sustained"].groupby(["variant", "m"]).kernel_gflops.max()
    assert [round(best["cutlass_f64", s] / 1000, 1) for s in (4096, 8192)] == [49.8, 48.1]
    assert [round(best["cublas", s] / 1000, 1) for s in (4096, 8192)] == [51.3, 52.7]
    assert [round(100 * best["cutlass_f64", s] / best["cublas", s], 1) for s in (4096, 8192)] == [
        97.1,
        91.1,
    ]
    p = read_csv(DATA / "h200-cutlass-f64" / "shapes-755700-partial.csv.xz")
    assert len(p) == 65 and (p.verification == "PASS").all()


def test_the_misses_profile_rows_that_cannot_be_their_configurations():
    """Entry "Misses profiled at seed 755700": two products of one warptile_db build with the
    same counters, and a float32 build's row counting FP64 operations only."""
    t = read_csv(DATA / "h200-misses-755700" / "metrics.csv.xz")
    wide = t.pivot_table(index=["variant", "instance", "m", "n", "k"], columns="metric",
                         values="value")  # fmt: skip
    w = wide.loc["warptile_db", "float32_BM64_BN64_BK16_WM64_WN32_WNITER2_TM8_TN4"]
    assert w.loc[(18, 152, 2881), "flop_count_sp"] == w.loc[(312, 197, 924), "flop_count_sp"]
    assert w.loc[(18, 152, 2881), "dram_read_bytes"] == w.loc[(312, 197, 924), "dram_read_bytes"]
    s = wide.loc["skinny_simt", "float32_MT8_TN4_THREADS128_BK16_SIDE2"].iloc[0]
    assert s["flop_count_sp"] == 0 and s["flop_count_dp"] == 173916160


def test_the_margin_left_out_rungs_at_most_of_fp8s_misses():
    """Entry "The shapes preset at seed 755700 whole": the TF32/FP8 part's plan left out 198
    configurations; at 27 of the 29 FP8 products below 85% it left out an FP8 rung."""
    out = read_csv(DATA / "h200-shapes-755700" / "tf32_fp8-left-out.csv")
    assert len(out) == 198
    s = read_csv(DATA / "h200-shapes-755700" / "all-classes-sweep.csv")
    low = s[(s.precision == "FP8") & (s["% of ref"] < 85)]
    pruned = set(map(tuple, out[out.variant.str.endswith("fp8")][["m", "n", "k"]].values))
    assert len(low) == 29
    assert sum(tuple(x) in pruned for x in low[["m", "n", "k"]].values) == 27
    assert (low.rungs == 1).sum() == 16


def test_every_fp8_rung_at_fp8s_misses_as_its_entry_quotes_it():
    """Entry "FP8's misses with every rung": 116 rows PASS; three of the 29 products rise
    above 85% (1372, 883 x 380 x 247, 5624 x 77 x 182); the geometric mean over the 29 goes
    from 70.7% to 73.4%; cuBLASLt takes 28.8 us at 129 x 14720 x 5968 and persistent_fp8
    59.4 us at 129 x 14712 x 5968."""
    import numpy as np

    f = DATA / "h200-fp8-misses-755700"
    t = read_csv(f / "every-rung-timings.csv.xz")
    assert len(t) == 116 and (t.verification == "PASS").all()
    new = read_csv(f / "every-rung-sweep.csv")
    old = read_csv(DATA / "h200-shapes-755700" / "all-classes-sweep.csv")
    old = old[(old.precision == "FP8") & (old["% of ref"] < 85)]
    both = old.merge(new, on=["m", "n", "k"], suffixes=("_old", "_new"))
    assert len(both) == 29
    risen = both[both["% of ref_new"] >= 85]
    assert sorted(risen.m) == [883, 1372, 5624]
    for side in ("old", "new"):
        geo = np.exp(np.log(both[f"% of ref_{side}"]).mean())
        assert round(geo, 1) == {"old": 70.7, "new": 73.4}[side]

    def times(name):
        raw = pd.read_csv(f / name, skiprows=[1], thousands=",")
        raw = raw[raw["Kernel Name"] != "mmbench_profile_marker"]
        return raw["gpu__time_duration.sum"].tolist()

    lt = json.loads((f / "cublaslt-batch.json").read_text())
    assert lt[0]["stem"].endswith("129x14720x5968") and times("cublaslt-ncu_raw.csv.xz")[0] == 28800
    rungs = json.loads((f / "rungs-batch.json").read_text())
    assert rungs[0]["stem"].endswith(
        "persistent_fp8/float8_e4m3_BM128_BN128_STAGES6_CLUSTER1_GROUP8_CHAIN8_129x14712x5968"
    )
    assert times("rungs-ncu_raw.csv.xz")[0] == 59392


def test_cutlass_f64_at_both_seeds_as_its_entry_quotes_it():
    """Entry "cutlass_f64 in the shapes preset at both seeds": 176 and 170 rows PASS, all on
    one board."""
    for seed, rows in (("755700", 176), ("726870", 170)):
        t = read_csv(DATA / "h200-cutlass-f64" / f"shapes-{seed}.csv.xz")
        assert len(t) == rows and (t.verification == "PASS").all()
        assert t.gpu_uuid.nunique() == 1 and t.gpu_uuid.iloc[0].startswith("GPU-7128b710")


def test_the_misses_profiled_again_give_each_rung_its_own_counters():
    """Entry "The batch's rows found and fixed": warptile_db's 64 x 64 build at 18 x 152 x
    2881 (SM 4% and memory 4% of peak) and at 312 x 197 x 924 (9% and 10%) no longer read the
    same counters, as they did in the first call."""
    t = read_csv(DATA / "h200-misses-755700-split" / "ladder_profile.csv")
    w = t[t.rung.str.startswith("warptile_db BM=64 BN=64")].set_index("shape")
    assert "SM 4%, memory 4% of peak" in w.loc["18x152x2881", "limiter (Nsight Compute)"]
    assert "SM 9%, memory 10% of peak" in w.loc["312x197x924", "limiter (Nsight Compute)"]


def test_deeper_splits_as_their_entry_quotes_them():
    """Entry "Deeper k splits at the misses": at 18 x 152 x 2881, warptile_db 32.74 -> 59.23 us
    (11 -> 44 splits) and ws_f64 30.18 -> 63.02 us (11 -> 45); persistent_fp8 unsplit."""
    f = DATA / "h200-split-depth"
    best = {}
    for tag in ("base", "deep"):
        t = read_csv(f / f"{tag}-fp32_fp64.csv.xz")
        assert (t.verification == "PASS").all() and len(t) == 15
        at = t[(t.m == 18) & (t.n == 152)]
        best[tag] = at.groupby("variant").kernel_ms_median.min() * 1000
        facts = at.set_index("variant").launch_facts
        want = {"base": ("SPLITS=11", "SPLITS=11"), "deep": ("SPLITS=44", "SPLITS=45")}[tag]
        assert want[0] in facts["warptile_db"] and want[1] in facts["ws_f64"]
        p = read_csv(f / f"{tag}-fp8.csv.xz")
        assert len(p) == 12 and (p.verification == "PASS").all()
        assert (p[p.variant == "persistent_fp8"].grid.str.endswith("x1x1")).all()
    assert round(best["base"]["warptile_db"], 2) == 32.74
    assert round(best["deep"]["warptile_db"], 2) == 59.23
    assert round(best["base"]["ws_f64"], 2) == 30.18 and round(best["deep"]["ws_f64"], 2) == 63.02


def duration_over_event_time(metrics: pd.DataFrame, key: list[str]) -> pd.Series:
    """Per profiled configuration (`key`), Nsight Compute's duration over the event time of its
    own profiled run (a profile's metrics table)."""
    w = metrics.pivot_table(index=key, columns="metric", values="value", aggfunc="first")
    return w["duration"] / w["event_time"]


def test_the_recorded_ladders_profile_rows_are_their_own_launches():
    """Entry "The batch's rows found and fixed": in the recorded H200 ladder (25 profiled
    configurations, batched by the plan before the fix), each one's Nsight Compute duration is
    within 2.5% of its own event time."""
    tables = ROOT / "tests" / "data" / "h200-ladder" / "results" / "ladder" / "tables"
    ratio = duration_over_event_time(read_csv(tables / "metrics.csv.gz"), ["variant", "dtype", "m"])
    assert len(ratio) == 25 and ratio.between(0.975, 1.026).all(), ratio.describe()


def test_persistent_fp8_split_k_verifies_and_is_slower_at_the_few_tile_misses():
    """Entry "persistent_fp8 split k at FP8's few-tile misses": with the split entry point the
    model's 128 x 128 builds split 3-13 ways at the five few-tile products, every row PASSes,
    and each of the four products measured unsplit the same day ran slower split (16.8 against
    11.2 µs at 16 x 2254 x 3301, 16.3 against 10.5 at 18 x 152 x 2881, 17.7 against 14.2,
    20.5 against 18.5).  Calibrated so, the 128 x 128 builds without clusters cost 5.4-8.2 µs
    a split unit."""
    f = DATA / "h200-fp8-split-k"
    t = read_csv(f / "misses.csv.xz")
    assert len(t) == 21 and (t.verification == "PASS").all()
    p = t[t.variant == "persistent_fp8"].set_index(["m", "n", "k"])
    base = read_csv(DATA / "h200-split-depth" / "base-fp8.csv.xz")
    base = base[base.variant == "persistent_fp8"].set_index(["m", "n", "k"])
    want = {(16, 2254, 3301): (7, 16.8, 11.2), (18, 152, 2881): (11, 16.3, 10.5),
            (150, 1142, 5035): (7, 17.7, 14.2), (162, 514, 7619): (13, 20.5, 18.5)}  # fmt: skip
    for shape, (splits, split_us, whole_us) in want.items():
        assert f"SPLITS={splits}" in p.loc[shape, "launch_facts"]
        assert "SPLITS" not in str(base.loc[shape, "launch_facts"])
        assert round(p.loc[shape, "kernel_ms_median"] * 1e3, 1) == split_us
        assert round(base.loc[shape, "kernel_ms_median"] * 1e3, 1) == whole_us
    assert "SPLITS=3" in p.loc[(27, 25, 986), "launch_facts"]
    c = read_csv(f / "calibration.csv.xz")
    c1 = c[c.instance.str.contains("BM128_BN128_STAGES._CLUSTER1")]
    assert len(c1) == 8 and c1.split_us.between(5.4, 8.2).all()


def test_the_partial_ladder_with_peers_passes_and_misses_the_standing_targets():
    """Entry "The ladder preset with its peers on an H200: 27 of 30 variants": 810 rows, all
    PASS; persistent_bf16, tmastore_bf16 and triton_fp8 have none; normal inputs, sustained,
    the best rung of FP32, TF32, FP8 and FP64 at 99.2 / 103.1, 97.1 / 98.4, 93.4 / 91.1 and
    100.2 / 97.8% of its cuBLAS at 4096 / 8192 (computed here by hand from the rows); each
    variant's rate -0.4 to +2.6% off the recorded H200 ladder's, cuBLASLt at 4096 the most; the
    profile's 50 configurations' Nsight Compute durations 0.960-1.019 of their event times."""
    f = DATA / "h200-ladder-peers-partial"
    t = read_csv(f / "timings.csv.xz")
    assert len(t) == 810 and (t.verification == "PASS").all() and t.variant.nunique() == 27
    assert not {"persistent_bf16", "tmastore_bf16", "triton_fp8"} & set(t.variant)
    s = t[(t.load == "sustained") & (t.distribution == "normal")]
    rate = s.groupby(["variant", "dtype", "m"]).kernel_gflops.max()
    pairs = {"warptile_db": ("cublas", "float32"), "tmastore_tf32_tn": ("cublas_tf32_tn", "float32"),
             "persistent_fp8": ("cublaslt_fp8", "float8_e4m3"), "ws_f64": ("cublas", "float64")}  # fmt: skip
    want = {"warptile_db": (99.2, 103.1), "tmastore_tf32_tn": (97.1, 98.4),
            "persistent_fp8": (93.4, 91.1), "ws_f64": (100.2, 97.8)}  # fmt: skip
    for rung, (ref, dtype) in pairs.items():
        got = tuple(
            round(100 * rate[rung, dtype, n] / rate[ref, dtype, n], 1) for n in (4096, 8192)
        )
        assert got == want[rung], (rung, got)
    # beside the recorded ladder (another H200): cuBLASLt at 4096 2.5% faster, the most
    old = read_csv(LADDER / "timings.csv.xz")
    old = old[(old.load == "sustained") & (old.distribution == "normal")]
    was = old.groupby(["variant", "dtype", "m"]).kernel_gflops.max()
    ratio = (rate / was).dropna()
    assert ratio.between(0.996, 1.026).all() and ratio.idxmax() == (
        "cublaslt_fp8",
        "float8_e4m3",
        4096,
    )
    m = read_csv(f / "metrics.csv.xz")
    ratio = duration_over_event_time(m, ["variant", "instance", "dtype"])
    assert len(ratio) == 50 and ratio.between(0.960, 1.020).all(), ratio.describe()


def test_the_ladders_machine_code_is_the_same_since_the_paired_check_but_persistent_tf32():
    """Entry "The ladder's machine code since the skeleton's paired check": 19 rungs, 25
    instantiations compared; every cubin byte-identical to 43d52bd's but persistent_tf32's two,
    whose entry code is other."""
    text = read_text(DATA / "ladder-machine-code" / "same-cubins-43d52bd.txt")
    counts = re.findall(r"^(\w+): (\d+) of (\d+) instantiations byte-identical$", text, re.M)
    assert len(counts) == 19 and sum(int(total) for _, _, total in counts) == 25
    differ = {name: int(total) - int(same) for name, same, total in counts if same != total}
    assert differ == {"persistent_tf32": 2}
    assert text.count("entry persistent_tf32: other code") == 2


def test_a_fix_up_of_c_s_partial_sums_alone_is_slower_then_no_faster():
    """Entry "Split fix-ups that move only C's partial sums": every row PASSes; as first
    written the skeleton's split products ran 1.14-1.58x main's on the same build and split,
    while persistent_tf32's split entry, byte-identical in both, ran 0.97-1.10x; with the sum's
    loads from one base address 0.89-1.06x (the seven on the same build); its loop 199, 648
    and 273 instructions (tmastore_bf16), 263, 449 and 365 (ws_f64)."""
    f = DATA / "h200-fixup-live"
    first = read_csv(f / "first.csv.xz")
    assert len(first) == 216 and (first.verification == "PASS").all()
    first["facts"] = first.launch_facts.fillna("").str.split(" PARTIALS").str[0]
    key = ["variant", "dtype", "m", "n", "k", "instance", "facts"]
    t = first.pivot_table(index=key, columns="kernels", values="kernel_ms_median").dropna()
    ratio = t["new"] / t["old"]
    split = ratio[
        ratio.index.get_level_values("facts").str.contains(r"SPLITS=(?!1\b)\d+|WORKERS=[1-9]")
    ]
    skeleton = split.drop(["persistent_tf32", "skinny_bf16", "skinny_fp8", "skinny_tf32_tn",
                           "streamk_fp8"], level="variant")  # fmt: skip
    assert round(skeleton.min(), 2) == 1.14 and round(skeleton.max(), 2) == 1.58
    unchanged = split.xs("persistent_tf32", level="variant")
    assert round(unchanged.min(), 2) == 0.97 and round(unchanged.max(), 2) == 1.10
    trees = read_csv(f / "trees.csv.xz")
    assert len(trees) == 36 and (trees.verification == "PASS").all()
    w = trees.pivot_table(index=["variant", "m", "n", "k", "instance"], columns="kernels",
                          values="kernel_ms_median").dropna()  # fmt: skip
    fixed = w["fix"] / w["old"]
    assert len(fixed) == 7 and round(fixed.min(), 2) == 0.89 and round(fixed.max(), 2) == 1.06
    text = read_text(f / "sum-loop.txt")
    loops = [int(x) for x in re.findall(r"^\w[\w-]* +\d+ +\d+ +(\d+) +64$", text, re.M)]
    assert loops == [199, 648, 273, 650, 199, 263, 449, 365]


def test_the_ladders_bf16_rungs_and_triton_fp8_beside_their_cublas():
    """Entry "The ladder's three missing variants on an H200": 126 rows, all PASS; normal
    inputs, sustained, tmastore_bf16 at 98.5 and 100.4%, persistent_bf16 at 94.6 and 98.1% of
    cuBLAS's BF16, triton_fp8 at 74.2 and 73.0% of cuBLASLt, at 4096 and 8192."""
    t = read_csv(DATA / "h200-ladder-bf16" / "timings.csv.xz")
    assert len(t) == 126 and (t.verification == "PASS").all()
    s = t[(t.load == "sustained") & (t.distribution == "normal")]
    rate = s.groupby(["variant", "m"]).kernel_gflops.max()
    want = {"tmastore_bf16": ("cublas", (98.5, 100.4)), "persistent_bf16": ("cublas", (94.6, 98.1)),
            "triton_fp8": ("cublaslt_fp8", (74.2, 73.0))}  # fmt: skip
    for rung, (ref, pct) in want.items():
        assert tuple(round(100 * rate[rung, n] / rate[ref, n], 1) for n in (4096, 8192)) == pct


def test_the_profilers_lead_is_the_harnesss_single_launch():
    """Entry "CUTLASS's profiler launch by launch": FP8 data-parallel at 4096 on integer
    inputs, the profiler's single launch (median of five) within 1.1% of its 100 back to back;
    the harness's batched launches 1.3-1.9% faster than the profiler's 100, its single
    launches 3.3-3.9% slower than the profiler's single one."""
    f = DATA / "h200-profiler-launches"
    p = read_csv(
        f / "profiler.csv.xz", header=None, names=["kernel", "dist", "iters", "ms", "clock"]
    )
    dp = p[p.kernel.str.contains("e4m3") & ~p.kernel.str.contains("stream_k|fastaccum")]
    dp = dp[dp.dist == "integer"].groupby("iters").ms.median()
    assert dp[1] / dp[100] - 1 < 0.011
    h = read_csv(f / "harness.csv.xz")
    h = h[(h.variant == "cutlass_fp8") & h.instance.str.endswith("SCHEDULER1")]
    h = h[h.distribution == "int09"]
    assert len(h) == 2 and (h.verification == "PASS").all()
    batched = 1 - h.batch_ms_median / dp[100]
    single = h.kernel_ms_median / dp[1] - 1
    assert batched.between(0.0125, 0.0195).all() and single.between(0.0325, 0.0395).all()


def test_cutlass_fp8_gains_from_following_itself_and_persistent_fp8_does_not():
    """Entry "CUTLASS's profiler launch by launch": with L2 flushed before each timed launch,
    cutlass_fp8's single launch takes what it takes after the pass's copy (0.1188 against
    0.1192 ms) and its batched launches 5.2% less; persistent_fp8's single and batched launches
    within 1%."""
    c = read_csv(DATA / "h200-profiler-launches" / "cache.csv.xz").set_index(["variant", "cache"])
    assert (c.verification == "PASS").all() and len(c) == 4
    cut = c.loc["cutlass_fp8"]
    assert round(cut.kernel_ms_median["cold"], 4) == 0.1188
    assert round(cut.kernel_ms_median["warm"], 4) == 0.1192
    assert round(1 - cut.batch_ms_median["warm"] / cut.kernel_ms_median["warm"], 3) == 0.052
    ours = c.loc["persistent_fp8", "warm"]
    assert abs(ours.batch_ms_median / ours.kernel_ms_median - 1) < 0.01


def test_the_split_fix_ups_sum_costs_half_a_microsecond_a_split():
    """Entry "Split fix-ups that move only C's partial sums", main's fix-up with a part left
    out: without the sum's loop tmastore_bf16's split products run 0.53-0.54 µs a split faster
    (7, 11 and 13 splits) and ws_f64's 0.71-0.91 (7, 11, 14); cuBLAS in the same runs within
    2.5%."""
    a = read_csv(DATA / "h200-fixup-live" / "ablation.csv.xz")
    assert len(a) == 60 and (a[a.kernels.isin(["main", "nofence"])].verification == "PASS").all()
    t = a.pivot_table(index=["variant", "dtype", "m", "n", "k"], columns="kernels",
                      values="kernel_ms_median") * 1e3  # fmt: skip
    ref = t.xs("cublas", level="variant")
    assert ((ref.drop(columns="main").div(ref["main"], axis=0) - 1).abs() < 0.025).all().all()
    main = a[a.kernels == "main"].set_index(["variant", "m", "n", "k"])
    splits = main.launch_facts.str.extract(r"SPLITS=(\d+)")[0].dropna().astype(int)
    per = {}
    for rung in ("tmastore_bf16", "ws_f64"):
        r = t.xs(rung, level="variant").droplevel("dtype")
        per[rung] = [round((r.loc[s, "main"] - r.loc[s, "nosum"]) / splits[(rung, *s)], 2)
                     for s in sorted(r.index)]  # fmt: skip
    assert per == {"tmastore_bf16": [0.53, 0.54, 0.54], "ws_f64": [0.71, 0.88, 0.91]}


def test_narrow_fp32_tiles_and_a_calibration_at_small_sides():
    """Entry "Narrow FP32 tiles and a calibration at small sides": 1176 configurations PASS; the
    best warptile_db build at the 14 products is 81.5% of cuBLAS (geometric mean), 74.9% without
    the 32-wide tiles, which win at 5 (22 x 6617 x 6161: 1.35x, 113.4% of cuBLAS); the best build
    is under 85% at 10.  The shapes preset's part with the kept calibration: FP32 87.0 / 54.8 and
    FP64 100.6 / 48.5 at seed 755700 (from 84.6 / 38.7 and 98.2 / 33.0), FP64 92.1 / 43.9 at
    seed 726870 (from 88.8 / 44.1); the best rung's speed against before 1.028 and 1.029, 1.038."""
    f = DATA / "h200-fp32-narrow-tiles"
    e = read_csv(f / "every-14-products.csv.xz")
    assert len(e) == 1176 and (e.verification == "PASS").all()
    w = e[e.variant == "warptile_db"].assign(narrow=lambda d: d.instance.str.contains(r"_B[MN]32_"))
    ref = e[e.variant == "cublas"].set_index(["m", "n", "k"]).kernel_ms
    best = w.groupby(["m", "n", "k", "narrow"]).kernel_ms.min().unstack()
    share = 100 * ref / best.min(axis=1)
    wide = 100 * ref / best[False]

    assert round(gmean(share), 1) == 81.5 and round(gmean(wide), 1) == 74.9
    assert (best[True] < best[False]).sum() == 5 and (share < 85).sum() == 10
    assert round(best.loc[(22, 6617, 6161), False] / best.loc[(22, 6617, 6161), True], 2) == 1.35
    assert round(share.loc[(22, 6617, 6161)], 1) == 113.4
    old = {755700: read_csv(DATA / "h200-shapes-755700" / "all-classes-sweep.csv"),
           726870: read_csv(DATA / "h200-shapes-726870" / "fp32_fp64_bf16-with-skinny-cutlass-sweep.csv")}  # fmt: skip
    want = {(755700, "FP32"): (87.0, 54.8, 84.6, 38.7, 1.028),
            (755700, "FP64"): (100.6, 48.5, 98.2, 33.0, 1.029),
            (726870, "FP64"): (92.1, 43.9, 88.8, 44.1, 1.038)}  # fmt: skip
    for (seed, cls), (mean, least, mean0, least0, speed) in want.items():
        new = read_csv(f / f"shapes-{seed}-sweep.csv.xz")
        a, b = old[seed][old[seed].precision == cls], new[new.precision == cls]
        assert len(a) == len(b) == 64
        got = (round(gmean(b["% of ref"]), 1), round(b["% of ref"].min(), 1),
               round(gmean(a["% of ref"]), 1), round(a["% of ref"].min(), 1))  # fmt: skip
        assert got == (mean, least, mean0, least0)
        both = a.merge(b, on="shape", suffixes=("_old", "_new"))
        assert round(gmean(both["GFLOP/s_new"] / both["GFLOP/s_old"]), 3) == speed


def test_the_shapes_preset_with_the_k_tile_model():
    """Entry "The shapes preset's FP32 and FP64 part with the k-tile model": per seed and class,
    the mean and least share of cuBLAS, the products below 85%, and the speed over the run
    before (the narrow-tiles entry's runs; FP32 at 726870 the run with skinny_simt)."""
    f = DATA / "h200-model-shapes"
    before = {
        (755700, "FP32"): DATA / "h200-fp32-narrow-tiles" / "shapes-755700-sweep.csv",
        (755700, "FP64"): DATA / "h200-fp32-narrow-tiles" / "shapes-755700-sweep.csv",
        (726870, "FP32"): DATA / "h200-shapes-726870" / "fp32_fp64_bf16-with-skinny-cutlass-sweep.csv",
        (726870, "FP64"): DATA / "h200-fp32-narrow-tiles" / "shapes-726870-sweep.csv",
    }  # fmt: skip
    want = {(755700, "FP32"): (93.9, 70.6, 15, 87.0, 54.8, 1.077, 3),
            (755700, "FP64"): (101.3, 50.1, 10, 100.6, 48.5, 1.002, 0),
            (726870, "FP32"): (90.6, 47.5, 16, 80.0, 45.9, 1.134, 3),
            (726870, "FP64"): (92.6, 44.9, 19, 92.1, 43.9, 1.006, 2)}  # fmt: skip
    for (seed, cls), (mean, least, below, mean0, least0, speed, slower) in want.items():
        new = read_csv(f / f"shapes-{seed}-sweep.csv")
        old = read_csv(before[(seed, cls)])
        b, a = new[new.precision == cls], old[old.precision == cls]
        assert len(b) == len(a) == 64
        got = (round(gmean(b["% of ref"]), 1), round(b["% of ref"].min(), 1), int((b["% of ref"] < 85).sum()),
               round(gmean(a["% of ref"]), 1), round(a["% of ref"].min(), 1))  # fmt: skip
        assert got == (mean, least, below, mean0, least0)
        both = a.merge(b, on="shape", suffixes=("_old", "_new"))
        r = both["GFLOP/s_new"] / both["GFLOP/s_old"]
        assert (round(gmean(r), 3), int((r < 0.95).sum())) == (speed, slower)
        assert abs(gmean(both["reference GFLOP/s_new"] / both["reference GFLOP/s_old"]) - 1) < 0.006


def test_tritons_timers_and_the_harness_on_one_board():
    """Entry "Triton's timers and the harness on one board": the 96 pairs of a timer's figure and
    a harness row; those 15-34% apart in clock are 0.80-1.15 in rate (at least 4% from 1), the
    faster clock the faster; the 23 within 4% of clock are 0.91-1.07 apart in rate, 14 within 5%."""
    d = DATA / "h200-triton-one-board"
    rows = []
    for line in read_text(d / "triton-tools.log").splitlines():
        m = re.match(r"time torch\.(\w+) (\d+) (\S+) .*?TFLOP/s: (.*)", line)
        if m:
            for timer, tf, clk in re.findall(r"(do_bench median|do_bench|cudagraph|events) ([\d.]+) \((\d+) MHz", m[4]):  # fmt: skip
                rows.append((m[1], int(m[2]), m[3], timer, float(tf), float(clk)))
    tools = pd.DataFrame(rows, columns=["el", "size", "who", "timer", "tf", "clk"])
    h = read_csv(d / "harness.csv")
    assert len(h) == 56 and (h.verification == "PASS").all()
    h = h.assign(tf=h.kernel_gflops / 1000).groupby(["variant", "dtype", "m", "load"])
    h = h.agg(tf=("tf", "median"), clk=("sm_clock_mhz", "median")).reset_index()
    same = {("triton_bf16", "bfloat16"): ("triton_bf16", "bfloat16"),
            ("triton_tf32", "float32"): ("triton_tf32", "float32"),
            ("triton_fp8", "float8_e4m3fn"): ("triton_fp8", "float8_e4m3"),
            ("torch", "bfloat16"): ("cublas", "bfloat16"),
            ("torch", "float32"): ("cublas_tf32", "float32"),
            ("torch", "float8_e4m3fn"): ("cublaslt_fp8", "float8_e4m3")}  # fmt: skip
    pairs = []
    for r in tools.itertuples():
        v, el = same[(r.who, r.el)]
        for x in h[(h.variant == v) & (h.dtype == el) & (h.m == r.size)].itertuples():
            pairs.append((r.tf / x.tf, r.clk / x.clk))
    p = pd.DataFrame(pairs, columns=["rate", "clock"])
    assert len(p) == 96
    far = p[(p.clock - 1).abs() >= 0.15]
    assert len(far) == 35 and ((far.rate > 1) == (far.clock > 1)).all()
    assert round((far.rate - 1).abs().min(), 2) == 0.04
    assert round(far.rate.min(), 2) == 0.80 and round(far.rate.max(), 2) == 1.15
    near = p[(p.clock - 1).abs() <= 0.04]
    assert (
        len(near) == 23 and round(near.rate.min(), 2) == 0.91 and round(near.rate.max(), 2) == 1.07
    )
    assert ((near.rate - 1).abs() <= 0.05).sum() == 14 and round(near.rate.median(), 2) == 1.03


def test_where_cis_time_goes_on_two_cores():
    """Lab entry "Where CI's time goes on two cores": the README's tests 635 s serial, 340 s on
    two workers; the sm_90 compile_all 1,606 s of the slow tests' 2,420 s; sm_80's builds
    304.6 s at Snakemake's default tick, 275.5 s at 1000/10s; the rebuild test 44.1 s, 17.4 s;
    after the changes the sm_90 compile_all 1,200 s, sm_80's 252 s, the CUTLASS test 0.1 s."""
    text = read_text(DATA / "ci-time-2core" / "timings.txt.xz")
    runs = [float(s) for s in re.findall(r" in ([0-9.]+)s \(", text)]
    assert runs[:3] == [635.03, 339.92, 2420.62]
    assert "1606.02s setup    tests/test_ptxas.py" in text
    walls = [float(s) for s in re.findall(r"^([0-9.]+) s wall", text, re.M)]
    assert walls == [304.63, 275.46]
    assert "44.12 s\n17.40 s\n" in text
    after = text[text.index("b0610ae") :]  # sm_90 then sm_80 compile_all, the CUTLASS test
    assert [float(s) for s in re.findall(r"^([0-9.]+)s ", after, re.M)] == [1199.51, 252.19, 0.12]


def test_streamk_f64_in_the_shapes_preset_and_at_every_build():
    """Entry "streamk_f64: FP64 on the stream-K schedule": the shapes preset's FP64 part at seed
    755700 (mean and least share of cuBLAS, products below 85%, the best rung's speed over the
    k-tile model's run and how many ran more than 5% slower or faster, the products each rung
    won); every build of ws_f64 and streamk_f64 at four products (the fastest of each against
    cuBLAS); and the calibrate stage's checks (the same bits, memcheck)."""
    f = DATA / "h200-streamk-f64"
    new = read_csv(f / "shapes-755700-fp64-sweep.csv")
    old = read_csv(DATA / "h200-model-shapes" / "shapes-755700-sweep.csv")
    old = old[old.precision == "FP64"]
    assert len(new) == len(old) == 64
    got = (round(gmean(new["% of ref"]), 1), round(new["% of ref"].min(), 1),
           int((new["% of ref"] < 85).sum()))  # fmt: skip
    assert got == (106.4, 50.5, 8)
    assert new["best rung"].value_counts().to_dict() == {"streamk_f64": 34, "ws_f64": 25,
                                                         "skinny_simt": 5}  # fmt: skip
    both = old.merge(new, on="shape", suffixes=("_old", "_new"))
    r = both["GFLOP/s_new"] / both["GFLOP/s_old"]
    assert (round(gmean(r), 3), int((r < 0.95).sum()), int((r > 1.05).sum())) == (1.045, 0, 16)
    assert abs(gmean(both["reference GFLOP/s_new"] / both["reference GFLOP/s_old"]) - 1) < 0.006
    e = read_csv(f / "every-4-products.csv")
    assert (e.verification == "PASS").all() and len(e) == 116
    best = e.groupby(["m", "n", "k", "variant"]).kernel_ms.min().unstack()
    share = (100 * best["cublas"].to_numpy()[:, None] / best[["ws_f64", "streamk_f64"]]).round(1)
    assert share.loc[(34, 11325, 6122)].to_dict() == {"ws_f64": 55.5, "streamk_f64": 118.5}
    assert share.loc[(34, 15728, 15498)].to_dict() == {"ws_f64": 55.3, "streamk_f64": 98.7}
    assert share.loc[(4185, 19, 308)].to_dict() == {"ws_f64": 45.3, "streamk_f64": 37.3}
    checks = read_text(f / "rung-checks.txt")
    assert "160 results the same in both runs" in checks
    assert checks.count("ERROR SUMMARY: 0 errors") == 6


def test_the_flushed_load_beside_msmf_and_do_bench_without_its_l2_clear():
    """Entry "The flushed load beside MSMF, and do_bench without its L2 clear": cuBLAS BF16 under
    the flushed load at 4096 stays near its sustained rate and 15% below MSMF's 743 TFLOP/s, at
    the power limit; do_bench beats its own loop without the L2 clear in every timing."""
    f = DATA / "h200-msmf-warm"
    t = read_csv(f / "msmf.csv")
    assert len(t) == 16 and (t.verification == "PASS").all()
    rate = t.groupby(["variant", "m", "load"]).kernel_gflops.mean() / 1e3
    bf16 = rate.loc["cublas", 4096]
    assert round(bf16["flushed"], 1) == 644.0 and round(bf16["sustained"], 1) == 633.5
    assert 1.15 < 743 / bf16["flushed"] < 1.16
    assert (t[t.load == "flushed"].power_w_median > 685).all()  # the 700 W limit, flushed too
    fp8 = rate.loc["cublaslt_fp8", 4096]
    assert round(fp8["flushed"] / fp8["sustained"], 3) == 1.021
    log = read_text(f / "triton_tools.log")
    pairs = re.findall(r"do_bench ([\d.]+) .*?warm ([\d.]+)", log)
    assert len(pairs) == 12 and all(float(a) > float(b) for a, b in pairs)
    cublas_4096 = re.search(
        r"bfloat16 4096 torch \(cuBLAS\) TFLOP/s: do_bench ([\d.]+) \(\d+ MHz, (\d+) W", log
    )
    assert cublas_4096.groups() == ("741.5", "397")


def test_wider_fp8_tiles_at_every_build():
    """Entry "Wider FP8 tiles with one set of partial sums": every build verified; the best new
    (wider) build against the best of the others, % of cuBLASLt, where the entry quotes them."""
    f = DATA / "h200-fp8-wide"

    def best(name, var, cut):
        t = read_csv(f / name)
        assert (t.verification == "PASS").all()
        ref = t[t.variant == "cublaslt_fp8"].set_index("m").kernel_gflops
        r = t[t.variant == var].copy()
        r["pct"] = 100 * r.kernel_gflops / r.m.map(ref)
        r["wide"] = r.instance.str.extract(r"BN(\d+)")[0].astype(int) > cut
        return r.groupby(["m", "n", "k", "wide"]).pct.max().round(1).unstack()

    p = best("every-persistent-8-products.csv", "persistent_fp8", 128)
    assert len(read_csv(f / "every-persistent-8-products.csv")) == 424
    assert p.loc[(1499, 1499, 1499)].tolist() == [69.4, 88.7]
    assert p.loc[(4096, 4096, 4096)].tolist() == [93.8, 83.8]
    assert p.loc[(8192, 8192, 8192)].tolist() == [90.8, 90.8]
    s = best("every-skinny-6-products.csv", "skinny_fp8", 64)
    assert s.loc[(129, 14712, 5968)].tolist() == [54.6, 72.4]
    assert s.loc[(10064, 200, 13299)].tolist() == [49.8, 62.4]
    assert s.loc[(162, 514, 7619)].tolist() == [54.3, 41.0]
    assert read_text(f / "memcheck.txt").count("ERROR SUMMARY: 0 errors") == 20
    before = read_csv(f / "shapes-755700-fp8-before-sweep.csv")
    got = (len(before), round(gmean(before["% of ref"]), 1), round(before["% of ref"].min(), 1),
           int((before["% of ref"] < 85).sum()))  # fmt: skip
    assert got == (64, 81.4, 53.0, 30)


def test_the_ladders_code_and_launches_are_those_of_its_last_run():
    """Entry "The ladder's code and launches since its last run": 19 rungs, 26 instantiations,
    every cubin byte-identical to 89c78eb's; 133 launches of the hand-written rungs, the same in
    both checkouts (the entry's compare, redone here on the recorded files)."""
    text = read_text(DATA / "ladder-machine-code" / "same-cubins-89c78eb.txt")
    counts = re.findall(r"^(\w+): (\d+) of (\d+) instantiations byte-identical$", text, re.M)
    assert len({name for name, _, _ in counts}) == 19
    assert sum(int(total) for _, _, total in counts) == 26
    assert all(same == total for _, same, total in counts)
    assert "differs" not in text
    old, new = (json.loads(read_text(DATA / "ladder-machine-code" / f"launches-{c}.json.xz"))
                for c in ("89c78eb", "2c5351a"))  # fmt: skip
    assert len(old) == len(new) == 133 and old == new
    assert {k.split()[0] for k in new} == {name for name, _, _ in counts}


def test_the_kept_calibration_prices_grids_it_never_ran_too_fast():
    """Entry "The kept calibration cannot price a grid it never ran": every grid priced, 160
    pairs, the most 5.370x (skinny_bf16 at 600 x 196 x 757 in 2.7 us); only the split counts
    its fit saw, 51, the most 1.427x, skinny_fp8 at 129 x 14712 x 5968 with 115 workers."""
    f = DATA / "h200-grid-choice"
    pair = re.compile(r"^(\w+) +(\d+) x +(\d+) x +(\d+): .* workers (\d+) +([\d.]+) us "
                      r"\(([\d.]+)x predicted\)$", re.M)  # fmt: skip
    every, seen = (pair.findall(read_text(f / name)) for name in ("unguarded.txt", "guarded.txt"))
    assert (len(every), len(seen)) == (160, 51)
    top = max(every, key=lambda p: float(p[6]))
    assert top[:4] == ("skinny_bf16", "600", "196", "757") and (top[5], top[6]) == ("2.7", "5.370")
    assert max(float(p[6]) for p in seen) == 1.427
    assert ("skinny_fp8", "129", "14712", "5968", "115", "35.0", "1.176") in seen


def test_the_grids_the_model_chose_ran_faster_and_lifted_fp8():
    """Entry "The chosen stream-K grids measured": 9 GPU tests passed, memcheck clean at 8
    launches; the chosen grid faster at all 16 pairs (geometric mean 1.381x, least 1.080x); FP8
    at seeds 755700 and 726870: 84.7% / 55.2% (22 below 85%) and 85.8% / 60.8% (25); BF16 at
    129 x 14712 x 5968 82.3%, 18 x 152 x 2881 89.8%, 1624 cubed 81.1%."""
    f = DATA / "h200-chosen-grids"
    assert "9 passed" in read_text(f / "rung-tests.log")
    assert read_text(f / "rung-memcheck.log").count("ERROR SUMMARY: 0 errors") == 8
    g = read_csv(f / "grid_choice.csv")
    assert len(g) == 32 and set(g.verification) == {"PASS"}
    key = ["variant", "m", "n", "k"]
    pairs = g[g.workers == 0].merge(g[g.workers > 0], on=key, suffixes=("_rule", "_chosen"))
    gain = pairs.kernel_ms_rule / pairs.kernel_ms_chosen
    assert len(pairs) == 16 and (gain > 1).all()
    assert (round(gmean(gain), 3), round(gain.min(), 3)) == (1.381, 1.080)
    for seed, want in (("755700", (64, 84.7, 55.2, 22)), ("726870", (64, 85.8, 60.8, 25))):
        s = read_csv(f / f"fp8-{seed}-sweep.csv")
        share = s["% of ref"]
        assert (len(s), round(gmean(share), 1), share.min(), int((share < 85).sum())) == want
    bf16 = read_csv(f / "bf16-misses-sweep.csv").set_index("shape")["% of ref"]
    assert bf16[["129 x 14712 x 5968", "18 x 152 x 2881", "1624"]].tolist() == [82.3, 89.8, 81.1]


def test_triton_timers_rates_per_probe_ghz_match_the_sustained_rows_on_the_median():
    """Entry "Triton's timers at the clock probe's reading": against the mean of the two
    sustained rows, the timers' rates are a median 7.4% (4096) and 3.8% (8192) higher; per GHz
    of the probe's clock, medians 1.001 and 1.025, spread 0.859-1.063 and 0.982-1.119."""
    got = _timer_ratios(DATA / "h200-triton-probe", ("probe",))
    assert len(got) == 60
    med = got.groupby("size")[["rate", "probe"]].median().round(3)
    assert med.rate.tolist() == [1.074, 1.038] and med.probe.tolist() == [1.001, 1.025]
    spread = got.groupby("size").probe.agg(["min", "max"]).round(3)
    assert spread.values.tolist() == [[0.859, 1.063], [0.982, 1.119]]


def test_every_build_at_the_misses_on_an_h100():
    """Entry "Every build at BF16's and FP8's misses, on an H100": each rung's best build against
    the cuBLAS of its class (GFLOP/s), BF16 at 1624³ and 1400³, FP8 at four products; and the
    misses stage's choice at 1624³, 83.3%."""
    f = DATA / "h100-every-build-misses"
    best = {}
    for name in ("bf16-every.csv", "fp8-every.csv"):
        t = read_csv(f / name)
        assert (t.verification == "PASS").all()
        ref = t[t.variant.str.startswith("cublas")].groupby("m").kernel_gflops.max()
        rungs = t[~t.variant.str.startswith("cublas")]
        for (m, variant), g in rungs.groupby(["m", "variant"]):
            best[(int(m), variant)] = round(100 * g.kernel_gflops.max() / ref[m], 1)
    assert best[(1624, "tmastore_bf16")] == 89.0 and best[(1624, "streamk_bf16")] == 59.4
    assert best[(1400, "tmastore_bf16")] == 86.1 and best[(1400, "streamk_bf16")] == 79.7
    fp8 = {m: max(v for (mm, _), v in best.items() if mm == m) for m in (16, 21, 22, 162)}
    assert fp8 == {16: 62.4, 21: 66.0, 22: 76.7, 162: 56.8}
    sweep = read_csv(f / "bf16-misses-sweep.csv").set_index("shape")
    assert sweep.loc["1624", "% of ref"] == 83.3


_TIMER = re.compile(r"(do_bench median|do_bench|warm|cudagraph|events|sustained) ([\d.]+) "
                    r"\(\d+ MHz, \d+ W((?:, \w+ \d+ MHz)*)\)")  # fmt: skip


def _timers(line: str) -> list[tuple[str, float, dict[str, int]]]:
    """A triton_matmul_check.py line's timers: name, TFLOP/s and the clocks it read after NVML's
    (window, probe, runs: MHz)."""
    clocks = re.compile(r", (\w+) (\d+) MHz")
    return [(which, float(tflops), {c: int(mhz) for c, mhz in clocks.findall(read)})
            for which, tflops, read in _TIMER.findall(line)]  # fmt: skip


def _timer_ratios(folder, clocks=("window", "probe")):
    """Each Triton timer's rate, and its rate per GHz of each of `clocks` (those its log line
    reads: the window clock, the probe, do_bench's runs clock; NaN where a timer's line has no
    such clock), over the mean of the harness's two sustained rows of the same kernel and size
    (their rate per GHz of NVML's clock)."""
    harness = read_csv(folder / "harness.csv")
    sustained = harness[harness.load == "sustained"]
    kinds = {"bfloat16": ("triton_bf16", "cublas", "bfloat16"),
             "float32": ("triton_tf32", "cublas_tf32", "float32"),
             "float8_e4m3fn": ("triton_fp8", "cublaslt_fp8", "float8_e4m3")}  # fmt: skip
    rows = []
    for line in read_text(folder / "triton_check.log").splitlines():
        m = re.match(r"time torch\.(\S+) (\d+) (\S+)", line)
        if not m:
            continue
        triton, reference, dtype = kinds[m[1]]
        name = triton if m[3].startswith("triton") else reference
        mine = sustained[(sustained.variant == name) & (sustained.m == int(m[2]))
                         & (sustained.dtype == dtype)]  # fmt: skip
        assert len(mine) == 2
        rate = mine.kernel_gflops.mean() / 1e3
        per_ghz = (mine.kernel_gflops / 1e3 / mine.sm_clock_mhz).mean()
        for which, tflops, mhz in _timers(line):
            rows.append((name, int(m[2]), which, tflops / rate,
                         *(tflops / mhz[c] / per_ghz if c in mhz else float("nan")
                           for c in clocks)))  # fmt: skip
    return pd.DataFrame(rows, columns=["kernel", "size", "timer", "rate", *clocks])


def test_triton_timers_per_window_ghz_match_the_sustained_rows_without_an_l2_clear():
    """Entry "Triton's timers at the window clock": the window clock read NVML's 1980 MHz idle
    and spinning; over warm, cudagraph and events the timers run a median 6.3% and 3.4% faster
    than the sustained rows, per GHz of the window clock 0.939-1.050 (median 1.002) at 4096 and
    0.967-1.113 (1.010) at 8192, per GHz of the probe 0.785-0.983 and 0.866-1.022; triton_fp8
    at 8192 alone is outside 0.93-1.07; do_bench's two timers 0.791-0.979 and 0.967-1.097."""
    f = DATA / "h100-window-clock"
    log = read_text(f / "triton_check.log")
    checks = re.findall(r"GPU (idle|busy) 200 ms: window (\d+) MHz, NVML (\d+) MHz", log)
    assert checks == [("idle", "1980", "1980"), ("busy", "1980", "1980")]
    got = _timer_ratios(f)
    assert len(got) == 60
    kept = got[got.timer.isin(["warm", "cudagraph", "events"])]
    by_size = kept.groupby("size")
    assert by_size.rate.median().round(3).tolist() == [1.063, 1.034]
    assert by_size.window.median().round(3).tolist() == [1.002, 1.010]
    assert by_size.window.agg(["min", "max"]).round(3).values.tolist() == [[0.939, 1.050],
                                                                          [0.967, 1.113]]  # fmt: skip
    assert by_size.probe.agg(["min", "max"]).round(3).values.tolist() == [[0.785, 0.983],
                                                                         [0.866, 1.022]]  # fmt: skip
    outside = kept[(kept.window - 1).abs() > 0.07]
    assert set(zip(outside.kernel, outside["size"], strict=True)) == {("triton_fp8", 8192)}
    flushed = got[got.timer.str.startswith("do_bench")].groupby("size").window
    assert flushed.agg(["min", "max"]).round(3).values.tolist() == [[0.791, 0.979], [0.967, 1.097]]


def _against_the_sustained_timer(log: str):
    """Each timer of each kernel (dtype, size, `triton` or `ref`) over the sustained timer of
    the same kernel in the same log: its rate, and its rate per cycle (the window clock; for
    do_bench and its median the runs clock)."""
    rows = []
    for line in log.splitlines():
        m = re.match(r"time torch\.(\S+) (\d+) (\S+)", line)
        if not m:
            continue
        got = {
            which: (tflops, mhz.get("runs", mhz["window"])) for which, tflops, mhz in _timers(line)
        }
        rate, clock = got.pop("sustained")
        kernel = "triton" if m[3].startswith("triton") else "ref"
        for which, (tflops, mhz) in got.items():
            rows.append((m[1], int(m[2]), kernel, which, tflops / rate,
                         tflops / mhz / (rate / clock)))  # fmt: skip
    return pd.DataFrame(rows, columns=["dtype", "size", "kernel", "timer", "rate", "per_cycle"])


def test_triton_timers_beside_a_sustained_load_of_their_own():
    """Entry "Triton's timers beside a sustained load of their own": the sustained timer at
    0.998-1.019 of the harness's sustained rows for the Triton builds (0.998-1.044 with torch's
    cuBLAS); its window clock within 1.3% of NVML's at 9 of 12 kernels, 0.967 for triton_bf16 at
    4096 and 0.900 and 0.899 for triton_bf16 and triton_fp8 at 8192; per cycle of the same clock
    over the sustained timer, cudagraph 0.986-1.017, events 0.985-1.015, warm 0.943-1.000,
    do_bench 0.880-1.020 and its median 0.903-0.990 (triton_bf16 at 4096: 0.880 against warm's
    0.943)."""
    f = DATA / "h100-sustained-timer"
    log = read_text(f / "triton_check.log")
    checks = re.findall(r"GPU (idle|busy) 200 ms: window (\d+) MHz, NVML (\d+) MHz", log)
    assert checks == [("idle", "1980", "1980"), ("busy", "1980", "1980")]
    assert "0 check(s) over 2^-9" in log
    assert (read_csv(f / "harness.csv").verification == "PASS").all()
    both = _timer_ratios(f, ("window", "runs"))
    sus = both[both.timer == "sustained"]
    assert len(sus) == 12
    mine = sus[sus.kernel.str.startswith("triton")].rate
    assert (round(mine.min(), 3), round(mine.max(), 3)) == (0.998, 1.019)
    assert (round(sus.rate.min(), 3), round(sus.rate.max(), 3)) == (0.998, 1.044)
    window = re.findall(r"sustained [\d.]+ \((\d+) MHz, \d+ W, window (\d+) MHz\)", log)
    ratio = [round(int(w) / int(n), 3) for n, w in window]
    assert sorted(ratio)[:3] == [0.899, 0.9, 0.967]
    assert sum(round(abs(r - 1), 3) <= 0.013 for r in ratio) == 9
    t = _against_the_sustained_timer(log)
    assert len(t) == 60
    spread = t.groupby("timer").per_cycle.agg(["min", "max"]).round(3)
    assert spread.to_dict("index") == {
        "cudagraph": {"min": 0.986, "max": 1.017},
        "do_bench": {"min": 0.88, "max": 1.02},
        "do_bench median": {"min": 0.903, "max": 0.99},
        "events": {"min": 0.985, "max": 1.015},
        "warm": {"min": 0.943, "max": 1.0},
    }


def _clean_launches(folder, name: str) -> int:
    """A memcheck log of one line a launch (tools/memcheck.py): its launches, each asserted
    clean."""
    lines = read_text(folder / name).splitlines()
    assert all("ERROR SUMMARY: 0 errors" in line for line in lines), name
    return len(lines)


def _fp8_pct(t):
    """An every-build table's rows but cuBLASLt's, with `pct`: cuBLASLt's fastest time at the
    same m over the row's, in percent."""
    ref = t[t.variant == "cublaslt_fp8"].groupby("m").kernel_ms_median.min()
    r = t[t.variant != "cublaslt_fp8"].copy()
    r["pct"] = 100 * r.m.map(ref) / r.kernel_ms_median
    return r


def _skinny_fp8_pct(t):
    """skinny_fp8's rows of an every-build table, with `pct`: cuBLASLt's fastest time at the
    same m over the row's, in percent."""
    r = _fp8_pct(t)
    return r[r.variant == "skinny_fp8"]


def test_fp8_tiles_of_64_rows_for_the_smallest_sides():
    """Entry "FP8 tiles of 64 rows for the smallest sides": the best 64-row skinny_fp8 build with
    every tile whole at 87.3, 94.2, 98.6 and 98.0% of cuBLASLt; the best of 128 or 256 rows so
    at 75.2, 91.3, 96.3 and 90.0%; at the rule's grid 50.7-78.4% (wider) and 62.2-82.8% (64
    rows); the rule over every tile whole 1.00-1.84 a build; memcheck 40 of 40 clean; at the
    eight misses of seed 755700 with a small side m, the best build 79.1-97.7%."""
    f = DATA / "h100-fp8-narrow-tiles"
    t = read_csv(f / "every-skinny-4-products.csv")
    assert len(t) == 428 and (t.verification == "PASS").all()
    t["whole"] = t.launch_facts.str.contains("WORKERS=0")
    r = _skinny_fp8_pct(t)
    r["narrow"] = r.instance.str.contains("_BM64_")
    best = r.groupby(["narrow", "whole", "m"]).pct.max().round(1)
    assert best[(True, True)].tolist() == [87.3, 94.2, 98.6, 98.0]
    assert best[(False, True)].tolist() == [75.2, 91.3, 96.3, 90.0]
    assert (best[(False, False)].min(), best[(False, False)].max()) == (50.7, 78.4)
    assert (best[(True, False)].min(), best[(True, False)].max()) == (62.2, 82.8)
    grids = r.pivot_table(index=["m", "instance"], columns="whole", values="kernel_ms_median")
    ratio = (grids[False] / grids[True]).round(2)
    assert (ratio.min(), ratio.max()) == (1.0, 1.84)
    for name in ("memcheck.txt", "memcheck-stages11.txt"):
        assert _clean_launches(f, name) == 20
    # the eight misses with a small side m, on the second board: the best build of each
    t = read_csv(f / "every-skinny-8-misses.csv")
    assert len(t) == 856 and (t.verification == "PASS").all()
    pct = _skinny_fp8_pct(t).groupby("m").pct.max().round(1)
    assert pct.to_dict() == {16: 87.0, 18: 86.1, 22: 97.7, 27: 94.5, 77: 79.8, 150: 87.4,
                             162: 79.1, 257: 80.9}  # fmt: skip


def test_fp8_tiles_of_16_to_96_columns_for_a_small_n():
    """Entry "FP8 tiles of 16 to 96 columns for a small side n": the best narrow streamk_fp8
    build against persistent_fp8's best at nine products, its columns, every narrow build's
    rule grid over every tile whole 1.12-2.37 (median 1.40, 66 pairs), 1,273 rows all PASS,
    memcheck 50 of 50 clean (first board)."""
    f = DATA / "h100-fp8-narrow-n"
    old = pd.concat(
        [read_csv(f / n) for n in ("every-6-products.csv", "every-6-more-products.csv")]
    )
    new = read_csv(f / "every-narrow-9-products.csv")
    assert (len(old), len(new)) == (958, 315)
    assert (pd.concat([old, new]).verification == "PASS").all()
    assert pd.concat([old, new]).gpu_uuid.nunique() == 1
    old, new = _fp8_pct(old), _fp8_pct(new)
    persistent = old[old.variant == "persistent_fp8"].groupby("m").pct.max().round(1)
    narrow = new[~new.BN.isin([64, 128])]
    best = narrow.loc[narrow.groupby("m").pct.idxmax()].set_index("m")
    got = {m: (persistent[m], round(best.pct[m], 1), best.BN[m], best.whole[m]) for m in best.index}
    assert got == {
        565: (68.6, 78.6, 16, 1), 600: (79.1, 89.0, 16, 1), 2492: (76.6, 84.7, 16, 1),
        4151: (78.4, 87.1, 48, 1), 4739: (80.5, 84.9, 32, 1), 5017: (82.3, 85.4, 48, 1),
        5624: (93.5, 97.4, 48, 1), 6380: (96.5, 93.1, 32, 1), 12187: (91.5, 91.5, 48, 1),
    }  # fmt: skip
    grids = narrow.pivot_table(index=["m", "instance"], columns="whole",
                               values="kernel_ms_median").dropna()  # fmt: skip
    ratio = grids[0] / grids[1]
    assert len(ratio) == 66
    assert (round(ratio.min(), 2), round(ratio.max(), 2), round(ratio.median(), 2)) == (
        1.12,
        2.37,
        1.4,
    )
    assert (
        _clean_launches(f, "memcheck-48-80-96.txt") + _clean_launches(f, "memcheck-16-32.txt") == 50
    )


def test_fp8_tiles_of_64_rows_for_a_small_n_and_seed_726870s_misses():
    """Entry "FP8 tiles of 16 to 96 columns for a small side n", second board: streamk_fp8's
    64 x 16 tiles with every tile whole at 87.3, 92.1 and 92.5% of cuBLASLt against 78.6, 90.0
    and 83.2% for 128 x 16; at seven misses of seed 726870 the best new build against the best
    build before; 837 rows all PASS; memcheck 20 of 20 clean."""
    f = DATA / "h100-fp8-narrow-n"
    t = read_csv(f / "every-64-rows-4-products.csv")
    u = read_csv(f / "every-7-misses-726870.csv")
    assert (len(t), len(u)) == (180, 657)
    assert (pd.concat([t, u]).verification == "PASS").all()
    assert pd.concat([t, u]).gpu_uuid.nunique() == 1
    r = _fp8_pct(t)
    whole = r[r.whole == 1].groupby(["m", "BM", "BN"]).pct.max().round(1)
    assert {m: (whole[m, 64, 16], whole[m, 128, 16]) for m in (565, 600, 2492)} == {
        565: (87.3, 78.6), 600: (92.1, 90.0), 2492: (92.5, 83.2)}  # fmt: skip
    r = _fp8_pct(u)
    before = (r.variant == "persistent_fp8") | ((r.BM == 128) & r.BN.isin([64, 128]))
    got = pd.DataFrame({"before": r[before].groupby("m").pct.max(),
                        "new": r[~before].groupby("m").pct.max()}).round(1)  # fmt: skip
    assert got.to_dict("index") == {
        308: {"before": 64.7, "new": 86.9}, 611: {"before": 78.9, "new": 95.6},
        791: {"before": 75.3, "new": 79.0}, 1327: {"before": 94.3, "new": 105.8},
        4185: {"before": 81.0, "new": 92.7}, 4223: {"before": 76.7, "new": 78.8},
        14797: {"before": 97.1, "new": 99.3},
    }  # fmt: skip
    assert _clean_launches(f, "memcheck-64-rows.txt") == 20


def test_stream_k_rule_against_whole_tiles_on_an_h100():
    """Entry "Every build at BF16's and FP8's misses, on an H100": streamk_bf16's rule grid over
    the same build with every tile whole, 1.11-1.54 at 1024³-2048³, 1.42-1.48 at 1624³."""
    t = read_csv(DATA / "h100-every-build-misses" / "streamk-grids.csv")
    assert len(t) == 108 and (t.verification == "PASS").all()
    t["whole"] = t.launch_facts.str.contains("WORKERS=0")
    ratio = t.pivot_table(index=["m", "n", "k", "instance"], columns="whole",
                          values="kernel_ms_median", aggfunc="min").dropna()  # fmt: skip
    ratio = (ratio[False] / ratio[True]).round(2)
    square = ratio[ratio.index.get_level_values("m") >= 1024]
    assert (square.min(), square.max()) == (1.11, 1.54)
    at = ratio.xs(1624, level="m")
    assert (at.min(), at.max()) == (1.42, 1.48)


def test_a_fit_at_the_rules_grids_prices_the_whole_tile_grid_high():
    """Entry "A fit at the rule's grids prices the whole-tile grid high": refitted at the rule's
    launches alone, the whole tiles priced least at 22 of 33 pairs (H100) and 84 of 376
    (H200), slower than the rule measured at none and at one (by 5%), a median 1.433 and 1.423
    faster at the others; the price over the measured time, median +25.2% and +29.8%."""
    import sys

    sys.path.insert(0, str(ROOT / "lab" / "benchmarks"))
    from whole_from_rule import DEFAULT, compare, summary

    from mmbench.core.registry import load_registry

    registry = load_registry()
    got = [summary(compare(read_csv(p), registry))
           for p in DEFAULT]  # fmt: skip
    assert got == [
        dict(launches=33, whole_chosen=22, slower=0, worst=0.0, median_gain=1.433,
             median_error=0.252),
        dict(launches=376, whole_chosen=84, slower=1, worst=0.05, median_gain=1.423,
             median_error=0.298),
    ]  # fmt: skip


# each class's hand-written rungs and its reference, by hand from the registry's classes
LADDER_CLASSES = {
    "FP32": (["tiled_guarded", "coarsened", "blocktile_1d", "blocktile_2d", "blocktile_vec",
              "warptile", "warptile_db"], "cublas", "float32"),
    "TF32": (["mma_tf32", "wgmma_tf32", "persistent_tf32", "persistent_tf32_tn",
              "tmastore_tf32_tn"], "cublas_tf32", "float32"),
    "BF16": (["ws_bf16", "persistent_bf16", "deep_bf16", "tmastore_bf16"], "cublas", "bfloat16"),
    "FP8": (["persistent_fp8"], "cublaslt_fp8", "float8_e4m3"),
    "FP64": (["mma_f64", "ws_f64"], "cublas", "float64"),
}  # fmt: skip


def standing_by_hand(head: pd.DataFrame) -> dict:
    """(class, size) -> (the fastest hand-written rung, its % of the class's reference) at 4096
    and 8192, from rows already cut to the standing condition."""
    by_hand = {}
    for cls, (rungs, ref, dtype) in LADDER_CLASSES.items():
        for size in (4096, 8192):
            at = head[(head.m == size) & (head.dtype == dtype)]
            best = at[at.variant.isin(rungs)].sort_values("kernel_gflops").iloc[-1]
            refrate = at[at.variant == ref].kernel_gflops.item()
            by_hand[cls, size] = (best.variant, round(100 * best.kernel_gflops / refrate, 1))
    return by_hand


def percents(table: pd.DataFrame) -> dict:
    """The ladder report's standing table as standing_by_hand gives it."""
    return {(r.precision, r.size): (r.rung, round(100 * r.fraction, 1))
            for r in table.itertuples()}  # fmt: skip


def test_the_ladder_preset_on_an_h100_29_of_30_variants():
    """Entry "The ladder preset on an H100: 29 of 30 variants": 846 configurations of 29
    variants, all PASS, one board; triton_tf32's job failed at its import; the standing table,
    each class's fastest hand-written rung against its cuBLAS at 4096 and 8192 (sustained,
    normal inputs), worked out here from the log's rates and by the ladder report's own table
    from the same rows."""
    import sys

    sys.path.insert(0, str(ROOT / "lab" / "benchmarks"))
    from ladder_from_log import read_log, standing_of

    log = DATA / "h100-ladder-29-of-30" / "run.log"
    rows, bad, boards = read_log(Path(log))
    d = pd.DataFrame(rows)
    assert (len(d), d.variant.nunique(), bad) == (846, 29, [])
    assert set(d.verification) == {"PASS"}
    assert boards == {"NVIDIA H100 80GB HBM3 (GPU-d7b6f61b-49fd-453a-08c5-bc04abbee6c5)"}
    assert "triton_tf32" not in set(d.variant)
    assert "No module named 'mmbench.core.archive'" in read_text(log)
    head = d[(d.load == "sustained") & (d.distribution == "normal") & (d.rows == "")]
    by_hand = standing_by_hand(head)
    assert by_hand == {
        ("FP32", 4096): ("warptile_db", 99.1), ("FP32", 8192): ("warptile_db", 101.8),
        ("TF32", 4096): ("tmastore_tf32_tn", 100.9), ("TF32", 8192): ("tmastore_tf32_tn", 97.7),
        ("BF16", 4096): ("tmastore_bf16", 98.0), ("BF16", 8192): ("tmastore_bf16", 100.0),
        ("FP8", 4096): ("persistent_fp8", 92.4), ("FP8", 8192): ("persistent_fp8", 89.3),
        ("FP64", 4096): ("ws_f64", 99.9), ("FP64", 8192): ("ws_f64", 98.2),
    }  # fmt: skip
    assert percents(standing_of(d)) == by_hand


def test_fp32s_misses_are_the_builds_not_the_choice():
    """Entry "FP32's misses at seed 755700: the builds, not the choice among them": at the 14
    products where every warptile_db build ran, the fastest build's share of cuBLAS, geometric
    mean 81.5%, least 58.0% (312 x 197 x 924), below 85% at 10 of them."""
    every = read_csv(DATA / "h200-fp32-narrow-tiles" / "every-14-products.csv")
    ref = every[every.variant == "cublas"].groupby(["m", "n", "k"]).kernel_ms.min()
    fastest = every[every.variant == "warptile_db"].groupby(["m", "n", "k"]).kernel_ms.min()
    share = 100 * ref / fastest
    assert len(share) == 14
    assert round(gmean(share), 1) == 81.5
    assert (round(share.min(), 1), share.idxmin()) == (58.0, (312, 197, 924))
    assert (share < 85).sum() == 10


def test_the_ladder_preset_run_whole_on_an_h100():
    """Entry "The ladder preset run whole on an H100": 900 configurations of 30 variants, all
    PASS, one board, every job done; the standing table worked out by hand from the timings
    rows and by the ladder report's own table; this run beside the 29-of-30 run on another H100
    (846 shared, median ratio 0.999 at the 470 of side 4096 or more)."""
    import sys

    sys.path.insert(0, str(ROOT / "lab" / "benchmarks"))
    from ladder_beside import beside, read_run

    from mmbench.report import standing

    here = DATA / "h100-ladder-whole"
    t = read_csv(here / "timings.csv")
    assert (len(t), t.variant.nunique(), set(t.verification)) == (900, 30, {"PASS"})
    assert set(t.gpu_name) == {"NVIDIA H100 80GB HBM3"}
    log = read_text(here / "run.log")
    assert "145 of 145 steps (100%) done" in log
    assert "GPU-f0ce4f6a-09de-4f59-758a-c3dc80ac761e" in log
    head = t[(t.load == "sustained") & (t.distribution == "normal")]
    by_hand = standing_by_hand(head)
    assert by_hand == {
        ("FP32", 4096): ("warptile_db", 98.8), ("FP32", 8192): ("warptile_db", 101.4),
        ("TF32", 4096): ("tmastore_tf32_tn", 102.5), ("TF32", 8192): ("tmastore_tf32_tn", 98.0),
        ("BF16", 4096): ("tmastore_bf16", 97.6), ("BF16", 8192): ("tmastore_bf16", 100.1),
        ("FP8", 4096): ("persistent_fp8", 92.9), ("FP8", 8192): ("persistent_fp8", 89.1),
        ("FP64", 4096): ("ws_f64", 99.5), ("FP64", 8192): ("ws_f64", 98.4),
    }  # fmt: skip
    assert percents(standing.ladder_standing(t)) == by_hand
    assert sorted(k for k, (_, pct) in by_hand.items() if pct >= 100) == [
        ("BF16", 8192), ("FP32", 8192), ("TF32", 4096)]  # fmt: skip
    new = read_run(Path(here / "timings.csv"))
    old = read_run(Path(DATA / "h100-ladder-29-of-30" / "run.log"))
    shared = beside(new, old)
    big = shared[shared.m >= 4096]
    assert (len(shared), len(big), round(big.ratio.median(), 3)) == (846, 470, 0.999)


def test_fp8_and_bf16_at_4096_beside_cublas_under_nsight_compute():
    """Entry "FP8 and BF16 at 4096 beside cuBLAS under Nsight Compute": persistent_fp8 takes
    1.070 times cuBLASLt's time and reads 1.218 times its DRAM bytes (2.26 and 1.85 times A and
    B once, 2 x 4096^2 bytes); one more FP32 operation per output element; tmastore_bf16 takes
    1.016 times cuBLAS's time and reads less from DRAM than it."""
    t = read_csv(DATA / "h100-ladder-whole" / "metrics-4096-fp8-bf16.csv")
    v = t.pivot_table(index="metric", columns="variant", values="value", aggfunc="first")
    fp8, lt = v["persistent_fp8"], v["cublaslt_fp8"]
    assert round(fp8.duration / lt.duration, 3) == 1.070
    assert round(fp8.dram_read_bytes / lt.dram_read_bytes, 3) == 1.218
    once = 2 * 4096**2  # A and B, one byte an element
    assert (round(fp8.dram_read_bytes / once, 2), round(lt.dram_read_bytes / once, 2)) == (
        2.26,
        1.85,
    )
    assert fp8.flop_count_sp - lt.flop_count_sp == 4096**2
    assert lt.flop_count_sp == 4096**2 * (4096 // 128)
    bf, ref = v["tmastore_bf16"], v["cublas"]
    assert round(bf.duration / ref.duration, 3) == 1.016
    assert bf.dram_read_bytes < ref.dram_read_bytes
    assert set(t.distribution) == {"int09"} and set(t.gpu_name) == {"NVIDIA H100 80GB HBM3"}


def test_a_split_fix_up_in_a_tree_is_slower_at_the_splits_the_model_chooses():
    """Entry "Split-K fix-up in a tree over the splits": 276 rows PASS at the model's splits (at
    most 16); the skeleton's split rungs on the same build and split run 0.925-1.184x main's time
    (25 products, median 1.098), faster only at 13, 14 and 16 splits; with up to 64 splits, each at
    least 64 deep, 18 x 152 x 2881 splits 45 ways and the tree runs 0.598-0.705x the in-order
    fix-up's time there (ws_f64, tmastore_bf16, persistent_bf16, deep_bf16), still 1.135-1.530x
    main at its 11 splits."""
    f = DATA / "h100-fixup-tree"
    t = read_csv(f / "default-splits.csv.xz")
    assert len(t) == 276 and (t.verification == "PASS").all()
    t["launch_facts"] = t.launch_facts.fillna("")
    key = ["variant", "dtype", "m", "n", "k"]
    best = t.sort_values("kernel_ms_median").drop_duplicates(["kernels", *key])
    w = best.pivot_table(index=key, columns="kernels", values="kernel_ms_median")
    facts = best.pivot_table(index=key, columns="kernels", values="launch_facts", aggfunc="first")
    inst = best.pivot_table(index=key, columns="kernels", values="instance", aggfunc="first")
    same = (facts["main"] == facts["tree"]) & (inst["main"] == inst["tree"])
    splits = facts["main"].str.extract(r"SPLITS=(\d+)")[0].astype(float)
    users = ["persistent_tf32", "persistent_bf16", "deep_bf16", "tmastore_bf16", "ws_f64"]
    split = same & (splits > 1) & w.index.get_level_values("variant").isin(users)
    ratio = (w["tree"] / w["main"])[split]
    assert len(ratio) == 25
    assert (round(ratio.min(), 3), round(ratio.max(), 3), round(ratio.median(), 3)) == (
        0.925, 1.184, 1.098)  # fmt: skip
    assert sorted(splits[split][ratio < 1].astype(int)) == [13, 14, 16]

    main = read_csv(f / "deep-splits-main.csv.xz")
    assert len(main) == 108 and (main.verification == "PASS").all()
    main = main.sort_values("kernel_ms_median").drop_duplicates(["most_splits", *key])
    main["splits"] = main.launch_facts.fillna("").str.extract(r"SPLITS=(\d+)")[0]
    flat = main.set_index(["most_splits", *key])
    text = read_text(f / "deep-splits-printout.txt.xz")
    rows = re.findall(r"^ *(\w+) +(\w+) +(\d+) +(\d+) +(\d+) .* (?:True|False) +([\d.]+) +([\d.]+)"
                      r" +[\d.]+$", text, re.M)  # fmt: skip
    assert len(rows) == 54
    tree = {(v, d, int(a), int(b), int(c)): float(us) for v, d, a, b, c, _, us in rows}
    deep, shallow = [], []
    for rung in ("ws_f64", "tmastore_bf16", "persistent_bf16", "deep_bf16"):
        at = (rung, "float64" if rung == "ws_f64" else "bfloat16", 18, 152, 2881)
        assert flat.loc[(64, *at), "splits"] == "45" and flat.loc[(16, *at), "splits"] == "11"
        deep.append(tree[at] / (1e3 * flat.loc[(64, *at), "kernel_ms_median"]))
        shallow.append(tree[at] / (1e3 * flat.loc[(16, *at), "kernel_ms_median"]))
    assert (round(min(deep), 3), round(max(deep), 3)) == (0.598, 0.705)
    assert (round(min(shallow), 3), round(max(shallow), 3)) == (1.135, 1.530)


def test_the_fp8_part_of_the_shapes_preset_with_an_h100_calibration_of_every_fp8_build():
    """Entry "FP8 at any shape with an H100 calibration of every FP8 build": with the H100 rows
    of every build of persistent_fp8, streamk_fp8 and skinny_fp8, the best rung is 90.3% of
    cuBLASLt (geometric mean) and 71.2% at least at seed 755700, 9 products below 85%; 91.2 and
    76.0% at seed 726870, 12 below; with the kept table (the H200's rows, which lack the narrow
    builds) on the same board 86.6 and 57.8%, 20 below, and the best rung's speed then 1/1.041
    of the new (geometric mean over the 64 products; cuBLASLt's 0.999)."""
    f = DATA / "h100-shapes-fp8"
    share = {}
    for name in ("sweep-755700", "sweep-726870", "sweep-755700-kept-calibration"):
        t = read_csv(f / f"{name}.csv.xz")
        assert len(t) == 64 and set(t.precision) == {"FP8"}
        p = t["% of ref"]
        share[name] = (round(gmean(p), 1), p.min(), int((p < 85).sum()))
    assert share == {"sweep-755700": (90.3, 71.2, 9), "sweep-726870": (91.2, 76.0, 12),
                     "sweep-755700-kept-calibration": (86.6, 57.8, 20)}  # fmt: skip
    new = read_csv(f / "sweep-755700.csv.xz")
    old = read_csv(f / "sweep-755700-kept-calibration.csv.xz")
    both = new.merge(old, on=["m", "n", "k"], suffixes=("", "_kept"))
    assert len(both) == 64
    assert round(gmean(both["GFLOP/s"] / both["GFLOP/s_kept"]), 3) == 1.041
    ref = both["reference GFLOP/s"] / both["reference GFLOP/s_kept"]
    assert round(gmean(ref), 3) == 0.999


def test_the_fp8_shapes_choice_beside_every_fp8_build_on_other_h100s():
    """Entry "FP8 at any shape with an H100 calibration of every FP8 build", its choice beside
    the every-build runs of the narrow-tile entries (other H100 boards, cuBLASLt in each run):
    at six misses the fastest build there was 78.8 / 76.0 (4223 x 75 x 5832), 86.9 / 82.4
    (308 x 179 x 2620), 87.3 / 82.6 (565 x 55 x 1802), 95.6 / 89.8 (611 x 71 x 702), 84.9 / 81.1
    (4739 x 59 x 5945) and 92.5 / 85.9 (2492 x 41 x 1038) % of cuBLASLt against the model's
    choice here."""
    n = DATA / "h100-fp8-narrow-n"
    e = pd.concat([read_csv(n / f) for f in ("every-7-misses-726870.csv.xz",
                                             "every-64-rows-4-products.csv.xz",
                                             "every-narrow-9-products.csv.xz")], ignore_index=True)  # fmt: skip
    e = e[e.verification == "PASS"].assign(n16=lambda d: (d.n + 15) // 16 * 16,
                                           k16=lambda d: (d.k + 15) // 16 * 16)  # fmt: skip
    key = ["m", "n16", "k16", "gpu_uuid"]
    best = e[e.variant != "cublaslt_fp8"].groupby(key).kernel_ms_median.min()
    ref = e[e.variant == "cublaslt_fp8"].groupby(key).kernel_ms_median.min()
    every = (100 * ref / best).dropna().groupby(["m", "n16", "k16"]).max()
    chosen = pd.concat([read_csv(DATA / "h100-shapes-fp8" / f"sweep-{s}.csv.xz")
                        for s in (726870, 755700)], ignore_index=True)  # fmt: skip
    chosen = chosen.set_index([chosen.m, (chosen.n + 15) // 16 * 16, (chosen.k + 15) // 16 * 16])
    got = {(m, n, k): (round(every[m, (n + 15) // 16 * 16, (k + 15) // 16 * 16], 1),
                       float(chosen.loc[(m, (n + 15) // 16 * 16, (k + 15) // 16 * 16), "% of ref"]))
           for m, n, k in [(4223, 75, 5832), (308, 179, 2620), (565, 55, 1802), (611, 71, 702),
                           (4739, 59, 5945), (2492, 41, 1038)]}  # fmt: skip
    assert got == {(4223, 75, 5832): (78.8, 76.0), (308, 179, 2620): (86.9, 82.4),
                   (565, 55, 1802): (87.3, 82.6), (611, 71, 702): (95.6, 89.8),
                   (4739, 59, 5945): (84.9, 81.1), (2492, 41, 1038): (92.5, 85.9)}  # fmt: skip


def _streamk_fp8_narrow_at_565_55_1802(cal) -> dict[int, tuple[float, float]]:
    """streamk_fp8's 64 x 16 and 64 x 32 builds (CHAIN 8) at 565 x 55 x 1802 with every tile
    whole: (µs the H100 rows of `cal` predict, µs the every-64-rows run measured), per BN."""
    from mmbench.core.registry import load_registry
    from mmbench.core.timemodel import Costs, predict_ms, worker_choices

    v = load_registry(ROOT / "kernels" / "registry.yaml")["streamk_fp8"]
    e = read_csv(DATA / "h100-fp8-narrow-n" / "every-64-rows-4-products.csv.xz")
    at = e[(e.m == 565) & (e.n == 55) & (e.k == 1802) & e.whole & (e.verification == "PASS")]
    got = {}
    for bn in (16, 32):
        inst = f"float8_e4m3_BM64_BN{bn}_STAGES8_CLUSTER1_GROUP8_CHAIN8"
        c = cal[cal.instance == inst].iloc[0]
        p = v.instance(inst)
        whole = worker_choices(v, p, 565, 55, 1802, 132, int(c.blocks_per_sm))[1]
        pred = predict_ms(v, p, Costs.of(c, c.blocks_per_sm), 565, 55, 1802, 132, whole) * 1e3
        got[bn] = (round(pred, 2), round(at[at.instance == inst].kernel_ms_median.min() * 1e3, 2))
    return got


def test_the_h100_fit_prices_streamk_fp8s_64_by_16_tiles_high_at_tiny_products():
    """Entry "FP8 at any shape with an H100 calibration of every FP8 build", the fit: with the
    H100 rows then kept (the fit of the H100 tuning runs and the `fp8` calibrate run),
    streamk_fp8's 64 x 16 build (CHAIN 8) with every tile whole is predicted at 10.12 µs at
    565 x 55 x 1802 and ran 7.06 (every-64-rows run), where the 64 x 32 build is predicted at
    8.63 and ran 7.33; its fixed cost (7.69 µs) is the highest of streamk_fp8's unclustered
    builds."""
    from mmbench.core.registry import load_registry
    from mmbench.core.timemodel import calibrate

    runs = [DATA / "h100-tune-model" / "squares.csv.xz", DATA / "h100-tune-model" / "small_side.csv.xz",
            DATA / "h100-calibrate" / "fp8.csv.xz"]  # fmt: skip
    cal = calibrate(pd.concat([read_csv(p) for p in runs], ignore_index=True),
                    load_registry(ROOT / "kernels" / "registry.yaml"))  # fmt: skip
    cal = cal[(cal.gpu_name == "NVIDIA H100 80GB HBM3") & (cal.variant == "streamk_fp8")]
    assert _streamk_fp8_narrow_at_565_55_1802(cal) == {16: (10.12, 7.06), 32: (8.63, 7.33)}
    unclustered = cal[cal.instance.str.contains("CLUSTER1")]
    top = unclustered.loc[unclustered.fixed_us.idxmax()]
    assert top.instance == "float8_e4m3_BM64_BN16_STAGES8_CLUSTER1_GROUP8_CHAIN8"
    assert round(top.fixed_us, 2) == 7.69


def _h100_fp8_fit_with_short_launches():
    """The H100 rows of the FP8 rungs as the recorded runs give them: the H100 tuning runs, the
    `fp8` calibrate run and the `fp8_short` one (dram_floor.FITTED; kernels/calibration.csv
    kept them)."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import dram_floor

    return dram_floor.fitted_rows().reset_index()


def test_short_whole_launches_bring_the_h100_fit_of_streamk_fp8s_narrow_tiles_to_their_times():
    """Entry "FP8 calibrated at short products on an H100": with the `fp8_short` run (1,800
    launches of streamk_fp8's and skinny_fp8's builds at twelve short products, all PASS) in the
    fit, streamk_fp8's 64 x 16 build (CHAIN 8) with every tile whole at 565 x 55 x 1802 is
    predicted at 7.44 µs (ran 7.06; 10.12 before) and the 64 x 32 build at 7.70 (ran 7.33;
    8.63 before)."""
    run = read_csv(DATA / "h100-calibrate" / "fp8_short.csv.xz")
    assert len(run) == 1800 and set(run.verification) == {"PASS"}
    assert set(run.variant) == {"streamk_fp8", "skinny_fp8"}
    assert len(run.groupby(["m", "n", "k"])) == 12
    cal = _h100_fp8_fit_with_short_launches()
    assert _streamk_fp8_narrow_at_565_55_1802(cal[cal.variant == "streamk_fp8"]) == {
        16: (7.44, 7.06), 32: (7.7, 7.33)}  # fmt: skip


def test_the_fp8_part_of_the_shapes_preset_before_and_after_the_short_calibration():
    """Entry "FP8 calibrated at short products on an H100": the FP8 part at both seeds on one
    board (GPU-b24d6701), with the short products in the H100 rows and with the rows before:
    seed 755700 89.9 / 70.8% (10 below 85%) against 89.9 / 72.4% (11); seed 726870 91.6 /
    76.3% (9) against 91.2 / 74.6% (12); the best rung's speed after over before 1.000 and
    1.005 (geometric mean), cuBLASLt's 1.000 and 1.000; the choice changed at 15 and 12
    products, from 0.825 (24 x 6137 x 14565) to 1.139 (21 x 549 x 1392)."""
    f = DATA / "h100-shapes-fp8-short"
    share, speed, ref, changed, ratios = {}, {}, {}, {}, []
    for seed in (755700, 726870):
        for when in ("", "-before"):
            t = read_csv(f / f"sweep-{seed}{when}.csv.xz")
            assert len(t) == 64 and set(t.precision) == {"FP8"}
            p = t["% of ref"]
            share[f"{seed}{when}"] = (round(gmean(p), 1), p.min(), int((p < 85).sum()))
        both = read_csv(f / f"sweep-{seed}.csv.xz").merge(
            read_csv(f / f"sweep-{seed}-before.csv.xz"), on=["m", "n", "k"], suffixes=("", "_b")
        )
        assert len(both) == 64
        speed[seed] = round(gmean(both["GFLOP/s"] / both["GFLOP/s_b"]), 3)
        ref[seed] = round(gmean(both["reference GFLOP/s"] / both["reference GFLOP/s_b"]), 3)
        moved = both[
            (both.parameters != both.parameters_b) | (both["best rung"] != both["best rung_b"])
        ]
        changed[seed] = len(moved)
        ratios += list(moved["GFLOP/s"] / moved["GFLOP/s_b"])
    assert share == {"755700": (89.9, 70.8, 10), "755700-before": (89.9, 72.4, 11),
                     "726870": (91.6, 76.3, 9), "726870-before": (91.2, 74.6, 12)}  # fmt: skip
    assert speed == {755700: 1.0, 726870: 1.005} and ref == {755700: 1.0, 726870: 1.0}
    assert changed == {755700: 15, 726870: 12}
    assert (round(min(ratios), 3), round(max(ratios), 3)) == (0.825, 1.139)


def test_the_h100_fp8_fit_prices_memory_bound_launches_below_reading_their_operands():
    """Entry "FP8 calibrated at short products on an H100": of the FP8 rungs' 350 launches in
    the two shapes runs after the short calibration, the model (the H100 rows with the short
    products) predicts 24 in less time than reading A and B once and writing C (FP32) takes at
    the H100's 3.35 TB/s; there it predicts 0.452 to 0.630 of the measured time (median 0.523),
    elsewhere 0.560 to 1.140 (median 0.938). At 24 x 6137 x 14565 it predicts 23.8 µs
    for skinny_fp8's 256 x 32 build, which ran 46.3."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import dram_floor as d

    x = d.shapes_errors(d.Model()).rename(columns={"us": "pred"})
    x["floor"] = d.operand_bytes(x.m, x.n, x.k) / 3.35e6
    below, above = x[x.pred < x.floor], x[x.pred >= x.floor]
    assert (len(x), len(below)) == (350, 24)
    assert [round(q, 3) for q in below.plain.quantile([0, 0.5, 1])] == [0.452, 0.523, 0.63]
    assert [round(q, 3) for q in above.plain.quantile([0, 0.5, 1])] == [0.56, 0.938, 1.14]
    at = x[(x.m == 24) & (x.n == 6137)].iloc[0]
    assert at.instance.startswith("float8_e4m3_BM256_BN32")
    assert (round(at.pred, 1), round(at.ran, 1)) == (23.8, 46.3)


def test_a_floor_at_the_operand_bytes_worsens_the_fp8_choice():
    """Entry "A floor at the operand bytes does not mend the FP8 choice"
    (lab/benchmarks/dram_floor.py): with the calibration runs' rates (1.10 to 2.20 TB/s) the
    shapes runs' 350 launches' median error x1.089 → x1.080, worst x2.211 → x1.739, under 0.8
    of the time 74 → 30, over 1.2 0 → 6, and the every-build runs' 32 products choose at 1.037
    → 1.091 of the fastest; with the memory-bound run's rates too (1,212 launches, all PASS;
    2.15 to 2.67 TB/s) x1.082, x1.739, 55, 0 and 1.073, at worst 1.893 (14797 x 70 x 15316)."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import dram_floor as d

    run = read_csv(d.LARGE)
    assert len(run) == 1212 and set(run.verification) == {"PASS"}
    got = {}
    for large in (False, True):
        model = d.Model(large)
        r = model.rate / 1e6
        e = d.shapes_errors(model)
        assert len(e) == 350
        spread = {c: np.exp(np.abs(np.log(e[c]))) for c in ("plain", "floored")}
        c = d.every_choices(model)
        assert len(c) == 32
        worst = c.loc[c.floored.idxmax()]
        got[large] = dict(
            rates=(len(r), round(r.min(), 2), round(r.max(), 2), round(r.median(), 2)),
            shapes={col: (round(s.median(), 3), round(s.max(), 3), int((e[col] < 0.8).sum()),
                          int((e[col] > 1.2).sum())) for col, s in spread.items()},
            choice=(round(gmean(c.plain), 3), round(gmean(c.floored), 3)),
            worst=(worst.m, worst.n, worst.k, round(worst.floored, 3)),
        )  # fmt: skip
    assert got[False] == dict(rates=(127, 1.1, 2.2, 1.7),
                              shapes={"plain": (1.089, 2.211, 74, 0), "floored": (1.08, 1.739, 30, 6)},
                              choice=(1.037, 1.091), worst=(14797, 70, 15316, 1.893))  # fmt: skip
    assert got[True] == dict(rates=(127, 2.15, 2.67, 2.48),
                             shapes={"plain": (1.089, 2.211, 74, 0), "floored": (1.082, 1.739, 55, 0)},
                             choice=(1.037, 1.073), worst=(14797, 70, 15316, 1.893))  # fmt: skip


def test_at_14797_by_70_by_15316_the_fp8_builds_of_one_column_tile_run_fastest():
    """Entry "A floor at the operand bytes does not mend the FP8 choice": at 14797 x 70 x
    15316 (every-7-misses run) streamk_fp8's builds of one column tile (BN 80 to 128) ran 92.6
    to 94.9 µs, its builds of BN 16 to 64 161.9 to 201.9, persistent_fp8's 128 x 64 105.1."""
    e = read_csv(DATA / "h100-fp8-narrow-n" / "every-7-misses-726870.csv.xz")
    g = e[(e.m == 14797) & (e.n == 70) & (e.k == 15316) & (e.verification == "PASS")].copy()
    g["BN"] = g.instance.str.extract(r"_BN(\d+)_", expand=False).astype(int)
    g["BM"] = g.instance.str.extract(r"_BM(\d+)_", expand=False).astype(int)
    best = (g.groupby(["variant", "BM", "BN"]).kernel_ms_median.min() * 1e3).round(1)
    sk = best["streamk_fp8"]
    one = sk[sk.index.get_level_values("BN") >= 80]
    more = sk[sk.index.get_level_values("BN") <= 64]
    assert (one.min(), one.max(), more.min(), more.max()) == (92.6, 94.9, 161.9, 201.9)
    assert best["persistent_fp8", 128, 64] == 105.1


def test_tiles_along_the_small_side_read_the_large_operand_again_under_stream_k():
    """Entry "A floor at the operand bytes does not mend the FP8 choice", its table: the
    memory-bound run's fastest build at the rule's grid per rung and tiles along the small
    side: 128 x 16384 x 12288 skinny_fp8 99.8, 118.8, 150.7, 237.2 µs (1, 2, 4, 8 tiles),
    streamk_fp8 96.3, 149.9 (1, 2); 16384 x 128 x 12288 streamk_fp8 98.6, 146.4, 182.0, 154.2,
    222.9 (1, 2, 3, 4, 8), persistent_fp8 85.5, 88.7 (1, 2)."""
    t = read_csv(DATA / "h100-fp8-memory-bound" / "calibrate-6-products.csv.xz")
    t = t[(t.verification == "PASS") & ~(t.workers.fillna(0) > 0)].copy()
    bm = t.instance.str.extract(r"_BM(\d+)_", expand=False).astype(int)
    bn = t.instance.str.extract(r"_BN(\d+)_", expand=False).astype(int)
    small = np.where(t.m < t.n, t.m, t.n)
    # skinny_fp8 exchanges the operands: its BN tiles m, its BM n
    along = np.where((t.variant == "skinny_fp8") == (t.m < t.n), bn, bm)
    t["tiles"] = -(-small // along)
    best = (t.groupby(["m", "n", "variant", "tiles"]).kernel_ms.min() * 1e3).round(1)
    got = {key: best[key].to_dict() for key in [(128, 16384, "skinny_fp8"), (128, 16384, "streamk_fp8"),
                                                 (16384, 128, "streamk_fp8"), (16384, 128, "persistent_fp8")]}  # fmt: skip
    assert got == {(128, 16384, "skinny_fp8"): {1: 99.8, 2: 118.8, 4: 150.7, 8: 237.2},
                   (128, 16384, "streamk_fp8"): {1: 96.3, 2: 149.9},
                   (16384, 128, "streamk_fp8"): {1: 98.6, 2: 146.4, 3: 182.0, 4: 154.2, 8: 222.9},
                   (16384, 128, "persistent_fp8"): {1: 85.5, 2: 88.7}}  # fmt: skip


def test_a_floor_counting_the_re_reads_worsens_or_leaves_the_fp8_choice():
    """Entry "A floor at the operand bytes does not mend the FP8 choice", its last section
    (dram_floor.RereadModel): 2.67 TB/s, re-read shares persistent_fp8 0.143, streamk_fp8
    0.333, skinny_fp8 0.300; the larger of the two times chooses at 1.057 of the fastest
    (1.037 without); the soft maximum (p 4) at 1.037, worst error x1.551, 34 launches under 0.8
    of their time and 17 over 1.2."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import dram_floor as d

    hard, soft = d.RereadModel(), d.RereadModel(4)
    assert round(hard.bw / 1e6, 2) == 2.67
    assert {v: round(f, 3) for v, f in hard.share.items()} == {
        "persistent_fp8": 0.143, "streamk_fp8": 0.333, "skinny_fp8": 0.3}  # fmt: skip
    for model, plain, floored in ((hard, 1.037, 1.057), (soft, 1.037, 1.037)):
        c = d.every_choices(model)
        assert (round(gmean(c.plain), 3), round(gmean(c.floored), 3)) == (plain, floored)
    e = d.shapes_errors(soft)
    spread = np.exp(np.abs(np.log(e.floored)))
    got = (round(spread.max(), 3), int((e.floored < 0.8).sum()), int((e.floored > 1.2).sum()))
    assert got == (1.551, 34, 17)


TMASTORE_FP8 = DATA / "h100-tmastore-fp8"


def test_tmastore_fp8_at_squares_beside_persistent_fp8_on_one_h100():
    """Entry "tmastore_fp8: FP8 tiles stored by the copy engine": every build of tmastore_fp8
    (48) and persistent_fp8 (52) and cuBLASLt at five squares on one H100 (GPU-d23d716e), in
    bursts, all 505 PASS; each rung's fastest build against cuBLASLt: 1854 88.2 against 84.3%,
    2527 87.5 / 81.4, 3207 91.7 / 84.9, 3520 100.0 / 86.2, 4096 98.6 / 93.3.  Fitted on its
    calibrate run (864 launches, all PASS), the 128 x 128 build (6 stages, CHAIN 8) costs 2.41 µs
    a tile against persistent_fp8's 3.75 (its `fp8` run), with 0.340 and 0.336 µs a k-tile."""
    from mmbench.core.registry import load_registry
    from mmbench.core.timemodel import calibrate

    e = read_csv(TMASTORE_FP8 / "every-5-squares.csv.xz")
    assert len(e) == 505 and set(e.verification) == {"PASS"}
    assert set(e.gpu_uuid) == {"GPU-d23d716e-6bed-67c4-0f57-660f9b8052c8"}
    builds = e.groupby("variant").instance.nunique().to_dict()
    assert builds == {"tmastore_fp8": 48, "persistent_fp8": 52, "cublaslt_fp8": 1}
    best = e.groupby(["m", "variant"]).kernel_ms_median.min().unstack()
    share = {m: (round(100 * r.cublaslt_fp8 / r.tmastore_fp8, 1),
                 round(100 * r.cublaslt_fp8 / r.persistent_fp8, 1))
             for m, r in best.iterrows()}  # fmt: skip
    assert share == {1854: (88.2, 84.3), 2527: (87.5, 81.4), 3207: (91.7, 84.9),
                     3520: (100.0, 86.2), 4096: (98.6, 93.3)}  # fmt: skip
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    run = read_csv(DATA / "h100-calibrate" / "tmastore_fp8.csv.xz")
    assert len(run) == 864 and set(run.verification) == {"PASS"}
    tm = calibrate(run, registry)
    pf = calibrate(read_csv(DATA / "h100-calibrate" / "fp8.csv.xz"), registry)
    one = "float8_e4m3_BM128_BN128_STAGES6_CLUSTER1_GROUP8_CHAIN8"
    t = tm[tm.instance == one].iloc[0]
    p = pf[(pf.variant == "persistent_fp8") & (pf.instance == one)].iloc[0]
    assert (round(t.unit_us, 2), round(p.unit_us, 2)) == (2.41, 3.75)
    assert (round(t.ktile_us, 3), round(p.ktile_us, 3)) == (0.340, 0.336)


def test_tmastore_fp8_in_the_fp8_part_of_the_shapes_preset_on_an_h100():
    """Entry "tmastore_fp8: FP8 tiles stored by the copy engine": the FP8 part at both seeds with
    tmastore_fp8 calibrated, on GPU-d23d716e, against the runs before it (GPU-b24d6701, entry
    "FP8 calibrated at short products on an H100"): seed 726870 94.3 / 74.1% of cuBLASLt (5 below
    85%) against 91.6 / 76.3% (9); seed 755700 92.2 / 71.0% (7) against 89.9 / 70.8% (10); the
    best rung's speed now over before 1.037 and 1.036 (geometric mean), none 5% slower;
    cuBLASLt's 1.007 and 1.010; tmastore_fp8 the best rung at 31 products of each seed, 1.062
    and 1.057 times as fast there as the best rung before."""
    got = {}
    for seed in (726870, 755700):
        now = read_csv(TMASTORE_FP8 / f"sweep-{seed}.csv.xz")
        before = read_csv(DATA / "h100-shapes-fp8-short" / f"sweep-{seed}.csv.xz")
        runs = read_csv(TMASTORE_FP8 / f"timings-{seed}.csv.xz")
        assert set(runs.verification) == {"PASS"}
        assert set(runs.gpu_uuid) == {"GPU-d23d716e-6bed-67c4-0f57-660f9b8052c8"}
        both = now.merge(before, on=["m", "n", "k"], suffixes=("", "_b"))
        assert len(both) == 64
        p, pb = both["% of ref"], both["% of ref_b"]
        speed = both["GFLOP/s"] / both["GFLOP/s_b"]
        tm = both["best rung"] == "tmastore_fp8"
        got[seed] = (round(gmean(p), 1), p.min(), int((p < 85).sum()),
                     round(gmean(pb), 1), pb.min(), int((pb < 85).sum()),
                     round(gmean(speed), 3), int((speed < 0.95).sum()),
                     round(gmean(both["reference GFLOP/s"] / both["reference GFLOP/s_b"]), 3),
                     int(tm.sum()), round(gmean(speed[tm]), 3))  # fmt: skip
    assert got == {726870: (94.3, 74.1, 5, 91.6, 76.3, 9, 1.037, 0, 1.007, 31, 1.062),
                   755700: (92.2, 71.0, 7, 89.9, 70.8, 10, 1.036, 0, 1.010, 31, 1.057)}  # fmt: skip


def test_tmastore_fp8_sustained_at_4096_and_8192_on_an_h100():
    """Entry "tmastore_fp8: FP8 tiles stored by the copy engine": normal inputs, sustained, one
    H100 (GPU-d23d716e), medians against cuBLASLt's in the same run: at 4096 tmastore_fp8
    (128 x 128, 6 stages, CHAIN 8) 99.8%, persistent_fp8 (the same build) 93.8%; at 8192
    tmastore_fp8's 128 x 128 build 94.7%, persistent_fp8 90.7%, and in a second run
    tmastore_fp8's 128 x 192 build (4 stages, CHAIN 1) 96.9%.  The file holds the first run's
    12 rows (three variants, two sizes, bursts and sustained), then the second's 4."""
    t = read_csv(TMASTORE_FP8 / "ladder-4096-8192.csv.xz")
    assert len(t) == 16 and set(t.verification) == {"PASS"}
    got = {}
    for run in (t.iloc[:12], t.iloc[12:]):
        s = run[run.load == "sustained"]
        for _, r in s[s.variant != "cublaslt_fp8"].iterrows():
            ref = s[(s.variant == "cublaslt_fp8") & (s.m == r.m)].kernel_ms_median.iloc[0]
            bn = r.instance.split("_")[3]
            got[(r.variant, r.m, bn)] = round(100 * ref / r.kernel_ms_median, 1)
    assert got == {("tmastore_fp8", 4096, "BN128"): 99.8, ("persistent_fp8", 4096, "BN128"): 93.8,
                   ("tmastore_fp8", 8192, "BN128"): 94.7, ("persistent_fp8", 8192, "BN128"): 90.7,
                   ("tmastore_fp8", 8192, "BN192"): 96.9}  # fmt: skip


STREAMK_TMA = DATA / "h100-streamk-tmastore-fp8"


def _best_without(sweep: pd.DataFrame, runs: pd.DataFrame, rung: str) -> pd.Series:
    """Each product's best rung against the reference (the sweep's `% of ref`) with `rung` left
    out: the sweep's share scaled by the best rung's time over the best other rung's, both from
    the run's rows at the load the sweep measured the product on."""
    runs = runs[runs.variant != "cublaslt_fp8"]
    best = runs.groupby(["m", "n", "k", "load", "variant"]).kernel_ms_median.min().unstack()
    out = []
    for _, r in sweep.iterrows():
        load = "sustained" if "sustained" in r["measured on"] else "burst"
        t = best.loc[(r.m, r.n, r.k, load)].dropna()
        out.append(r["% of ref"] * t.min() / t.drop(rung, errors="ignore").min())
    return pd.Series(out, index=sweep.index)


def test_streamk_tmastore_fp8_in_the_fp8_part_of_the_shapes_preset_on_an_h100():
    """Entry "Tried, not kept: the TMA-store epilogue on the FP8 stream-K schedule": the FP8 part
    at both seeds with streamk_tmastore_fp8 calibrated beside the four FP8 rungs, on one H100
    (GPU-f4696b65), 555 and 565 configurations all PASS: seed 726870 94.7 / 74.8% of cuBLASLt
    (4 products below 85%), 94.7 / 74.4% (4) without it; seed 755700 93.2 / 73.4% (6), 93.0 /
    71.7% (6) without it.  It is the best rung at 5 of the 52 products where it ran at each seed,
    1.004 and 1.039 times as fast there as the best other rung (geometric mean), and over its 52
    products 0.905 and 0.911 times as fast as the best other rung, 0.959 and 0.985 times as fast
    as streamk_fp8.  Against the runs on GPU-d23d716e (entry "tmastore_fp8: FP8 tiles stored by
    the copy engine") the best rung's speed is 0.995 and 1.000, cuBLASLt's 0.991 and 0.989."""
    got = {}
    for seed in (726870, 755700):
        sweep = read_csv(STREAMK_TMA / f"sweep-{seed}.csv.xz")
        runs = read_csv(STREAMK_TMA / f"timings-{seed}.csv.xz")
        assert set(runs.verification) == {"PASS"}
        assert set(runs.gpu_uuid) == {"GPU-f4696b65-4ee8-2da8-4bcf-251f371aebf8"}
        assert len(sweep) == 64
        p, q = sweep["% of ref"], _best_without(sweep, runs, "streamk_tmastore_fp8")
        rungs = runs[runs.load == "burst"].groupby(["m", "n", "k", "variant"])
        t = rungs.kernel_ms_median.min().unstack().drop(columns="cublaslt_fp8")
        stk = t.pop("streamk_tmastore_fp8").dropna()
        other = t.min(axis=1).loc[stk.index]
        ratio = other / stk
        vs_streamk = (t.streamk_fp8.loc[stk.index] / stk).dropna()
        before = read_csv(TMASTORE_FP8 / f"sweep-{seed}.csv.xz")
        both = sweep.merge(before, on=["m", "n", "k"], suffixes=("", "_b"))
        got[seed] = (round(gmean(p), 1), p.min(), int((p < 85).sum()),
                     round(gmean(q), 1), round(q.min(), 1), int((q < 85).sum()),
                     int((sweep["best rung"] == "streamk_tmastore_fp8").sum()), len(stk),
                     round(gmean(ratio[ratio > 1]), 3), round(gmean(ratio), 3),
                     round(gmean(vs_streamk), 3),
                     round(gmean(both["GFLOP/s"] / both["GFLOP/s_b"]), 3),
                     round(gmean(both["reference GFLOP/s"] / both["reference GFLOP/s_b"]), 3))  # fmt: skip
    assert got == {
        726870: (94.7, 74.8, 4, 94.7, 74.4, 4, 5, 52, 1.004, 0.905, 0.959, 0.995, 0.991),
        755700: (93.2, 73.4, 6, 93.0, 71.7, 6, 5, 52, 1.039, 0.911, 0.985, 1.0, 0.989),
    }


def test_streamk_tmastore_fp8_at_the_squares_of_the_fp8_part():
    """Entry "Tried, not kept: the TMA-store epilogue on the FP8 stream-K schedule": at the 21
    squares of both seeds where it, tmastore_fp8 and streamk_fp8 all ran (bursts), it is 1.033
    times as fast as streamk_fp8 (geometric mean; 0.966 at 1315 to 1.091 at 1372) and, from 2527
    up, 0.848 (3207) to 0.985 (4642) times as fast as tmastore_fp8."""
    over = []
    for seed in (726870, 755700):
        r = read_csv(STREAMK_TMA / f"timings-{seed}.csv.xz")
        t = r[r.load == "burst"].groupby(["m", "n", "k", "variant"]).kernel_ms_median.min()
        t = t.unstack().dropna(subset=["streamk_tmastore_fp8", "tmastore_fp8", "streamk_fp8"])
        sq = t[[m == n == k for m, n, k in t.index]]
        for (m, _, _), x in sq.iterrows():
            over.append((m, x.tmastore_fp8 / x.streamk_tmastore_fp8,
                         x.streamk_fp8 / x.streamk_tmastore_fp8))  # fmt: skip
    assert len(over) == 21
    stk = {m: round(b, 3) for m, _, b in over}
    tma = {m: round(a, 3) for m, a, _ in over if m >= 2527}
    assert round(gmean([b for _, _, b in over]), 3) == 1.033
    assert (min(stk.values()), max(stk.values())) == (0.966, 1.091)
    assert (stk[1315], stk[1372]) == (0.966, 1.091)
    assert (min(tma.values()), max(tma.values())) == (0.848, 0.985)
    assert (tma[3207], tma[4642]) == (0.848, 0.985)


FP32_SMALL = DATA / "h100-fp32-small-misses"


def test_fp32_small_products_under_nsight_compute_on_an_h100():
    """Entry "FP32 at six small products under Nsight Compute on an H100" (GPU-f4696b65): the
    class's best rung against cuBLAS in bursts, 29 x 353 x 87 100.4%, 1327 x 69 x 31 88.0%,
    312 x 197 x 924 74.5%, 611 x 71 x 702 69.4%, 5624 x 77 x 182 55.4%, 1315 cubed 89.5%.
    The profiled skinny_simt builds are all SIDE = 1 (tiles of MT rows of m): at 611 x 71 x 702
    and 5624 x 77 x 182, whose small side is n, they execute 3.66 and 3.51 times the product's
    2mnk floating-point operations (cuBLAS 1.42 and 1.27, warptile_db 1.90 and 1.76), and take
    16.9 and 25.7 µs under the profiler against cuBLAS's 8.3 and 12.3."""
    s = read_csv(FP32_SMALL / "sweep.csv.xz")
    share = dict(zip(s["shape"], s["% of ref"], strict=True))
    assert share == {"1315": 89.5, "29 x 353 x 87": 100.4, "312 x 197 x 924": 74.5,
                     "611 x 71 x 702": 69.4, "1327 x 69 x 31": 88.0, "5624 x 77 x 182": 55.4}  # fmt: skip
    lim = read_csv(FP32_SMALL / "limiters.csv.xz")
    assert {r.split()[-1] for r in lim.rung if r.startswith("skinny_simt")} == {"SIDE=1"}
    m = read_csv(FP32_SMALL / "metrics.csv.xz").set_index("metric")
    got = {}
    for shape, (mm, n, k) in {"611x71x702": (611, 71, 702), "5624x77x182": (5624, 77, 182)}.items():
        cols = [c for c in m.columns if f" {shape} " in c]
        useful = 2.0 * mm * n * k
        for c in cols:
            name = c.split()[0] if c.startswith("cublas") else " ".join(c.split()[:2])
            got[(shape, name)] = (round(float(m.loc["flop_count_sp", c]) / useful, 2),
                                  round(1000 * float(m.loc["duration", c]), 1))  # fmt: skip
    assert got == {
        ("611x71x702", "cublas"): (1.42, 8.3),
        ("611x71x702", "skinny_simt MT=8"): (3.66, 16.9),
        ("611x71x702", "warptile_db BM=64"): (1.90, 35.9),
        ("5624x77x182", "cublas"): (1.27, 12.3),
        ("5624x77x182", "skinny_simt MT=16"): (3.51, 25.7),
        ("5624x77x182", "warptile_db BM=64"): (1.76, 20.6),
    }


def test_tmastore_fp8_tune_cut_off_at_the_limit_on_an_h100():
    """Entry "Tried, not kept: the TMA-store epilogue on the FP8 stream-K schedule", its last
    call: the tune preset cut to tmastore_fp8 at 4096 and 8192 (GPU-f4696b65) stopped at its
    330 s limit after 176 of its 192 configurations, all PASS (4096 sustained: 32 of 48 builds);
    the fastest under sustained load, normal inputs: at 8192 the 128 x 192 build (4 stages,
    GROUP 16, CHAIN 1) at 0.951 ms, at 4096 (of those measured) the 128 x 128 build (6 stages,
    GROUP 8, CHAIN 8) at 0.129 ms."""
    t = read_csv(STREAMK_TMA / "tune-cut-off.csv.xz")
    assert len(t) == 176 and set(t.verification) == {"PASS"}
    assert t.groupby(["m", "load"]).size().to_dict() == {
        (4096, "burst"): 48,
        (4096, "sustained"): 32,
        (8192, "burst"): 48,
        (8192, "sustained"): 48,
    }
    s = t[t.load == "sustained"].sort_values("kernel_ms").groupby("m").head(1).set_index("m")
    assert s.params.to_dict() == {
        4096: "BM=128 BN=128 STAGES=6 CLUSTER=1 GROUP=8 CHAIN=8",
        8192: "BM=128 BN=192 STAGES=4 CLUSTER=1 GROUP=16 CHAIN=1",
    }
    assert s.kernel_ms.to_dict() == {4096: 0.129, 8192: 0.951}


H200_FP8_CAL = DATA / "h200-fp8-calibration"


def test_the_fp8_part_of_the_shapes_preset_with_the_h200s_calibration_of_every_fp8_build():
    """Entry "FP8 at any shape with an H200 calibration of every FP8 build": the FP8 part at
    both seeds on one H200 (GPU-798c9d12), 509 and 516 configurations all PASS, with the
    H200's rows of all four FP8 rungs fitted again: seed 726870 92.8% of cuBLASLt (geometric
    mean), 66.6% at least (172 x 1843 x 7126), 10 products below 85%; seed 755700 90.3%, 66.3%
    (77 x 5891 x 4397), 12 below.  The runs of the standing table before (its FP8 part, the
    shares of the sweep recomputed from its rows) 81.9 / 57.1% (33 below) and 81.1 / 51.7% (29
    below).  tmastore_fp8 is the best rung at 30 and 34 products; the best rung runs 1.135 and
    1.128 times as fast (geometric mean; 0.983 to 1.539 and 0.982 to 1.790), cuBLASLt 1.002 and
    1.013."""
    got = {}
    for seed in (726870, 755700):
        new = read_csv(H200_FP8_CAL / f"sweep-{seed}.csv.xz")
        old = read_csv(H200_FP8_CAL / f"before-sweep-{seed}.csv.xz")
        assert len(new) == len(old) == 64
        both = new.merge(old, on=["m", "n", "k"], suffixes=("", "_b"))
        assert len(both) == 64
        speed = both["GFLOP/s"] / both["GFLOP/s_b"]
        ref = both["reference GFLOP/s"] / both["reference GFLOP/s_b"]
        least = new.loc[new["% of ref"].idxmin()]
        got[seed] = (
            round(gmean(new["% of ref"]), 1), least["% of ref"], least["shape"],
            int((new["% of ref"] < 85).sum()),
            round(gmean(old["% of ref"]), 1), old["% of ref"].min(), int((old["% of ref"] < 85).sum()),
            int((new["best rung"] == "tmastore_fp8").sum()),
            round(gmean(speed), 3), round(speed.min(), 3), round(speed.max(), 3),
            round(gmean(ref), 3),
        )  # fmt: skip
    assert got == {
        726870: (92.8, 66.6, "172 x 1843 x 7126", 10, 81.9, 57.1, 33, 30,
                 1.135, 0.983, 1.539, 1.002),
        755700: (90.3, 66.3, "77 x 5891 x 4397", 12, 81.1, 51.7, 29, 34,
                 1.128, 0.982, 1.79, 1.013),
    }  # fmt: skip


def test_tmastore_fp8_tuned_and_beside_cublaslt_at_4096_and_8192_on_an_h200():
    """Entry "FP8 at any shape with an H200 calibration of every FP8 build": the tune preset
    cut to tmastore_fp8 at 4096 and 8192 on the H200, 192 configurations all PASS; fastest
    under sustained load: at 4096 the 128 x 128 build (6 stages, GROUP 16, CHAIN 8) at 0.130
    ms, at 8192 the 128 x 192 build (4 stages, GROUP 8, CHAIN 1) at 0.947 ms.  The ladder preset
    cut to it and cuBLASLt with those builds, normal inputs, sustained: 98.9% at 4096 and
    95.7% at 8192 (bursts 99.4% and 97.5%)."""
    t = read_csv(H200_FP8_CAL / "tune-tmastore-fp8.csv.xz")
    assert len(t) == 192 and set(t.verification) == {"PASS"}
    assert set(t.gpu_uuid) == {"GPU-798c9d12-9352-c69c-cfaf-bb9f5e34ee0e"}
    s = t[t.load == "sustained"].sort_values("kernel_ms").groupby("m").head(1).set_index("m")
    assert s.params.to_dict() == {
        4096: "BM=128 BN=128 STAGES=6 CLUSTER=1 GROUP=16 CHAIN=8",
        8192: "BM=128 BN=192 STAGES=4 CLUSTER=1 GROUP=8 CHAIN=1",
    }
    assert s.kernel_ms.round(3).to_dict() == {4096: 0.130, 8192: 0.947}
    lad = read_csv(H200_FP8_CAL / "ladder-4096-8192.csv.xz")
    assert len(lad) == 8 and set(lad.verification) == {"PASS"}
    rate = lad.set_index(["variant", "m", "load"]).kernel_gflops
    share = (100 * rate["tmastore_fp8"] / rate["cublaslt_fp8"]).round(1)
    assert share.to_dict() == {
        (4096, "burst"): 99.4,
        (4096, "sustained"): 98.9,
        (8192, "burst"): 97.5,
        (8192, "sustained"): 95.7,
    }


SKINNY_ROWS_FIRST = DATA / "h200-skinny-simt-rows-first"


def test_skinny_simt_s_builds_at_fifteen_misses_and_where_the_ring_is_fastest():
    """Entry "skinny_simt with its row tiles side by side, and FP32 and FP64 at seed 726870
    again": every build of skinny_simt beside cuBLAS at 15 products in FP32 and FP64 (30), all
    630 rows PASS; the fastest PIPE 1 or 2 build reaches 97.7% of cuBLAS at 21 x 4252 x 4592 in
    FP32 (48.3 µs, PIPE 2) and 84.4% at 19 x 4635 x 6086 in FP64; the PIPE = 3 ring is the
    fastest build at five of the 30, all FP64 with the small side n (SIDE = 2), most at
    9911 x 25 x 6683: 443.8 µs against 527.9."""
    e = read_csv(SKINNY_ROWS_FIRST / "every-15-products.csv.xz")
    assert len(e) == 630 and set(e.verification) == {"PASS"}
    key = ["dtype", "m", "n", "k"]
    ref = e[e.variant == "cublas"].groupby(key).kernel_ms_median.min()
    s = e[e.variant == "skinny_simt"].assign(P=lambda d: d.instance.str.extract(r"PIPE(\d)")[0])
    regs = s[s.P != "3"].groupby(key).kernel_ms_median.min()
    ring = s[s.P == "3"].groupby(key).kernel_ms_median.min()
    assert len(regs) == 30
    share = (100 * ref / regs).round(1)
    assert share["float32", 21, 4252, 4592] == 97.7
    assert share["float64", 19, 4635, 6086] == 84.4
    wins = ring[ring < regs]
    assert sorted(wins.index) == [("float64", 565, 55, 1802), ("float64", 4185, 19, 308),
                                  ("float64", 4739, 59, 5945), ("float64", 9911, 25, 6683),
                                  ("float64", 10654, 23, 15158)]  # fmt: skip
    fastest = s.loc[s.groupby(key).kernel_ms_median.idxmin()].set_index(key).instance
    assert all("SIDE2_PIPE3" in fastest[i] for i in wins.index)
    assert (round(1e3 * ring["float64", 9911, 25, 6683], 1),
            round(1e3 * regs["float64", 9911, 25, 6683], 1)) == (443.8, 527.9)  # fmt: skip


def test_fp32_and_fp64_at_seed_726870_measured_again():
    """The same entry: the shapes preset's FP32 and FP64 at seed 726870 (502 configurations,
    all PASS), the best rung 91.8% of cuBLAS (geometric mean) and 63.1% at least (565 x 55 x
    1802) in FP32, 16 products below 85%; 98.7% and 44.6% (4185 x 19 x 308) in FP64, 12 below;
    the figures docs/ladder.md's shapes section shows for them."""
    import tarfile

    from mmbench.report import ladder as lad

    with tarfile.open(SKINNY_ROWS_FIRST / "shapes-726870-fp32_fp64_bf16-kept.tar.xz") as tar:
        t = pd.read_csv(tar.extractfile("shapes-726870-fp32_fp64_bf16/tables/timings.csv"))
    assert len(t) == 502 and set(t.verification) == {"PASS"}
    s = lad.shapes_summary(t).set_index("precision")
    got = {p: (s.loc[p, "geometric mean % of ref"], s.loc[p, "minimum % of ref"], s.loc[p, "at"],
               s.loc[p, "below 85%"]) for p in s.index}  # fmt: skip
    assert got == {"FP32": (91.8, 63.1, "565 x 55 x 1802", 16),
                   "FP64": (98.7, 44.6, "4185 x 19 x 308", 12)}  # fmt: skip


def test_warptile_db_split_by_the_blocks_at_a_time_is_not_kept():
    """The same entry: warptile_db with its few-tiles split reckoned on the blocks at a time in
    place of the multiprocessors (wave-registry.diff), against main's rule, at eight FP32
    products on one board, every row PASS: faster at three (16 x 2254 x 3301 0.848), slower at
    three (308 x 179 x 2620 1.216, 2492 x 41 x 1038 1.122, 1315^3 1.030), the same at 1245^3
    and 4096^3 (no tile split differently)."""
    a = read_csv(SKINNY_ROWS_FIRST / "fixup-main.csv.xz")
    b = read_csv(SKINNY_ROWS_FIRST / "fixup-wave.csv.xz")
    assert set(a.verification) == set(b.verification) == {"PASS"}
    key = ["m", "n", "k"]

    def warptile_db(d):
        return d[d.variant == "warptile_db"].set_index(key).kernel_ms_median

    ratio = (warptile_db(b) / warptile_db(a)).round(3)
    assert len(ratio) == 8
    assert sorted(ratio[ratio < 0.995].index) == [(16, 2254, 3301), (162, 514, 7619),
                                                  (791, 329, 3149)]  # fmt: skip
    assert sorted(ratio[ratio > 1.005].index) == [(308, 179, 2620), (1315, 1315, 1315),
                                                  (2492, 41, 1038)]  # fmt: skip
    worst = (ratio[16, 2254, 3301], ratio[308, 179, 2620], ratio[2492, 41, 1038])
    assert worst == (0.848, 1.216, 1.122)


def test_skinny_simt_s_kept_calibration_chooses_near_the_fastest_build_at_the_misses():
    """The same entry: at the 30 products of the every-build run (none of them a calibrate
    product), the choice among skinny_simt's builds of the fit of its calibrate run (the kept
    H200 rows) runs at 0.949 of the fastest build (geometric mean), 0.649 at least (FP64
    9911 x 25 x 6683), and is the fastest build at 15."""
    from mmbench.core.axes import slug
    from mmbench.core.registry import load_registry
    from mmbench.core.timemodel import calibrate, choose
    from mmbench.plan.tuning import calibrated

    reg = load_registry(ROOT / "kernels" / "registry.yaml")
    v = reg["skinny_simt"]
    run = pd.read_csv(ROOT / "tests" / "data" / "h200-calibrate" / "skinny_simt.csv.xz")
    fit = calibrate(run, reg, sms={"NVIDIA H200": 132})  # (its launches do not tell the count)
    rows = calibrated(fit, ["NVIDIA H200"], ["skinny_simt"], reg, "run")
    rows = rows["skinny_simt"]
    e = read_csv(SKINNY_ROWS_FIRST / "every-15-products.csv.xz")
    share = {}
    for (dtype, m, n, k), g in e[e.variant == "skinny_simt"].groupby(["dtype", "m", "n", "k"]):
        t = g.set_index("instance").kernel_ms_median
        share[dtype, m, n, k] = t.min() / t[slug(choose(v, rows, dtype, m, n, k)["params"])]
    s = pd.Series(share)
    assert len(s) == 30
    assert round(gmean(s), 3) == 0.949
    assert s.idxmin() == ("float64", 9911, 25, 6683) and round(s.min(), 3) == 0.649
    assert int((s >= 0.9995).sum()) == 15


def test_skinny_dot_calibrated_on_an_h100_every_build_passes():
    """Entry "skinny_dot calibrated on an H100, and into the shapes preset": the calibrate
    stage's 1,120 rows, all PASS, 56 builds (40 in float32, 16 in float64) at 20 products; the
    fastest build at 4096 x 32 x 4096 takes 55.8 µs in float32 and 136.8 µs in float64, and at
    2048 x 16 x 8192 34.9 µs in float32."""
    t = read_csv(ROOT / "tests/data/h100-calibrate/skinny_dot.csv.xz")
    assert len(t) == 1120 and set(t.verification) == {"PASS"}
    assert t.groupby("dtype").instance.nunique().to_dict() == {"float32": 40, "float64": 16}
    assert len(set(zip(t.m, t.n, t.k, strict=True))) == 20
    fastest = (1e3 * t.groupby(["dtype", "m", "n", "k"]).kernel_ms.min()).round(1)
    assert fastest["float32", 4096, 32, 4096] == 55.8
    assert fastest["float64", 4096, 32, 4096] == 136.8
    assert fastest["float32", 2048, 16, 8192] == 34.9


H100_TMASTORE_FP8 = DATA / "h100-tmastore-fp8-ladder"
H100_F64_MISSES = DATA / "h100-small-side-misses"


def test_tmastore_fp8_s_h100_tune_is_what_kernels_tuned_csv_holds():
    """Entry "tmastore_fp8 tuned on an H100 and on the ladder": the tune preset cut to
    tmastore_fp8 at 4096 and 8192 on GPU-2720dbc9, 192 configurations all PASS; fastest under
    sustained load: at 4096 the 128 x 128 build (6 stages, GROUP 8, CHAIN 8) at 0.1276 ms, next
    GROUP 16 at 0.1297; at 8192 the 128 x 192 build (4 stages, GROUP 8, CHAIN 1) at 0.9426 ms,
    next CLUSTER 2 at 0.9491.  kernels/tuned.csv's H100 rows of tmastore_fp8 are those builds."""
    t = read_csv(H100_TMASTORE_FP8 / "tune-tmastore-fp8.csv.xz")
    assert len(t) == 192 and set(t.verification) == {"PASS"}
    assert set(t.gpu_uuid) == {"GPU-2720dbc9-f93a-8885-85a5-ad6a2b17d9c5"}
    s = t[t.load == "sustained"].sort_values("kernel_ms")
    top = {m: [(r.params, round(r.kernel_ms, 4)) for r in g.head(2).itertuples()]
           for m, g in s.groupby("m")}  # fmt: skip
    assert top == {
        4096: [("BM=128 BN=128 STAGES=6 CLUSTER=1 GROUP=8 CHAIN=8", 0.1276),
               ("BM=128 BN=128 STAGES=6 CLUSTER=1 GROUP=16 CHAIN=8", 0.1297)],
        8192: [("BM=128 BN=192 STAGES=4 CLUSTER=1 GROUP=8 CHAIN=1", 0.9426),
               ("BM=128 BN=192 STAGES=4 CLUSTER=2 GROUP=8 CHAIN=1", 0.9491)],
    }  # fmt: skip
    tuned = read_csv(ROOT / "kernels" / "tuned.csv")
    mine = tuned[(tuned.variant == "tmastore_fp8") & (tuned.gpu_name == "NVIDIA H100 80GB HBM3")]
    assert dict(zip(mine.m, mine.params, strict=True)) == {m: rows[0][0] for m, rows in top.items()}


def test_skinny_dot_at_the_fp64_misses_of_a_small_n_on_an_h100():
    """Same entry: skinny_dot the best rung at the three products in FP32 and FP64 (bursts);
    cuBLAS's FP64 kernels there do under 1% of 2mnk on the CUDA cores (Nsight Compute)."""
    sw = read_csv(H100_F64_MISSES / "sweep.csv.xz")
    got = {
        (p, m): (b, s)
        for p, m, b, s in zip(sw.precision, sw.m, sw["best rung"], sw["% of ref"], strict=True)
    }
    assert got == {
        ("FP32", 565): ("skinny_dot", 111.0), ("FP32", 611): ("skinny_dot", 137.3),
        ("FP32", 4185): ("skinny_dot", 150.4), ("FP64", 565): ("skinny_dot", 82.9),
        ("FP64", 611): ("skinny_dot", 97.8), ("FP64", 4185): ("skinny_dot", 73.7),
    }  # fmt: skip
    pm = read_csv(H100_F64_MISSES / "profiler_metrics.csv.xz").set_index("metric")
    dp = {c.split()[1]: int(float(pm.loc["flop_count_dp", c]))
          for c in pm.columns if c.startswith("cublas ") and c.endswith("float64")}  # fmt: skip
    assert dp == {"4185x19x308": 134144, "611x71x702": 61440, "565x55x1802": 258048}
    assert all(v < 0.01 * 2 * 565 * 55 * 1802 for v in dp.values())


def test_the_27_fp32_and_fp64_misses_with_skinny_dot_on_an_h100():
    """Same entry, call 5: the 27 FP32 and FP64 products below 85% in either seed's standing H200
    rows, in bursts on one H100 with skinny_dot in the run: 6 of 27 below 85% in FP32 (least
    55.4% at 5624 x 77 x 182 by warptile_db), 12 of 27 in FP64 (least 64.4% at 358 x 743 x 326
    by ws_f64); skinny_dot the best rung at 16 and 12 of them."""
    sw = read_csv(H100_F64_MISSES / "sweep-27-misses.csv.xz")
    got = {}
    for p, g in sw.groupby("precision"):
        least = g.loc[g["% of ref"].idxmin()]
        got[p] = (len(g), int((g["% of ref"] < 85).sum()), least["% of ref"], least["shape"],
                  least["best rung"], int((g["best rung"] == "skinny_dot").sum()))  # fmt: skip
    assert got == {
        "FP32": (27, 6, 55.4, "5624 x 77 x 182", "warptile_db", 16),
        "FP64": (27, 12, 64.4, "358 x 743 x 326", "ws_f64", 12),
    }


def test_skinny_dot_s_fastest_build_at_the_misses_on_an_h100():
    """Same entry, call 6: each of skinny_dot's builds (40 float32, 16 float64) and cuBLAS at 15
    products, all PASS on GPU-c3dfb760; the fastest build against cuBLAS: FP32 4739 x 59 x 5945
    58.6% (188.4 µs against 110.4), 5624 x 77 x 182 58.7%, 358 x 743 x 326 85.6%; FP64
    358 x 743 x 326 47.2%, 883 x 380 x 247 43.7%."""
    e = read_csv(H100_F64_MISSES / "every-skinny-dot-fastest.csv.xz")
    assert len(e) == 30 and e.all_pass.all()
    assert set(e.gpu_uuid) == {"GPU-c3dfb760-facb-0943-5b11-63967e3b8bbc"}
    assert dict(e.groupby("dtype").builds.first()) == {"float32": 40, "float64": 16}
    e = e.set_index(["dtype", "m", "n", "k"])
    share = (100 * e.cublas_ms / e.fastest_ms).round(1)
    assert share[("float32", 4739, 59, 5945)] == 58.6
    assert round(e.fastest_ms[("float32", 4739, 59, 5945)] * 1000, 1) == 188.4
    assert share[("float32", 5624, 77, 182)] == 58.7
    assert share[("float32", 358, 743, 326)] == 85.6
    assert share[("float64", 358, 743, 326)] == 47.2
    assert share[("float64", 883, 380, 247)] == 43.7


def test_shallower_stream_k_shares_do_not_lift_the_fp64_misses():
    """Same entry, calls 7 and 8: ws_f64's and streamk_f64's fastest build reach 85% of cuBLAS at
    1 of 10 FP64 products (2492 x 41 x 1038, 89.3%); streamk_f64 with shares at least 256, 128
    and 64 deep at 883 x 380 x 247: 17.6, 17.3 and 20.7 µs on 42, 84 and 168 workers."""
    f = read_csv(H100_F64_MISSES / "f64-tensor-rungs-every-fastest.csv.xz")
    assert f.all_pass.all() and len(f) == 20
    best = (100 * f.cublas_ms / f.fastest_ms).groupby([f.m, f.n, f.k]).max().round(1)
    assert best[best >= 85].to_dict() == {(2492, 41, 1038): 89.3}
    d = read_csv(H100_F64_MISSES / "streamk-f64-least-depth.csv.xz")
    assert d.all_pass.all() and len(d) == 30
    at = d[(d.m == 883) & (d.n == 380)].set_index("least_depth")
    assert (at.fastest_ms * 1000).round(1).to_dict() == {256: 17.6, 128: 17.3, 64: 20.7}
    assert at.grid.to_dict() == {256: "42x1x1", 128: "84x1x1", 64: "168x1x1"}


def test_skinny_simt_and_streamk_f64_calibrated_on_an_h100():
    """Entry "skinny_simt and streamk_f64 calibrated on an H100": 1,396 launches all PASS on
    GPU-8779c1c7, skinny_simt's 40 builds at 22 products and streamk_f64's 12 at the rule's grid
    and with every tile whole (516: 528 less where the two grids are one)."""
    run = read_csv(ROOT / "tests" / "data" / "h100-calibrate" / "skinny_simt_streamk_f64.csv.xz")
    assert len(run) == 1396 and set(run.verification) == {"PASS"}
    assert run.variant.value_counts().to_dict() == {"skinny_simt": 880, "streamk_f64": 516}
    assert run.groupby("variant").instance.nunique().to_dict() == {
        "skinny_simt": 40, "streamk_f64": 12}  # fmt: skip
    assert run[["m", "n", "k"]].drop_duplicates().shape[0] == 22

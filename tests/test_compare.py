"""Two runs compared (mmbench/compare.py and the `compare` target) on real recorded runs of
config/presets/compare.yaml (lab/gpu.sh compare): tests/data/compare/h100-a and h100-b (the
same code measured twice on an H100), h100-slowed (tiled_guarded slowed down by
tools/slowdown.py and re-measured, the other variants kept), h200-a (the same preset on an H200).
"""

import shutil
import warnings

import pandas as pd
import pytest
import yaml

from mmbench.compare import compare
from mmbench.core.tables import read_samples

from .conftest import ROOT, compare_run, copy_recorded, read_csv, snakemake


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # nvbench's notes on missing data
        yield


def run(name):
    return compare.load_folder(compare_run(name))


def test_recorded_runs_keep_every_configurations_samples():
    a = run("h100-a")
    assert len(a.rows) == 56
    assert set(a.samples) == set(a.rows.index)
    s = read_samples(compare_run("h100-a") / "runs" / "cublas.samples.json.gz")
    one = next(iter(s.values()))
    assert len(one["kernel_ms"]) == len(one["sm_clock_mhz"]) >= 5
    assert min(a.rows.kernel_ms_median) < 0.05 and max(a.rows.kernel_ms_median) > 100


def test_a_run_compared_with_itself_is_the_same_everywhere():
    a = run("h100-a")
    table = compare.compare(a, a)
    assert set(table.verdict) == {"SAME"}
    assert (table.ratio == 1).all()


def test_two_runs_of_the_same_code_differ_nowhere_for_kernels_of_a_tenth_of_a_ms():
    table = compare.compare(run("h100-a"), run("h100-b"))
    assert len(table) == 56 and table.ratio.notna().all()
    moved = table[table.verdict.isin(["FASTER", "SLOWER"])]
    assert moved[moved.base_ms >= 0.1].empty, moved
    counts = compare.counts(table)
    assert counts["SAME"] > 0 and counts["SAME"] + counts["UNSURE"] + len(moved) == 56
    # the numbers the criterion used are in the table
    row = table.iloc[0]
    assert row.base_interval_ms.startswith("[") and row.reason and row.clear_gap == 0.005


def test_the_slowed_kernel_and_nothing_else_is_slower():
    table = compare.compare(run("h100-b"), run("h100-slowed"))
    slowed = table[table.variant == "tiled_guarded"]
    assert len(slowed) == 14 and set(slowed.verdict) == {"SLOWER"}
    assert (slowed.ratio > 1.4).all()
    others = table[table.variant != "tiled_guarded"]
    assert set(others.verdict) == {"SAME"}  # not re-measured: the same samples
    text = compare.summary(table, compare.header(run("h100-b"), run("h100-slowed")))
    assert "kernel sources that differ: tiled_guarded\n" in text
    assert "14 SLOWER, 0 FASTER, 0 UNSURE, 42 SAME" in text


def test_runs_on_different_gpus_compare_and_say_so():
    base, new = run("h100-a"), run("h200-a")
    head = compare.header(base, new)
    assert not head["same_gpu"]
    assert "H100" in head["baseline"]["gpu"] and "H200" in head["this_run"]["gpu"]
    table = compare.compare(base, new)
    assert len(table) == 56 and table.ratio.notna().all()
    assert "different GPUs" in compare.summary(table, head)


def test_configurations_in_one_run_only_are_listed():
    a, b = run("h100-a"), run("h100-b")
    b.rows = b.rows[b.rows.variant != "cublas"]
    table = compare.compare(a, b)
    only = table[table.verdict == "BASELINE ONLY"]
    assert set(only.variant) == {"cublas"} and len(only) == 7
    assert compare.counts(compare.compare(b, a))["THIS RUN ONLY"] == 7


def test_a_baseline_without_samples_is_unsure_not_judged():
    a = run("h100-a")
    old = compare.Run("old", a.rows)  # a run recorded before samples were kept
    table = compare.compare(old, a)
    assert set(table.verdict) == {"UNSURE"}
    assert set(table.reason) == {"no timed samples in the baseline"}


def _copy_run(workdir, name):  # noqa: F811
    copy_recorded(compare_run(name), workdir / "results" / "compare")


def _compare(workdir, *config):  # noqa: F811
    return snakemake(
        "--cores",
        "1",
        "compare",
        "--configfile",
        "config/presets/compare.yaml",
        "--config",
        "render_only=true",
        *config,
        cwd=workdir,
    )


def test_compare_target_writes_table_figure_and_report_and_prints_the_summary(workdir):  # noqa: F811
    _copy_run(workdir, "h100-slowed")
    out = _compare(workdir, f"baseline={compare_run('h100-b')}")
    assert out.returncode == 0, out.stderr[-3000:]
    res = workdir / "results" / "compare"
    table = read_csv(res / "tables" / "compare.csv")
    assert (table.verdict == "SLOWER").sum() == 14
    assert (res / "compare" / "compare.png").stat().st_size > 10_000
    assert "SLOWER" in (res / "compare" / "compare.html").read_text()
    assert "14 SLOWER, 0 FASTER, 0 UNSURE, 42 SAME" in out.stdout + out.stderr


@pytest.mark.slow  # 20 s; the gate's passing side and the paired gate stay in the fast set
def test_fail_on_slower_exits_non_zero_with_the_reason(workdir):  # noqa: F811
    _copy_run(workdir, "h100-slowed")
    out = _compare(workdir, f"baseline={compare_run('h100-b')}", "compare={fail_on: slower}")
    assert out.returncode != 0
    assert "compare.fail_on=slower: 14 configuration(s) SLOWER" in out.stderr
    same = _compare(workdir, f"baseline={compare_run('h100-a')}", "compare={fail_on: slower}")
    # h100-slowed's tiled_guarded is slower than run a too; the rest was measured in run b
    assert same.returncode != 0


def test_fail_on_slower_passes_when_nothing_is_slower(workdir):  # noqa: F811
    _copy_run(workdir, "h100-b")
    out = _compare(workdir, f"baseline={compare_run('h100-b')}", "compare={fail_on: slower}")
    assert out.returncode == 0, out.stderr[-3000:]


def test_baseline_previous_uses_the_archive_of_the_edited_kernel(workdir):  # noqa: F811
    """The archive as measure.py leaves it after the edit loop: the slowed run in place, both
    tiled_guarded measurements archived by their source hash."""
    _copy_run(workdir, "h100-slowed")
    res = workdir / "results" / "compare"
    for name in ("h100-b", "h100-slowed"):
        sha = read_csv(compare_run(name) / "runs" / "tiled_guarded.csv").source_sha256[0]
        folder = res / "archive" / "tiled_guarded" / sha
        folder.mkdir(parents=True)
        for f in (compare_run(name) / "runs").glob("tiled_guarded.*"):
            shutil.copy(f, folder / f.name)
    out = _compare(workdir, "baseline=previous")
    assert out.returncode == 0, out.stderr[-3000:]
    table = read_csv(res / "tables" / "compare.csv")
    assert compare.counts(table) | {} == dict(
        REGRESSED=0,
        SLOWER=14,
        FASTER=0,
        UNSURE=0,
        SAME=0,
        **{"BASELINE ONLY": 0, "THIS RUN ONLY": 42},
    )
    # the end-of-run summary's before -> after
    edits = compare.edits(res, sorted((res / "runs").glob("*.csv")))
    assert edits.startswith("Since the previous kernel source:\ntiled_guarded: kernel source ")
    head, *lines = edits.splitlines()[1:]
    assert head.endswith("(baseline=previous): 14 SLOWER")
    assert len(lines) == 14 and all(line.endswith(" SLOWER") for line in lines)


def test_the_edit_loop_reads_no_table_where_no_kernel_has_an_earlier_source(workdir, monkeypatch):  # noqa: F811
    """A fresh clone's run: each variant archived once, under its own source.  The summary's
    before -> after is empty without a table or samples file read (they took 4 s after the
    ladder's last measurement); with a second source archived for one variant it reads them."""
    _copy_run(workdir, "h100-b")
    res = workdir / "results" / "compare"
    sha = read_csv(compare_run("h100-b") / "runs" / "tiled_guarded.csv").source_sha256[0]
    (res / "archive" / "tiled_guarded" / sha).mkdir(parents=True)
    for f in (compare_run("h100-b") / "runs").glob("tiled_guarded.*"):
        shutil.copy(f, res / "archive" / "tiled_guarded" / sha / f.name)
    read = []
    monkeypatch.setattr(compare, "load_tables", lambda *a: read.append(a) or 1 / 0)
    tables = sorted((res / "runs").glob("*.csv"))
    assert compare.edits(res, tables) == "" and read == []
    other = res / "archive" / "tiled_guarded" / "0123456789abcdef"
    other.mkdir()
    shutil.copy(compare_run("h100-b") / "runs" / "tiled_guarded.csv", other / "tiled_guarded.csv")
    with pytest.raises(ZeroDivisionError):
        compare.edits(res, tables)
    assert len(read) == 1


def test_a_baseline_that_holds_no_run_is_refused_before_any_job(workdir):  # noqa: F811
    out = snakemake("-n", "--config", "arch=sm_90", "baseline=no/such/run", cwd=workdir)
    assert out.returncode != 0
    assert "config key 'baseline': 'no/such/run' holds no measured run" in out.stdout + out.stderr
    out = snakemake("-n", "--config", "arch=sm_90", "baseline=previous", cwd=workdir)
    assert out.returncode != 0
    assert "config key 'baseline': previous compares each variant" in out.stdout + out.stderr


def test_comparing_two_results_folders_needs_no_gpu_and_no_architecture(workdir):  # noqa: F811
    """No arch and no GPU here: without render_only the run stops and names it; with
    render_only=true (the explicit way to say the tables present are this run) it compares."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            pytest.skip("a GPU is visible here: this test is for machines without one")
    except Exception:  # noqa: BLE001 - no CuPy or no driver: the case under test
        pass
    _copy_run(workdir, "h100-slowed")
    out = snakemake(
        "--cores", "1", "compare", "--configfile", "config/presets/compare.yaml",
        "--config", f"baseline={compare_run('h100-b')}", cwd=workdir,
    )  # fmt: skip
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "no GPU on this machine" in text and "add render_only=true to compare" in text
    out = snakemake(
        "--cores", "1", "compare", "--configfile", "config/presets/compare.yaml",
        "--config", f"baseline={compare_run('h100-b')}", "render_only=true", cwd=workdir,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert "14 SLOWER, 0 FASTER, 0 UNSURE, 42 SAME" in out.stdout + out.stderr
    assert "nvcc" not in out.stdout + out.stderr  # nothing compiled
    # its HTML report, for the comparison target (as README and the preset's header say)
    report = snakemake(
        "--report", "compare.html", "compare", "--configfile", "config/presets/compare.yaml",
        "--config", f"baseline={compare_run('h100-b')}", "render_only=true", cwd=workdir,
    )  # fmt: skip
    assert report.returncode == 0, report.stderr[-3000:]
    assert (workdir / "compare.html").stat().st_size > 100_000
    # the preset's header command, as written there
    header = (ROOT / "config" / "presets" / "compare.yaml").read_text()
    command = next(x for x in header.splitlines() if "compare --" in x).lstrip("# ").split()
    assert command[:4] == ["snakemake", "--cores", "1", "compare"], command


# h100-probe-a, -b: the compare preset twice on a fresh H100 with the clock probe
# (lab/gpu.sh compare, 2026-11-23); NVML read 1980 MHz throughout, the probe measured 1995 MHz
# in run B's cublas, naive_guarded and tiled_guarded jobs and in both runs' naive_xrow job
def test_runs_with_the_clock_probe_are_judged_in_time_and_in_cycles():
    a, b = run("h100-probe-a"), run("h100-probe-b")
    one = next(iter(a.samples.values()))
    assert 1900 < one["sm_clock_probe_mhz"] < 2100 and one["nvml_clock_at_probe_mhz"] > 0
    table = compare.compare(a, b)
    assert table.cycles_verdict.notna().all() and table.time_verdict.notna().all()
    assert (table.base_clock_mhz.between(1900, 2100)).all()
    # the verdict in time and in cycles combined as docs/method.md states it, by hand: SAME if
    # either is SAME, FASTER or SLOWER only if both say so, UNSURE otherwise
    for r in table.itertuples():
        pair = {r.time_verdict, r.cycles_verdict}
        want = "SAME" if "SAME" in pair else r.time_verdict if len(pair) == 1 else "UNSURE"
        assert r.nvbench_verdict == want, r
    # without the tolerance the verdict is nvbench's
    bare = compare.compare(a, b, tolerance=0.0)
    assert (bare.verdict == bare.nvbench_verdict).all()
    # judged on batched samples, the table's medians and ratio are the batched ones
    batched = table[table.samples_kind == "batched"].iloc[0]
    cid = batched.config_id
    assert batched.base_ms == pytest.approx(float(pd.Series(a.samples[cid]["batch_ms"]).median()))
    text = compare.summary(table, compare.header(a, b))
    assert (
        "measured 1980.0 MHz" in text and "56 configurations judged in time and in cycles" in text
    )


def test_the_recorded_clock_step_is_not_reported_as_faster_kernels():
    a, b = run("h100-probe-a"), run("h100-probe-b")
    table = compare.compare(a, b)
    moved = table[(table.base_clock_mhz.round() == 1980) & (table.this_clock_mhz.round() == 1995)]
    assert set(moved.variant) == {"cublas", "naive_guarded", "tiled_guarded"}
    # in time, run B is faster in several configurations where the clock moved; not in cycles
    assert (moved.time_verdict == "FASTER").sum() >= 5
    assert not table.verdict.isin(["FASTER", "SLOWER"]).any()
    text = compare.summary(table, compare.header(a, b))
    assert "22 of them SAME in cycles only" in text
    # nvbench's criterion alone leaves 15 UNSURE: processes differing by more than a run's
    # interval is wide, by less than the tolerance
    assert "15 configurations SAME only within it; nvbench's criterion alone: 0 SLOWER, 0 " in text
    assert "0 SLOWER, 0 FASTER, 0 UNSURE, 56 SAME" in text
    bare = compare.summary(compare.compare(a, b, tolerance=0.0), compare.header(a, b))
    assert "0 SLOWER, 0 FASTER, 15 UNSURE, 41 SAME" in bare


def _clock_moved(r, factor):
    """Run r as if its GPU had run every SM-bound kernel `factor` faster: the times over factor,
    the probe's clock times factor (NVML reading the same, as it did on the H100)."""
    moved = compare.Run(r.name + " clock moved", r.rows.copy(), {})
    for cid, s in r.samples.items():
        t = dict(s)
        for key in ("kernel_ms", "batch_ms"):
            if key in t:
                t[key] = [x / factor for x in t[key]]
        t["sm_clock_probe_mhz"] = s["sm_clock_probe_mhz"] * factor
        moved.samples[cid] = t
    return moved


def test_a_clock_the_gpu_moved_is_not_a_faster_kernel():
    """One 15 MHz step above NVML's 1980 MHz (the probe measured 1995 MHz on an H100 while NVML
    read 1980): in time every configuration is faster, in cycles the same."""
    a = run("h100-probe-a")
    table = compare.compare(a, _clock_moved(a, 1995 / 1980))
    assert set(table.verdict) == {"SAME"}, table.verdict.value_counts()
    assert (table.time_verdict != "SAME").sum() > 40
    text = compare.summary(table, compare.header(a, _clock_moved(a, 1995 / 1980)))
    assert "SAME in cycles only" in text


def test_a_slowdown_shows_in_time_and_in_cycles():
    """The same run with every kernel 10% slower and the clock unchanged: SLOWER everywhere."""
    a = run("h100-probe-a")
    # times 10% longer (factor 1/1.1), the probe's clock put back to what it measured
    slow = _clock_moved(a, 1 / 1.10)
    for s in slow.samples.values():
        s["sm_clock_probe_mhz"] *= 1.10
    table = compare.compare(a, slow)
    assert set(table.verdict) == {"SLOWER"}, table.verdict.value_counts()
    assert set(table.cycles_verdict) == {"SLOWER"}


def test_the_combined_verdict():
    assert compare.combined("SAME", "UNSURE") == "SAME" == compare.combined("FASTER", "SAME")
    assert compare.combined("SLOWER", "SLOWER") == "SLOWER"
    assert compare.combined("SLOWER", "UNSURE") == "UNSURE" == compare.combined("FASTER", "SLOWER")


def test_the_tolerance_is_the_smallest_change_reported():
    t = compare.tolerated
    assert t("UNSURE", (-0.004, 0.002), 0.005) == "SAME" == t("SAME", (0.2, 0.3), 0.05)
    assert t("UNSURE", (-0.004, 0.006), 0.005) == "UNSURE" == t("UNSURE", None, 0.05)
    assert (
        t("SLOWER", (0.051, 0.07), 0.05) == "SLOWER" and t("SLOWER", (0.03, 0.07), 0.05) == "UNSURE"
    )
    assert t("FASTER", (-0.07, -0.051), 0.05) == "FASTER"
    # without a tolerance, nvbench's verdict
    assert (
        t("UNSURE", (-0.001, 0.001), 0.0) == "UNSURE" and t("SLOWER", (0.01, 0.02), 0) == "SLOWER"
    )


def _slowed(r, slower):
    """Run r with every kernel `slower` times as long at the clock its probe measured."""
    slow = _clock_moved(r, 1 / slower)
    for s in slow.samples.values():
        s["sm_clock_probe_mhz"] *= slower
    return slow


def test_a_slowdown_beyond_the_tolerance_is_slower():
    """3% slower, tolerance 1%: SLOWER wherever the change interval lies beyond 1%; the one
    configuration whose baseline interval is 2% wide (cuBLAS at 768) reaches into it: UNSURE."""
    a = run("h100-probe-a")
    table = compare.compare(a, _slowed(a, 1.03), tolerance=0.01)
    assert (table.verdict == "SLOWER").sum() >= 50
    assert (table[table.verdict != "SLOWER"].change_low < 0.01).all()
    assert set(table.verdict) <= {"SLOWER", "UNSURE"}


def test_a_slowdown_within_the_tolerance_is_not_reported():
    """3% slower, tolerance 5%: nvbench's criterion finds it nearly everywhere; the comparison
    reports no change, SAME where the change interval lies within 5%, UNSURE where it reaches
    beyond."""
    a = run("h100-probe-a")
    table = compare.compare(a, _slowed(a, 1.03))
    assert (table.nvbench_verdict == "SLOWER").sum() >= 50
    assert set(table.verdict) <= {"SAME", "UNSURE"} and (table.verdict == "SAME").sum() >= 50
    assert (table[table.verdict == "UNSURE"].change_high > 0.05).all()


def test_the_configs_default_tolerance_is_the_comparisons():
    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    tolerance = schema["properties"]["compare"]["properties"]["tolerance"]
    assert tolerance["default"] == compare.TOLERANCE


def test_the_time_and_cycles_verdicts_combine_as_documented():
    """A hand-written table of the rule (docs/method.md): a memory-bound kernel keeps its time
    when the SM clock moves, a compute-bound one its cycles, so SAME in either is SAME."""
    table = {
        ("SAME", "SAME"): "SAME", ("SAME", "SLOWER"): "SAME", ("FASTER", "SAME"): "SAME",
        ("SLOWER", "SLOWER"): "SLOWER", ("FASTER", "FASTER"): "FASTER",
        ("SLOWER", "FASTER"): "UNSURE", ("UNSURE", "SLOWER"): "UNSURE",
        ("UNSURE", "UNSURE"): "UNSURE", ("FASTER", "UNSURE"): "UNSURE",
    }  # fmt: skip
    for (time, cycles), want in table.items():
        assert compare.combined(time, cycles) == want, (time, cycles)


def _run_with(tmp_path, name: str, change) -> compare.Run:
    """Run `name` of tests/data/compare with its tables changed by `change(variant, df)`."""
    folder = tmp_path / name / "runs"
    folder.mkdir(parents=True)
    for p in (compare_run(name) / "runs").iterdir():
        shutil.copy(p, folder / p.name)
    for p in folder.glob("*.csv"):
        df = change(p.stem, read_csv(p))
        if df is None:
            p.unlink()
        else:
            df.to_csv(p, index=False)
    return compare.load_folder(tmp_path / name)


def test_a_configuration_that_now_fails_is_regressed_and_fails_the_gate(tmp_path):
    def fail(variant, df):
        if variant == "tiled_guarded":
            df["verification"] = "FAIL"
            df["first_mismatches"] = "0:0: 1.000000 - 2.000000 = -1.000000"
        return df

    base = compare.load_folder(compare_run("h100-b"))
    new = _run_with(tmp_path, "h100-b", fail)
    table = compare.compare(base, new)
    # h100-b's tiled_guarded has 14 configurations; the times are the same (SAME otherwise)
    assert (table.verdict == "REGRESSED").sum() == 14
    assert set(table[table.verdict == "REGRESSED"].variant) == {"tiled_guarded"}
    why = compare.gate(table)
    assert why == ["14 configuration(s) PASSed in the baseline and FAIL or ERROR now"]
    text = compare.summary(table, compare.header(base, new))
    assert "REGRESSED tiled_guarded" in text


def test_a_variant_missing_from_this_run_fails_the_gate_unless_allowed(tmp_path):
    base = compare.load_folder(compare_run("h100-b"))
    new = _run_with(tmp_path, "h100-b", lambda v, df: None if v == "cublas" else df)
    table = compare.compare(base, new)
    assert (table.verdict == "BASELINE ONLY").sum() == 7  # h100-b's cuBLAS configurations
    assert compare.gate(table) == [
        "7 configuration(s) of the baseline missing from this run (variants cublas; allow with "
        "'compare={fail_on: slower, allow_missing: true}')"
    ]
    assert compare.gate(table, allow_missing=True) == []


def test_a_damaged_archive_entry_is_skipped_with_a_message(tmp_path, capsys):
    res = tmp_path / "results"
    for name in ("h100-a", "h100-b"):
        sha = read_csv(compare_run(name) / "runs" / "cublas.csv").source_sha256[0]
        entry = res / "archive" / "cublas" / f"{sha}-{name}"
        entry.mkdir(parents=True)
        for f in (compare_run(name) / "runs").glob("cublas.*"):
            shutil.copy(f, entry / f.name)
    torn = res / "archive" / "cublas" / f"{sha}-h100-b" / "cublas.csv"
    torn.write_bytes(torn.read_bytes()[:500])
    found = compare.archived(res)
    assert [p.parent.name.split("-", 1)[1] for p in found["cublas"]] == ["h100-a"]
    assert "archive entry skipped" in capsys.readouterr().err


# -- comparisons that confused a new user (issue "what a new user hit, third round", point 6) ----


def test_a_damaged_baseline_is_named_before_any_job(workdir, tmp_path):  # noqa: F811
    _copy_run(workdir, "h100-b")
    base = tmp_path / "base"
    copy_recorded(compare_run("h100-a"), base)
    table = base / "runs" / "tiled_guarded.csv"
    table.write_bytes(table.read_bytes()[:3000])  # cut short, as an interrupted copy leaves it
    out = _compare(workdir, f"baseline={base}")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert f"config key 'baseline': {table}: its last line is not terminated" in text
    assert "Error in rule" not in text  # stopped before any job


def test_this_runs_own_folder_as_its_baseline_is_refused(workdir):  # noqa: F811
    _copy_run(workdir, "h100-b")
    out = _compare(workdir, "baseline=results/compare")
    assert out.returncode != 0
    assert "'results/compare' is this run's own results folder" in out.stdout + out.stderr


def test_a_copy_of_this_runs_measurement_is_said_to_be_one(workdir, tmp_path):  # noqa: F811
    _copy_run(workdir, "h100-b")
    out = _compare(workdir, f"baseline={compare_run('h100-b')}")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "0 SLOWER, 0 FASTER, 0 UNSURE, 56 SAME" in out.stdout + out.stderr
    assert "Every configuration holds the very same samples in both runs" in out.stdout + out.stderr


def test_a_baseline_without_samples_says_why_nothing_was_judged(workdir, tmp_path):  # noqa: F811
    _copy_run(workdir, "h100-b")
    base = tmp_path / "old" / "tables"
    base.mkdir(parents=True)
    frames = [read_csv(p) for p in sorted((compare_run("h100-a") / "runs").glob("*.csv"))]
    pd.concat(frames).to_csv(base / "timings.csv", index=False)
    (base.parent / "runs").mkdir()
    for m in (compare_run("h100-a") / "runs").glob("*.manifest.json"):
        shutil.copy(m, base.parent / "runs" / m.name)
    out = _compare(workdir, f"baseline={base.parent}")
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "0 SLOWER, 0 FASTER, 56 UNSURE, 0 SAME" in text
    assert "56 configurations UNSURE for want of timed samples in the baseline" in text


def test_render_only_without_a_run_here_says_so_in_one_message(workdir):  # noqa: F811
    out = _compare(workdir, f"baseline={compare_run('h100-a')}")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "render_only=true renders a run already measured, from results/compare/, but " in text
    assert 'File "' not in text  # no traceback lines


def test_two_runs_without_samples_are_said_to_lack_them_both(workdir, tmp_path):  # noqa: F811
    """Both folders recorded without runs/<variant>.samples.json.gz: the line names both, not
    only the baseline."""
    _copy_run(workdir, "h100-b")
    for p in (workdir / "results" / "compare" / "runs").glob("*.samples.json.gz"):
        p.unlink()
    base = tmp_path / "old"
    copy_recorded(compare_run("h100-b"), base)
    for p in (base / "runs").glob("*.samples.json.gz"):
        p.unlink()
    out = _compare(workdir, f"baseline={base}")
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "56 configurations UNSURE for want of timed samples in either run (both results " in text


# -- the gate trusts only checked data (issue "nothing lost, nothing planted", point 3) -----------


def _folder(tmp_path, name: str, label: str = "run"):
    """A copy of recorded run `name` at tmp_path/label (its runs/ and tables/)."""
    return copy_recorded(compare_run(name), tmp_path / label)


def test_a_stale_samples_file_beside_a_newer_slower_table_is_refused_by_name(tmp_path):
    """h100-slowed's table with h100-b's samples of tiled_guarded (the kernel before it was
    slowed, 1.4x faster): judged on the samples alone it would be SAME."""
    run = _folder(tmp_path, "h100-slowed")
    stale = run / "runs" / "tiled_guarded.samples.json.gz"
    shutil.copy(compare_run("h100-b") / "runs" / "tiled_guarded.samples.json.gz", stale)
    with pytest.raises(compare.NoRun) as err:
        compare.load_folder(run)
    text = str(err.value)
    assert f"{stale} does not hold the samples of the table beside it (14 configuration(s))" in text
    assert "the table says" in text


def test_nan_in_a_samples_file_is_refused_naming_the_file(tmp_path):
    import gzip
    import json

    run = _folder(tmp_path, "h100-b")
    path = run / "runs" / "cublas.samples.json.gz"
    records = json.loads(gzip.decompress(path.read_bytes()))
    records[0]["kernel_ms"][2] = float("nan")
    path.write_bytes(gzip.compress(json.dumps(records).encode()))
    with pytest.raises(compare.NoRun) as err:
        compare.load_folder(run)
    assert f"{path}: configuration " in str(err.value)
    assert "has 1 kernel_ms sample(s) that are no time (e.g. nan" in str(err.value)


def test_a_baseline_table_holding_only_its_header_is_refused_by_its_manifest(tmp_path):
    base = _folder(tmp_path, "h100-b", "base")
    table = base / "runs" / "tiled_guarded.csv"
    table.write_text(table.read_text().splitlines()[0] + "\n")
    with pytest.raises(compare.NoRun) as err:
        compare.load_folder(base)
    assert "tiled_guarded: 0 rows, its run manifest says 14 configurations" in str(err.value)


def test_a_run_without_manifests_is_refused_and_its_rebuilt_manifests_say_so(tmp_path, capsys):
    from mmbench.core import manifests

    run = _folder(tmp_path, "h100-b")
    for m in (run / "runs").glob("*.manifest.json"):
        m.unlink()
    with pytest.raises(compare.NoRun) as err:
        compare.load_folder(run)
    assert "no run manifests (runs/<variant>.manifest.json)" in str(err.value)
    assert f"mmbench manifests {run}" in str(err.value)
    kept = run / "runs" / "cublas.manifest.json"
    kept.write_text("my own notes")  # never overwritten
    assert manifests.main([str(run)]) == 0
    assert kept.read_text() == "my own notes"
    rebuilt = yaml.safe_load((run / "runs" / "naive_xrow.manifest.json").read_text())
    assert rebuilt["rebuilt_from_rows"] == "runs/naive_xrow.csv"
    assert rebuilt["configurations"] == 7  # h100-b's naive_xrow.csv: wc -l gives 8 lines
    assert rebuilt["device"]["name"] == "NVIDIA H100 80GB HBM3"
    assert f"{run / 'runs' / 'naive_xrow.manifest.json'}: rebuilt from the rows" in (
        capsys.readouterr().out
    )
    with pytest.raises(compare.NoRun, match="cublas.manifest.json: not a readable run manifest"):
        compare.load_folder(run)  # the file kept is no manifest, and is said to be none
    kept.unlink()
    manifests.main([str(run)])
    assert len(compare.load_folder(run).rows) == 56  # checked against the rebuilt manifests


def test_a_manifest_naming_another_gpu_than_its_rows_is_refused(tmp_path):
    run = _folder(tmp_path, "h100-b")
    path = run / "runs" / "cublas.manifest.json"
    path.write_text(path.read_text().replace("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB"))
    with pytest.raises(compare.NoRun) as err:
        compare.load_folder(run)
    assert (
        "cublas: rows measured on NVIDIA H100 80GB HBM3, its manifest says NVIDIA A100-SXM4-80GB"
        in str(err.value)
    )


def test_a_run_of_two_gpu_models_is_refused_not_halved(tmp_path):
    run = _folder(tmp_path, "h100-b")
    h200 = compare_run("h200-a") / "runs"
    for f in h200.glob("cublas.*"):
        shutil.copy(f, run / "runs" / f.name)
    with pytest.raises(compare.NoRun) as err:
        compare.load_folder(run)
    assert "rows of 2 GPU models (NVIDIA H100 80GB HBM3, NVIDIA H200) in one run" in str(err.value)


def test_a_comparison_that_judged_nothing_fails_the_gate_unless_allowed():
    a, b = run("h100-a"), run("h100-b")
    table = compare.compare(compare.Run("old", a.rows), compare.Run("new", b.rows))
    assert set(table.verdict) == {"UNSURE"}
    assert compare.gate(table) == [
        "the comparison judged none of its 56 configuration(s) (none has timed samples in both "
        "runs): it shows nothing about speed (allow with 'compare={fail_on: slower, "
        "allow_missing: true}')"
    ]
    assert compare.gate(table, allow_missing=True) == []


def test_configurations_this_run_added_or_measured_without_samples_fail_the_gate():
    a, b = run("h100-a"), run("h100-b")
    few = compare.Run("old", a.rows[a.rows.variant != "cublas"], a.samples)
    table = compare.compare(few, b)
    assert compare.gate(table) == [
        "7 configuration(s) of this run missing from the baseline (variants cublas; allow with "
        "'compare={fail_on: slower, allow_missing: true}')"
    ]
    xrow = set(b.rows.index[b.rows.variant == "naive_xrow"])
    bare = {k: v for k, v in b.samples.items() if k not in xrow}
    table = compare.compare(a, compare.Run("new", b.rows, bare))
    assert compare.gate(table) == [
        "7 configuration(s) not judged for want of timed samples (variants naive_xrow; allow "
        "with 'compare={fail_on: slower, allow_missing: true}')"
    ]


def test_the_gate_refuses_a_stale_samples_file_of_this_run_before_any_verdict(workdir):  # noqa: F811
    _copy_run(workdir, "h100-slowed")
    stale = workdir / "results" / "compare" / "runs" / "tiled_guarded.samples.json.gz"
    shutil.copy(compare_run("h100-b") / "runs" / "tiled_guarded.samples.json.gz", stale)
    out = _compare(workdir, f"baseline={compare_run('h100-b')}", "compare={fail_on: slower}")
    assert out.returncode != 0
    text = out.stdout + out.stderr
    assert "does not hold the samples of the table beside it (14 configuration(s))" in text
    assert not (workdir / "results" / "compare" / "tables" / "compare.csv").exists()


# -- identity and provenance apart from clocks (issue "nothing lost, nothing planted", point 5) --


def _archive(res, name: str, variant: str = "tiled_guarded", entry: str | None = None):
    """Recorded run `name`'s files of `variant` archived as measure.py archives them."""
    from mmbench.core.archive import record_measured

    sha = entry or read_csv(compare_run(name) / "runs" / f"{variant}.csv").source_sha256[0]
    folder = res / "archive" / variant / sha
    folder.mkdir(parents=True)
    for f in (compare_run(name) / "runs").glob(f"{variant}.*"):
        shutil.copy(f, folder / f.name)
    record_measured(folder.parent, sha)
    return folder


def test_an_archive_entry_dated_in_the_future_is_not_taken_as_the_newest(tmp_path):
    """Measured in this order: h100-a's source (its rows dated a year ahead by a wrong clock),
    then h100-b's, then the slowed source: the previous source is h100-b's, as measured.log
    says, not the one whose rows claim the latest date."""
    res = tmp_path / "results"
    ahead = _archive(res, "h100-a", entry="aaaaaaaaaaaaaaaa")
    t = read_csv(ahead / "tiled_guarded.csv")
    t["timestamp"] = "2099-01-01T00:00:00+00:00"
    t.to_csv(ahead / "tiled_guarded.csv", index=False)
    _archive(res, "h100-b")
    now = _archive(res, "h100-slowed")
    base, hashes = compare.previous(res, compare.load_tables([now / "tiled_guarded.csv"], "now"))
    b_sha = read_csv(compare_run("h100-b") / "runs" / "tiled_guarded.csv").source_sha256[0]
    assert hashes == {"tiled_guarded": b_sha}


def test_the_edit_loop_does_not_compare_an_earlier_source_measured_on_another_gpu(tmp_path):
    """tiled_guarded's earlier source archived from an H200 run (h200-a), this run on an H100
    (h100-slowed): no before -> after, and a line saying why."""
    res = tmp_path / "results"
    _archive(res, "h200-a", entry="0123456789abcdef")
    _archive(res, "h100-slowed")
    copy_recorded(compare_run("h100-slowed") / "runs", res / "runs")
    text = compare.edits(res, sorted((res / "runs").glob("*.csv")))
    assert text == (
        "Since the previous kernel source:\ntiled_guarded: its earlier kernel sources were "
        "measured on NVIDIA H200 only, not on this run's GPU model: not compared"
    )


def test_the_edit_loop_says_when_the_driver_or_harness_changed_too(tmp_path):
    res = tmp_path / "results"
    before = _archive(res, "h100-b")
    t = read_csv(before / "tiled_guarded.csv")
    t["driver_version"] = "575.57.08"  # h100-b and h100-slowed: 580.159.04 both
    t.to_csv(before / "tiled_guarded.csv", index=False)
    _archive(res, "h100-slowed")
    copy_recorded(compare_run("h100-slowed") / "runs", res / "runs")
    text = compare.edits(res, sorted((res / "runs").glob("*.csv")))
    assert "(baseline=previous): 14 SLOWER; also changed: driver 575.57.08 -> 580.159.04 (a " in (
        text
    )


def test_two_runs_of_different_drivers_say_so_in_the_summary():
    a, b = run("h100-a"), run("h100-b")
    a.rows = a.rows.assign(driver_version="575.57.08")
    head = compare.header(a, b)
    assert head["same_gpu"] and head["differs"] == ["driver 575.57.08 -> 580.159.04"]
    text = compare.summary(compare.compare(a, b), head)
    assert "The runs differ in what measured them (driver 575.57.08 -> 580.159.04)" in text

"""The paired comparison: two builds of a variant measured side by side in one process
(measure/paired.py) and judged from their rounds (compare/paired.py), on pairs recorded on an
NVIDIA H200 (driver 580.159.04, 2026-11-25, lab/gpu.sh paired; tests/data/README.md):

- paired/aa: the compare preset's 56 configurations, every build against itself
  (baseline=itself: the same cubin, or the same cuBLAS call, on both sides);
- paired/i32: tiled_guarded with 32-bit index arithmetic in its loads against its source
  (baseline={variant: tiled_guarded, source: ...}), both tile widths;
- paired/unroll4: tiled_guarded with its inner loop unrolled 4 steps instead of fully;
- paired/edit_loop: the i32 edit at TILE=32 through the edit loop (baseline=previous, the
  archived cubins), with the plain runs before and after it (plain_before.csv, plain_after.csv).
"""

import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mmbench.compare import compare, paired
from mmbench.core.schemas import TableError, check_frame, read_table
from mmbench.core.tables import read_samples
from mmbench.plan import pairs as planpairs
from mmbench.plan.config import ConfigError

from .conftest import DATA, compare_run, copy_recorded, read_csv, snakemake

RECORDED = DATA / "paired"


def recorded(name: str, threshold: float = paired.THRESHOLD) -> pd.DataFrame:
    folder = RECORDED / name / "pairs"
    rows = pd.concat([read_table(p, "pairs") for p in sorted(folder.glob("*.csv"))])
    samples = {}
    for p in sorted(folder.glob("*.samples.json.gz")):
        samples |= read_samples(p)
    return paired.table(rows, samples, threshold, compare.KEEP)


# -- the verdict rules, on intervals worked out by hand ------------------------------------------


@pytest.mark.parametrize(
    "low, centre, high, expected",
    [
        (0.998, 1.000, 1.002, "SAME"),  # the whole interval within +-0.5%
        (1 / 1.005, 1.0, 1.005, "SAME"),  # on the threshold's edges: still within
        (1.010, 1.012, 1.014, "SLOWER"),  # excludes 1, centre beyond +0.5%
        (0.986, 0.988, 0.990, "FASTER"),
        (1.001, 1.003, 1.006, "UNSURE"),  # excludes 1 but the centre is within the threshold
        (0.990, 1.010, 1.030, "UNSURE"),  # the centre is beyond it, the interval holds 1
        (0.0, 1.0, math.inf, "UNSURE"),  # no interval at all
    ],
)
def test_the_verdict_is_where_the_interval_lies(low, centre, high, expected):
    iv = paired.Interval(centre, low, high, 20, "bootstrap")
    assert paired.verdict(iv, 0.005) == expected


def test_what_same_could_have_seen_is_the_threshold_or_the_intervals_half_width():
    narrow = paired.Interval(1.0, 0.999, 1.001, 20, "bootstrap")
    wide = paired.Interval(1.0, 0.98, 1.03, 20, "bootstrap")
    assert paired.detectable(narrow, 0.005) == 0.005
    assert paired.detectable(wide, 0.005) == pytest.approx(0.03)
    assert paired.said("SAME", 0.004) == "SAME (would have seen +-0.4%)"
    assert paired.said("SLOWER", 0.004) == "SLOWER"


def test_few_rounds_get_students_t_interval_of_the_mean_log_ratio():
    """4 rounds: mean +- t(0.975, 3) s / sqrt(4), t = 3.18245 (a t table), in log space."""
    base = [1.0, 1.0, 1.0, 1.0]
    this = [1.010, 1.012, 1.008, 1.014]
    iv = paired.interval(base, this)
    x = np.log(this)
    half = 3.182446 * np.std(x, ddof=1) / 2
    assert iv.method == "student-t"
    assert iv.low == pytest.approx(math.exp(x.mean() - half), rel=1e-6)
    assert iv.high == pytest.approx(math.exp(x.mean() + half), rel=1e-6)
    assert paired.verdict(iv) == "SLOWER"


def test_many_rounds_get_a_bootstrap_interval_that_holds_the_trimmed_mean():
    rng = np.random.default_rng(7)
    base = 1 + 0.003 * rng.standard_normal(40)
    this = base * 1.02 * (1 + 0.002 * rng.standard_normal(40))
    iv = paired.interval(base, this)
    assert iv.method == "bootstrap" and iv.rounds == 40
    assert iv.low < iv.centre < iv.high
    assert iv.centre == pytest.approx(math.exp(stats.trim_mean(np.log(this / base), 0.1)))
    assert paired.verdict(iv) == "SLOWER"


def test_identical_rounds_and_too_few_rounds():
    same = paired.interval([2.0, 2.0, 2.0], [2.0, 2.0, 2.0])
    assert (same.low, same.centre, same.high, same.method) == (1.0, 1.0, 1.0, "exact")
    assert paired.verdict(same) == "SAME"
    one = paired.interval([1.0], [1.1])
    assert paired.verdict(one) == "UNSURE"
    with pytest.raises(ValueError, match="not pairs"):
        paired.interval([1.0, 1.0], [1.0])
    with pytest.raises(ValueError, match="not a positive number"):
        paired.interval([1.0, 0.0], [1.0, 1.0])


def test_time_and_cycles_combine_as_runs_apart_do():
    """A clock that moved in one round only moves the time, not the cycles: SAME if either is."""
    base, this = [1.0] * 6, [1.0, 1.0, 1.0, 1.0, 1.0, 1.03]
    s = dict(base_ms=base, this_ms=this, base_clock_mhz=[1980] * 6,
             this_clock_mhz=[1980] * 5 + [1980 / 1.03])  # fmt: skip
    got = paired.judge(s)
    assert got["verdict_in_cycles"] == "SAME"
    assert got["verdict"] == "SAME"


# -- recorded pairs ------------------------------------------------------------------------------


def test_every_build_against_itself_is_the_same_everywhere():
    """The same cubin on both sides: any verdict but SAME would be the comparison's own error.
    The recorded A/A run of the compare preset (56 configurations, 8 us to 140 ms)."""
    t = recorded("aa")
    assert len(t) == 56
    assert (t.verdict == "SAME").all()
    # the recorded intervals are narrow: each could have seen a change of the threshold
    assert (t.resolution < 0.002).all()
    assert (t.detectable == paired.THRESHOLD).all()
    assert (t.this_verification == "PASS").all() and (t.base_verification == "PASS").all()


def test_the_recorded_edits_are_reported_at_every_size():
    """tiled_guarded's 32-bit indexing is faster and a 4-step unroll slower at each of the 14
    configurations (as their pairs were judged on the GPU machine: tables/compare.csv)."""
    for name, verdict in (("i32", "FASTER"), ("unroll4", "SLOWER"), ("edit_loop", "FASTER")):
        t = recorded(name)
        assert (t.verdict == verdict).all(), (name, t.verdict.value_counts())
        on_gpu = read_csv(RECORDED / name / "tables" / "compare.csv")
        assert sorted(on_gpu.verdict) == sorted(t.verdict)


def test_the_paired_ratio_agrees_with_the_plain_runs_before_and_after_the_edit():
    """The edit loop's plain runs (one process each, before and after the edit) measured the
    same change: at the sizes of 1 ms and more, their ratio of medians is within 1% of the
    paired ratio."""
    before = read_csv(RECORDED / "edit_loop" / "plain_before.csv").set_index("m")
    after = read_csv(RECORDED / "edit_loop" / "plain_after.csv").set_index("m")
    plain = after.kernel_ms_median / before.kernel_ms_median
    t = recorded("edit_loop").set_index("m")
    long = before.index[before.kernel_ms_median >= 1.0]
    assert len(long) == 3
    for m in long:
        assert abs(t.ratio_centre[m] / plain[m] - 1) < 0.01, (m, t.ratio_centre[m], plain[m])


def test_a_larger_threshold_makes_a_small_change_same():
    """The i32 edit moves the time by 0.7-3.0%: with a 5% threshold every interval lies within."""
    t = recorded("i32", threshold=0.05)
    assert (t.verdict == "SAME").all()
    assert (t.detectable == 0.05).all()


def test_the_gate_fails_on_a_paired_slowdown():
    t = compare.finish(paired.merged(None, recorded("unroll4")))
    why = compare.gate(t)
    assert why == ["14 configuration(s) SLOWER than the baseline"]
    assert compare.gate(compare.finish(paired.merged(None, recorded("i32")))) == []


def test_paired_rows_replace_the_runs_apart_rows_of_the_same_configurations():
    t = recorded("i32")
    apart = t.drop(columns=paired.PAIRED_COLUMNS, errors="ignore").assign(verdict="UNSURE")
    extra = apart.iloc[:1].assign(config_id="another|configuration")
    both = compare.finish(paired.merged(pd.concat([apart, extra]), t))
    assert len(both) == len(t) + 1
    assert (both[both.config_id != "another|configuration"].verdict == "FASTER").all()
    assert compare.kind(both) == "mixed: 14 configurations paired, 1 compared as runs apart"
    check_frame(both, "compare", "test")


def test_a_pair_whose_this_build_fails_is_regressed():
    rows = read_table(RECORDED / "i32" / "pairs" / "tiled_guarded.csv", "pairs").iloc[:2].copy()
    rows.loc[rows.index[0], ["this_verification", "verification"]] = "FAIL"
    samples = read_samples(RECORDED / "i32" / "pairs" / "tiled_guarded.samples.json.gz")
    t = paired.table(rows, samples, 0.005, compare.KEEP)
    assert list(t.verdict) == ["REGRESSED", "FASTER"]


def test_a_pairs_table_with_a_missing_time_is_refused(tmp_path):
    p = tmp_path / "tiled_guarded.csv"
    rows = read_csv(RECORDED / "i32" / "pairs" / "tiled_guarded.csv")
    rows.loc[0, "this_ms"] = float("nan")
    rows.to_csv(p, index=False)
    with pytest.raises(TableError, match="both builds' times"):
        read_table(p, "pairs")


def test_the_summary_says_what_same_could_have_seen():
    t = compare.finish(paired.merged(None, recorded("aa")))
    head = dict(
        baseline=dict(run="b", gpu="NVIDIA H200", driver="580", sm_clock_mhz=1980.0, sources={}),
        this_run=dict(run="t", gpu="NVIDIA H200", driver="580", sm_clock_mhz=1980.0, sources={}),
        same_gpu=True,
        comparison=compare.kind(t),
    )
    text = compare.summary(t, head)
    assert "comparison: paired" in text
    assert "56 configurations measured side by side" in text
    assert "the smallest change each could have seen is +-0.50% to +-0.50%" in text
    assert "0 SLOWER, 0 FASTER, 0 UNSURE, 56 SAME" in text
    assert "SAME (would have seen +-0.5%)" in compare.html(t, text)


# -- which builds are paired (plan/pairs.py) -----------------------------------------------------


def test_the_baseline_forms():
    assert planpairs.build_form("") == "none"
    assert planpairs.build_form("itself") == "itself"
    assert planpairs.build_form("previous") == "previous"
    assert planpairs.build_form("results/old") == "folder"
    assert planpairs.build_form({"variant": "x", "params": {}}) == "params"
    assert planpairs.build_form({"variant": "x", "source": "a.cu"}) == "source"


def _archive(results, entries, cubins=True):
    """Archive entries as measure.py writes them: a recorded tiled_guarded table and samples
    per source hash, stamped at the given time, with a cubin where `cubins`."""
    recorded_run = DATA / "compare" / "h100-b" / "runs"
    for sha, stamp in entries:
        folder = results / "archive" / "tiled_guarded" / sha
        folder.mkdir(parents=True)
        t = read_csv(recorded_run / "tiled_guarded.csv")
        t.assign(timestamp=stamp).to_csv(folder / "tiled_guarded.csv", index=False)
        shutil.copy(recorded_run / "tiled_guarded.samples.json.gz", folder)
        if cubins:
            (folder / "cubins" / "sm_90").mkdir(parents=True)
            (folder / "cubins" / "sm_90" / "float32_TILE16.cubin").write_bytes(b"x")


def test_previous_pairs_with_the_newest_other_archived_source(tmp_path):
    _archive(tmp_path, (("old", "2026-11-20T10:00:00"), ("older", "2026-11-19T10:00:00"),
                        ("now", "2026-11-25T10:00:00")))  # fmt: skip
    got = planpairs.previous_cubins(
        tmp_path, "tiled_guarded", ["float32_TILE16", "float32_TILE32"], "sm_90", "now"
    )
    assert got == {
        "float32_TILE16": str(
            tmp_path / "archive/tiled_guarded/old/cubins/sm_90/float32_TILE16.cubin"
        )
    }


def test_previous_pairs_only_the_source_the_comparison_takes_its_rows_from(tmp_path):
    """The newest earlier entry kept no cubins (archived before cubins were kept): pairing an
    older source instead would set another source against this one than the comparison names,
    so nothing is paired and the variant is compared as runs apart."""
    _archive(tmp_path, (("older", "2026-11-19T10:00:00"),))
    _archive(tmp_path, (("old", "2026-11-20T10:00:00"),), cubins=False)
    got = planpairs.previous_cubins(tmp_path, "tiled_guarded", ["float32_TILE16"], "sm_90", "now")
    assert got == {}


def _dry(workdir, *config):
    return snakemake(
        "-n", "compare", "--configfile", "config/presets/compare.yaml",
        "--config", "arch=sm_90", *config, cwd=workdir,
    )  # fmt: skip


def test_baseline_itself_plans_one_pair_job_per_variant():
    out = _dry(None, "baseline=itself")
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "pair_variant           5" in text
    assert "measure_variant        5" in text


def test_a_parameter_baseline_plans_the_pair_and_builds_the_other_instantiation():
    out = _dry(None, "tiles=[32]", "baseline={variant: tiled_guarded, params: {TILE: 16}}")
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "pair_variant           1" in text
    assert "results/build/sm_90/tiled_guarded/float32_TILE16.cubin" in text


@pytest.mark.parametrize(
    "baseline, message",
    [
        ("{variant: tiled_guardd, params: {TILE: 16}}",
         "variant 'tiled_guardd' is not in the registry; valid: blocktile_1d"),
        ("{variant: mma_tf32, params: {BM: 64}}", "variant 'mma_tf32' is not measured in this run"),
        ("{variant: tiled_guarded, params: {TILES: 16}}",
         "tiled_guarded has no parameter 'TILES'; valid: TILE, dtype"),
        ("{variant: tiled_guarded, params: {TILE: 7}}",
         "tiled_guarded's TILE has no value 7; valid: 16, 32, 8"),
        ("{variant: tiled_guarded}", "either `source` (a kernel file) or `params`"),
        ("{variant: tiled_guarded, source: no/such.cu}", "source 'no/such.cu' is not a file"),
        ("{variant: cublas, source: environment.yml}", "cublas is not compiled by nvcc from a kernel file of ours"),
        ("{variant: tiled_guarded, params: {TILE: 16}, registry: kernels/registry.yaml}",
         "`registry` gives the -D flags of a baseline `source`"),
        ("{variant: tiled_guarded, source: environment.yml, registry: no/such.yaml}",
         "registry 'no/such.yaml' is not a file"),
        ("{variant: tiled_guarded, source: environment.yml, registry: environment.yml}",
         "registry 'environment.yml': "),
    ],
)  # fmt: skip
def test_a_baseline_build_that_cannot_be_is_refused_before_any_job(baseline, message):
    out = _dry(None, f"baseline={baseline}")
    assert out.returncode != 0
    assert message in out.stdout + out.stderr, (out.stdout + out.stderr)[-2000:]


def test_the_same_parameters_as_this_run_are_refused():
    with pytest.raises(ConfigError, match="is itself"):
        from mmbench.core.registry import load_registry

        reg = load_registry(str(DATA.parent.parent / "kernels" / "registry.yaml"))
        planpairs.baseline_cubins(
            {"variant": "tiled_guarded", "params": {"TILE": 16}}, reg["tiled_guarded"],
            ["float32_TILE16"], "sm_90", "results", "x", lambda *a: "/".join(a),
        )  # fmt: skip


def test_a_baseline_source_is_built_with_the_flags_of_the_registry_it_names(tmp_path):
    """An older tree's registry whose tiled_guarded passed a derived fact (SMEM) that this one's
    does not: the baseline source gets that registry's flags, this build its own."""
    from mmbench.core.registry import load_registry

    shutil.copytree(DATA.parent.parent / "kernels", tmp_path / "kernels")  # the sources beside it
    old = tmp_path / "kernels" / "registry.yaml"
    text = old.read_text()
    entry = "  tiled_guarded:\n"
    assert entry in text
    old.write_text(
        text.replace(entry, entry + '    derived:\n      SMEM: "2 * TILE * TILE * elem_bytes"\n', 1)
    )
    reg = load_registry(str(DATA.parent.parent / "kernels" / "registry.yaml"))
    mine = planpairs.baseline_defines(
        {"variant": "tiled_guarded", "source": "x.cu"}, reg, "tiled_guarded", "float32_TILE16"
    )
    theirs = planpairs.baseline_defines(
        {"variant": "tiled_guarded", "source": "x.cu", "registry": str(old)},
        reg, "tiled_guarded", "float32_TILE16",
    )  # fmt: skip
    assert mine == {"dtype": "float32", "TILE": 16}
    assert theirs == {"dtype": "float32", "TILE": 16, "SMEM": 2 * 16 * 16 * 4}  # two float tiles


def test_a_baseline_source_compiles_with_the_kernels_headers(workdir, tmp_path):
    """The real nvcc builds a kernel file from outside kernels/ (its includes found there)."""
    if not shutil.which("nvcc"):
        pytest.skip("nvcc not on PATH")
    old = tmp_path / "old_tiled.cu"
    shutil.copy(workdir / "kernels" / "05_tiled_guarded.cu", old)
    target = "results/compare/pairs/build/sm_90/tiled_guarded/float32_TILE16.cubin"
    out = snakemake(
        "--cores", "1", target, "--configfile", "config/presets/compare.yaml",
        "--config", "arch=sm_90", f"baseline={{variant: tiled_guarded, source: {old}}}",
        cwd=workdir,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert (workdir / target).stat().st_size > 1000
    # a baseline file whose entry point has another name: the pair job would load
    # tiled_guarded from it and find none, so its build fails naming both
    text = old.read_text()
    assert text.count("void tiled_guarded(") == 1
    renamed = tmp_path / "renamed.cu"
    renamed.write_text(text.replace("void tiled_guarded(", "void tiled_older("))
    (workdir / target).unlink()
    out = snakemake(
        "--cores", "1", target, "--configfile", "config/presets/compare.yaml",
        "--config", "arch=sm_90", f"baseline={{variant: tiled_guarded, source: {renamed}}}",
        cwd=workdir,
    )  # fmt: skip
    assert out.returncode != 0
    assert "the registry's entry point 'tiled_guarded' is not in the cubin" in out.stderr
    assert "(its entry functions: tiled_older)" in out.stderr


def test_the_compare_target_renders_a_recorded_paired_run(workdir):
    """A copied A/A run (its tables, samples and pairs), rendered: table, figure, report."""
    res = workdir / "results" / "compare"
    copy_recorded(RECORDED / "aa", res)
    (res / "tables" / "compare.csv").unlink()
    out = snakemake(
        "--cores", "1", "compare", "--configfile", "config/presets/compare.yaml",
        "--config", "render_only=true", "baseline=itself", cwd=workdir,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    table = read_table(res / "tables" / "compare.csv", "compare")
    assert (table.verdict == "SAME").all() and (table.comparison == "paired").all()
    assert (res / "compare" / "compare.png").stat().st_size > 10_000
    assert "SAME (would have seen +-0.5%)" in (res / "compare" / "compare.html").read_text()
    assert "comparison: paired" in out.stdout + out.stderr


# -- margins for runs made apart (compare/margins.py) --------------------------------------------


def test_a_margin_is_the_largest_difference_between_the_runs_medians(tmp_path):
    from mmbench.compare import margins
    from mmbench.compare.runs import load_folder

    runs = [load_folder(compare_run(n)) for n in ("h100-probe-a", "h100-probe-b")]
    t = margins.measure(runs).set_index("config_id")
    assert len(t) == 56 and (t.runs == 2).all()
    # one configuration by hand: cuBLAS at 512, batched samples in both runs
    cid = next(c for c in t.index if c.startswith("cublas|") and "|512|512|512|" in c)
    a, b = (np.median(r.samples[cid]["batch_ms"]) for r in runs)
    seen = max(a, b) / min(a, b) - 1
    assert t.loc[cid, "samples_kind"] == "batched"
    assert t.loc[cid, "largest_difference"] == pytest.approx(seen)
    assert t.loc[cid, "margin"] == pytest.approx(max(0.005, 1.5 * seen))
    assert (t.margin >= 0.005).all()


def test_margins_replace_the_tolerance_where_measured(tmp_path):
    """The slowed run against run b (its other variants' rows are run b's own), with margins
    from two other runs of the same preset: tiled_guarded's 14 slowdowns (x1.57 and more) beyond
    every margin, the 42 kept rows SAME.  The table made by `mmbench margins`, as a user runs it."""
    out = tmp_path / "margins.csv"
    mmbench = Path(__import__("sys").executable).with_name("mmbench")
    code = __import__("subprocess").run(
        [str(mmbench), "margins",
         str(compare_run("h100-probe-a")), str(compare_run("h100-probe-b")), "--out", str(out)],
        cwd=DATA.parent.parent, capture_output=True, text=True,
    )  # fmt: skip
    assert code.returncode == 0, code.stderr
    assert code.stdout.startswith("56 configurations over 2 runs")
    from mmbench.compare.margins import load as load_margins
    from mmbench.compare.runs import load_folder

    m = load_margins(out)
    table = compare.compare(
        load_folder(compare_run("h100-b")), load_folder(compare_run("h100-slowed")),
        margins=m,
    )  # fmt: skip
    table = compare.finish(table)
    assert compare.counts(table)["SLOWER"] == 14 and compare.counts(table)["SAME"] == 42
    measured = table[table.margin_source == "measured margin"]
    assert len(measured) == 56
    assert all(r.tolerance == pytest.approx(m[r.config_id]) for r in measured.itertuples())
    assert compare.kind(table).startswith(
        "runs apart (nvbench's criterion; 56 configurations with their measured margin, 0 with"
    )


def test_a_margins_file_that_is_not_there_is_refused_before_any_job():
    out = _dry(None, f"baseline={compare_run('h100-a')}", "compare={margins: no/such.csv}")
    assert out.returncode != 0
    assert "config key 'compare.margins': 'no/such.csv' is not a file" in out.stdout + out.stderr


# -- the knob: a known share of added work, on an H100 (tests/data/paired/knob-h100) -----------

KNOB = RECORDED / "knob-h100"


def _calibrated(this: int, base: int) -> pd.Series:
    """The slowdown of WORK=this over WORK=base per size from the kernel's own single-launch
    medians in one plain run (no comparison involved: tools/knob_calibration.py's numbers)."""
    t = read_csv(KNOB / "calibration_timings.csv.xz")
    p = t.pivot_table(index="m", columns="WORK", values="kernel_ms_median")
    return p[this] / p[base] - 1


@pytest.mark.parametrize(
    "this, base, verdict, shortest_ms",
    [
        (1010, 1000, "SLOWER", 0.05),  # about 2% more work: seen wherever it runs 50 us or more
        (1040, 1020, "SLOWER", 0.05),
        (1020, 1010, "SLOWER", 1.0),  # about 1%: seen wherever it runs 1 ms or more
        (1000, 1010, "FASTER", 0.05),
        (1020, 1040, "FASTER", 0.05),
        (1010, 1020, "FASTER", 1.0),
    ],
)
def test_a_calibrated_change_is_seen_where_the_kernel_runs_long_enough(
    this, base, verdict, shortest_ms
):
    slower, faster = (this, base) if this > base else (base, this)
    share = _calibrated(slower, faster)
    long = share.index[read_csv(KNOB / "calibration_timings.csv.xz")
                       .groupby("m").kernel_ms_median.min() >= shortest_ms]  # fmt: skip
    # the calibration says what each step is: about 2% or about 1% at those sizes
    step = 0.02 if shortest_ms < 1 else 0.01
    assert share[long].between(step * 0.6, step * 1.3).all(), share[long]
    folder = KNOB / f"knob_{this}_vs_{base}" / "pairs"
    rows = read_table(folder / "tiled_knob.csv", "pairs")
    t = paired.table(rows, read_samples(folder / "tiled_knob.samples.json.gz"), 0.005, compare.KEEP)
    t = t.set_index("m")
    assert (t.loc[long, "verdict"] == verdict).all(), t.loc[long, ["verdict", "ratio_centre"]]
    # the paired ratio and the calibration agree within a third of the step at 1 ms and more
    for m in share.index[read_csv(KNOB / "calibration_timings.csv.xz")
                         .groupby("m").kernel_ms_median.min() >= 1.0]:  # fmt: skip
        expected = 1 + share[m] if this > base else 1 / (1 + share[m])
        assert abs(t.ratio_centre[m] / expected - 1) < step / 3, (m, t.ratio_centre[m], expected)

"""plan/experiment.py: one invocation planned before any job, as common.smk gets it (no
Snakemake here)."""

from __future__ import annotations

import pytest
import yaml

from mmbench.plan import plan
from mmbench.plan.config import ConfigError
from mmbench.plan.experiment import gpu_jobs_without_gpu, prepare
from mmbench.report.catalogue import names

from .conftest import DATA, ROOT, compare_run, copy_recorded


def test_the_default_experiment_plans_the_course_kernels_into_results():
    exp = prepare({"arch": "sm_90"}, ROOT, outputs=names())
    # config/config.yaml's variants, written out by hand
    assert list(exp.plan.runs) == ["naive_unguarded", "naive_guarded", "naive_xrow",
                                   "tiled_unguarded", "tiled_guarded", "coarsened", "cublas"]  # fmt: skip
    assert exp.results == "results" and exp.arch == "sm_90" and not exp.render_only
    preset = prepare({"arch": "sm_90", "experiment": "ladder", "variants": ["ladder"]}, ROOT,
                     outputs=names())  # fmt: skip
    assert preset.results == "results/ladder"
    assert {"persistent_bf16", "ws_f64", "cublas_tf32"} <= set(preset.plan.runs)


def test_without_a_gpu_the_plan_says_the_three_ways_forward(tmp_path):
    if plan.detect_gpus():
        pytest.skip("a GPU is visible here: this test is for machines without one")
    # planned for no architecture (--lint needs no more); the first job stops at arch() with
    # the ways forward (tests/test_workflow.py)
    exp = prepare({}, ROOT, outputs=names())
    assert exp.no_gpu and exp.arch is None and list(exp.plan.runs)
    text = exp.arch_problem
    assert text.startswith("no GPU on this machine (nvidia-smi sees none)")
    for way in ("--profile profiles/slurm --config arch=sm_90", "--config render_only=true",
                "compile_all --config arch=sm_90"):  # fmt: skip
        assert way in text
    baseline = prepare({"baseline": str(compare_run("h100-a"))}, ROOT, outputs=names())
    assert "add render_only=true to compare" in baseline.arch_problem
    # the architecture named, planning goes on: only a local run's GPU jobs stop (onstart)
    planned = prepare({"arch": "sm_90"}, ROOT, outputs=names())
    assert planned.arch == "sm_90" and planned.gpus == []
    assert gpu_jobs_without_gpu(local=True, gpu_jobs=10, exp=planned).startswith(
        "10 job(s) of this run need a GPU; no GPU on this machine"
    )
    assert gpu_jobs_without_gpu(local=False, gpu_jobs=10, exp=planned) is None  # SLURM
    assert gpu_jobs_without_gpu(local=True, gpu_jobs=0, exp=planned) is None  # compile only


def test_without_a_gpu_the_shapes_preset_also_says_the_ways_forward():
    """config/presets/shapes.yaml places its sustained loads by the tuning table's cuBLAS rates
    for the run's GPU model (sustained_from_ms), which a machine without a GPU has none of: it
    once stopped there, naming sustained_from_ms and "this GPU model", where a login node
    should hear the three ways forward (the README, "On a machine without a GPU")."""
    if plan.detect_gpus():
        pytest.skip("a GPU is visible here: this test is for machines without one")
    given = {**yaml.safe_load((ROOT / "config" / "presets" / "shapes.yaml").read_text()),
             "draw": {"count": 8, "seed": 4242}}  # fmt: skip
    assert given["sustained_from_ms"] is not None and "burst" in given["load"]
    exp = prepare(given, ROOT, outputs=names())
    assert exp.no_gpu and exp.arch is None
    assert exp.arch_problem.startswith("no GPU on this machine (nvidia-smi sees none)")
    # the submission names the tuning's GPU model too (kernels/tuned.csv holds an H100's rows
    # only), else planning it stops at tuned_gpu
    assert ("snakemake --profile profiles/slurm --config arch=sm_90 "
            "'tuned_gpu=NVIDIA H100 80GB HBM3'") in exp.arch_problem  # fmt: skip
    named = prepare({**given, "tuned_gpu": "NVIDIA H100 80GB HBM3"}, ROOT, outputs=names())
    assert "--config arch=sm_90 (docs/cluster.md)" in named.arch_problem
    # planned for every rung at the draw's 8 products (the preset lists no sizes or shapes):
    # what --lint and --list-rules need
    assert len({(c.m, c.n, c.k) for c in exp.plan.runs["cublas"]}) == 8


def test_a_bad_key_stops_the_planning_with_its_name():
    with pytest.raises(
        ConfigError, match=r"config key 'sizes\[0\]': 'many' is not of type integer"
    ):
        prepare({"arch": "sm_90", "sizes": "many"}, ROOT, outputs=names())


def test_a_slurm_that_does_not_answer_is_named_in_one_line_within_seconds(tmp_path, monkeypatch):
    """Before the first submission: with SLURM's tools on the PATH but no controller (a
    slurm.conf naming this host and a port nothing listens on; also where a controller of
    another cluster runs here), and with no SLURM tools at all."""
    import platform
    import shutil
    import time

    from mmbench.plan.slurm import slurm_unreachable

    if shutil.which("sinfo"):
        import socket

        host = platform.node().split(".")[0]
        # a port nothing listens on, so that a controller running on this machine (its own
        # port, 6817 by default) does not answer for the one named here
        with socket.socket() as s:
            s.bind(("", 0))
            port = s.getsockname()[1]
        conf = tmp_path / "slurm.conf"
        conf.write_text(f"ClusterName=x\nSlurmctldHost={host}\nSlurmctldPort={port}\n"
                        f"NodeName={host} CPUs=1\n"
                        f"PartitionName=gpu Nodes={host} Default=YES State=UP\n")  # fmt: skip
        monkeypatch.setenv("SLURM_CONF", str(conf))
        start = time.monotonic()
        why = slurm_unreachable(timeout_s=5)
        assert why is not None and why.startswith("SLURM does not answer: ")
        assert "\n" not in why and time.monotonic() - start < 7
    monkeypatch.setenv("PATH", str(tmp_path))  # no sinfo here
    assert "SLURM's tools (sinfo) are not on this machine's PATH" in slurm_unreachable()


def test_a_ctrl_c_log_is_said_in_one_line_and_another_failure_not_at_all():
    """Snakemake's log lines (as Snakemake 9 writes them) after Ctrl-C while two compiles ran:
    by hand, 3 of 12 steps done, two compile_kernel jobs interrupted."""
    from mmbench.plan.experiment import stopped_by_user

    log = (
        "3 of 12 steps (25%) done\nTerminating processes on user request, this might take "
        "some time.\nError in rule compile_kernel:\n    jobid: 4\nError in rule "
        "compile_kernel:\n    jobid: 5\n"
    )
    assert stopped_by_user(log) == (
        "stopped by Ctrl-C after 3 of 12 steps; interrupted: 2 compile_kernel; every finished "
        "job's files are kept: run the same command again to go on (where Snakemake asks, add "
        "--rerun-incomplete: the interrupted jobs are then made again)"
    )
    assert stopped_by_user("Error in rule compile_kernel:\n    jobid: 4\n") is None


def test_the_work_to_do_counts_compiles_and_configurations_not_bookkeeping():
    """By hand: 3 compiles, 2 measurement jobs of 4 + 2 configurations, 2 other jobs."""
    from mmbench.plan.experiment import work_words

    jobs = [("compile_kernel", "a"), ("compile_kernel", "a"), ("compile_microbench", None),
            ("measure_variant", "a"), ("measure_variant", "b"), ("timings_table", None),
            ("figure", None)]  # fmt: skip
    assert work_words(jobs, {"a": [1, 2, 3, 4], "b": [5, 6]}) == (
        "to do: 3 compiles, 2 measurement jobs of 6 configurations (each prints its progress "
        "and the time it has left), 2 other jobs (profiles, tables, figures)"
    )
    assert work_words([], {}) is None
    # a checkpoint among them: the jobs it adds later are said to come
    assert work_words(jobs[:1], {}, checkpoints=True) == (
        "to do: 1 compile; then the figures and tables that wait for the timings or roofline table"
    )


def test_the_time_estimate_comes_from_the_jobs_last_durations(tmp_path):
    """By hand: two measurement jobs that took 30 s and 50 s last time (the GPU: one after the
    other, 80 s), four compiles of which two took 4 s and 6 s (the other two: the median, 5 s),
    20 s of compiling over 2 cores = 10 s: about 80 s; a table job whose rule never ran is not
    counted.  A first run (nothing ran before) has no estimate.  A benchmark file as Snakemake
    writes it gives its first column."""
    from mmbench.plan.experiment import last_seconds, time_estimate

    jobs = [("measure_variant", 30.0, True), ("measure_variant", 50.0, True),
            ("compile_kernel", 4.0, False), ("compile_kernel", 6.0, False),
            ("compile_kernel", None, False), ("compile_kernel", None, False),
            ("timings_table", None, False)]  # fmt: skip
    assert time_estimate(jobs, cores=2) == (
        "about 80 s, by the time these jobs took when they last ran here (2 never ran: the "
        "median of their rule's); 1 job of rules never run here not counted"
    )
    assert time_estimate([("compile_kernel", None, False)], cores=1) is None
    tsv = tmp_path / "b.tsv"
    tsv.write_text("s\th:m:s\tmax_rss\n12.3456\t0:00:12\t100.5\n")
    assert last_seconds(tsv) == 12.3456 and last_seconds(tmp_path / "none.tsv") is None


RECORDED_LADDER = DATA / "h200-ladder" / "results" / "ladder"


def _stopped_before_gathering(tmp_path, monkeypatch):
    """The recorded H200 ladder run as its measurement jobs left it, in a working folder:
    runs/ with each job's manifest and its rows (the recorded timings table, which the aggregate
    job gathered on the GPU machine, split back by variant), and no tables/."""
    import pandas as pd

    monkeypatch.chdir(tmp_path)
    res = tmp_path / "results" / "ladder"
    copy_recorded(RECORDED_LADDER / "runs", res / "runs")
    recorded = pd.read_csv(RECORDED_LADDER / "tables" / "timings.csv.xz")
    for variant, rows in recorded.groupby("variant"):
        rows.to_csv(res / "runs" / f"{variant}.csv", index=False)
    return res, recorded


def _render_only():
    return prepare({"experiment": "ladder", "render_only": True}, ROOT, outputs=names())


def test_render_only_gathers_the_timings_of_a_run_stopped_before_its_tables(tmp_path, monkeypatch):
    import pandas as pd

    res, recorded = _stopped_before_gathering(tmp_path, monkeypatch)
    exp = _render_only()
    gathered = pd.read_csv(res / "tables" / "timings.csv")
    key = ["variant", "instance", "dtype", "m", "n", "k", "memory", "load", "distribution"]
    assert len(gathered) == len(recorded)
    assert sorted(map(tuple, gathered[key].astype(str).values)) == sorted(
        map(tuple, recorded[key].astype(str).values)
    )
    jobs = recorded.variant.nunique()
    assert exp.notes == [
        f"render_only: results/ladder/tables/timings.csv gathered from the {jobs} finished "
        f"measurement job(s) in results/ladder/runs/ ({len(recorded)} rows: "
        f"{', '.join(sorted(recorded.variant.unique()))}); the run had stopped before gathering "
        "them"
    ]
    # the table gathered, a second render_only reads it as it is
    assert _render_only().notes == []


def test_render_only_leaves_out_a_job_that_wrote_no_manifest_and_refuses_a_short_one(
    tmp_path, monkeypatch
):
    import pandas as pd

    res, recorded = _stopped_before_gathering(tmp_path, monkeypatch)
    # a job stopped before its manifest and samples (written last; here its rows are left
    # behind too): its rows are not the run's
    (res / "runs" / "cublas.manifest.json").unlink()
    (res / "runs" / "cublas.samples.json.gz").unlink()
    _render_only()
    gathered = pd.read_csv(res / "tables" / "timings.csv")
    assert "cublas" not in set(gathered.variant)
    assert len(gathered) == len(recorded) - (recorded.variant == "cublas").sum()
    # a job's rows cut short (an interrupted copy): refused, naming the job and its count
    (res / "tables" / "timings.csv").unlink()
    mine = recorded[recorded.variant == "ws_f64"]
    mine.iloc[:-1].to_csv(res / "runs" / "ws_f64.csv", index=False)
    with pytest.raises(ConfigError) as err:
        _render_only()
    assert f"ws_f64: {len(mine) - 1} rows, its run manifest says {len(mine)} configurations" in str(
        err.value
    )
    assert not (res / "tables" / "timings.csv").exists()


def test_render_only_without_any_finished_job_says_no_run_is_there(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results" / "ladder" / "runs").mkdir(parents=True)
    with pytest.raises(ConfigError, match="holds no finished measurement job"):
        _render_only()

"""The journal of a measurement job: resume keys and torn lines (no GPU)."""

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from mmbench.core.axes import Configuration
from mmbench.plan import plan
from mmbench.service import gpus
from mmbench.service.journal import journal_key, read_journal

from .conftest import ROOT


def test_journal_key_changes_with_what_the_result_depends_on():
    conf = dict(variant="v", m=1)
    s5, s6 = {"sampling": {"min_samples": 5}}, {"sampling": {"min_samples": 6}}
    k = journal_key(conf, "cubin1", "src1", s5, "hostA-GPU-1")
    assert k == journal_key(dict(conf), "cubin1", "src1", s5, "hostA-GPU-1")
    assert k != journal_key(conf, "cubin2", "src1", s5, "hostA-GPU-1")
    assert k != journal_key(conf, "cubin1", "src2", s5, "hostA-GPU-1")
    assert k != journal_key(conf, "cubin1", "src1", s6, "hostA-GPU-1")
    assert k != journal_key(dict(conf, m=2), "cubin1", "src1", s5, "hostA-GPU-1")
    # another GPU (a requeued SLURM job on another node, a copied results folder)
    assert k != journal_key(conf, "cubin1", "src1", s5, "hostB-GPU-2")


def test_read_journal_ignores_a_torn_last_line(tmp_path):
    j = tmp_path / "t.jsonl"
    lines = [
        {"device": {"name": "GPU"}},
        {"start": "a"},
        {"key": "a", "row": {"verification": "PASS"}},
        {"start": "b"},
    ]
    j.write_text("\n".join(json.dumps(x) for x in lines) + '\n{"key": "b", "ro')
    rows, started, device = read_journal(j)
    assert rows == {"a": {"verification": "PASS"}}
    assert started == ["a", "b"]
    assert device == {"name": "GPU"}
    assert read_journal(tmp_path / "missing.jsonl") == ({}, [], None)


def test_a_job_whose_every_configuration_failed_is_a_failed_job():
    from mmbench.service.jobs import nothing_measured

    err = {"verification": "ERROR", "error": "CUDARuntimeError: cudaErrorIllegalAddress"}
    why = nothing_measured([err, dict(err, error="OutOfMemoryError")])
    assert why.startswith("every configuration of this job failed (2 ERROR rows)")
    assert "cudaErrorIllegalAddress" in why
    assert nothing_measured([err, {"verification": "FAIL"}]) is None  # FAIL is a measurement
    assert nothing_measured([]) is None


def test_an_empty_cuda_visible_devices_fails_at_once_with_the_cause(tmp_path, monkeypatch):
    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path)
    start = time.monotonic()
    with pytest.raises(gpus.NoGpuVisible, match="CUDA_VISIBLE_DEVICES is set to '': this job"):
        with gpus.acquire(env={"CUDA_VISIBLE_DEVICES": ""}, gpus=[]):
            pass
    assert time.monotonic() - start < 1


def test_a_job_with_no_visible_gpu_fails_naming_the_cause(tmp_path, monkeypatch):
    from mmbench.service.jobs import JobFailed, run_job

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    conf = plan.Configuration.of(
        "naive_guarded", {"dtype": "float32", "TILE": 16}, m=8, n=8, k=8,
        accumulate=False, memory="pinned", distribution="int09", seed=1,
    )  # fmt: skip
    cubin = tmp_path / "naive_guarded" / f"{conf.instance}.cubin"
    cubin.parent.mkdir()
    # never run: it names itself as its build would (plan/compile.py), so the job gets as far
    # as asking for a GPU
    cubin.write_bytes(f"not run mmbench-cubin:naive_guarded/{conf.instance}\0".encode())
    with pytest.raises(JobFailed, match="sees no GPU"):
        run_job(
            "naive_guarded",
            str(ROOT / "kernels" / "registry.yaml"),
            [conf.as_dict()],
            {conf.instance: str(cubin)},
            [],
            "src",
            dict(sampling={}, freivalds_vectors=2),
            str(tmp_path / "runs" / "naive_guarded.csv"),
            str(tmp_path / "log.txt"),
        )


def _conf(m: int) -> dict:
    return Configuration(
        variant="tiled_guarded",
        dtype="float32",
        m=m,
        n=m,
        k=m,
        memory="pinned",
        accumulate=False,
        distribution="int09",
        seed=1,
        params={"TILE": 16},
    ).as_dict()


STAND_IN_WORKER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    if not sys.stdin.readline().strip():  # worker.py --wait: told its GPU, or to end
        sys.exit(5)
    spec = json.loads(Path(sys.argv[-1]).read_text())
    journal = Path(spec["journal"])
    crash = Path(spec["journal"] + ".crash-once")
    for key, conf in spec["todo"]:
        with open(journal, "a") as fh:
            fh.write(json.dumps({"start": key}) + "\\n")
        if conf["m"] == 3 and not crash.exists():
            crash.write_text("")
            sys.exit(1)
        with open(journal, "a") as fh:
            fh.write(json.dumps({"key": key, "row": {"m": conf["m"], "verification": "PASS"}}) + "\\n")
    """
)


def test_a_stale_start_record_is_not_blamed_on_a_later_worker(tmp_path, monkeypatch):
    """A start record left by an earlier, interrupted run (configuration 2) is not written
    ERROR when a later worker crashes in another configuration (3): 2 is measured again."""
    from mmbench.core import paths
    from mmbench.service import jobs

    worker = tmp_path / "worker.py"
    worker.write_text(STAND_IN_WORKER)
    monkeypatch.setattr(paths, "child_command", lambda _m, *args: [sys.executable, worker, *args])
    journal = tmp_path / "t.csv.journal.jsonl"
    keyed = [(f"key{m}", _conf(m)) for m in (1, 2, 3, 4)]
    journal.write_text(json.dumps({"start": "key2"}) + "\n")  # Ctrl-C during 2, earlier
    base = dict(journal=str(journal), log=str(tmp_path / "log"))
    rows: dict = {}
    jobs._measure(keyed, rows, base, tmp_path / "spec.json", None, dict(os.environ))
    assert rows["key2"] == {"m": 2, "verification": "PASS"}
    assert rows["key3"]["verification"] == "ERROR"  # the worker did crash there
    assert "worker process ended while measuring this configuration" in rows["key3"]["error"]


def test_a_journal_from_another_gpu_is_set_aside(tmp_path, caplog):
    from mmbench.service import jobs
    from mmbench.service.journal import journal_key

    journal = tmp_path / "t.csv.journal.jsonl"
    settings = {"sampling": {}}
    other = journal_key(_conf(1), "c", "s", settings, "hostA-GPU-aaaa")
    here = journal_key(_conf(1), "c", "s", settings, "hostB-GPU-bbbb")
    assert other != here
    journal.write_text(json.dumps({"key": other, "row": {"gpu_uuid": "GPU-aaaa"}}) + "\n")
    assert jobs.resumable(journal, {here: {}}, "hostB-GPU-bbbb") == {}
    assert not journal.exists()
    assert len(list(tmp_path.glob("t.csv.journal.jsonl.set-aside-*"))) == 1
    assert "GPU-aaaa" in caplog.text and "not reused" in caplog.text


def test_a_jobs_start_up_splits_into_the_stamps_it_took(tmp_path):
    """Hand-made stamps (seconds): the job process started at 8, its script at 9; it asked for
    the GPU at 9.5 (its first worker spawned then) and held it at 10; worker one imported at 11,
    was told its GPU at 11.2, CuPy 13, ready 15, done 45, exited 46; worker two (after a lost
    context) spawned 46.5, imported 48, told 48.1, CuPy 48.5, ready 50, done 60, exited 61;
    tables written at 63.  Each phase by hand: 1, 0.5, 0.5, 1.5 + 1.5, 0.2 + 0.1, 1.8 + 0.4,
    2 + 1.5, 30 + 10, 1 + 1, 2."""
    from mmbench.service.jobs import job_phases
    from mmbench.service.journal import worker_times

    journal = tmp_path / "j.jsonl"
    journal.write_text(
        "\n".join(
            json.dumps(r)
            for r in (
                {"times": {"process": 9.6, "imported": 11, "told": 11.2, "cupy": 13, "ready": 15}},
                {"start": "k1"},
                {"times": {"done": 45}},
                {
                    "times": {
                        "process": 46.7,
                        "imported": 48,
                        "told": 48.1,
                        "cupy": 48.5,
                        "ready": 50,
                    }
                },  # fmt: skip
                {"times": {"done": 60}},
            )
        )
    )
    stamped = worker_times(journal)
    assert stamped == [
        {"process": 9.6, "imported": 11, "told": 11.2, "cupy": 13, "ready": 15, "done": 45},
        {"process": 46.7, "imported": 48, "told": 48.1, "cupy": 48.5, "ready": 50, "done": 60},
    ]
    workers = [
        stamped[0] | dict(spawned=9.5, exited=46),
        stamped[1] | dict(spawned=46.5, exited=61),
    ]
    times = dict(asked=9.5, locked=10, workers=workers, tables=63)
    assert job_phases(times, 8, 9) == pytest.approx({
        "job process: interpreter, imports": 1,
        "job set-up": 0.5,
        "job waiting for the GPU": 0.5,
        "worker start: interpreter, imports": 1.5 + 1.5,
        "worker waiting to be told its GPU": 0.2 + 0.1,
        "worker start: CuPy": 1.8 + 0.4,
        "worker start: CUDA context, cubins, cuBLAS, runner": 3.5,
        "worker: configurations": 40,
        "worker exit": 2,
        "job tables and samples": 2,
    })  # fmt: skip


def test_a_worker_that_wrote_no_stamps_counts_only_its_spawn_and_exit(tmp_path, monkeypatch):
    """The stand-in worker writes rows but no stamps (as a worker that died before reaching the
    GPU): _measure still says when each worker was spawned and exited, two of them here (the
    first crashes in configuration 3), and job_phases counts nothing for stamps never taken."""
    from mmbench.core import paths
    from mmbench.service import jobs

    worker = tmp_path / "worker.py"
    worker.write_text(STAND_IN_WORKER)
    monkeypatch.setattr(paths, "child_command", lambda _m, *args: [sys.executable, worker, *args])
    journal = tmp_path / "t.csv.journal.jsonl"
    keyed = [(f"key{m}", _conf(m)) for m in (1, 3, 4)]
    base = dict(journal=str(journal), log=str(tmp_path / "log"))
    spawns = jobs._measure(keyed, {}, base, tmp_path / "spec.json", None, dict(os.environ))
    assert len(spawns) == 2
    assert all(s["spawned"] <= s["exited"] for s in spawns)
    assert spawns[0]["exited"] <= spawns[1]["spawned"]
    phases = jobs.job_phases(dict(asked=spawns[0]["spawned"], locked=spawns[0]["spawned"], workers=spawns,
                                  tables=spawns[1]["exited"]), None, spawns[0]["spawned"])  # fmt: skip
    assert phases["worker: configurations"] == 0 and phases["job tables and samples"] == 0
    assert "job process: interpreter, imports" not in phases


def test_a_worker_started_ahead_waits_and_ends_when_told_so(tmp_path):
    """The real worker with --wait imports what it needs, then waits on its standard input;
    told to end (an empty line: its job never got a GPU) it exits with NEVER_TOLD_EXIT without
    reading its spec (which was never written) or reaching for a GPU."""
    from mmbench.service import jobs

    spec = tmp_path / "never.spec.json"
    proc = jobs._start_worker(spec)
    assert proc.poll() is None  # waiting
    jobs._tell(proc, None)
    assert proc.returncode == jobs.NEVER_TOLD_EXIT
    assert not spec.exists()


# -- a resumed journal: rows checked against their keys (issue "nothing lost, nothing planted",
# point 5)


def _journal_with(tmp_path, key: str, row: dict):
    journal = tmp_path / "t.csv.journal.jsonl"
    journal.write_text(json.dumps({"key": key, "row": row}) + "\n")
    return journal


HERE = dict(gpu_uuid="GPU-bbbb", driver_version="580.95.05", harness_sha256="h1", cubin_sha256="c1")


def test_a_row_of_another_gpu_under_this_gpus_key_is_measured_again(tmp_path, caplog):
    from mmbench.service import jobs

    key = "k1"  # this job's key; the row inside was measured elsewhere
    journal = _journal_with(tmp_path, key, dict(HERE, gpu_uuid="GPU-aaaa", m=1))
    expected = {key: {k: v for k, v in HERE.items() if k != "gpu_uuid"}}
    assert jobs.resumable(journal, expected, "hostB-GPU-bbbb") == {}
    assert "gpu_uuid 'GPU-aaaa', not this job's GPU (hostB-GPU-bbbb)" in caplog.text
    assert "measured again, not reused" in caplog.text


def test_a_row_of_another_driver_or_harness_or_cubin_is_measured_again(tmp_path, caplog):
    from mmbench.service import jobs

    expected = {"k1": {k: v for k, v in HERE.items() if k != "gpu_uuid"}}
    for name, other in (
        ("driver_version", "570.1"),
        ("harness_sha256", "h0"),
        ("cubin_sha256", "c0"),
    ):
        journal = _journal_with(tmp_path, "k1", dict(HERE, **{name: other}))
        assert jobs.resumable(journal, expected, "hostB-GPU-bbbb") == {}, name
        assert f"{name} {other!r}, not {HERE[name]!r}" in caplog.text
    journal = _journal_with(tmp_path, "k1", dict(HERE))
    assert jobs.resumable(journal, expected, "hostB-GPU-bbbb") == {"k1": HERE}


def test_the_journal_key_names_the_driver_and_the_harness():
    """run_job keys a row by the GPU, the driver and the harness joined (jobs.py): a driver
    update or a harness edit gives other keys, so nothing measured before them is resumed."""
    from mmbench.service.journal import harness_sha

    conf, s = dict(variant="v", m=1), {"sampling": {}}
    a = journal_key(conf, "c", "s", s, "hostA-GPU-1/580.95.05/" + harness_sha())
    assert a != journal_key(conf, "c", "s", s, "hostA-GPU-1/575.57.08/" + harness_sha())
    assert a != journal_key(conf, "c", "s", s, "hostA-GPU-1/580.95.05/0123456789abcdef")
    assert len(harness_sha()) == 16


def test_the_harness_hash_follows_the_measuring_code(tmp_path, monkeypatch):
    """A copy of the package with one line of measure/ changed names another harness."""
    import shutil

    from mmbench.service import journal

    package = Path(journal.__file__).resolve().parents[1]
    copy = tmp_path / "mmbench"
    shutil.copytree(package, copy, ignore=shutil.ignore_patterns("__pycache__"))
    run = [
        sys.executable,
        "-c",
        "from mmbench.service.journal import harness_sha; print(harness_sha())",
    ]
    env = dict(os.environ, PYTHONPATH=str(tmp_path))
    before = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert before.strip() == journal.harness_sha()
    timing = copy / "measure" / "timing.py"
    timing.write_text(timing.read_text() + "\n# an edit\n")
    after = subprocess.run(run, env=env, capture_output=True, text=True, check=True).stdout
    assert after != before

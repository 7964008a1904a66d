"""The run's worker (service/served.py, worker.py --serve): its socket, its entry beside the GPU
lock, and how it ends.  Real worker processes; none reaches a GPU (the one spec sent names a
variant the registry lacks, so the worker fails before CuPy).  Its reuse across jobs on a GPU
is tests/test_gpu.py's."""

import json
import os
import time

import pytest

from mmbench.service import gpus, served

from .conftest import ROOT

GPU_ENV = {"CUDA_VISIBLE_DEVICES": "0", gpus.GPU_KEY_VAR: "testhost-GPU-0000"}


@pytest.fixture
def locks(tmp_path, monkeypatch):
    """A lock folder of this test's own, for the job here and the workers it starts."""
    folder = tmp_path / "locks"
    monkeypatch.setenv("MMBENCH_GPU_LOCKS", str(folder))
    monkeypatch.setattr(gpus, "LOCK_DIR", folder)
    monkeypatch.chdir(tmp_path)
    yield folder
    served.stop()


def ended(proc, within: float = 30.0) -> bool:
    try:
        proc.wait(timeout=within)
    except Exception:  # noqa: BLE001
        return False
    return True


def test_a_worker_started_ahead_and_not_taken_ends_and_leaves_no_socket(locks):
    proc = served.spawn()
    assert served.wait_listening(proc)  # its imports done, it answers on its socket
    assert os.path.exists(proc.socket)
    served.end_unused(proc)
    assert proc.returncode == 0  # through its cleanup, not killed
    assert not os.path.exists(proc.socket)


def test_a_worker_no_job_told_its_gpu_ends_when_idle(locks, monkeypatch):
    monkeypatch.setenv("MMBENCH_WORKER_IDLE_S", "0.5")
    proc = served.spawn()
    assert served.wait_listening(proc)
    assert ended(proc, 20)
    assert proc.returncode == 0 and not os.path.exists(proc.socket)


def test_the_job_holding_the_gpu_names_its_worker_and_a_later_job_finds_it(locks):
    first = served.worker_for(GPU_ENV, served.spawn())
    entry = json.loads(served.entry_path(GPU_ENV[gpus.GPU_KEY_VAR]).read_text())
    assert entry["pid"] == first.pid and entry["owner"] == os.getcwd()
    assert entry["code"] == served.code_digest()
    assert served.serving()
    again = served.worker_for(GPU_ENV, None)  # the next job: no new process
    assert again.pid == first.pid and again.socket == first.socket
    assert served.stop() == 1
    assert ended(first.proc)
    assert not served.serving()
    assert not served.entry_path(GPU_ENV[gpus.GPU_KEY_VAR]).exists()


def test_another_runs_worker_is_told_to_end_not_used(locks, tmp_path, monkeypatch):
    first = served.worker_for(GPU_ENV, None)
    other_run = tmp_path / "other"
    other_run.mkdir()
    monkeypatch.chdir(other_run)  # another run (working directory) on the same GPU
    assert not served.serving()
    second = served.worker_for(GPU_ENV, None)
    assert second.pid != first.pid
    assert ended(first.proc)  # told to end: it was idle, as the GPU's lock was this job's
    entry = json.loads(served.entry_path(GPU_ENV[gpus.GPU_KEY_VAR]).read_text())
    assert entry["pid"] == second.pid and entry["owner"] == str(other_run)
    served.stop()
    assert ended(second.proc)


def test_a_spec_the_worker_cannot_measure_fails_the_job_and_ends_the_worker(locks, tmp_path):
    handle = served.worker_for(GPU_ENV, served.spawn())
    journal, log = tmp_path / "j.jsonl", tmp_path / "job.log"
    spec = tmp_path / "spec.json"
    spec.write_text(json.dumps(dict(
        variant="no_such_variant", registry=str(ROOT / "kernels" / "registry.yaml"),
        instantiations={}, settings={}, journal=str(journal), log=str(log), todo=[],
        source_sha="", baseline={},
    )))  # fmt: skip
    started = time.monotonic()
    assert handle.run(spec, GPU_ENV) == 1
    assert time.monotonic() - started < 60
    assert ended(handle.proc)  # a failed spec: a fresh worker takes the next job
    assert "no_such_variant" in log.read_text()  # the job's log says why
    assert not served.entry_path(GPU_ENV[gpus.GPU_KEY_VAR]).exists()
    assert not os.path.exists(handle.socket)


def test_a_worker_gone_before_it_answered_reads_as_gone(locks, tmp_path):
    handle = served.worker_for(GPU_ENV, served.spawn())
    handle.kill()
    assert handle.run(tmp_path / "spec.json", GPU_ENV) == served.GONE


def test_a_job_whose_served_worker_is_gone_forgets_it_and_starts_another(locks, tmp_path, caplog):
    """A worker entry whose number lives on in another process (here this test's own) and
    whose socket is gone: that process is not a worker (its command line), so the entry is not
    used, nor is the process signalled; the entry goes, and a new worker takes the spec (here
    it fails it, the variant being unknown, so the job fails saying so rather than trying the
    dead entry again).  A worker that dies while a job waits on it is GONE (the test above)."""
    from mmbench.service import jobs

    entry = dict(socket=str(tmp_path / "gone.sock"), pid=os.getpid(), owner=os.getcwd(),
                 code=served.code_digest(), gpu=GPU_ENV[gpus.GPU_KEY_VAR])  # fmt: skip
    path = served.entry_path(GPU_ENV[gpus.GPU_KEY_VAR])
    path.write_text(json.dumps(entry))
    journal = tmp_path / "j.jsonl"
    base = dict(variant="no_such_variant", registry=str(ROOT / "kernels" / "registry.yaml"),
                instantiations={}, settings={}, journal=str(journal), log=str(tmp_path / "l"),
                source_sha="", baseline={})  # fmt: skip
    with pytest.raises(jobs.JobFailed, match="failed before measuring anything"):
        jobs._measure([("key1", {"m": 1})], {}, base, tmp_path / "spec.json", None, GPU_ENV,
                      None, serve=True)  # fmt: skip
    assert "ended before it answered" not in caplog.text  # the stale entry was never asked
    assert "no_such_variant" in (tmp_path / "l").read_text()  # the new worker's failure
    # the new worker's entry goes as that worker ends, right after it answered the job (the
    # job may read the answer first: two runs on a loaded 2-core machine found it still there)
    deadline = time.monotonic() + 20
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not path.exists()


def test_a_job_stopped_by_sigterm_while_its_worker_measures_ends_the_worker(locks, tmp_path):
    """SIGTERM to a job waiting for its served worker's answer (Snakemake cancelling the job,
    `timeout` stopping the run): the job ends with 143 and kills the worker, as Ctrl-C does.
    Before, SIGTERM ended the job at once and the worker measured on, orphaned.  The worker is
    a real one (idle: none can measure here); the job waits on a socket that never answers,
    as it waits on a worker busy with its configurations."""
    import socket
    import subprocess
    import sys

    worker = served.spawn()
    assert served.wait_listening(worker)
    silent = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    silent.bind(str(tmp_path / "busy.sock"))
    silent.listen(1)
    job = subprocess.Popen(
        [sys.executable, "-c", (
            "import sys\n"
            "from pathlib import Path\n"
            "from mmbench.service import served\n"
            "served.end_on_sigterm()\n"
            "s = served.Served(sys.argv[1], int(sys.argv[2]))\n"
            "try:\n"
            "    s.run(Path('spec.json'), {})\n"
            "except served.Terminated:\n"
            "    sys.exit(served.TERMINATED_EXIT)\n"
        ), str(tmp_path / "busy.sock"), str(worker.pid)],
        env=os.environ | {"PYTHONPATH": str(ROOT / "workflow" / "scripts")},
    )  # fmt: skip
    conn, _ = silent.accept()  # the job has connected: it waits for its answer
    assert conn.recv(65536).startswith(b'{"spec"')  # its spec arrived
    job.terminate()
    assert ended(job, 20) and job.returncode == served.TERMINATED_EXIT
    assert ended(worker, 20) and worker.returncode == -9  # killed by the job
    conn.close()
    silent.close()


def test_a_worker_sees_its_job_gone_when_the_jobs_end_of_the_socket_closes():
    """served.peer_gone, asked by a served worker before each configuration: a job that waits
    silently is there; once its process ends (its socket closed) it is gone."""
    import socket

    worker_end, job_end = socket.socketpair()
    assert not served.peer_gone(worker_end)
    assert not served.peer_gone(worker_end)  # asking reads nothing away
    job_end.close()
    assert served.peer_gone(worker_end)
    worker_end.close()
    assert served.peer_gone(worker_end)  # a socket closed on this side: nothing to answer


def test_a_stale_entry_naming_another_process_is_never_signalled(locks, tmp_path):
    """A worker entry left behind whose process number now belongs to an unrelated process of
    this user (here a `sleep`): ending the run's workers neither signals nor counts it, and the
    entry goes; a job for that GPU starts a worker of its own rather than using it."""
    import subprocess

    other = subprocess.Popen(["sleep", "60"])
    try:
        entry = dict(socket=str(tmp_path / "stale.sock"), pid=other.pid, owner=os.getcwd(),
                     code=served.code_digest(), gpu=GPU_ENV[gpus.GPU_KEY_VAR])  # fmt: skip
        path = served.entry_path(GPU_ENV[gpus.GPU_KEY_VAR])
        path.write_text(json.dumps(entry))
        assert not served.runs_worker(other.pid, entry["socket"])
        assert not served.serving()
        assert served.stop() == 0
        time.sleep(0.2)
        assert other.poll() is None  # still running: no SIGTERM reached it
        assert not path.exists()
        path.write_text(json.dumps(entry))
        handle = served.worker_for(GPU_ENV, None)
        assert handle.pid != other.pid and other.poll() is None
        assert served.runs_worker(handle.pid, handle.socket)
    finally:
        other.kill()
        other.wait()


def test_the_worker_runs_only_the_programs_it_lists():
    """service/programs.py: a program named in a message or a command is one of PROGRAMS (the
    profilers' target), its process the package's module run by this Python."""
    from mmbench.service import programs

    with pytest.raises(ValueError, match=r"not a program of this package: 'os.system'; valid: "
                       r"\['profile.target'\]"):  # fmt: skip
        programs.run("os.system", ["true"])
    cmd = programs.command("profile.target", "spec.json")
    assert cmd[-4:] == ["-m", "mmbench.service.programs", "profile.target", "spec.json"]

"""GPU assignment among concurrent jobs (file locks; no GPU needed to test the logic)."""

import os

import pytest

from mmbench.service import gpus

TWO = [dict(index=0, uuid="GPU-aaa"), dict(index=1, uuid="GPU-bbb")]


@pytest.fixture(autouse=True)
def lock_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path / "locks")


def test_candidates_follow_cuda_visible_devices():
    assert [c[0] for c in gpus.candidates({}, TWO)] == ["0", "1"]
    assert [c[0] for c in gpus.candidates({"CUDA_VISIBLE_DEVICES": "1"}, TWO)] == ["1"]
    (only,) = gpus.candidates({"CUDA_VISIBLE_DEVICES": "GPU-bbb"}, TWO)
    assert only[0] == "GPU-bbb" and only[1].endswith("GPU-bbb")
    assert gpus.candidates({}, TWO)[1][1].endswith("GPU-bbb")  # the lock is the physical GPU


def test_two_jobs_get_two_gpus_and_a_third_waits():
    with gpus.acquire(env={}, gpus=TWO) as a, gpus.acquire(env={}, gpus=TWO) as b:
        assert {a["CUDA_VISIBLE_DEVICES"], b["CUDA_VISIBLE_DEVICES"]} == {"0", "1"}
        assert a["CUDA_DEVICE_ORDER"] == "PCI_BUS_ID"
        with pytest.raises(TimeoutError, match="no free GPU"):
            with gpus.acquire(timeout_s=0.5, env={}, gpus=TWO):
                pass
    # released: the next job gets the first GPU again
    with gpus.acquire(env={}, gpus=TWO) as c:
        assert c["CUDA_VISIBLE_DEVICES"] == "0"


def test_a_plain_local_run_measures_on_the_first_gpu_only():
    """MMBENCH_ONE_GPU (a local run with no --resources gpu=N, common.smk): of two free GPUs
    only the first is a candidate, so the second of two GPU jobs waits for it."""
    env = {gpus.ONE_GPU_VAR: "1"}
    assert [c[0] for c in gpus.candidates(env, TWO)] == ["0"]
    assert [c[0] for c in gpus.candidates(env | {"CUDA_VISIBLE_DEVICES": "1"}, TWO)] == ["1"]
    with gpus.acquire(env=env, gpus=TWO) as a:
        assert a["CUDA_VISIBLE_DEVICES"] == "0"
        with pytest.raises(TimeoutError, match="no free GPU among \\['0'\\]"):
            with gpus.acquire(timeout_s=0.3, env=env, gpus=TWO):
                pass


def test_a_job_limited_by_slurm_sees_only_its_gpus():
    with gpus.acquire(env={"CUDA_VISIBLE_DEVICES": "1"}, gpus=TWO) as a:
        assert a["CUDA_VISIBLE_DEVICES"] == "1"
        with pytest.raises(TimeoutError):
            with gpus.acquire(timeout_s=0.3, env={"CUDA_VISIBLE_DEVICES": "1"}, gpus=TWO):
                pass


def test_the_gpu_lock_folder_is_private_and_a_wait_names_the_holder(tmp_path, monkeypatch):
    from mmbench.service import gpus

    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path / "locks")
    one = [dict(index=0, uuid="GPU-0")]
    with gpus.acquire(env={}, gpus=one):
        assert (tmp_path / "locks").stat().st_mode & 0o777 == 0o700
        with pytest.raises(TimeoutError, match=f"GPU 0: pid {os.getpid()} on"):
            with gpus.acquire(timeout_s=0.2, env={}, gpus=one):
                pass
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setattr(gpus, "LOCK_DIR", shared)
    with pytest.raises(PermissionError, match="writable by others"):
        with gpus.acquire(env={}, gpus=one):
            pass


def test_a_gpu_lock_folder_that_is_a_link_to_a_folder_of_ours_is_refused(tmp_path, monkeypatch):
    """Whoever can swap the link while a job waits would redirect its lock file: refused even
    where the folder it points to is this user's own and private."""
    from mmbench.service import gpus

    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    (tmp_path / "locks").symlink_to(ours)
    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path / "locks")
    with pytest.raises(
        PermissionError,
        match=f"GPU lock folder {tmp_path / 'locks'} is a symbolic link \\(to {ours}\\)",
    ):
        with gpus.acquire(env={}, gpus=[dict(index=0, uuid="GPU-0")]):
            pass
    assert list(ours.iterdir()) == []  # nothing written through it

"""Which GPU a job measures on.  Snakemake counts GPUs (`--resources gpu=N`) but does not say
which one a job should use: each GPU job here takes an exclusive lock on one GPU of the node
(a file lock per physical GPU, keyed by host and UUID, in a folder private to the user:
LOCK_DIR) for as long as it runs, and runs its worker with only that GPU visible.  A lock file
names its holder (process, host, time), and a job waits for a GPU at most WAIT_S seconds
(MMBENCH_GPU_WAIT_S), then stops saying who holds it.  N jobs on N GPUs therefore run at once,
each on its own GPU, never two on one; under SLURM the same holds among the GPUs SLURM gave the
job.  A plain local run (no --resources gpu=N) uses the first GPU only (MMBENCH_ONE_GPU) and
starts the next GPU job while one holds it: that job waits here, its start-up done, and takes
the lock within POLL_S of its release.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import time
from pathlib import Path

from mmbench.core.nvidia_smi import detect_gpus
from mmbench.core.paths import private_folder

LOCK_DIR = Path(os.environ.get("MMBENCH_GPU_LOCKS", f"/tmp/mmbench-gpu-locks-{os.getuid()}"))
# the longest a job waits for a GPU another job holds (seconds)
WAIT_S = float(os.environ.get("MMBENCH_GPU_WAIT_S", 6 * 3600))


# the environment variable naming the GPU a job holds (host and UUID): part of its journal keys
GPU_KEY_VAR = "MMBENCH_GPU"
# set (by a plain local run, workflow/rules/common.smk): the jobs use the first GPU only
ONE_GPU_VAR = "MMBENCH_ONE_GPU"
# how often a job waiting for a GPU looks again (seconds): the handover from one job to the next
POLL_S = 0.02


def first_gpu_only() -> None:
    """This process, and the jobs it starts, measure on the first GPU only (ONE_GPU_VAR): a
    plain local run's (workflow/rules/common.smk)."""
    os.environ[ONE_GPU_VAR] = "1"


class NoGpuVisible(RuntimeError):
    """The job's environment hides every GPU: waiting for one would never end."""


def candidates(env: dict | None = None, gpus: list[dict] | None = None) -> list[tuple[str, str]]:
    """(value for CUDA_VISIBLE_DEVICES, lock key) of every GPU this job may use, in order."""
    env = os.environ if env is None else env
    gpus = detect_gpus() if gpus is None else gpus
    by_index = {str(g["index"]): g.get("uuid", str(g["index"])) for g in gpus}
    visible = env.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        ids = [x.strip() for x in visible.split(",") if x.strip()]
        if not ids:
            raise NoGpuVisible(
                f"CUDA_VISIBLE_DEVICES is set to {visible!r}: this job sees no GPU (a SLURM job "
                "without a GPU allocation, or a container started without GPUs); give the job "
                "a GPU (sbatch --gpus=1, docker --gpus) or unset CUDA_VISIBLE_DEVICES"
            )
    else:
        ids = list(by_index) or ["0"]
    if env.get(ONE_GPU_VAR):
        ids = ids[:1]
    host = platform.node()
    return [
        (i, f"{host}-{i if i.startswith(('GPU-', 'MIG-')) else by_index.get(i, i)}") for i in ids
    ]


def lock_path(lock_dir: Path, key: str) -> Path:
    """The lock file of the GPU `key` (host and UUID) in `lock_dir`."""
    return lock_dir / f"{key}.lock"


def holders(lock_dir: Path, cands) -> str:
    """Who holds each GPU's lock, as the lock files say."""
    out = []
    for visible, key in cands:
        try:
            text = lock_path(lock_dir, key).read_text().strip()
        except OSError:
            text = ""
        out.append(f"GPU {visible}: {text or 'holder unknown'}")
    return "; ".join(out)


@contextlib.contextmanager
def acquire(timeout_s: float | None = None, env: dict | None = None, gpus=None, log=None):
    """Holds one GPU for the duration of the block; yields the environment for its worker
    (CUDA_VISIBLE_DEVICES = that GPU, CUDA_DEVICE_ORDER = PCI_BUS_ID so indices match
    nvidia-smi's)."""
    lock_dir = private_folder(
        LOCK_DIR, "GPU lock folder", "set MMBENCH_GPU_LOCKS to a folder of your own"
    )
    timeout_s = WAIT_S if timeout_s is None else timeout_s
    cands = candidates(env, gpus)
    start = time.monotonic()
    waited = False
    while True:
        for visible, key in cands:
            fh = open(lock_path(lock_dir, key), "a+")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()} on {platform.node()} since {time.strftime('%H:%M:%S')}\n")
            fh.flush()
            try:
                if log:
                    log.info("measuring on GPU %s (%s)", visible, key)
                out = dict(os.environ if env is None else env)
                out.update(
                    CUDA_VISIBLE_DEVICES=visible,
                    CUDA_DEVICE_ORDER="PCI_BUS_ID",
                    **{GPU_KEY_VAR: key},
                )
                yield out
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
                fh.close()
            return
        if time.monotonic() - start > timeout_s:
            raise TimeoutError(
                f"no free GPU among {[c[0] for c in cands]} after {timeout_s:g} s "
                f"(MMBENCH_GPU_WAIT_S): {holders(lock_dir, cands)}"
            )
        if log and not waited:
            log.info(
                "all GPUs %s busy with other jobs (%s); waiting at most %g s",
                [c[0] for c in cands],
                holders(lock_dir, cands),
                timeout_s,
            )
            waited = True
        time.sleep(POLL_S)

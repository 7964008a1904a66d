"""Which GPU a job measures on.  Snakemake counts GPUs (`--resources gpu=N`) but does not say
which one a job should use: each GPU job here takes an exclusive lock on one GPU of the node
(a file lock per physical GPU, keyed by host and UUID, in /tmp) for as long as it runs, and
runs its worker with only that GPU visible.  N jobs on N GPUs therefore run at once, each on
its own GPU, never two on one; under SLURM the same holds among the GPUs SLURM gave the job.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import platform
import time
from pathlib import Path

from mmbench.core.nvidia_smi import detect_gpus

LOCK_DIR = Path(os.environ.get("MMBENCH_GPU_LOCKS", "/tmp/mmbench-gpu-locks"))


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
    host = platform.node()
    return [
        (i, f"{host}-{i if i.startswith(('GPU-', 'MIG-')) else by_index.get(i, i)}") for i in ids
    ]


@contextlib.contextmanager
def acquire(timeout_s: float | None = None, env: dict | None = None, gpus=None, log=None):
    """Holds one GPU for the duration of the block; yields the environment for its worker
    (CUDA_VISIBLE_DEVICES = that GPU, CUDA_DEVICE_ORDER = PCI_BUS_ID so indices match
    nvidia-smi's)."""
    LOCK_DIR.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        LOCK_DIR.chmod(0o1777)
    cands = candidates(env, gpus)
    start = time.monotonic()
    waited = False
    while True:
        for visible, key in cands:
            fh = open(LOCK_DIR / f"{key}.lock", "a+")
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                fh.close()
                continue
            try:
                if log:
                    log.info("measuring on GPU %s (%s)", visible, key)
                out = dict(os.environ if env is None else env)
                out.update(CUDA_VISIBLE_DEVICES=visible, CUDA_DEVICE_ORDER="PCI_BUS_ID")
                yield out
            finally:
                fcntl.flock(fh, fcntl.LOCK_UN)
                fh.close()
            return
        if timeout_s is not None and time.monotonic() - start > timeout_s:
            raise TimeoutError(f"no free GPU among {[c[0] for c in cands]} after {timeout_s} s")
        if log and not waited:
            log.info("all GPUs %s busy with other jobs; waiting", [c[0] for c in cands])
            waited = True
        time.sleep(0.5)

"""The GPUs nvidia-smi sees on this machine (planning on a login node sees none)."""

from __future__ import annotations

import shutil
import subprocess


def detect_gpus() -> list[dict]:
    """GPUs visible through nvidia-smi: index, name, compute capability, memory (GiB)."""
    smi = shutil.which("nvidia-smi")
    if not smi:
        return []
    try:
        out = subprocess.run(
            [
                smi,
                "--query-gpu=index,name,compute_cap,memory.total,uuid",
                "--format=csv,noheader,nounits",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return []
    gpus = []
    for line in out.strip().splitlines():
        idx, name, cap, mem, uuid = (x.strip() for x in line.split(","))
        gpus.append(
            dict(
                index=int(idx), name=name, compute_cap=cap, memory_gib=float(mem) / 1024, uuid=uuid
            )
        )
    return gpus

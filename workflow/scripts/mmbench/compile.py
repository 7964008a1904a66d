"""The nvcc command that builds one cubin per kernel instantiation (used by the compile rule
and by the GPU tests, so both build exactly the same thing)."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

from .registry import DTYPE_PARAM

CTYPES = {"float32": "float", "float64": "double", "int32": "int"}
NVCC_FLAGS = ("-cubin", "-O3", "-lineinfo", "-std=c++17", "-Xptxas", "-v")


def arch_flags(arch: str) -> list[str]:
    """-arch=sm_90 for a plain architecture; an architecture-specific one (sm_90a: wgmma, setmaxnreg)
    needs the matching virtual architecture too."""
    if arch[-1] in "af":
        num = arch.removeprefix("sm_")
        return [f"-gencode=arch=compute_{num},code={arch}"]
    return [f"-arch={arch}"]


def define_flags(params: dict) -> list[str]:
    """-DELEM_T=<C type> for the element type, -D<NAME>=<value> for every other parameter."""
    return [
        f"-DELEM_T={CTYPES[v]}" if k == DTYPE_PARAM else f"-D{k}={int(v)}"
        for k, v in params.items()
    ]


def nvcc_command(
    source: str | Path, output: str | Path, arch: str, params: dict, nvcc: str = "nvcc"
) -> list[str]:
    """nvcc -cubin for one instantiation; ptxas -v prints the resource report on stderr."""
    source = Path(source)
    return [
        nvcc,
        *NVCC_FLAGS,
        *arch_flags(arch),
        f"-I{source.parent}",
        *define_flags(params),
        "-o",
        str(output),
        str(source),
    ]


@cache
def supported_archs(nvcc: str = "nvcc") -> tuple[str, ...] | None:
    """The real architectures the installed nvcc builds for (`nvcc --list-gpu-code`: sm_75,
    sm_80, ..., sm_90, ...); None where there is no nvcc to ask."""
    exe = shutil.which(nvcc)
    if not exe:
        return None
    try:
        out = subprocess.run(
            [exe, "--list-gpu-code"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    return tuple(line.strip() for line in out.splitlines() if line.strip().startswith("sm_"))


def arch_problem(arch: str, supported: tuple[str, ...] | None) -> str | None:
    """Why nvcc cannot build for `arch` (None: it can, or there is no nvcc to ask)."""
    if supported is None or arch == "auto":
        return None
    base = arch.rstrip("af") if arch[-1] in "af" else arch
    if base in supported:
        return None
    return f"{arch!r} is not an architecture this nvcc builds for; valid values: " + ", ".join(
        supported
    )

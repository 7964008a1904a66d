"""The nvcc command that builds one cubin per kernel instantiation (used by the compile rule
and by the GPU tests, so both build exactly the same thing)."""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path

from mmbench.core.axes import DTYPE_PARAM
from mmbench.core.elements import element_type

NVCC_FLAGS = ("-cubin", "-O3", "-lineinfo", "-std=c++17", "-Xptxas", "-v")


def arch_flags(arch: str) -> list[str]:
    """-arch=sm_90 for a plain architecture; an architecture-specific one (sm_90a: wgmma, setmaxnreg)
    needs the matching virtual architecture too."""
    if arch[-1] in "af":
        num = arch.removeprefix("sm_")
        return [f"-gencode=arch=compute_{num},code={arch}"]
    return [f"-arch={arch}"]


def type_flags(dtype: str) -> list[str]:
    """-DELEM_T=<C type of the inputs>, and -DOUT_T / -DACC_T where the output or the sums
    have another type (bfloat16 and float16 inputs: float); common.cuh defaults both to
    ELEM_T."""
    defines = element_type(dtype).compile_defines()
    elem = defines.pop("ELEM_T")
    return [f"-DELEM_T={elem}"] + [f"-D{k}={v}" for k, v in defines.items() if v != elem]


def define_flags(params: dict) -> list[str]:
    """The element type's macros, then -D<NAME>=<value> for every other parameter."""
    out = []
    for k, v in params.items():
        out += type_flags(v) if k == DTYPE_PARAM else [f"-D{k}={int(v)}"]
    return out


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

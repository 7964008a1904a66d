"""The nvcc command that builds one cubin per kernel instantiation (used by the compile rule
and by the GPU tests, so both build exactly the same thing)."""

from __future__ import annotations

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

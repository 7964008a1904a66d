"""The nvcc command that builds one cubin per kernel instantiation (used by the compile rule
and by the GPU tests, so both build exactly the same thing)."""

from __future__ import annotations

from pathlib import Path

CTYPES = {"float32": "float", "float64": "double", "int32": "int"}
NVCC_FLAGS = ("-cubin", "-O3", "-lineinfo", "-std=c++17", "-Xptxas", "-v")


def nvcc_command(
    source: str | Path,
    output: str | Path,
    arch: str,
    dtype: str,
    tile: int,
    coarsen: int = 1,
    nvcc: str = "nvcc",
) -> list[str]:
    """nvcc -cubin for one instantiation; ptxas -v prints the resource report on stderr."""
    source = Path(source)
    return [
        nvcc,
        *NVCC_FLAGS,
        f"-arch={arch}",
        f"-I{source.parent}",
        f"-DELEM_T={CTYPES[dtype]}",
        f"-DTILE={int(tile)}",
        f"-DCOARSEN={int(coarsen)}",
        "-o",
        str(output),
        str(source),
    ]

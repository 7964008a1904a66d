"""One instantiation of a registry entry built outside the workflow, as its compile rule builds
it: the tools (tools/memcheck.py) and the GPU tests build this way, whatever the entry's backend
(nvcc's cubin or shared library: plan/compile.py; Triton's lowering assembled by ptxas, its
launch facts beside the cubin: plan/triton_build.py)."""

from __future__ import annotations

from pathlib import Path

from mmbench.core.paths import data_dir
from mmbench.plan.compile import compile_cubin


def build_instantiation(v, params: dict, out: str | Path, arch: str, log: str | Path,
                        what: str) -> str:  # fmt: skip
    """Registry entry `v`'s instantiation `params` built into `out` (rules compile_kernel,
    compile_library, compile_triton); returns the build's sha256.  `arch`: the GPU's, where
    the entry names none."""
    source = data_dir("kernels") / v.source
    if v.backend == "triton":
        from mmbench.plan.triton_build import build

        return build(source, v.symbol, out, v.arch or arch, v.defines(params), log, what)[0]
    return compile_cubin(source, out, v.arch or arch, v.defines(params), log, what,
                         shared=v.shared, libraries=v.libraries)  # fmt: skip

"""Launching one configuration's kernel: the calling convention of a registry variant (its
argument list, launch shape and dynamic shared memory, all from the registry), or cuBLAS GEMM
through CuPy.  The measurement runner and the profiler's target program both launch through
here, so the profiled call is exactly the measured one."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .oracle import NP_DTYPES
from .registry import Variant

# how each argument of a registry `args:` list is passed
_POINTERS = {"A": 0, "B": 1, "C": 2}


class Modules:
    """Loaded cubins of one process (cupy.RawModule), by path."""

    def __init__(self, cp):
        self.cp, self.loaded = cp, {}

    def function(self, path: str, symbol: str):
        if path not in self.loaded:
            self.loaded[path] = self.cp.RawModule(path=path)
        return self.loaded[path].get_function(symbol)


def kernel_arguments(v: Variant, pointers, lds, m: int, n: int, k: int, accumulate: bool) -> tuple:
    """The argument tuple in the order the registry declares (`args`)."""
    ints = dict(m=m, n=n, k=k, lda=lds[0], ldb=lds[1], ldc=lds[2], accumulate=int(accumulate))
    return tuple(
        np.uint64(pointers[_POINTERS[a]]) if a in _POINTERS else np.int32(ints[a]) for a in v.args
    )


def launcher(
    cp,
    v: Variant,
    params: dict,
    modules: Modules | None,
    cubin: str | None,
    pointers: tuple[int, int, int],
    lds: tuple[int, int, int],
    m: int,
    n: int,
    k: int,
    accumulate: bool,
    stream,
) -> tuple[Callable[[], None], tuple, tuple]:
    """(launch, grid, block) of one configuration; launch() enqueues the kernel on `stream`."""
    if v.backend == "cublas":
        return (
            cublas_launcher(
                cp, params["dtype"], pointers, lds, m, n, k, accumulate, stream, v.math
            ),
            (
                0,
                0,
                0,
            ),
            (0, 0, 0),
        )
    fn = modules.function(cubin, v.symbol)
    grid, block = v.launch(params, m, n, k)
    args = kernel_arguments(v, pointers, lds, m, n, k, accumulate)
    dynamic = v.dynamic_shared_bytes(params)
    if dynamic > 48 * 1024:
        fn.max_dynamic_shared_size_bytes = dynamic
    if 0 in grid:  # e.g. floor(size / block) = 0: nothing is launched, nothing written
        return (lambda: None), grid, block

    def launch():
        with stream:  # RawKernel launches on the current stream
            fn(grid, block, args, shared_mem=dynamic)

    return launch, grid, block


# cuBLAS math modes (cublas_api.h); CuPy's bindings name the first, not always the second
_MATH_MODES = {"ieee": 0, "tf32": 3}  # CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH


def cublas_launcher(
    cp, dtype: str, pointers, lds, m, n, k, accumulate: bool, stream, math: str = "ieee"
):
    """cuBLAS GEMM with explicit leading dimensions.  Row-major C = A.B is column-major
    C^T = B^T.A^T, so B and A swap places.  Math "ieee" is cuBLAS's default mode (no TF32);
    "tf32" lets SGEMM run on the tensor cores in TF32 (the reference of the TF32 rungs)."""
    from cupy_backends.cuda.libs import cublas as cb

    handle = cp.cuda.device.get_cublas_handle()
    dt = NP_DTYPES[dtype]
    alpha = np.array(1, dt)
    beta = np.array(1 if accumulate else 0, dt)
    gemm = {"float32": cb.sgemm, "float64": cb.dgemm}[dtype]
    op = cb.CUBLAS_OP_N
    pa, pb, pc = pointers
    lda, ldb, ldc = lds

    def launch():
        cb.setStream(handle, stream.ptr)
        cb.setPointerMode(handle, cb.CUBLAS_POINTER_MODE_HOST)
        cb.setMathMode(handle, _MATH_MODES[math])
        gemm(
            handle, op, op, n, m, k, alpha.ctypes.data, pb, ldb, pa, lda, beta.ctypes.data, pc, ldc
        )
        if math != "ieee":  # the handle is CuPy's: leave it in its default mode
            cb.setMathMode(handle, _MATH_MODES["ieee"])

    return launch

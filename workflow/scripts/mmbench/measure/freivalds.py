"""Freivalds' check of C = A.B (+ C0) on the host, trusting nothing the GPU computed.

For a random vector x, A.(B.x) + C0.x is computed in float64 from the host's own inputs in
O(n^2) and compared with C.x, C being the result as it arrived in host memory.  A wrong element
of C shows up in C.x with probability close to 1 per vector.  With integer inputs and integer x
every quantity is an exact integer below 2^53, so the comparison is exact; otherwise each row
may differ by gamma * (|A|.(|B|.|x|) + |C0|.|x|) plus float64 rounding of the matrix-vector
products.  x is drawn from [0, 1), not [-1, 1): errors of one sign (dropped terms, a missing
tile, which is what broken kernels produce on these non-negative inputs) then add up along a
row instead of cancelling like a random walk.  In floating point the check sees a row's error
only above that row's rounding bound; the element-by-element check on the device sees more.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mmbench.core.elements import ML_DTYPES, code_values

# widen to float64 a block of rows at a time, a block of about 4 MiB: each block is then still
# in the CPU's caches when BLAS reads it (lab: code-choices, "freivalds")
BLOCK_BYTES = 4 << 20
# the BLAS pool of every process that checks or draws (the worker, the draw-ahead's processes,
# the profilers' target): one thread.  These matrix-vector products are bound by memory: one
# thread is as fast as the library's default pool alone, and pools as large as the cores in
# the worker and in the drawing processes at once oversubscribe the host (lab: code-choices,
# "freivalds"; lab/benchmarks/freivalds_beside.py)
BLAS_THREADS = 1


def one_blas_pool() -> None:
    """Limits this process's BLAS pools to BLAS_THREADS threads (threadpoolctl: OpenBLAS, MKL
    or BLIS alike), for the rest of the process."""
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=BLAS_THREADS, user_api="blas")


def widen(block: np.ndarray) -> np.ndarray:
    """A block of rows in float64, exactly; ml_dtypes' 8-bit types (FP8) through the table of
    their 256 values (elements.code_values), as the reference widens them on the device."""
    if block.dtype.name in ML_DTYPES and block.dtype.itemsize == 1:
        return code_values(block.dtype.name)[block.view(np.uint8)]
    return block.astype(np.float64)


def matvec(mat: np.ndarray, x: np.ndarray, absolute: bool = False) -> np.ndarray:
    """mat @ x (|mat| @ x with `absolute`) in float64, without materialising a float64 copy of
    a large mat; x a vector or a matrix of vectors side by side (each block of mat is then
    widened once for all of them: two vectors at 8000 took 0.195 s this way, 0.306 s one after
    the other, on one core of this project's 2-core machine).  A result that holds NaN or
    infinities (a poisoned C that was never written, a kernel that overflowed) gives NaN or
    infinite rows, which the check fails; numpy's warning about them is not needed."""
    out = np.empty((mat.shape[0], *x.shape[1:]), np.float64)
    rows = max(1, BLOCK_BYTES // (8 * max(1, mat.shape[1])))
    with np.errstate(invalid="ignore", over="ignore"):
        for i in range(0, mat.shape[0], rows):
            block = widen(mat[i : i + rows])
            out[i : i + rows] = (np.abs(block, out=block) if absolute else block) @ x
    return out


@dataclass
class Probe:
    """What a group of configurations with the same inputs shares: x, A.(B.x) + C0.x, and
    the per-row tolerance."""

    x: np.ndarray
    expected: np.ndarray
    tolerance: np.ndarray


def probes(a, b, c0, vectors: int, exact: bool, gamma: float, seed: int,
           made: dict | None = None) -> list[Probe]:  # fmt: skip
    """`vectors` probes, their x drawn one after another from the seed's generator; the
    products of all of them computed side by side (matvec), or taken from `made` (products()
    of the same inputs, vectors, exactness and seed: kept by the inputs cache)."""
    if vectors < 1:
        return []
    made = products(a, b, c0, vectors, exact, seed) if made is None else made
    x, expected = made["x"], made["expected"]
    if exact:
        tol = np.zeros_like(expected)
    else:
        k, n = a.shape[1], b.shape[1]
        tol = (gamma + 4 * (k + n) * 2.0**-53) * made["bound"]
    return [Probe(x[:, j], expected[:, j], tol[:, j]) for j in range(vectors)]


def products(a, b, c0, vectors: int, exact: bool, seed: int) -> dict[str, np.ndarray]:
    """What the probes cost, O(n^2) matrix-vector products in float64 that depend on the
    inputs, the vectors and their kind alone: x (n x vectors), A.(B.x) + C0.x and, where the
    comparison is not exact, its bound |A|.(|B|.|x|) + |C0|.|x| (m x vectors)."""
    rng = np.random.default_rng([seed, 0xF5E1])
    n = b.shape[1]
    xs = [rng.integers(-8, 9, n).astype(np.float64) if exact else rng.uniform(0, 1, n)
          for _ in range(vectors)]  # fmt: skip
    x = np.stack(xs, axis=1)  # n x vectors
    expected = matvec(a, matvec(b, x))
    if c0 is not None:
        expected += matvec(c0, x)
    out = dict(x=x, expected=expected)
    if not exact:
        ax = np.abs(x)
        bound = matvec(a, matvec(b, ax, absolute=True), absolute=True)
        if c0 is not None:
            bound += matvec(c0, ax, absolute=True)
        out["bound"] = bound
    return out


def check(c: np.ndarray, checks: list[Probe]) -> tuple[bool, int]:
    """(passed, rows that failed any probe), C . x of every probe computed side by side.  NaN
    or Inf in C always fails."""
    if not checks:
        return True, 0
    got = matvec(c, np.stack([p.x for p in checks], axis=1))
    expected = np.stack([p.expected for p in checks], axis=1)
    tolerance = np.stack([p.tolerance for p in checks], axis=1)
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, which fails below
        bad = ~(np.abs(got - expected) <= tolerance)
    rows = bad.any(axis=1)
    return (not rows.any()), int(rows.sum())

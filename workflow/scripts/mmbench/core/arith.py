"""Pure arithmetic of the experiments: FLOPs, bytes, tolerances, memory needs, guard zones.

Everything here is GPU-free and unit-tested in CI.
"""

from __future__ import annotations

import math

from .distributions import distribution as _distribution
from .elements import ElementType

STATIC_SHARED_LIMIT = 48 * 1024  # bytes of static __shared__ memory per block
MAX_THREADS_PER_BLOCK = 1024
MAX_PORTABLE_CLUSTER = 8  # blocks per cluster without the non-portable opt-in
# Shared memory one block may opt in to (static + dynamic), bytes, by compute capability
# (CUDA C++ Programming Guide, "Technical Specifications per Compute Capability").
SHARED_OPTIN_LIMIT = {
    "7.0": 96 * 1024,
    "7.2": 96 * 1024,
    "7.5": 64 * 1024,
    "8.0": 163 * 1024,
    "8.6": 99 * 1024,
    "8.7": 163 * 1024,
    "8.9": 99 * 1024,
    "9.0": 227 * 1024,
    "10.0": 227 * 1024,
    "12.0": 99 * 1024,
}


def flops(m: int, n: int, k: int, accumulate: bool = False, operation: str = "gemm") -> int:
    """Floating-point operations of C = A.B (2mnk: one multiply and one add per term), plus mn
    additions for C += A.B; mn for the matrix sum C = A + B."""
    if operation == "add":
        return m * n
    return 2 * m * n * k + (m * n if accumulate else 0)


def gflops(nflop: int, ms: float) -> float:
    """GFLOP/s for `nflop` operations in `ms` milliseconds (NaN when no time was measured)."""
    if not ms or ms <= 0 or math.isnan(ms):
        return math.nan
    return nflop / (ms * 1e-3) / 1e9


def matrix_elements(m: int, n: int, k: int) -> tuple[int, int, int]:
    """Elements of A (m x k), B (k x n) and C (m x n)."""
    return m * k, k * n, m * n


def tensor_core_run(e: ElementType, k: int, promoted_every: int | None) -> int:
    """Products the tensor cores sum in their own, narrower sums before a kernel moves them to
    FP32 registers: all k where it never does (or is not known to: a library), else
    `promoted_every`; 0 where the element type's tensor-core sums are not narrower."""
    if not e.tensor_core_sum_bits:
        return 0
    return min(k, promoted_every) if promoted_every else k


def exact_expected(
    e: ElementType,
    distribution: str,
    k: int,
    accumulate: bool,
    operation: str = "gemm",
    promoted_every: int | None = None,
) -> bool:
    """True when every partial sum is exactly representable, so the product must match the
    float64 reference bit for bit: integer arithmetic always; floats with integer inputs (int09)
    that the input type holds exactly, while k * 9 * 9 (+ 9) stays below 2^p of the sums' type
    (seed 000 rounds its inputs for this reason), and, where the tensor cores keep fewer bits
    (FP8), each run of products they sum themselves stays below 2^(their bits).  The matrix
    sum C = A + B: exact on integer inputs or an integer output."""
    d = _distribution(distribution)
    if operation == "add":
        return d.integer or e.output.integer
    if e.accumulator.integer:
        return True
    if not d.integer or not e.input.exactly_holds(d.integer_max):
        return False
    vmax = d.integer_max
    run = tensor_core_run(e, k, promoted_every)
    if run and run * vmax * vmax >= 2**e.tensor_core_sum_bits:
        return False
    largest = k * vmax * vmax + (vmax if accumulate else 0)
    return e.accumulator.exactly_holds(largest) and e.output.exactly_holds(largest)


# TF32 keeps 10 of float32's 23 explicit mantissa bits: an input converted to it moves by at most
# 2^-11 of its value when rounded (cvt.rna), 2^-10 when truncated; the bound takes the larger, so
# it holds for either conversion (a library's is not documented)
TF32_INPUT_ERROR = 2.0**-10


def tolerance_scale(
    e: ElementType,
    distribution: str,
    k: int,
    accumulate: bool,
    operation: str = "gemm",
    math: str = "ieee",
    promoted_every: int | None = None,
) -> float:
    """Factor gamma such that |C - C_ref| <= gamma * (|A|.|B| + |C0|) elementwise.

    This is the classical forward error bound of a length-k dot product evaluated in the
    element type, gamma_k = k u / (1 - k u) (Higham, Accuracy and Stability, eq. 3.5), with two
    more roundings for the C0 addition and the final store.  0 means the result must be exact.
    With math "tf32" (tensor cores) each input is first converted to TF32 (relative error at
    most e = TF32_INPUT_ERROR), the products are exact in float32 and summed in float32:
    gamma = (1 + e)^2 (1 + gamma_k) - 1.  Integer inputs up to 9 are exact in TF32, so int09
    stays exact where float32 is.
    The element type's declaration (core/elements.py) gives u: the unit roundoff of the type
    the products are summed in, doubled where the sums run on the tensor cores (16-bit inputs),
    whose FP32 adds are not documented to round to nearest.  16-bit inputs are exact values of
    their type, and their products are exact in FP32.
    FP8 inputs (e.tensor_core_sum_bits: the tensor cores keep about b = 14 bits in their sums):
    each instruction adds its tensor_core_k products to the running sum, and is taken to err
    by at most u_tc = 2^(1 - b) (a truncated add) of the magnitudes it adds; a run of r
    products the tensor cores sum themselves (tensor_core_run: all k, or `promoted_every`
    where the kernel moves its sums to FP32 registers that often) is covered by the
    instructions of whole k-tiles (r rounded up to e.tensor_core_k_tile: a kernel reads k in
    128-byte stages, zeros past the matrix, and an instruction that adds zeros still sums its
    running sum again), i = ceil(r / k_tile) k_tile / k_tc of them, and errs by at most i u_tc
    of its |A|.|B|; the k / r runs are summed in FP32 as above:
    gamma = (1 + i u_tc) (1 + gamma_(k / r + 2)) - 1.
    """
    if exact_expected(e, distribution, k, accumulate, operation, promoted_every):
        return 0.0
    if operation == "add":  # one rounding of an exact sum
        return e.output.unit_roundoff
    u = e.accumulator.unit_roundoff * (2 if e.sums_on_tensor_cores else 1)
    run = tensor_core_run(e, k, promoted_every)
    steps = (-(-k // run) if run else k) + 2
    gamma = steps * u / (1 - steps * u)
    if run:
        u_tc = 2.0 ** (1 - e.tensor_core_sum_bits)
        instructions = -(-round_up(run, e.tensor_core_k_tile) // e.tensor_core_k)
        return (1 + instructions * u_tc) * (1 + gamma) - 1
    if math == "tf32":
        return (1 + TF32_INPUT_ERROR) ** 2 * (1 + gamma) - 1
    return gamma


def device_bytes_needed(m: int, n: int, k: int, e: ElementType, pad: int = 0) -> int:
    """Device memory one configuration needs: A, B and C in the element type (with padded
    leading dimensions), plus the float64 verification (A and B upcast, the reference, the
    result upcast, the error and bound)."""
    a, b, c = matrix_elements(m, n, k)
    inputs = m * (k + pad) + k * (n + pad)
    return inputs * e.input.nbytes + m * (n + pad) * e.output.nbytes + 8 * (a + b + 4 * c)


def round_up(x: int, multiple: int) -> int:
    return -(-x // multiple) * multiple if multiple > 1 else x


def guard_elements(
    reach_rows: int, reach_cols: int, lda: int, ldb: int, ldc: int, multiple: int = 1
) -> int:
    """Elements of guard zone on each side of a device buffer, from the kernel's declared reach
    (registry `reach`: rows and columns past the end of a matrix its accesses can touch).

    One more row of the widest leading dimension than the reach, plus the reach in columns, so a
    guarded kernel still has a row of guard and an access `reach` rows and columns past the last
    element lands inside the zone.  Rounded up to `multiple` elements, so that each matrix
    starts as aligned as its buffer where a kernel declares an alignment (registry `align`).
    """
    guard = (max(reach_rows, 0) + 1) * max(lda, ldb, ldc, 1) + max(reach_cols, 0)
    return round_up(guard, multiple)


def compute_capability(arch: str | None) -> str | None:
    """sm_90a -> "9.0"; None where unknown."""
    if not arch:
        return None
    num = arch.removeprefix("sm_").rstrip("af")
    return f"{num[:-1]}.{num[-1]}" if len(num) >= 2 else None


def shared_optin_limit(compute_capability: str | None) -> int | None:
    """Opt-in shared memory per block of a compute capability such as "9.0" (None: unknown)."""
    return SHARED_OPTIN_LIMIT.get(compute_capability or "")

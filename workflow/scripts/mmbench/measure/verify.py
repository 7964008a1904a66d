"""Verification of a product against its float64 reference.

`verify` is written against the array-module interface shared by NumPy and CuPy (`xp`), so the
same code checks a result on the GPU and is unit-tested on the CPU in CI.  `verify_device` is
what the runner calls: one fused pass on the GPU (`FUSED_SOURCE`) gives the counts, the largest
error and both norms, and a result with mismatches gets one more pass per mismatch listed (the
lowest failing index after the last one found).  CuPy would otherwise compile a dozen
element-wise and reduction kernels with NVRTC (seconds on a machine whose kernel cache is
empty; lab: code-choices, "verify") and read the 8-byte arrays a dozen times.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

MAX_LISTED = 10


@dataclass
class Verification:
    passed: bool
    mismatches: int
    nonfinite: int
    max_abs_error: float
    rel_l2_error: float
    first_mismatches: list[str] = field(default_factory=list)


def format_mismatch(row: int, col: int, expected: float, got: float, integer: bool) -> str:
    """One line of seed 002's report: ``row:col: expected - got = diff``.  A NaN result is the
    poison C holds before the run (or a NaN the kernel wrote): it says so rather than
    ``nan = nan``."""
    if got != got:
        return f"{row}:{col}: {expected:g} expected, NaN found (never written, or NaN computed)"
    if integer:
        return f"{row}:{col}: {int(expected)} - {int(got)} = {int(expected) - int(got)}"
    return f"{row}:{col}: {expected:.6f} - {got:.6f} = {expected - got:.6f}"


def verify(xp, got, ref, bound, scale: float, integer: bool, max_listed: int = MAX_LISTED):
    """Compares `got` (m x n, any dtype) with `ref` (float64).

    An element passes when |got - ref| <= scale * bound (bound = |A|.|B| + |C0|, see
    arith.tolerance_scale); scale 0 demands exact equality.  NaN or Inf never passes.
    The first `max_listed` mismatches in row-major order are listed, as seed 001's printDiff.
    """
    got64 = got.astype(xp.float64, copy=False)
    diff = got64 - ref
    absdiff = xp.abs(diff)
    ok = absdiff <= (scale * bound if scale else 0.0)
    ok &= xp.isfinite(got64)
    bad_count = int(ok.size - int(xp.count_nonzero(ok)))
    nonfinite = int(got64.size - int(xp.count_nonzero(xp.isfinite(got64))))
    first: list[str] = []
    if bad_count:
        flat = xp.flatnonzero(~ok.ravel())[:max_listed]
        idx = [int(i) for i in (flat.get() if hasattr(flat, "get") else flat)]
        ncols = got.shape[1]
        exp_vals = ref.ravel()[flat]
        got_vals = got64.ravel()[flat]
        exp_vals = exp_vals.get() if hasattr(exp_vals, "get") else exp_vals
        got_vals = got_vals.get() if hasattr(got_vals, "get") else got_vals
        for i, e, g in zip(idx, exp_vals.tolist(), got_vals.tolist(), strict=True):
            first.append(format_mismatch(i // ncols, i % ncols, e, g, integer and _finite(g)))
    finite = xp.isfinite(absdiff)
    max_abs = float(xp.max(xp.where(finite, absdiff, 0.0))) if absdiff.size else 0.0
    if nonfinite:
        max_abs = float("inf")
    ref_norm = float(xp.linalg.norm(ref.ravel()))
    err_norm = float(xp.linalg.norm(diff.ravel())) if not nonfinite else float("inf")
    rel = err_norm / ref_norm if ref_norm else (0.0 if err_norm == 0 else float("inf"))
    return Verification(
        passed=bad_count == 0,
        mismatches=bad_count,
        nonfinite=nonfinite,
        max_abs_error=max_abs,
        rel_l2_error=rel,
        first_mismatches=first,
    )


def _finite(x: float) -> bool:
    return x == x and x not in (float("inf"), float("-inf"))


# One pass over the result: per element the same test as `verify`, reduced per warp, then one
# atomic per warp into five totals: mismatches, non-finite elements, the largest finite |error|
# (a non-negative double's bits order like the double, so an integer atomicMax works), and the
# sums of squares of the error and of the reference.
FUSED_SOURCE = r"""
// An element passes: finite, and within scale * bound of the reference (exact where scale is 0).
__device__ __forceinline__ bool passes(double g, double ad, double bound, double scale) {
  return isfinite(g) && (ad <= (scale != 0.0 ? scale * bound : 0.0));
}
template <typename T>
__device__ void verify_fused(const T* got, const double* ref, const double* bound, double scale,
                             long long count, unsigned long long* counts, double* sums,
                             unsigned long long* max_bits) {
  unsigned long long bad = 0, nonfinite = 0;
  double max_abs = 0.0, err2 = 0.0, ref2 = 0.0;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count; i += stride) {
    double g = (double)got[i], r = ref[i], d = g - r, ad = fabs(d);
    bool finite = isfinite(g);
    bool ok = passes(g, ad, bound[i], scale);
    bad += !ok;
    nonfinite += !finite;
    if (isfinite(ad)) max_abs = fmax(max_abs, ad);
    err2 += d * d;
    ref2 += r * r;
  }
  for (int off = 16; off > 0; off >>= 1) {
    bad += __shfl_down_sync(0xffffffffu, bad, off);
    nonfinite += __shfl_down_sync(0xffffffffu, nonfinite, off);
    max_abs = fmax(max_abs, __shfl_down_sync(0xffffffffu, max_abs, off));
    err2 += __shfl_down_sync(0xffffffffu, err2, off);
    ref2 += __shfl_down_sync(0xffffffffu, ref2, off);
  }
  if ((threadIdx.x & 31) == 0) {
    if (bad) atomicAdd(&counts[0], bad);
    if (nonfinite) atomicAdd(&counts[1], nonfinite);
    atomicMax(max_bits, (unsigned long long)__double_as_longlong(max_abs));
    atomicAdd(&sums[0], err2);
    atomicAdd(&sums[1], ref2);
  }
}
// The lowest index at or after `after` whose element fails the same test (into *first, which
// holds ~0 before): each thread stops at its own first failure, the lowest of its indices.
template <typename T>
__device__ void first_bad(const T* got, const double* ref, const double* bound, double scale,
                          long long count, long long after, unsigned long long* first) {
  unsigned long long lowest = ~0ull;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = after + (long long)blockIdx.x * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    double g = (double)got[i], ad = fabs(g - ref[i]);
    if (!passes(g, ad, bound[i], scale)) {
      lowest = (unsigned long long)i;
      break;
    }
  }
  for (int off = 16; off > 0; off >>= 1) {
    unsigned long long other = __shfl_down_sync(0xffffffffu, lowest, off);
    lowest = other < lowest ? other : lowest;
  }
  if ((threadIdx.x & 31) == 0 && lowest != ~0ull) atomicMin(first, lowest);
}
#define VERIFY(NAME, FIRST, T)                                                                   \
  extern "C" __global__ void NAME(const T* got, const double* ref, const double* bound,          \
                                  double scale, long long count, unsigned long long* counts,     \
                                  double* sums, unsigned long long* max_bits) {                  \
    verify_fused<T>(got, ref, bound, scale, count, counts, sums, max_bits);                      \
  }                                                                                              \
  extern "C" __global__ void FIRST(const T* got, const double* ref, const double* bound,         \
                                   double scale, long long count, long long after,               \
                                   unsigned long long* first) {                                  \
    first_bad<T>(got, ref, bound, scale, count, after, first);                                   \
  }
VERIFY(verify_float32, first_bad_float32, float)
VERIFY(verify_float64, first_bad_float64, double)
VERIFY(verify_int32, first_bad_int32, int)
"""
THREADS = 256
_modules: dict = {}  # one compiled module per process (and CuPy's kernel cache on disk)


def verify_device(cp, got, ref, bound, scale: float, integer: bool, max_listed: int = MAX_LISTED):
    """`verify` for CuPy arrays in one fused pass; the same Verification (the norms summed in
    another order, so rel_l2_error may differ from `verify`'s in the last digits)."""
    name = f"verify_{got.dtype.name}"
    if got.dtype.name not in ("float32", "float64", "int32") or got.size == 0:
        return verify(cp, got, ref, bound, scale, integer, max_listed)
    if "module" not in _modules:
        _modules["module"] = cp.RawModule(code=FUSED_SOURCE, options=("--std=c++17",))
    kernel = _modules["module"].get_function(name)
    got = cp.ascontiguousarray(got)
    ref, bound = cp.ascontiguousarray(ref), cp.ascontiguousarray(bound)
    counts = cp.zeros(2, dtype=cp.uint64)
    sums = cp.zeros(2, dtype=cp.float64)
    max_bits = cp.zeros(1, dtype=cp.uint64)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    blocks = max(1, min(-(-got.size // THREADS), 8 * sms))
    args = (got, ref, bound, cp.float64(scale), cp.int64(got.size), counts, sums, max_bits)
    kernel((blocks,), (THREADS,), args)
    bad, nonfinite = (int(x) for x in counts.get())
    err2, ref2 = (float(x) for x in sums.get())
    max_abs = float(max_bits.view(cp.float64).get()[0])
    if nonfinite:  # as verify: a NaN or Inf makes the largest error and the error norm infinite
        max_abs = err2 = float("inf")
    ref_norm, err_norm = math.sqrt(ref2), math.sqrt(err2)
    rel = err_norm / ref_norm if ref_norm else (0.0 if err_norm == 0 else float("inf"))
    first = []
    if bad:  # the first mismatches in row-major order, one more pass each (no NVRTC compile)
        finder = _modules["module"].get_function(f"first_bad_{got.dtype.name}")
        flat_got, flat_ref, ncols = got.ravel(), ref.ravel(), got.shape[1]
        lowest = cp.empty(1, dtype=cp.uint64)
        after = 0
        for _ in range(min(bad, max_listed)):
            lowest.data.memset_async(0xFF, lowest.nbytes)  # ~0: none found yet
            finder((blocks,), (THREADS,), (got, ref, bound, cp.float64(scale),
                                           cp.int64(got.size), cp.int64(after), lowest))  # fmt: skip
            i = int(lowest.get()[0])
            if i >= got.size:  # none (cannot be while `bad` counts more)
                break
            g, e = float(flat_got[i].get()), float(flat_ref[i].get())
            first.append(format_mismatch(i // ncols, i % ncols, e, g, integer and _finite(g)))
            after = i + 1
    return Verification(
        passed=bad == 0,
        mismatches=bad,
        nonfinite=nonfinite,
        max_abs_error=max_abs,
        rel_l2_error=rel,
        first_mismatches=first,
    )

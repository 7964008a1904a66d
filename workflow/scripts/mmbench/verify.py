"""Verification of a product against its float64 reference.

Written against the array-module interface shared by NumPy and CuPy (`xp`), so the same code
checks a 12000 x 12000 result on the GPU and is unit-tested on the CPU in CI.
"""

from __future__ import annotations

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
    """One line of seed 002's report: ``row:col: expected - got = diff``."""
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

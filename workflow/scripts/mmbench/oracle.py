"""The inputs of a configuration and the oracle that judges its result, independently twice:

1. every element of the result, as it arrived in host memory, against a float64 product of the
   same inputs computed on the device (cuBLAS DGEMM on exactly upcast inputs), within the
   classical dot-product bound gamma * (|A|.|B| + |C0|) (arith.tolerance_scale), or exactly where
   every partial sum is representable (verify.py);
2. Freivalds' test on the host in float64, trusting nothing the GPU computed (freivalds.py).

Inputs and the reference depend only on the seed, the shape, the distribution, the element type
and the operation, never on the kernel, so one reference serves every variant and layout.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from . import arith, freivalds
from .verify import verify

NP_DTYPES = {"float32": np.float32, "float64": np.float64, "int32": np.int32}


def make_inputs(conf) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Host matrices A (m x k), B (k x n) and, for C += A.B, C0 (m x n)."""
    rng = np.random.default_rng([conf.seed, conf.m, conf.n, conf.k])
    dt = NP_DTYPES[conf.dtype]

    def draw(shape):
        if conf.distribution == "int09":
            return rng.integers(0, 10, size=shape, dtype=np.int8).astype(dt)
        return rng.random(size=shape, dtype=dt)

    a, b = draw((conf.m, conf.k)), draw((conf.k, conf.n))
    c0 = draw((conf.m, conf.n)) if conf.accumulate else None
    return a, b, c0


def group_key(conf) -> tuple:
    """Configurations with the same key share inputs and reference."""
    return (
        conf.dtype,
        conf.m,
        conf.n,
        conf.k,
        conf.accumulate,
        conf.distribution,
        conf.seed,
        conf.operation,
        conf.math,
    )


@dataclass
class Reference:
    """Host inputs, the device float64 reference and bound, the tolerance and Freivalds probes."""

    a: np.ndarray
    b: np.ndarray
    c0: np.ndarray | None
    ref: object  # cupy float64 array
    bound: object
    exact: bool
    gamma: float
    probes: list

    @classmethod
    def build(cls, cp, conf, freivalds_vectors: int) -> Reference:
        a, b, c0 = make_inputs(conf)
        a64, b64 = cp.asarray(a, dtype=cp.float64), cp.asarray(b, dtype=cp.float64)
        add = conf.operation == "add"
        ref = a64 + b64 if add else a64 @ b64
        nonneg = bool(a.min() >= 0 and b.min() >= 0)
        if add:
            bound = ref if nonneg else cp.abs(a64) + cp.abs(b64)
        else:
            bound = ref if nonneg else cp.abs(a64) @ cp.abs(b64)
        if c0 is not None:
            c064 = cp.asarray(c0, dtype=cp.float64)
            ref += c064
            bound = ref if (nonneg and c0.min() >= 0) else bound + cp.abs(c064)
            del c064
        del a64, b64
        exact = add or arith.exact_expected(conf.dtype, conf.distribution, conf.k, conf.accumulate)
        if add and conf.distribution == "uniform" and conf.dtype != "int32":
            exact = False
        gamma = arith.tolerance_scale(
            conf.dtype, conf.distribution, conf.k, conf.accumulate, conf.operation, conf.math
        )
        if add and exact:
            gamma = 0.0
        nvec = freivalds_vectors if not add else 0  # the sum is checked element by element
        probes = freivalds.probes(a, b, c0, nvec, exact, gamma, conf.seed) if nvec else []
        return cls(a, b, c0, ref, bound, exact, gamma, probes)

    def judge(self, cp, host_c: np.ndarray, outside_writes: int) -> dict:
        """Row columns of the verification of a result as it arrived on the host."""
        t = time.perf_counter()
        result = verify(
            cp, cp.asarray(host_c), self.ref, self.bound, self.gamma, integer=self.exact
        )
        verify_ms = (time.perf_counter() - t) * 1e3
        t = time.perf_counter()
        fv_ok, fv_rows = freivalds.check(host_c, self.probes) if self.probes else (True, 0)
        freivalds_ms = (time.perf_counter() - t) * 1e3
        passed = result.passed and outside_writes == 0 and fv_ok
        return dict(
            verification="PASS" if passed else "FAIL",
            mismatches=result.mismatches,
            nonfinite=result.nonfinite,
            oob_writes=outside_writes,
            freivalds=("PASS" if fv_ok else "FAIL") if self.probes else "off",
            freivalds_bad_rows=fv_rows,
            max_abs_error=result.max_abs_error,
            rel_l2_error=result.rel_l2_error,
            tolerance="exact" if self.gamma == 0 else f"{self.gamma:.3g} * (|A|.|B| + |C0|)",
            first_mismatches=" | ".join(result.first_mismatches),
            verify_ms=verify_ms,
            freivalds_ms=freivalds_ms,
        )

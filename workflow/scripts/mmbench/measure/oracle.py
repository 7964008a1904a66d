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

import contextlib
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from mmbench.core import arith
from mmbench.core.axes import INPUTS_KEY
from mmbench.core.distributions import distribution
from mmbench.core.elements import ML_DTYPES, code_values
from mmbench.measure import freivalds
from mmbench.measure.verify import Verification, verify_device


def make_inputs(conf) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """Host matrices A (m x k) and B (k x n) in the inputs' type and, for C += A.B, C0 (m x n)
    in the output's type, drawn from the configuration's distribution (core/distributions.py)."""
    rng = np.random.default_rng([conf.seed, conf.m, conf.n, conf.k])
    e, d = conf.element, distribution(conf.distribution)
    a, b = d.draw(rng, (conf.m, conf.k), e.input), d.draw(rng, (conf.k, conf.n), e.input)
    c0 = d.draw(rng, (conf.m, conf.n), e.output) if conf.accumulate else None
    return a, b, c0


class InputStore(Protocol):
    """Where the inputs of a group are kept for the other processes of a run that draw the
    same group (service/input_cache.py is the run's: shared memory, one drawer at a time).  A
    measurement is given one through its session (session.py) by whoever runs it; without one
    each process draws its own."""

    def enabled(self) -> bool: ...
    def key(self, conf) -> str: ...
    def load(self, conf, dtypes: dict, shapes: dict) -> dict | None: ...
    def keep(self, conf, arrays: dict) -> bool: ...
    def drawing(self, conf) -> contextlib.AbstractContextManager: ...
    def probe_products(self, stem: str, vectors: int, exact: bool, compute) -> dict: ...


def shared_inputs(
    conf, store: InputStore | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """make_inputs, drawn once per run where a `store` is given: the arrays an earlier job of
    this run drew for the same group, mapped read-only from it, else drawn and kept there."""
    if store is None or not store.enabled():
        return make_inputs(conf)
    e = conf.element
    dtypes = {"a": e.input.np_dtype, "b": e.input.np_dtype, "c0": e.output.np_dtype}
    shapes = {"a": (conf.m, conf.k), "b": (conf.k, conf.n)}
    if conf.accumulate:
        shapes["c0"] = (conf.m, conf.n)
    kept = store.load(conf, dtypes, shapes)
    if kept is not None:
        return kept["a"], kept["b"], kept.get("c0")
    with store.drawing(conf):  # one drawer at a time; a second finds the arrays kept
        kept = store.load(conf, dtypes, shapes)
        if kept is not None:
            return kept["a"], kept["b"], kept.get("c0")
        a, b, c0 = make_inputs(conf)
        store.keep(conf, {"a": a, "b": b} | ({"c0": c0} if c0 is not None else {}))
    return a, b, c0


def group_key(conf) -> tuple:
    """Configurations with the same key share inputs and reference (the axes declared with
    `inputs`, core/axes.py)."""
    return tuple(getattr(conf, name) for name in INPUTS_KEY)


def widened(cp, host: np.ndarray):
    """A host matrix on the device in float64, exactly.  Types NumPy and CuPy both know travel
    as they are and are widened there.  ml_dtypes' (bfloat16, the FP8 types: the dequantised
    inputs), which CuPy does not know, travel as their bits and are widened there too: an 8-bit
    code through a table of the 256 values ml_dtypes gives it, a bfloat16 as the upper half of
    a float32's bits.  (Widening them on the host cost 0.4-0.8 s per 8192 x 8192 FP8 matrix,
    for each reference built, in the ladder's FP8 jobs.)  float32 and bfloat16 values go
    through `float32_bits_widened`, which keeps their subnormals."""
    if host.dtype.name in ML_DTYPES and host.dtype.itemsize == 1:
        return cp.asarray(code_values(host.dtype.name))[cp.asarray(host.view(np.uint8))]
    if host.dtype.name in ML_DTYPES:  # bfloat16: float32's sign, exponent, 7 bits
        assert host.dtype.itemsize == 2, host.dtype
        return float32_bits_widened(cp, cp.asarray(host.view(np.uint16)), 16)
    dev = cp.asarray(host)
    if dev.dtype == np.float32:
        return float32_bits_widened(cp, dev.view(cp.uint32), 0)
    return dev.astype(cp.float64)


# float32 bits (shifted left by `shift` first: a bfloat16's 16) to float64, subnormals made from
# their significand in float64 arithmetic, which flushes nothing (CuPy's float32 cast flushes
# subnormals to zero: lab: code-choices, "oracle").  One kernel for the whole widening: each
# CuPy operation is a kernel NVRTC compiles on a machine's first run, per array layout, and a
# cast with masks that found the subnormals took seven.
_FLOAT32_BITS = r"""
    const unsigned int b = (unsigned int)x << shift;
    const unsigned int e = (b >> 23) & 0xFFu, m = b & 0x7FFFFFu;
    if (e == 0) {
        const double v = (double)m * 1.4012984643248170709e-45;  // 2^-149
        y = (b >> 31) ? -v : v;
    } else {
        y = (double)__uint_as_float(b);
    }
"""


def float32_bits_widened(cp, bits, shift: int):
    """float64 values of float32 bit patterns (`bits`: uint32, or uint16 shifted by 16), exactly,
    subnormals included."""
    return _widen_kernel(cp)(cp.ascontiguousarray(bits), np.uint32(shift))


@functools.cache
def _widen_kernel(cp):
    return cp.ElementwiseKernel(
        "T x, uint32 shift", "float64 y", _FLOAT32_BITS, "mmbench_widen_float32_bits"
    )


def nonnegative(*arrays) -> bool:
    """No element below zero (nor NaN) in any of the arrays (None for an absent C0): then
    |A|.|B| + |C0| is the product itself."""
    return all(bool(x.min() >= 0) for x in arrays if x is not None)


def on_device(cp, c):
    """A result on the device: a CuPy array as it is; a host array copied up in one cudaMemcpy
    from where it lies (cp.asarray would first copy it into a pinned staging buffer of its own,
    which costs as much again where the array is pinned already, as the runner's result copy
    is)."""
    if not isinstance(c, np.ndarray) or c.dtype.name not in ("float32", "float64", "int32"):
        return cp.asarray(c)
    out = cp.empty(c.shape, dtype=c.dtype)
    out.set(np.ascontiguousarray(c))
    return out


@dataclass
class Inputs:
    """The host side of a group of configurations: the inputs, the tolerance and (`probes`,
    the slow part: float64 matrix-vector products) the Freivalds probes.  No GPU is involved,
    so the runner draws the next group's on a worker thread while the GPU measures this one
    (NumPy's generators, casts and BLAS release the GIL), and the probes after the inputs, as
    they are needed only once a result is there to check."""

    a: np.ndarray
    b: np.ndarray
    c0: np.ndarray | None
    exact: bool
    gamma: float
    vectors: int  # Freivalds vectors; 0 for the sum, checked element by element
    seed: int
    kept: str | None = None  # the store's name of the group (InputStore.key)
    store: InputStore | None = None

    @classmethod
    def draw(cls, conf, freivalds_vectors: int, promoted_every: int | None = None,
             store: InputStore | None = None) -> Inputs:  # fmt: skip
        """`promoted_every`: the products after which the kernel moves the tensor cores' narrow
        sums to FP32 (registry `sums_promoted_every`; FP8), for the bound.  `store`: where the
        run's processes share their draws (shared_inputs)."""
        a, b, c0 = shared_inputs(conf, store)
        shape = (conf.element, conf.distribution, conf.k, conf.accumulate, conf.operation)
        exact = arith.exact_expected(*shape, promoted_every)
        gamma = arith.tolerance_scale(*shape, conf.math, promoted_every)
        vectors = freivalds_vectors if conf.operation != "add" else 0
        kept = store.key(conf) if store is not None and store.enabled() else None
        return cls(a, b, c0, exact, gamma, vectors, conf.seed, kept, store)

    def probes(self) -> list:
        """The Freivalds probes; their matrix-vector products (the slow part) from the store
        where a job's draw-ahead or an earlier job made them (service/predraw.py)."""
        if not self.vectors:
            return []
        made = None
        if self.kept is not None:
            args = (self.a, self.b, self.c0, self.vectors, self.exact, self.seed)
            made = self.store.probe_products(self.kept, self.vectors, self.exact,
                                              lambda: freivalds.products(*args))  # fmt: skip
        return freivalds.probes(
            self.a, self.b, self.c0, self.vectors, self.exact, self.gamma, self.seed, made
        )


@dataclass
class Reference:
    """A group's inputs (host) with the float64 reference and bound on the device."""

    host: Inputs
    ref: object  # cupy float64 array
    bound: object
    probes: Callable[[], list]  # the Freivalds probes, when ready (a Future's result)

    @classmethod
    def build(cls, cp, conf, host: Inputs, probes: Callable[[], list]) -> Reference:
        """The float64 product on the device.  The inputs travel in their own type and are
        widened there (a float64 copy made on the host would double the bytes copied and cost
        a host cast)."""
        a64, b64 = widened(cp, host.a), widened(cp, host.b)
        c064 = None if host.c0 is None else widened(cp, host.c0)
        nonneg = nonnegative(a64, b64, c064)  # on the device: a scan of the host's cost
        add = conf.operation == "add"
        ref = a64 + b64 if add else a64 @ b64
        if nonneg:
            bound = ref
        else:
            bound = cp.abs(a64) + cp.abs(b64) if add else cp.abs(a64) @ cp.abs(b64)
        if c064 is not None:
            ref += c064
            bound = ref if nonneg else bound + cp.abs(c064)
            del c064
        del a64, b64
        return cls(host, ref, bound, probes)

    # the inputs, for the placement
    a = property(lambda self: self.host.a)
    b = property(lambda self: self.host.b)
    c0 = property(lambda self: self.host.c0)

    def check_device(self, cp, c) -> tuple[Verification, float]:
        """Every element of the result against the reference on the device (verify.py): C as
        it arrived on the host (copied up), or still in device memory (a CuPy view, checked
        there without the copy to the host and back); and the milliseconds it took."""
        t = time.perf_counter()
        h = self.host
        result = verify_device(cp, on_device(cp, c), self.ref, self.bound, h.gamma, h.exact)
        return result, (time.perf_counter() - t) * 1e3

    def check_host(self, host_c: np.ndarray) -> tuple[bool, int, float]:
        """Freivalds' test on the host (thread-safe: reads host_c and the probes only):
        (passed, rows that failed, milliseconds)."""
        probes = self.probes()
        t = time.perf_counter()
        ok, rows = freivalds.check(host_c, probes) if probes else (True, 0)
        return ok, rows, (time.perf_counter() - t) * 1e3

    def columns(self, result: Verification, verify_ms: float, fv: tuple, outside: int) -> dict:
        """Row columns of both verifications and of the guard zones."""
        fv_ok, fv_rows, freivalds_ms = fv
        probes = self.host.vectors > 0
        passed = result.passed and outside == 0 and fv_ok
        gamma = self.host.gamma
        return dict(
            verification="PASS" if passed else "FAIL",
            mismatches=result.mismatches,
            nonfinite=result.nonfinite,
            oob_writes=outside,
            freivalds=("PASS" if fv_ok else "FAIL") if probes else "off",
            freivalds_bad_rows=fv_rows,
            max_abs_error=result.max_abs_error,
            rel_l2_error=result.rel_l2_error,
            tolerance="exact" if gamma == 0 else f"{gamma:.3g} * (|A|.|B| + |C0|)",
            first_mismatches=" | ".join(result.first_mismatches),
            verify_ms=verify_ms,
            freivalds_ms=freivalds_ms,
        )

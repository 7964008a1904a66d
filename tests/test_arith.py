import math

import numpy as np
import pytest

from mmbench.core import arith
from mmbench.core.elements import element_type


def test_flops_and_gflops():
    assert arith.flops(2, 3, 4) == 48
    assert arith.flops(2, 3, 4, accumulate=True) == 54
    # seed 002: 640^3 * 2 flop in 4.098496 ms is 127.92 GFLOPS
    assert arith.gflops(arith.flops(640, 640, 640), 4.098496) == pytest.approx(127.92, abs=0.01)
    assert math.isnan(arith.gflops(10, 0.0))
    assert math.isnan(arith.gflops(10, float("nan")))


def test_exactness_of_integer_inputs():
    assert arith.exact_expected(element_type("int32"), "int09", 10**6, False)
    assert arith.exact_expected(element_type("float32"), "int09", 12000, False)  # 81 * 12000 < 2^24
    assert not arith.exact_expected(element_type("float32"), "int09", 300_000, False)
    assert arith.exact_expected(element_type("float64"), "int09", 10**6, True)
    assert not arith.exact_expected(element_type("float32"), "uniform", 8, False)


def test_tolerance_scales_with_k_and_type():
    assert arith.tolerance_scale(element_type("float32"), "int09", 1000, False) == 0.0
    t1 = arith.tolerance_scale(element_type("float32"), "uniform", 1000, False)
    t2 = arith.tolerance_scale(element_type("float32"), "uniform", 2000, False)
    t64 = arith.tolerance_scale(element_type("float64"), "uniform", 1000, False)
    assert t2 == pytest.approx(2 * t1, rel=1e-3)
    assert t64 < t1 * 1e-8
    assert t1 == pytest.approx(1002 * 2.0**-24, rel=1e-3)


def test_tolerance_bounds_real_float32_rounding():
    """The bound holds for a float32 product accumulated sequentially, the worst order."""
    rng = np.random.default_rng(1)
    k = 4096
    a = rng.random((4, k), dtype=np.float32)
    b = rng.random((k, 4), dtype=np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    got = np.zeros((4, 4), np.float32)
    for i in range(k):
        got += np.outer(a[:, i], b[i, :]).astype(np.float32)
    scale = arith.tolerance_scale(element_type("float32"), "uniform", k, False)
    assert np.all(np.abs(got - ref) <= scale * ref)
    # and it is tight enough to catch a dropped term (one partial tile missing)
    dropped = ref - np.outer(a[:, -1], b[-1, :])
    assert np.any(np.abs(dropped - ref) > scale * ref)


def test_device_memory_need():
    need = arith.device_bytes_needed(12000, 12000, 12000, element_type("float32"))
    assert 6e9 < need < 10e9


def test_guard_covers_tiled_unguarded_overhang(registry):
    """Largest element offsets kernel10 touches at 641 (seed 002) stay inside the guard zone."""
    v = registry["tiled_unguarded"]
    for m, n, k, tile in [(641, 641, 641, 32), (100, 37, 70, 16), (9, 9, 9, 8)]:
        params = {"dtype": "float32", "TILE": tile}
        (gx, gy, _), _ = v.launch(params, m, n, k)
        rows = gy * tile - 1
        cols = gx * tile - 1
        steps = k // tile
        max_a = rows * k + (steps - 1) * tile + tile - 1 if steps else 0
        max_b = ((steps - 1) * tile + tile - 1) * n + cols if steps else 0
        max_c = rows * n + cols
        guard = arith.guard_elements(*v.reach_of(params, m, n, k), k, n, n)
        assert max_a < m * k + guard
        assert max_b < k * n + guard
        assert max_c < m * n + guard

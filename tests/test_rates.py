"""core/rates.py: the rates a table derives from a row's measurements, by hand."""

import math

import pytest

from mmbench.core.rates import rates


def row(**kw):
    return dict(m=1000, n=1000, k=1000, accumulate=False, operation="gemm") | kw


def test_gflops_from_the_kernel_and_the_global_time():
    # 2 * 1000^3 = 2e9 operations in 2 ms: 1e12 FLOP/s = 1000 GFLOP/s; in 4 ms: 500
    got = rates(row(kernel_ms=2.0, global_ms_median=4.0))
    assert got["kernel_gflops"] == pytest.approx(1000.0)
    assert got["global_gflops"] == pytest.approx(500.0)
    assert math.isnan(got["energy_j_per_product"]) and math.isnan(got["gflops_per_w"])


def test_c_plus_equals_counts_the_additions_and_the_matrix_sum_one_per_element():
    # C += A.B: 2e9 + 1e6 operations in 1 ms = 2001 GFLOP/s; A + B at 1000^2: 1e6 in 1 ms = 1
    assert rates(row(accumulate=True, kernel_ms=1.0))["kernel_gflops"] == pytest.approx(2001.0)
    assert rates(row(operation="add", kernel_ms=1.0))["kernel_gflops"] == pytest.approx(1.0)


def test_energy_where_the_energy_rule_gave_a_window_power():
    # 500 W for 2 ms: 1 J per product; 1000 GFLOP/s at 500 W: 2 GFLOP/s per watt
    got = rates(row(kernel_ms=2.0, energy_power_w=500.0))
    assert got["energy_j_per_product"] == pytest.approx(1.0)
    assert got["gflops_per_w"] == pytest.approx(2.0)


def test_an_error_row_has_no_rates():
    got = rates(row(kernel_ms=math.nan, global_ms_median=math.nan))
    assert all(math.isnan(v) for v in got.values())

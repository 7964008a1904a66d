import os
from pathlib import Path

import numpy as np

from mmbench.core import arith
from mmbench.core.elements import element_type
from mmbench.measure import freivalds

SCRIPTS = Path(__file__).resolve().parents[1] / "workflow" / "scripts"


def _case(m=300, n=200, k=150, dtype=np.float32, ints=True, acc=False, seed=0):
    rng = np.random.default_rng(seed)
    draw = (
        (lambda s: rng.integers(0, 10, s).astype(dtype))
        if ints
        else (lambda s: rng.random(s, dtype=dtype))
    )
    a, b = draw((m, k)), draw((k, n))
    c0 = draw((m, n)) if acc else None
    c = a @ b + (c0 if acc else 0)
    return a, b, c0, c.astype(dtype)


def test_exact_integer_products_pass_and_one_wrong_element_fails():
    a, b, c0, c = _case(acc=True)
    p = freivalds.probes(a, b, c0, 2, exact=True, gamma=0.0, seed=1)
    assert freivalds.check(c, p) == (True, 0)
    c[123, 45] += 1
    assert freivalds.check(c, p) == (False, 1)


def test_float_products_within_the_bound_pass_and_a_dropped_term_fails():
    a, b, c0, c = _case(ints=False, k=1000)
    gamma = arith.tolerance_scale(element_type("float32"), "uniform", 1000, False)
    p = freivalds.probes(a, b, c0, 2, exact=False, gamma=gamma, seed=1)
    assert freivalds.check(c, p)[0]
    wrong = c.copy()
    wrong[7] -= np.outer(a[7, -1], b[-1]).ravel()  # row 7 misses its last term of k
    ok, rows = freivalds.check(wrong, p)
    assert not ok and rows == 1


def test_nan_fails():
    a, b, c0, c = _case()
    p = freivalds.probes(a, b, c0, 1, exact=True, gamma=0.0, seed=1)
    c[0, 0] = np.nan
    assert freivalds.check(c, p) == (False, 1)


def test_large_product_is_checked_in_seconds():
    """O(n^2): a 4000 x 4000 float32 check takes well under a second per vector here."""
    import time

    rng = np.random.default_rng(0)
    n = 4000
    a = rng.integers(0, 10, (n, n)).astype(np.float32)
    c = a.copy()  # A . I
    p = freivalds.probes(a, np.eye(n, dtype=np.float32), None, 1, exact=True, gamma=0.0, seed=2)
    t = time.perf_counter()
    assert freivalds.check(c, p)[0]
    assert time.perf_counter() - t < 5


def test_matvec_over_several_blocks_of_fp8_and_bfloat16_rows_is_exact():
    """Blocks of 4 MiB of float64 rows (128 rows of 4096 columns here: 300 rows make three
    blocks, the last one short); FP8 codes widened through their table, bfloat16 by its cast,
    each with and without |.|.  Small signed integers are exact in every type and every product
    sum here is an integer below 2^53, so NumPy's own float64 product is the expected value."""
    import ml_dtypes

    rng = np.random.default_rng(5)
    ints = rng.integers(-8, 9, (300, 4096)).astype(np.float32)
    x = rng.integers(-4, 5, (4096, 2)).astype(np.float64)
    for dtype in (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.bfloat16):
        mat = ints.astype(dtype)
        wide = ints.astype(np.float64)
        assert np.array_equal(freivalds.matvec(mat, x), wide @ x)
        assert np.array_equal(freivalds.matvec(mat, x, absolute=True), np.abs(wide) @ x)
        assert np.array_equal(freivalds.matvec(mat, x[:, 0]), wide @ x[:, 0])


def test_one_blas_pool_leaves_one_blas_thread_in_the_process():
    """freivalds.one_blas_pool: the BLAS library numpy loaded (threadpoolctl's account of it)
    runs one thread after it, in a process of its own here so that the tests' pool is kept."""
    import subprocess
    import sys

    code = (
        "import numpy, threadpoolctl\n"
        "from mmbench.measure import freivalds\n"
        "freivalds.one_blas_pool()\n"
        "print(sorted({p['num_threads'] for p in threadpoolctl.threadpool_info()"
        " if p['user_api'] == 'blas'}))\n"
    )
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", PYTHONPATH=str(SCRIPTS))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    assert out.strip() == "[1]"

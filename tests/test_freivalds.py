import numpy as np

from mmbench.core import arith
from mmbench.core.elements import element_type
from mmbench.measure import freivalds


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

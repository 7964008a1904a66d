import numpy as np

from mmbench.measure.verify import MAX_LISTED, format_mismatch, verify


def _ref(m=5, n=7, k=3, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 10, (m, k)).astype(np.float32)
    b = rng.integers(0, 10, (k, n)).astype(np.float32)
    ref = a.astype(np.float64) @ b.astype(np.float64)
    return a @ b, ref


def test_exact_pass():
    got, ref = _ref()
    v = verify(np, got, ref, ref, 0.0, integer=True)
    assert v.passed and v.mismatches == 0 and v.rel_l2_error == 0 and v.first_mismatches == []


def test_one_wrong_element_is_listed_in_seed_002_format():
    got, ref = _ref()
    got[2, 4] += 1
    v = verify(np, got, ref, ref, 0.0, integer=True)
    assert not v.passed and v.mismatches == 1
    e = int(ref[2, 4])
    assert v.first_mismatches == [f"2:4: {e} - {e + 1} = -1"]
    assert v.max_abs_error == 1.0


def test_float_format_matches_seed():
    assert (
        format_mismatch(0, 640, 167.605087, 0.0, False)
        == "0:640: 167.605087 - 0.000000 = 167.605087"
    )


def test_unwritten_poisoned_elements_fail_in_row_major_order():
    got, ref = _ref(m=30, n=30)
    got[:, 25:] = np.nan  # the border kernel00 leaves unwritten
    got[29, :] = np.nan
    v = verify(np, got, ref, ref, 0.0, integer=True)
    assert v.mismatches == 30 * 5 + 25
    assert v.nonfinite == v.mismatches
    assert len(v.first_mismatches) == MAX_LISTED
    assert v.first_mismatches[0].startswith("0:25: ")
    assert v.first_mismatches[5].startswith("1:25: ")
    assert v.rel_l2_error == float("inf")


def test_inf_fails_even_with_a_tolerance():
    got, ref = _ref()
    got[0, 0] = np.inf
    assert not verify(np, got, ref, ref, 1.0, integer=False).passed


def test_tolerance_boundary():
    ref = np.full((2, 2), 1000.0)
    got = ref + 1e-3
    assert verify(np, got, ref, ref, 1.01e-6, integer=False).passed
    assert not verify(np, got, ref, ref, 0.99e-6, integer=False).passed


def test_int32_results():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = np.arange(8, dtype=np.int32).reshape(4, 2)
    got = a @ b
    ref = got.astype(np.float64)
    assert verify(np, got, ref, ref, 0.0, integer=True).passed
    got[1, 1] = np.int32(-4531283)  # the int32 view of the runner's poison sentinel
    v = verify(np, got, ref, ref, 0.0, integer=True)
    assert v.mismatches == 1 and "1:1:" in v.first_mismatches[0]


def test_a_nan_result_is_named_not_subtracted():
    from mmbench.measure.verify import format_mismatch

    line = format_mismatch(3, 640, 12440.0, float("nan"), False)
    assert line == "3:640: 12440 expected, NaN found (never written, or NaN computed)"
    assert format_mismatch(0, 1, 5.0, 4.0, True) == "0:1: 5 - 4 = 1"

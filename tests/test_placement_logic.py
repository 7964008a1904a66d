"""Host-side bookkeeping of placements (no GPU): guard zones, padding, poisoning, layouts."""

import numpy as np

from mmbench.measure.placement import Matrix
from mmbench.plan import plan
from mmbench.plan.config import validate


def test_guard_and_padding_writes_are_counted():
    flat = np.empty(2 * 10 + 4 * 6, np.float32)
    mat = Matrix(np, flat, rows=4, cols=5, ld=6, guard=10)
    assert mat.outside_writes() == 0
    mat.grid[:, :5] = 1.0  # inside: fine
    assert mat.outside_writes() == 0
    mat.grid[2, 5] = 3.0  # padding
    flat[0] = 0.0  # front guard
    flat[-1] = 0.0  # back guard
    assert mat.outside_writes() == 3
    mat.reset_outside()
    assert mat.outside_writes() == 0
    mat.poison()
    assert np.isnan(mat.grid[:, :5]).all()


def test_int32_sentinel_is_not_a_possible_result():
    mat = Matrix(np, np.empty(16, np.int32), rows=2, cols=2, ld=2, guard=6)
    mat.poison()
    assert (mat.grid < 0).all()  # products of 0..9 inputs are never negative


def test_layouts(registry):
    cfg = validate(
        {
            "memory": ["pinned", "managed", "mapped"],
            "leading_pad": [0, 16],
            "transfer": ["pack", "copy2d", "strided"],
        },
        registry,
    )
    got = plan.layouts(cfg)
    assert ("pinned", 0, "contiguous") in got
    assert {t for m, p, t in got if m == "pinned" and p == 16} == {"pack", "copy2d", "strided"}
    assert ("managed", 16, "strided") in got and ("mapped", 16, "strided") in got
    assert len(got) == 3 + 3 + 2


def test_size_ranges(registry):
    cfg = validate({"sizes": [64], "size_ranges": [[128, 3200, 32]]}, registry)
    shapes = plan.shapes_of(cfg)
    assert len(shapes) == 1 + 97 and shapes[1] == (128, 128, 128) and shapes[-1] == (3200,) * 3


def test_host_buffers_are_kept_from_one_placement_to_the_next():
    """A smaller request reuses the held buffer (no allocation, no first-touch page faults); a
    larger one replaces it; roles and memory kinds never share."""
    from mmbench.measure.placement import HostBuffers

    buffers = HostBuffers()
    big = buffers.get("pageable", "A", 1000, np.float64)
    small = buffers.get("pageable", "A", 300, np.float32)
    assert small.size == 300 and small.dtype == np.float32
    assert np.shares_memory(big, small)
    other = buffers.get("pageable", "B", 300, np.float32)
    assert not np.shares_memory(other, small)
    bigger = buffers.get("pageable", "A", 2000, np.float64)
    assert bigger.size == 2000 and not np.shares_memory(bigger, big)


def test_a_reused_buffer_gets_fresh_guard_zones():
    """Matrix writes the sentinel outside the matrix only; a buffer left dirty by an earlier
    placement still starts with zero writes outside."""
    flat = np.zeros(2 * 10 + 4 * 6, np.float32)
    mat = Matrix(np, flat, rows=4, cols=5, ld=6, guard=10)
    assert mat.outside_writes() == 0
    assert (mat.grid[:, :5] == 0).all()  # the matrix is left for its owner to fill


def test_copy_rows_copies_bands_of_a_padded_matrix_exactly():
    """placement.copy_rows (the placement's fills and the verified result's copy, on several
    threads): a 3000 x 2000 float32 matrix (24 MB, above the 16 MB where it splits) into the
    first 2000 columns of a 3000 x 2016 padded buffer equals an element-by-element assignment,
    leaves the padding alone, and casts as an assignment does (float64 into float32)."""
    from mmbench.measure.placement import copy_rows

    src = np.arange(3000 * 2000, dtype=np.float64).reshape(3000, 2000) % 9973
    buf = np.full((3000, 2016), -1.0, dtype=np.float32)
    copy_rows(buf[:, :2000], src)
    assert (buf[:, :2000] == src.astype(np.float32)).all()
    assert (buf[:, 2000:] == -1.0).all()
    small = np.zeros((3, 4), dtype=np.int32)  # below the threshold: one np.copyto
    copy_rows(small, np.arange(12).reshape(3, 4))
    assert small.tolist() == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]


def test_a_transposed_b_is_laid_out_n_by_k_on_host_and_device():
    """A variant that takes B transposed (registry `b_layout: n_by_k`, as FP8 kernels must) is
    handed b.T; by hand, m = 2, k = 3, n = 5 with a pad of 1: host B is 5 x 3 with leading
    dimension 4 holding b.T, the device B 5 x 3 packed (ld 3), the `pack` buffer 5 x 3; A and C
    keep their shapes (2 x 3, 2 x 5)."""
    from types import SimpleNamespace

    from mmbench.core.elements import element_type
    from mmbench.measure.placement import CopyPlacement

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(15, dtype=np.float32).reshape(3, 5)
    for transfer, device_ld in (("contiguous", 3), ("pack", 3), ("strided", 4)):
        conf = SimpleNamespace(m=2, n=5, k=3, pad=1, memory="pageable", transfer=transfer,
                               element=element_type("float32"), accumulate=False)  # fmt: skip
        pl = CopyPlacement(np, conf, a, b.T, None, guard=4)
        assert (pl.hB.rows, pl.hB.cols, pl.hB.ld) == (5, 3, 4)
        assert (pl.hB.grid[:, :3] == b.T).all() and (pl.hA.grid[:, :3] == a).all()
        assert (pl.dB.rows, pl.dB.cols, pl.dB.ld) == (5, 3, device_ld)
        assert (pl.dA.rows, pl.dA.cols) == (2, 3) and (pl.dC.rows, pl.dC.cols) == (2, 5)
        if transfer == "pack":
            assert pl.pack["b"].grid.shape == (5, 3)


def test_a_transposed_b_gets_its_tensor_map_n_by_k(registry):
    """The launch of a transposed B: the tensor map of B describes n rows of k (persistent_bf16's
    entry with `b_layout: n_by_k`, at m = 256, n = 512, k = 128, ldb = 128), where the entry as
    declared describes k rows of n (ldb = 512)."""
    import dataclasses

    v = registry["persistent_bf16"]
    params = {"dtype": "bfloat16", "BM": 128, "BN": 128, "STAGES": 4, "CLUSTER": 1, "GROUP": 8}
    as_declared = v.launch_spec(params, 256, 512, 128, (128, 512, 512), False, sms=132)
    (b,) = [x for x in as_declared.args if getattr(x, "operand", "") == "B"]
    assert (b.rows, b.cols, b.ld) == (128, 512, 512)
    turned = dataclasses.replace(v, b_layout="n_by_k")
    spec = turned.launch_spec(params, 256, 512, 128, (128, 128, 512), False, sms=132)
    (b,) = [x for x in spec.args if getattr(x, "operand", "") == "B"]
    assert (b.rows, b.cols, b.ld) == (512, 128, 128)
    assert turned.launch_sha() != v.launch_sha()


def test_an_fp8_matrix_is_held_as_its_bytes_with_its_own_nan_in_the_guards():
    """CuPy holds no FP8 type, so a device matrix of e4m3 is an array of uint8 (here NumPy's,
    as the device's is CuPy's) that knows its element type: its guard zones and padding hold
    e4m3's NaN 0x7F, a write there is counted, and poisoning writes that NaN."""
    from mmbench.core.elements import SCALARS
    from mmbench.measure.placement import Matrix

    fp8 = SCALARS["float8_e4m3"]
    assert fp8.device_as_bits and not SCALARS["bfloat16"].device_as_bits
    mat = Matrix(np, np.zeros(2 * 4 + 2 * 3, np.uint8), 2, 3, 4, 3, scalar=fp8)
    assert mat.flat[:3].tolist() == [0x7F] * 3 and mat.grid[:, 3].tolist() == [0x7F] * 2
    assert mat.outside_writes() == 0
    mat.grid[1, 3] = 1
    assert mat.outside_writes() == 1
    mat.poison()
    assert np.isnan(mat.grid[:, :3].view(fp8.np_dtype).astype(np.float32)).all()


def test_fp8_inputs_are_widened_exactly_for_the_reference():
    """oracle.widened: e4m3 host values (0.5, 448 the largest, -0.013671875 a subnormal: 7 x
    2^-9) reach float64 unchanged (NumPy stands in for CuPy: the widening is on the host)."""
    from mmbench.core.elements import numpy_dtype
    from mmbench.measure.oracle import widened

    x = np.array([[0.5, 448.0, -0.013671875]], dtype=np.float32).astype(
        numpy_dtype("float8_e4m3fn")
    )
    got = widened(np, x)
    assert got.dtype == np.float64 and got.tolist() == [[0.5, 448.0, -0.013671875]]


def test_e5m2_inputs_are_widened_exactly_for_the_reference():
    """oracle.widened moves ml_dtypes' 8-bit types as their bits and widens them on the device
    through their table of 256 values (NumPy stands in for CuPy): e5m2 -57344 (the largest) and
    2^-16 (its smallest subnormal), each by hand exactly representable.  bfloat16 and float32
    go through a kernel of their own (oracle.float32_bits_widened), which only CuPy runs:
    tests/test_gpu.py checks every bfloat16 code and float32 subnormals against the host's
    casts."""
    from mmbench.core.elements import numpy_dtype
    from mmbench.measure.oracle import nonnegative, widened

    e5 = np.array([-57344.0, 2.0**-16], dtype=np.float32).astype(numpy_dtype("float8_e5m2"))
    got = widened(np, e5)
    assert got.dtype == np.float64 and got.tolist() == [-57344.0, 2.0**-16]
    assert not nonnegative(got) and nonnegative(np.abs(got), None)
    assert not nonnegative(np.array([1.0, np.nan]))  # NaN: not known to be non-negative


def test_a_float_argument_carries_the_launchs_scale(registry):
    """`{float: scale}` in a registry entry's args passes the inputs' per-tensor scales
    multiplied (FP8's dequantisation): persistent_bf16's entry with it appended, scale 0.25."""
    import dataclasses

    from mmbench.core.launch_spec import Float

    v = registry["persistent_bf16"]
    v = dataclasses.replace(v, args=(*v.args, ("float", (("float", "scale"),))))
    params = {"dtype": "bfloat16", "BM": 128, "BN": 128, "STAGES": 4, "CLUSTER": 1, "GROUP": 8}
    spec = v.launch_spec(params, 256, 256, 256, (256, 256, 256), False, sms=132, scale=0.25)
    assert spec.args[-1] == Float(0.25, "scale")
    assert v.launch_spec(params, 256, 256, 256, (256, 256, 256), False).args[-1].value == 1.0


def test_cublaslt_reads_a_transposed_b_and_a_as_tn_and_writes_c_transposed():
    """launch.lt_shapes, checked by reading the buffers as cuBLAS does (column-major) with
    NumPy: row-major A (2 x 3, lda 4), Bt (5 x 3, ldb 4: B handed over transposed) and C
    (2 x 5, ldc 6); op_T(x) . op_N(y), written column-major into C's bytes, is A.B row-major."""
    from numpy.lib.stride_tricks import as_strided

    from mmbench.measure.launch import lt_shapes

    m, n, k, lds = 2, 5, 3, (4, 4, 6)
    a = np.arange(1, 7, dtype=np.float64).reshape(m, k)
    b = np.arange(1, 16, dtype=np.float64).reshape(k, n)
    abuf, bbuf, cbuf = np.zeros(m * 4), np.zeros(n * 4), np.zeros(m * 6)
    abuf.reshape(m, 4)[:, :k] = a
    bbuf.reshape(n, 4)[:, :k] = b.T

    def colmajor(buf, rows, cols, ld):
        return as_strided(buf, (rows, cols), (buf.itemsize, ld * buf.itemsize))

    s = lt_shapes(m, n, k, lds)
    x, y = colmajor(bbuf, *s["x"]), colmajor(abuf, *s["y"])
    colmajor(cbuf, *s["c"])[...] = x.T @ y
    assert (cbuf.reshape(m, 6)[:, :n] == a @ b).all()


def test_a_host_buffer_holding_its_input_already_is_not_filled_again(monkeypatch):
    """Placements of copies only read their host A and B: a later one of the same arrays, at
    the same leading dimension and guard, finds them filled (no copy); another array (here a
    copy of A's values: A alone is filled), another guard, or a kernel using the buffers in
    place (mapped) fills them again, and after that last one the next fills again too.  Copies
    counted by hand: 2, 0, 1, 2, 2, 2."""
    from types import SimpleNamespace

    from mmbench.core.elements import element_type
    from mmbench.measure import placement
    from mmbench.measure.placement import CopyPlacement, HostBuffers

    copies = []
    real = placement.copy_rows
    monkeypatch.setattr(placement, "copy_rows", lambda d, s: (copies.append(1), real(d, s)))
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.arange(15, dtype=np.float32).reshape(3, 5)
    conf = SimpleNamespace(m=2, n=5, k=3, pad=0, memory="pageable", transfer="contiguous",
                           element=element_type("float32"), accumulate=False)  # fmt: skip
    buffers = HostBuffers()
    counts = []
    for a_, guard in ((a, 4), (a, 4), (a.copy(), 4), (a, 8)):
        copies.clear()
        pl = CopyPlacement(np, conf, a_, b, None, guard=guard, buffers=buffers)
        assert (pl.hA.grid[:, :3] == a).all() and (pl.hB.grid == b).all()
        counts.append(len(copies))
    copies.clear()
    pl.host_operands("pageable", in_place=True)  # as a mapped placement: filled, then forgotten
    counts.append(len(copies))
    copies.clear()
    CopyPlacement(np, conf, a, b, None, guard=8, buffers=buffers)
    counts.append(len(copies))
    assert counts == [2, 0, 1, 2, 2, 2]


def test_a_large_host_result_is_poisoned_in_bands_to_its_last_row_and_no_further():
    """Above 16 MB the poison is written in bands of rows on threads: every element of the
    matrix (4100 x 1030 inside rows of 1040, 17 MB) and nothing of its padding or guards."""
    flat = np.ones(2 * 64 + 4100 * 1040, np.float32)
    mat = Matrix(np, flat, rows=4100, cols=1030, ld=1040, guard=64)
    mat.grid[:, :1030] = 1.0
    assert mat.grid[:, :1030].nbytes > 16 << 20
    mat.poison()
    assert np.isnan(mat.grid[:, :1030]).all()
    assert mat.outside_writes() == 0


def test_a_launch_config_carries_the_cluster_shape_as_its_one_attribute(registry):
    """measure/launch.launch_config (what cuLaunchKernelEx and the occupancy calculator's
    cluster count are given): skinny_fp8 in clusters of four, 384 threads (a producer and two
    consumer warpgroups) and four stages of 128 + 160 rows of 128 bytes plus the 1024 of
    alignment, 148 480 bytes of dynamic shared memory; one cluster's worth of blocks for the
    calculator, the whole grid for a launch.  Unclustered: no attribute."""
    from mmbench.measure.launch import launch_config

    v = registry["skinny_fp8"]
    p = v.instance("float8_e4m3_BM128_BN160_STAGES4_CLUSTER4_GROUP8_CHAIN1")
    spec = v.launch_spec(p, 129, 14712, 5968, (5968, 5968, 14712), False, sms=132)
    one = launch_config(spec, spec.cluster)
    assert (one.gridDimX, one.gridDimY, one.gridDimZ) == (4, 1, 1)
    assert (one.blockDimX, one.sharedMemBytes) == (384, 4 * (128 + 160) * 128 + 1024)
    assert one.numAttrs == 1
    dim = one.attrs[0].value.clusterDim
    assert (dim.x, dim.y, dim.z) == (4, 1, 1)
    assert launch_config(spec, spec.grid).gridDimX == 132
    flat = v.instance("float8_e4m3_BM128_BN160_STAGES4_CLUSTER1_GROUP8_CHAIN1")
    spec = v.launch_spec(flat, 129, 14712, 5968, (5968, 5968, 14712), False, sms=132)
    assert launch_config(spec, spec.grid).numAttrs == 0

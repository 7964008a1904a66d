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

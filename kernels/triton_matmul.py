"""A persistent Triton matmul: a reference line beside cuBLAS (registry `backend: triton`),
compiled by the pipeline's Triton rule (workflow/scripts/compile_triton.py) to a cubin our
harness launches, times and verifies like every rung.

One program per multiprocessor walks the output tiles in grouped order (GROUP rows of tiles
column by column, so neighbouring programs share A's rows and B's columns in L2).  Each tile is
BM x BN: k is stepped BK at a time through Triton's software pipeline (STAGES deep), A and B
read by TMA from tensor descriptors made on the device (the part past the matrices read as
zeros), sums in FP32 on the tensor cores (tl.dot: wgmma on Hopper), and the tile stored with a
mask at the matrix's edge, added to C's old values where `accumulate`.

The compile-time switches, from the registry entry's parameters and element type:
  B_NK   B handed over as its transpose, n x k (registry `b_layout: n_by_k`: the FP8 and TF32
         wgmma read B K-major), else k x n
  TF32   float32 inputs on the TF32 tensor cores
  FP8_PROMOTE  FP8 sums moved to FP32 registers after this many products (Triton's
         max_num_imprecise_acc; on Hopper its default is never, over the whole of k)
"""

import triton
import triton.language as tl


@triton.jit
def matmul(
    a_ptr,
    b_ptr,
    c_ptr,
    m,
    n,
    k,
    lda,
    ldb,
    ldc,
    accumulate,
    BM: tl.constexpr,
    BN: tl.constexpr,
    BK: tl.constexpr,
    GROUP: tl.constexpr,
    STAGES: tl.constexpr,
    B_NK: tl.constexpr,
    TF32: tl.constexpr,
    FP8_PROMOTE: tl.constexpr,
):
    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[m, k], strides=[lda, 1], block_shape=[BM, BK])
    if B_NK:
        b_desc = tl.make_tensor_descriptor(
            b_ptr, shape=[n, k], strides=[ldb, 1], block_shape=[BN, BK]
        )
    else:
        b_desc = tl.make_tensor_descriptor(
            b_ptr, shape=[k, n], strides=[ldb, 1], block_shape=[BK, BN]
        )
    tiles_m = tl.cdiv(m, BM)
    tiles_n = tl.cdiv(n, BN)
    in_group = GROUP * tiles_n
    for tile in range(tl.program_id(0), tiles_m * tiles_n, tl.num_programs(0)):
        # grouped order: GROUP rows of tiles, walked column by column
        first = (tile // in_group) * GROUP
        rows = min(tiles_m - first, GROUP)
        om = (first + (tile % in_group) % rows) * BM
        on = ((tile % in_group) // rows) * BN
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for ks in tl.range(0, tl.cdiv(k, BK), num_stages=STAGES):
            a = a_desc.load([om, ks * BK])
            if B_NK:
                b = b_desc.load([on, ks * BK]).T
            else:
                b = b_desc.load([ks * BK, on])
            if TF32:
                acc = tl.dot(a, b, acc, input_precision="tf32")
            elif FP8_PROMOTE > 0:
                acc = tl.dot(a, b, acc, max_num_imprecise_acc=FP8_PROMOTE)
            else:
                acc = tl.dot(a, b, acc)
        # C stored with a mask, not through a descriptor (Triton's TMA store of C wrote past n
        # where n * 4 bytes is not a multiple of 16: the harness's guard zones saw it), in two
        # halves of BN / 2 columns, each with its own pointers (fewer registers at once)
        acc = tl.permute(tl.reshape(acc, (BM, 2, BN // 2)), (0, 2, 1))
        left, right = tl.split(acc)
        _store(c_ptr, left, om, on, m, n, ldc, accumulate, BM, BN // 2)
        _store(c_ptr, right, om, on + BN // 2, m, n, ldc, accumulate, BM, BN // 2)


@triton.jit
def _store(c_ptr, acc, om, on, m, n, ldc, accumulate, BM: tl.constexpr, BN: tl.constexpr):
    """acc (BM x BN) into C at (om, on), masked at the matrix's edge, added to C's old values
    where `accumulate`."""
    rows = tl.arange(0, BM)
    cols = tl.arange(0, BN)
    # the tile's corner in 64 bits, the offsets within it in 32
    c_ptrs = c_ptr + om.to(tl.int64) * ldc + on + (rows[:, None] * ldc + cols[None, :])
    inside = (rows[:, None] < m - om) & (cols[None, :] < n - on)
    if accumulate != 0:
        acc += tl.load(c_ptrs, mask=inside, other=0.0)
    tl.store(c_ptrs, acc, mask=inside)

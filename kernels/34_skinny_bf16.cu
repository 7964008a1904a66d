// streamk_bf16 for products with one small side m, the operands exchanged as skinny_tf32_tn's
// (32, whose opening says why): the kernel computes C^T = B^T . A^T, the small side the
// wgmma's n (16 to 192: up to 192 rows of A in one tile, so that B, the large operand, is read
// once).  B is k x n row-major (N-major) as the bfloat16 rungs take it, so the kernel's A (B^T,
// n x k) is MN-major: BM / 64 boxes of [BK][64] of B side by side, as Bf16Steps loads B, read
// by wgmmas with A's transpose bit (bfloat16 allows it; TF32 and FP8 do not, hence their TN
// rungs); its B (A, m x k) is K-major rows of 128 bytes, which in clusters (CLUSTER 2 or 4,
// the blocks along the kernel's m) each block loads a part of and multicasts.  Stored
// transposed (TransposedStore), on the stream-K schedule.  One entry point for every shape; the
// host gives the workspace (core/schedule.py) and hands the operands over exchanged (the
// registry's args: B's map, A's map, C, n, m, k).
#include <cuda_bf16.h>

#include "persistent.cuh"  // the persistent skeleton

struct SkinnyBf16 : WgmmaRung<CONSUMERS> {
    static constexpr int ROWS = BM / CONSUMERS;  // the kernel's rows (C's columns) a consumer
    static_assert(ROWS % 64 == 0, "each consumer computes whole m64 products");
    static_assert(BN % 16 == 0 && BN <= 192, "wgmma n of 16 to 192: the small side");
    static_assert(ROWS / 64 * BN / 2 <= 128, "at most 128 accumulators a consumer thread");
    static_assert(BN % (8 * CLUSTER) == 0, "A's rows divide among the cluster in 8-row groups");
    static_assert(sizeof(elem_t) == 2 && sizeof(out_t) == 4, "bfloat16 in, float32 out");
    static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
    static_assert(A_BOX == 64 * 128, "a [BK][64] box of B: 64 columns of 128 bytes");
    // registers after setmaxnreg: in clusters the producer's stream-K walk and multicast loads
    // need 48, as KMajorSteps' (40 spills)
    static constexpr int PRODUCER_REGS = CLUSTER > 1 ? 48 : 40;
    static constexpr int CONSUMER_REGS = CLUSTER > 1 ? 224 : 232;
    using Acc = float[ROWS / 64][BN / 2];
    using Consumer = TransposedStore<ROWS>;

    template <class S>
    __device__ static __forceinline__ void load(const Params &p, S &sm, const Copy &c) {
        load_boxes<BM / 64, 64, A_BOX, false>(sm.a[c.s], p.a, c.bar, c.row0, c.k, c.rank);
        load_rows_shared<BN>(sm.b[c.s], p.b, c.bar, c.k, c.col0, c.rank);
    }
    // one k-tile: four k16 steps; the kernel's A an MN-major box per m64 product (a consumer's
    // rows start ROWS / 64 boxes in: `a` is the skeleton's ROWS * 128 bytes, one box per 64),
    // its B K-major, a k16 step 32 bytes along each row
    __device__ static __forceinline__ void mma(Acc &d, unsigned a, unsigned b, bool accumulate) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk)
#pragma unroll
            for (int i = 0; i < ROWS / 64; ++i)
                wgmma_bf16_at<BN>(d[i], descriptor_sw128(a + i * A_BOX + kk * 16 * 128, A_BOX),
                                  descriptor_sw128(b + kk * 32), accumulate || kk > 0);
    }
};

PERSISTENT_STREAM_K_AB(skinny_bf16, SkinnyBf16)  // its A: B^T, from B's [BK][64] boxes

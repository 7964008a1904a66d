// The steps of the bfloat16 rungs on the persistent skeleton (kernels/20, 23, 24, 27): their
// tile loads and their wgmmas (kernels/persistent.cuh says what a rung's steps are).
#pragma once
#include "persistent.cuh"

// The steps of the rungs whose A (m x k) is row-major and B (k x n) row-major, MN-major for
// wgmma (its transpose bit, bfloat16): the A tile one [BM][BK] box, the B tile BN / 64 boxes of
// [BK][64] side by side, divided among a cluster's blocks along m (multicast)
template <int ROWS_>  // the rows of A a consumer multiplies: BM / CONSUMERS, or BM (ping-pong)
struct Bf16Steps : WgmmaRung<CONSUMERS> {
    static constexpr int ROWS = ROWS_;
    static_assert(ROWS % 64 == 0, "each consumer computes whole m64 products");
    static_assert(BN % 64 == 0 && BN <= 256, "wgmma n of 64..256 in whole 64-column boxes");
    static_assert((BN / 64) % CLUSTER == 0, "the B boxes divide among the cluster's blocks");
    static_assert(sizeof(elem_t) == 2 && sizeof(out_t) == 4, "bfloat16 in, float32 out");
    static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
    using Acc = float[ROWS / 64][BN / 2];

    template <class S>
    __device__ static __forceinline__ void load(const Params &p, S &sm, const Copy &c) {
        tma_load(sm.a[c.s], p.a, c.bar, c.k, c.row0);
        load_boxes<BN / 64, 64, B_BOX, true>(sm.b[c.s], p.b, c.bar, c.col0, c.k, c.rank);
    }
    __device__ static __forceinline__ void mma(Acc &d, unsigned a, unsigned b, bool accumulate) {
        wgmma_ktile<ROWS>(
            d, a, b, accumulate,
            [](float *di, uint64_t da, uint64_t db, int sc) { wgmma_bf16<BN>(di, da, db, sc); },
            [](unsigned at, int kk) { return descriptor_sw128(at + kk * 16 * 128, B_BOX); });
    }
};

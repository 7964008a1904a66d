// The steps of the rungs on the persistent skeleton that take both operands K-major (kernels/25,
// 26, 28): their tile loads and their wgmmas, TF32 or e4m3 (kernels/persistent.cuh says what a
// rung's steps are).
#pragma once
#include "persistent.cuh"

// The wgmma instructions of the K-major step sets (KMajorSteps), one m64nBN product each
struct WgmmaTf32 {
    __device__ __forceinline__ void operator()(float *d, uint64_t a, uint64_t b, int scale) const {
        wgmma_tf32<BN>(d, a, b, scale);
    }
};
struct WgmmaE4m3 {
    __device__ __forceinline__ void operator()(float *d, uint64_t a, uint64_t b, int scale) const {
        wgmma_e4m3<BN>(d, a, b, scale);
    }
};

// The steps of the rungs given B transposed, Bt (n x k) row-major, as cuBLASLt's FP8 matmul
// takes it ("TN"): both tiles K-major rows of 128 bytes in 128-byte swizzle, the Bt tile
// divided among a cluster's blocks along m in rows (multicast); WGMMA(d, desc_a, desc_b,
// scale_d) one product of KSTEP bytes of k (tf32: 32, e4m3: 32)
template <class Wgmma>
struct KMajorSteps : WgmmaRung<CONSUMERS> {
    static constexpr int ROWS = BM / CONSUMERS;  // rows of C per consumer warpgroup
    // registers: 168 a thread at launch; the producer gives back what the consumers take (in
    // clusters the multicast loop needs 48)
    static constexpr int PRODUCER_REGS = CLUSTER > 1 ? 48 : 40;
    static constexpr int CONSUMER_REGS = CLUSTER > 1 ? 224 : 232;
    static_assert((168 - PRODUCER_REGS) * 128 >= (CONSUMER_REGS - 168) * 256,
                  "the consumers take no more registers than the producer gives back");
    static_assert(ROWS % 64 == 0, "each consumer computes whole m64 products");
    static_assert(BN % (8 * CLUSTER) == 0, "the Bt rows divide among the cluster in 8-row groups");
    static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
    using Acc = float[ROWS / 64][BN / 2];

    template <class S>
    __device__ static __forceinline__ void load(const Params &p, S &sm, const Copy &c) {
        tma_load(sm.a[c.s], p.a, c.bar, c.k, c.row0);
        load_rows_shared<BN>(sm.b[c.s], p.b, c.bar, c.k, c.col0, c.rank);
    }
    // one k-tile's wgmmas into d (the TN rungs' k-loop; the FP8 rung's partial sums)
    template <class D>
    __device__ static __forceinline__ void mma(D &d, unsigned a, unsigned b, bool accumulate) {
        wgmma_ktile<ROWS>(d, a, b, accumulate, Wgmma{},
                          [](unsigned at, int kk) { return descriptor_sw128(at + kk * 32); });
    }
};

// The FP8 rung's steps on the persistent skeleton (kernels/persistent.cuh), shared by
// persistent_fp8 (25_persistent_fp8.cu, whose opening says what they do), streamk_fp8 (31),
// skinny_fp8 (33) and tmastore_fp8 (37): KMajorSteps with e4m3 wgmmas, and a k-loop of its own
// (OWN_LOOP) that adds each k-tile's sums to FP32 registers in chains of CHAIN k-tiles; STORE,
// the consumer's store (PairStore, TransposedStore for operands exchanged, or TmaStore:
// tma_store.cuh).
#pragma once
#include <cuda_fp8.h>

#include <type_traits>

#include "kmajor_steps.cuh"  // the persistent skeleton and its K-major steps

#ifndef CHAIN
#error "CHAIN (k-tiles in a chain of promotions) must be defined"
#endif

template <template <int, bool> class STORE>
struct Fp8Steps : KMajorSteps<WgmmaE4m3> {
    static constexpr bool OWN_LOOP = true;
    // sets of partial sums: two in chains (one fills while the other is added), one where each
    // k-tile is promoted alone, which leaves room for tiles up to 192 columns wide
    static constexpr int PARTS = CHAIN > 1 ? 2 : 1;
    static_assert(BN % 16 == 0 && ROWS / 64 * BN / 2 * (1 + PARTS) <= 192,
                  "d and its sets of partial sums: at most 192 registers a thread");
    static_assert(CHAIN >= 1, "k-tiles in a chain of promotions");
    static_assert(sizeof(elem_t) == 1 && sizeof(out_t) == 4, "e4m3 in, float32 out");

    // the tile's sums d, FP32 on the CUDA cores, stored times the kernel's scale
    struct Consumer : STORE<ROWS, true> {
        // one k-tile's sums each, in the tensor cores' narrower sums: in a chain the next
        // k-tile's wgmmas run into one while the other's sums are added to d
        float parts[PARTS][ROWS / 64][BN / 2];
        const unsigned rows;  // this consumer's rows of a stage's A tile

        template <class S>
        __device__ __forceinline__ Consumer(const Params &p, S &sm)
            : STORE<ROWS, true>(p, sm), rows((threadIdx.x / 128 - 1) * ROWS * 128) {}

        // k-tile `at` of the ring into `part`, its wgmmas committed
        template <class S>
        __device__ __forceinline__ void issue(float (&part)[ROWS / 64][BN / 2], const Ring &ring,
                                              S &sm, unsigned at) {
            const int s = ring.wait(at);
            wgmma_fence();  // also orders the previous promotion's reads of `part` before
            mma(part, smem_addr(sm.a[s]) + rows, smem_addr(sm.b[s]), false);
            wgmma_commit();
        }
        // part's wgmmas are done: its sums into d
        __device__ __forceinline__ void promote(Acc &d, float (&part)[ROWS / 64][BN / 2]) {
#pragma unroll
            for (int i = 0; i < ROWS / 64; ++i) {
                accumulators_fence<BN / 2>(part[i]);
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) d[i][j] += part[i][j];
                // the adds stay here, before the next wgmma.fence: moved past it, they would
                // read `part` inside the next group's stage and ptxas serialises (C7514)
                accumulators_fence<BN / 2>(d[i]);
            }
        }
        // n k-tiles, each one's sums promoted while the next one's wgmmas run, nothing left in
        // flight at the end: ptxas follows the wgmma groups through straight code only, and
        // serialises every wgmma (C7514) where one is still in flight across a loop's back
        // edge or a branch
        template <int n, class S>
        __device__ __forceinline__ void chain(Acc &d, Ring &ring, S &sm) {
            issue(parts[0], ring, sm, ring.it);
#pragma unroll
            for (int j = 0; j < n; ++j) {
                if (j + 1 < n) {
                    issue(parts[(j + 1) % PARTS], ring, sm, ring.it + j + 1);
                    wgmma_wait<1>();  // k-tile j's group is done, j + 1's runs on
                } else {
                    wgmma_wait<0>();
                }
                ring.release(ring.it + j);
                promote(d, parts[j % PARTS]);
            }
            ring.it += n;
        }
        // d starts at zeros, so a unit without k-tiles stores zeros as it is (the store's own
        // check for one broke an FFMA of its scaling)
        __device__ __forceinline__ void store(const Acc &d, int row0, int col0, bool) {
            STORE<ROWS, true>::store(d, row0, col0, false);
        }
        template <class S>
        __device__ __forceinline__ void mainloop(Acc &d, Ring &ring, S &sm, int kt0, int kt1) {
#pragma unroll
            for (int i = 0; i < ROWS / 64; ++i)
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) d[i][j] = 0.f;
            int kt = kt0;
            for (; kt + CHAIN <= kt1; kt += CHAIN) chain<CHAIN>(d, ring, sm);
            for (; kt < kt1; ++kt) chain<1>(d, ring, sm);
        }
    };
};

using PersistentFp8 = Fp8Steps<PairStore>;

// persistent_bf16 for FP8 (e4m3) inputs (wgmma k = 32), each k-tile's sums moved to FP32
// registers while the next k-tile's wgmmas run: what the rung does, and the lab notebook's "An FP8
// rung" its measurements.
//   - FP8 wgmma reads both operands K-major from shared memory: A (m x k) row-major as the other
//     rungs, B given transposed, Bt (n x k) row-major, as cuBLASLt's FP8 matmul takes it
//     ("TN"); both tiles are rows of 128 bytes (BK = 128 e4m3 values) in 128-byte swizzle, and
//     a wgmma (k = 32) reads 32 bytes of each row;
//   - the tensor cores keep only about 14 bits in the sums of FP8 products (core/elements.py),
//     so each consumer sums each k-tile (128 products: 4 wgmmas) into a set of partial sums
//     (`parts`) and adds them to its FP32 accumulators `d` on the CUDA cores (DeepSeek-V3's
//     promotion, every 128): the bound of docs/method.md with promoted_every = BK; the other
//     consumer warpgroup's wgmmas keep
//     the tensor cores busy meanwhile, and in chains of CHAIN k-tiles (CHAIN > 1) so do the
//     consumer's own: two sets of partial sums, the next k-tile's wgmmas running into one while
//     the other is added to `d`;
//   - per-tensor scales: C = scale * (A . B) (+ C where accumulate), scale = scale_a * scale_b
//     of the dequantisation, applied once in the epilogue;
//   - one block per multiprocessor walking the tiles in groups of GROUP tile rows, CLUSTER
//     blocks along m sharing each Bt tile by multicast (each loads BN / CLUSTER of its rows),
//     as persistent_bf16; no split-K yet.
// On the persistent skeleton (kernels/persistent.cuh): its K-major steps (KMajorSteps) with e4m3
// wgmmas, and a k-loop of its own (OWN_LOOP: the chains of promotions).
#include <cuda_fp8.h>

#include <type_traits>

#include "kmajor_steps.cuh"  // the persistent skeleton and its K-major steps

#ifndef CHAIN
#error "CHAIN (k-tiles in a chain of promotions) must be defined"
#endif

struct PersistentFp8 : KMajorSteps<WgmmaE4m3> {
    static constexpr bool OWN_LOOP = true;
    static_assert(BN % 64 == 0 && ROWS / 64 * BN <= 128,
                  "d and each set of partial sums: at most 64 registers a thread each");
    static_assert(CHAIN >= 1, "k-tiles in a chain of promotions");
    static_assert(sizeof(elem_t) == 1 && sizeof(out_t) == 4, "e4m3 in, float32 out");

    // the tile's sums d, FP32 on the CUDA cores, stored times the kernel's scale
    struct Consumer : PairStore<ROWS, true> {
        // one k-tile's sums each, in the tensor cores' narrower sums: in a chain the next
        // k-tile's wgmmas run into one while the other's sums are added to d
        float parts[2][ROWS / 64][BN / 2];
        const unsigned rows;  // this consumer's rows of a stage's A tile

        template <class S>
        __device__ __forceinline__ Consumer(const Params &p, S &sm)
            : PairStore<ROWS, true>(p, sm), rows((threadIdx.x / 128 - 1) * ROWS * 128) {}

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
                    issue(parts[(j + 1) & 1], ring, sm, ring.it + j + 1);
                    wgmma_wait<1>();  // k-tile j's group is done, j + 1's runs on
                } else {
                    wgmma_wait<0>();
                }
                ring.release(ring.it + j);
                promote(d, parts[j & 1]);
            }
            ring.it += n;
        }
        // d starts at zeros, so a unit without k-tiles stores zeros as it is (the store's own
        // check for one broke an FFMA of its scaling)
        __device__ __forceinline__ void store(const Acc &d, int row0, int col0, bool) const {
            PairStore<ROWS, true>::store(d, row0, col0, false);
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

PERSISTENT_KERNEL(persistent_fp8, PersistentFp8,
                  (const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt, out_t *__restrict__ C, int M, int N,
                   int K, int ldc, int accumulate, float scale),
                  (&mapA, &mapBt, nullptr, C, M, N, K, ldc, accumulate, scale))

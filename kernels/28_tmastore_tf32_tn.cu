// persistent_tf32_tn with its tiles stored by the copy engine (TMA stores), as tmastore_bf16
// does for persistent_bf16 (lab notebook, "TMA stores of C for TF32"):
//   - each consumer warpgroup hands its part of a finished tile to the copy engine in 64 x 32
//     chunks through two shared-memory buffers (kernels/tma_store.cuh, store_tile), which
//     writes them while the consumers go on to the next tile's wgmmas; where n % 4 != 0 the
//     chunk holding a row's last, partial 16-byte unit is stored by the threads;
//   - everything else is persistent_tf32_tn's: B handed over transposed (n x k), both TF32
//     operands by TMA into shared memory in 128-byte swizzle and read by wgmma through
//     descriptors, one block per multiprocessor walking the tiles in groups of GROUP tile rows,
//     CLUSTER blocks sharing each Bt tile by multicast; its reference is cuBLAS's TF32 SGEMM on
//     the same transposed B (cublas_tf32_tn).
//
// On the persistent skeleton (kernels/persistent.cuh): persistent_tf32_tn's steps
// (KMajorSteps) with the TMA-store consumer (tma_store.cuh, WithTmaStore).
#include "kmajor_steps.cuh"  // the persistent skeleton and its K-major steps
#include "tma_store.cuh"  // the store epilogue

struct TmastoreTf32Tn : WithTmaStore<KMajorSteps<WgmmaTf32>> {
    static_assert(BN == 64 || BN == 128 || BN == 256, "wgmma n of 64, 128 or 256");
    static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
};

PERSISTENT_KERNEL(tmastore_tf32_tn, TmastoreTf32Tn,
                  (const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt,
                   const __grid_constant__ CUtensorMap mapC, out_t *__restrict__ C, int M, int N,
                   int K, int ldc, int accumulate),
                  (&mapA, &mapBt, &mapC, C, M, N, K, ldc, accumulate, 1.f))

// persistent_tf32 with B handed over transposed ("TN"): both TF32 operands in shared memory,
// as wgmma reads them there (lab notebook, "TF32 with both operands K-major").
//   - wgmma takes TF32 operands from shared memory only K-major.  persistent_tf32 takes B as
//     the other rungs do (k x n, row-major, N-major), so it computes C^T = B^T . A^T with B^T
//     as wgmma's register operand: each consumer thread reads its fragment of B from shared
//     memory and rounds it (cvt.rna) for every k8 step (its issue slots 26-30% busy at 4096
//     and 8192 where persistent_bf16's are 19-20%, Nsight Compute, in the lab notebook), which
//     cuBLAS's TF32 kernels do not;
//   - this rung takes B transposed, Bt (n x k) row-major, as persistent_fp8 and cuBLASLt's FP8
//     matmul do: both tiles are rows of 128 bytes (BK = 32 floats) in 128-byte swizzle, loaded
//     by TMA, and a wgmma (k = 8) reads 32 bytes of each row through descriptors; the consumers
//     only issue wgmmas.  Its reference is cuBLAS's TF32 SGEMM on the same transposed B
//     (cublas_tf32_tn: op T on B);
//   - wgmma reads the FP32 values as TF32 (their low 13 mantissa bits ignored: truncation, where
//     persistent_tf32 rounds B to nearest); the sums are FP32 in the accumulators;
//   - one block per multiprocessor walking the tiles in groups of GROUP tile rows, CLUSTER
//     blocks along m sharing each Bt tile by multicast (each loads BN / CLUSTER of its rows),
//     as persistent_fp8; one k-tile's wgmmas in flight while the next stage is waited for, as
//     persistent_bf16; no split-K yet.
//
// On the persistent skeleton (kernels/persistent.cuh): its K-major steps (KMajorSteps) with
// TF32 wgmmas, the consumers' rows stored as column pairs.
#include "kmajor_steps.cuh"  // the persistent skeleton and its K-major steps

// The parameters (BM, BN, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel
// come from the registry entry.
struct PersistentTf32Tn : KMajorSteps<WgmmaTf32> {
    static_assert(BN == 64 || BN == 128 || BN == 256, "wgmma n of 64, 128 or 256");
    static_assert(ROWS / 64 * BN <= 256, "at most 128 accumulators a consumer thread");
    static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
    using Consumer = PairStore<ROWS>;
};

PERSISTENT_KERNEL(persistent_tf32_tn, PersistentTf32Tn,
                  (const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt, out_t *__restrict__ C, int M, int N,
                   int K, int ldc, int accumulate),
                  (&mapA, &mapBt, nullptr, C, M, N, K, ldc, accumulate, 1.f))

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
//     the other is added to `d`; with one set (CHAIN = 1) the registers hold tiles up to 192
//     wide, which fit a side that a power of two would leave mostly empty in its last tile;
//   - per-tensor scales: C = scale * (A . B) (+ C where accumulate), scale = scale_a * scale_b
//     of the dequantisation, applied once in the epilogue;
//   - one block per multiprocessor walking the tiles in groups of GROUP tile rows, CLUSTER
//     blocks along m sharing each Bt tile by multicast (each loads BN / CLUSTER of its rows),
//     as persistent_bf16; k is never split (streamk_fp8, 31, is these steps on stream-K).
// On the persistent skeleton (kernels/persistent.cuh): its K-major steps (KMajorSteps) with e4m3
// wgmmas, and a k-loop of its own (OWN_LOOP: the chains of promotions).
#include "fp8_steps.cuh"  // the skeleton and the FP8 steps

PERSISTENT_KERNEL(persistent_fp8, PersistentFp8,
                  (const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt, out_t *__restrict__ C, int M, int N,
                   int K, int ldc, int accumulate, float scale),
                  (&mapA, &mapBt, nullptr, C, M, N, K, ldc, accumulate, scale))

// streamk_fp8 for products with one small side m, the operands exchanged as skinny_tf32_tn's
// (32, whose opening says why): the kernel computes C^T = Bt . A^T, its A the n x k Bt, its B
// the m x k A (BN of its rows, 16 to 192: wgmma's n), its tile stored transposed and scaled
// (TransposedStore); the FP8 steps' k-loop (fp8_steps.cuh: each k-tile's sums promoted to FP32
// registers) on the stream-K schedule.  In clusters (CLUSTER 2 or 4) the blocks lie along the
// kernel's m and share A's tile, each loading BN / CLUSTER of its rows and multicasting them
// (kmajor_steps.cuh).  One entry point for every shape; the host gives the workspace
// (core/schedule.py) and hands the operands over exchanged (the registry's args).
#include "fp8_steps.cuh"  // the skeleton and the FP8 steps

PERSISTENT_STREAM_K_AB_SCALED(skinny_fp8, Fp8Steps<TransposedStore>)  // its A: B^T

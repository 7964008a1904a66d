// persistent_bf16 with its tiles stored by the copy engine (TMA stores), the step of the
// public H100 kernel series that passed cuBLAS with a space-filling tile order:
//   - each consumer warpgroup hands its part of a finished tile to the copy engine in 64 x 32
//     chunks through two shared-memory buffers (kernels/tma_store.cuh, store_tile), which
//     writes them to C in the background: the consumers go on to the next tile's wgmmas while
//     the last chunks of this one are written, where persistent_bf16's threads store their
//     accumulators to global memory themselves, 64 8-byte stores each a tile;
//   - where n % 4 != 0 the chunk holding a row's last, partial 16-byte unit is stored by the
//     threads (the copy engine would write C's padding), so any m, n, k work;
//   - everything else is persistent_bf16's: one block per multiprocessor walking the tiles in
//     groups of GROUP tile rows, a producer warpgroup and two consumer warpgroups on a ring of
//     STAGES stages, CLUSTER blocks sharing each B tile by multicast, split-K where the tiles
//     are fewer than the clusters.
//
// On the persistent skeleton (kernels/persistent.cuh): persistent_bf16's steps (Bf16Steps)
// with the TMA-store consumer (tma_store.cuh, WithTmaStore).
#include <cuda_bf16.h>

#include "bf16_steps.cuh"  // the persistent skeleton and the bfloat16 steps
#include "tma_store.cuh"  // the store epilogue

// The parameters (BM, BN, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel
// (BK, CONSUMERS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
struct TmastoreBf16 : WithTmaStore<Bf16Steps<BM / CONSUMERS>> {};

PERSISTENT_KERNELS(tmastore_bf16, TmastoreBf16,
                   (const __grid_constant__ CUtensorMap mapA,
                    const __grid_constant__ CUtensorMap mapB,
                    const __grid_constant__ CUtensorMap mapC, out_t *C, int ldc, int M, int N,
                    int K, int accumulate, int splits, void *workspace),
                   (&mapA, &mapB, &mapC, C, M, N, K, ldc, accumulate, 1.f),
                   (splits, 0, workspace))

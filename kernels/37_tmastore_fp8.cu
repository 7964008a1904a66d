// persistent_fp8 with its tiles stored by the copy engine (TMA stores), as tmastore_bf16 is
// persistent_bf16 so stored:
//   - persistent_fp8's consumers stop their wgmmas at the end of each tile to store 64 KiB of
//     FP32 sums (a 128 x 128 tile) with their own 8-byte stores, and every block of a wave does
//     so at about the same time; its k-loop runs the tensor cores near their rate, so at a
//     product of a few thousand a side, a tile's k-loop of 20 to 30 k-tiles, that stop is a
//     large part of a tile's time;
//   - here each consumer warpgroup hands its part of a finished tile, times the kernel's scale,
//     to the copy engine in 64 x 32 chunks through two shared-memory buffers
//     (kernels/tma_store.cuh, store_tile), which writes them to C while the warpgroup goes on to
//     the next tile's wgmmas; where n % 4 != 0 the chunk holding a row's last, partial 16-byte
//     unit is stored by the threads;
//   - the rest is persistent_fp8's (fp8_steps.cuh): its steps, its chains of promotions, one
//     block per multiprocessor walking the tiles in groups of GROUP tile rows, CLUSTER blocks
//     along m sharing each Bt tile by multicast; k is never split.
// On the persistent skeleton (kernels/persistent.cuh): the FP8 steps (Fp8Steps) with the
// TMA-store consumer (TmaStore) and its chunk buffers after the ring (tma_store.cuh, TmaStored).
#include "fp8_steps.cuh"  // the skeleton and the FP8 steps
#include "tma_store.cuh"  // the store epilogue

struct TmastoreFp8 : TmaStored<Fp8Steps> {};

PERSISTENT_KERNEL(tmastore_fp8, TmastoreFp8,
                  (const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt,
                   const __grid_constant__ CUtensorMap mapC, out_t *__restrict__ C, int M, int N,
                   int K, int ldc, int accumulate, float scale),
                  (&mapA, &mapBt, &mapC, C, M, N, K, ldc, accumulate, scale))

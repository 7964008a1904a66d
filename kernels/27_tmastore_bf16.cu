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
#include <cuda_bf16.h>

#include "tma_store.cuh"  // hopper.cuh and the store epilogue
#include "split_k.cuh"  // SplitK

// The parameters (BM, BN, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel
// (BK, CONSUMERS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
#ifndef STAGE_BYTES
#error "BM, BN, STAGES, CLUSTER, GROUP and the registry's derived facts must be defined"
#endif

constexpr int WM = BM / CONSUMERS;  // rows of C per consumer warpgroup
constexpr int BOXES = BN / 64;  // 64-column boxes of a B tile
static_assert(WM % 64 == 0, "each consumer computes whole m64 products");
static_assert(BN % 64 == 0 && BN <= 256, "wgmma n of 64..256 in whole 64-column boxes");
static_assert(BOXES % CLUSTER == 0, "the B boxes divide among the cluster's blocks");
static_assert(sizeof(elem_t) == 2 && sizeof(out_t) == 4, "bfloat16 in, float32 out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");

static_assert((STAGES * STAGE_BYTES) % 1024 == 0, "the chunk buffers start 1024-byte aligned");

// The kernel's body, built twice: SPLIT = false for launches of one split (the work units are
// the tiles, and the k-loop and tile walk compile as they did before split-K existed), true for
// several; each is an entry point of its own (below).
template <bool SPLIT>
__device__ __forceinline__ void tmastore_bf16_body(
    const CUtensorMap *mapA, const CUtensorMap *mapB, const CUtensorMap *mapC, out_t *C, int ldc,
    int M, int N, int K, int accumulate, int split_count, void *workspace) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ int split_last;  // split_k.cuh: whether this unit finishes its tile
    const int splits = SPLIT ? split_count : 1;
    unsigned char *smem = align_1024_shared(smem_raw);  // LDS and STS (hopper.cuh)
    unsigned char *As = smem;                     // STAGES x [BM][64] bfloat16
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x BOXES x [64][64] bfloat16
    // after the ring: CONSUMERS x 2 chunk buffers of [64][CHUNK_COLS] floats
    unsigned char *Cs = smem + STAGES * STAGE_BYTES;

    const int wg = threadIdx.x / 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int rows = (M + BM * CLUSTER - 1) / (BM * CLUSTER), cols = (N + BN - 1) / BN;
    const int tiles = rows * cols;
    const int units = tiles * splits;  // (tile, split) pairs: unit u = tile u / splits
    const int ktiles = (K + BK - 1) / BK;

    ring_init(full, empty, STAGES, CONSUMERS * CLUSTER, CLUSTER);

    if (wg == 0) {  // producer
        setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            unsigned it = 0;  // k-tiles issued so far: the ring position
            for (int u = cluster; u < units; u += clusters) {
                int tm, tn, kt0, kt1;
                grouped_tile<GROUP>(u / splits, rows, cols, tm, tn);
                split_range(ktiles, splits, u % splits, kt0, kt1);
                const int row0 = (tm * CLUSTER + rank) * BM, col0 = tn * BN;
                for (int kt = kt0; kt < kt1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) barrier_wait(&empty[s], ((it / STAGES) + 1) & 1);
                    barrier_expect(&full[s], STAGE_BYTES);
                    tma_load(As + s * A_BYTES, mapA, &full[s], kt * BK, row0);
#pragma unroll
                    for (int j = rank; j < BOXES; j += CLUSTER) {
                        if (CLUSTER > 1)
                            tma_load_multicast(Bs + s * B_BYTES + j * B_BOX, mapB, &full[s],
                                               col0 + 64 * j, kt * BK, (1u << CLUSTER) - 1);
                        else
                            tma_load(Bs + s * B_BYTES + j * B_BOX, mapB, &full[s],
                                     col0 + 64 * j, kt * BK);
                    }
                }
            }
        }
    } else {  // consumers
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        const int t0 = threadIdx.x % 128;
        // the wgmmas that read stage s are done
        auto release = [&](int s) { ring_release<CLUSTER>(&empty[s], t0 == 0); };
        float d[WM / 64][BN / 2];
        unsigned it = 0;
        unsigned chunk = 0;  // chunks this consumer has handed over: its buffer is chunk % 2
        unsigned char *buffers = Cs + c * 2 * CHUNK_BYTES;
        for (int u = cluster; u < units; u += clusters) {
            const int t = u / splits;
            int tm, tn, kt0, kt1;
            grouped_tile<GROUP>(t, rows, cols, tm, tn);
            split_range(ktiles, splits, u % splits, kt0, kt1);
            const int row0 = (tm * CLUSTER + rank) * BM, col0 = tn * BN;
            for (int kt = kt0; kt < kt1; ++kt, ++it) {
                const int s = it % STAGES;
                barrier_wait(&full[s], (it / STAGES) & 1);
                const unsigned a = smem_addr(As + s * A_BYTES) + c * WM * 128;
                const unsigned b = smem_addr(Bs + s * B_BYTES);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
                    for (int i = 0; i < WM / 64; ++i)
                        wgmma_bf16<BN>(d[i], descriptor_sw128(a + i * 64 * 128 + kk * 32),
                                       descriptor_sw128(b + kk * 16 * 128, B_BOX),
                                       kt > kt0 || kk > 0);  // the unit's first product sets d
                wgmma_commit();
                wgmma_wait<1>();  // the previous k-tile's wgmmas are done: release its stage
                if (kt > kt0) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < WM / 64; ++i) accumulators_fence<BN / 2>(d[i]);
            if (kt1 > kt0) release((it - 1) % STAGES);
            if (SPLIT) {  // a split tile: the unit that finishes it stores the sum
                const SplitK<float, WM / 64 * (BN / 2)> part(workspace, tiles * CLUSTER,
                                                            t * CLUSTER + rank, u % splits, splits,
                                                            threadIdx.x - 128, CONSUMERS * 128);
                part.put_all(&d[0][0]);
                if (!part.finish([] { named_barrier_sync(1, CONSUMERS * 128); }, &split_last))
                    continue;
                part.sum_into(&d[0][0]);
            }
            store_tile<WM, BN>(d, kt1 == kt0, buffers, chunk, 2 + c, mapC, C, ldc, M, N,
                               row0 + c * WM, col0, accumulate);
        }
        store_tile_drain();  // every chunk written before the block's memory goes
    }
    if (CLUSTER > 1) {  // no block leaves while another may still write to its shared memory
        __syncwarp();
        cluster_sync();
    }
}

// Two entry points, one per body, as persistent_bf16's: `_split` for launches of several splits.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    tmastore_bf16(const __grid_constant__ CUtensorMap mapA,
                  const __grid_constant__ CUtensorMap mapB,
                  const __grid_constant__ CUtensorMap mapC, out_t *C, int ldc, int M, int N,
                  int K, int accumulate, int splits, void *workspace) {
    tmastore_bf16_body<false>(&mapA, &mapB, &mapC, C, ldc, M, N, K, accumulate, 1, workspace);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    tmastore_bf16_split(const __grid_constant__ CUtensorMap mapA,
                        const __grid_constant__ CUtensorMap mapB,
                        const __grid_constant__ CUtensorMap mapC, out_t *C, int ldc, int M,
                        int N, int K, int accumulate, int splits, void *workspace) {
    tmastore_bf16_body<true>(&mapA, &mapB, &mapC, C, ldc, M, N, K, accumulate, splits,
                             workspace);
}

// ws_bf16 (TMA, 128-byte swizzle, a producer warpgroup and two consumer warpgroups) made
// persistent and clustered:
//   - one block per multiprocessor (the grid is sized by the GPU's count, `sms`), each walking
//     the output tiles in turn, so the producer fetches the next tile's first stages while the
//     consumers store the last one, and no block waits to be scheduled;
//   - the tiles are walked in groups of GROUP tile rows (the order Triton's matmul tutorial
//     calls grouped): blocks running at the same time share rows of A and columns of B in L2;
//   - the consumers keep one k-tile of wgmmas in flight (wait_group 1) and release a stage as
//     soon as the wgmmas that read it are done, so the tensor cores do not drain between tiles;
//   - CLUSTER blocks stacked along m share each B tile: each loads 1/CLUSTER of its 64-column
//     boxes and the copy engine multicasts them into every block of the cluster.  A stage is
//     refilled only when the consumers of every block of the cluster have released it (their
//     `empty` arrivals go to each block's barrier), and no block leaves before the others.
//   - where the tiles are fewer than the clusters (a small product, or one small side), each
//     tile's k-tiles are split among `splits` work units (split_k.cuh; the registry's
//     shape_facts choose how many), walked like tiles; the unit that finishes a tile adds the
//     others' partial sums from `workspace` and stores it.
// A (m x k) and B (k x n) are row-major; B is MN-major for wgmma (its transpose bit, as in
// ws_bf16); everything past the matrices reads as zeros, so any m, n, k work.
#include <cuda_bf16.h>

#include "hopper.cuh"
#include "split_k.cuh"

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

// The kernel's body, built twice: SPLIT = false for launches of one split (the work units are
// the tiles, and the k-loop and tile walk compile as they did before split-K existed), true for
// several; each is an entry point of its own (below).
template <bool SPLIT>
__device__ __forceinline__ void persistent_bf16_body(
    const CUtensorMap *mapA, const CUtensorMap *mapB, out_t *__restrict__ C, int M, int N, int K,
    int ldc, int accumulate, int split_count, void *workspace) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ int split_last;  // split_k.cuh: whether this unit finishes its tile
    const int splits = SPLIT ? split_count : 1;
    unsigned char *smem = align_1024(smem_raw);
    unsigned char *As = smem;                     // STAGES x [BM][64] bfloat16
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x BOXES x [64][64] bfloat16

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
        const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
        // the wgmmas that read stage s are done
        auto release = [&](int s) { ring_release<CLUSTER>(&empty[s], t0 == 0); };
        // float2 stores of column pairs: C 8-byte aligned with an even leading dimension
        const bool pairs = (reinterpret_cast<uintptr_t>(C) & 7) == 0 && ldc % 2 == 0;
        float d[WM / 64][BN / 2];
        unsigned it = 0;
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
            // d[i][4 j + e] = C[row0 + c WM + 64 i + 16 w + g + 8 (e / 2)][col0 + 8 j + 2 q + e % 2]:
            // pairs of adjacent columns, stored as one float2 where C allows
#pragma unroll
            for (int i = 0; i < WM / 64; ++i)
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int row = row0 + c * WM + 64 * i + 16 * w + g + 8 * h;
                        const int col = col0 + 8 * j + 2 * q;
                        if (row >= M) continue;
                        float2 v = make_float2(d[i][4 * j + 2 * h], d[i][4 * j + 2 * h + 1]);
                        if (kt1 == kt0) v = make_float2(0.f, 0.f);
                        out_t *p = C + static_cast<long long>(row) * ldc + col;
                        if (pairs && col + 1 < N) {
                            float2 *p2 = reinterpret_cast<float2 *>(p);
                            if (accumulate) {
                                const float2 old = *p2;
                                v.x += old.x;
                                v.y += old.y;
                            }
                            *p2 = v;
                        } else {
                            if (col < N) p[0] = accumulate ? p[0] + v.x : v.x;
                            if (col + 1 < N) p[1] = accumulate ? p[1] + v.y : v.y;
                        }
                    }
        }
    }
    if (CLUSTER > 1) {  // no block leaves while another may still write to its shared memory
        __syncwarp();
        cluster_sync();
    }
}

// Two entry points, one per body, each compiled on its own: the first for a launch of one
// split (its machine code is the kernel's before split-K, instruction for instruction:
// cuobjdump -sass, CUDA 13.0), `_split` for several (the registry's `symbols` picks it where
// SPLITS > 1).  One kernel holding both bodies behind a branch compiled the unsplit one
// differently; one body for both (the splits a runtime value) ran 0.3-2.1% slower at 4096 on
// an H100, side by side with the kernel before split-K.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    persistent_bf16(const __grid_constant__ CUtensorMap mapA,
                    const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M, int N,
                    int K, int ldc, int accumulate, int splits, void *workspace) {
    persistent_bf16_body<false>(&mapA, &mapB, C, M, N, K, ldc, accumulate, 1, workspace);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    persistent_bf16_split(const __grid_constant__ CUtensorMap mapA,
                          const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M,
                          int N, int K, int ldc, int accumulate, int splits, void *workspace) {
    persistent_bf16_body<true>(&mapA, &mapB, C, M, N, K, ldc, accumulate, splits, workspace);
}

// persistent_bf16 with ping-pong consumers (the order of CUTLASS's "ping-pong" warp-specialised
// kernel): each consumer warpgroup computes whole output tiles, the two taking a block's work
// units in turn (consumer 0 the block's 1st, 3rd, ... unit, consumer 1 the 2nd, 4th, ...), so
// that one warpgroup stores its tile while the other's wgmmas keep the tensor cores busy.  In
// persistent_bf16 both warpgroups share each tile (BM / 2 rows each) and store it together, and
// the tensor cores wait for the store: Nsight Compute had the tensor pipe idle 22.6% of the
// elapsed cycles at 4096 and 11.2% at 8192 (lab notebook, "Past cuBLAS at 4096 and 8192: what the profiler names").
//
// The producer fills the ring in the order of the block's units, as in persistent_bf16, so a
// consumer's first stage of a unit arrives only as the other consumer's unit is running out of
// k-tiles: their k-loops follow each other, and each epilogue lies beside the other's k-loop.
// A stage is read by one consumer (of each block of the cluster): its `empty` barrier expects
// CLUSTER arrivals, one per block.  Each consumer walks every unit of its block to keep its place
// in the ring, and skips the other's.  A consumer starts waiting on its unit's stages only once
// the other has passed every wait of the unit before (`order`, CUTLASS's ordered sequence
// barrier): waited on earlier, a stage's `full` barrier could be two phases behind, and a wait by
// parity would take the phase before last for the one awaited.
//
// The rest is persistent_bf16's: TMA with 128-byte swizzle into a STAGES-deep ring, one block
// per multiprocessor walking grouped tiles, CLUSTER blocks along m sharing each B tile through
// the copy engine's multicast, split-K where the tiles leave clusters idle (a split tile's
// partial sums from the 128 threads of the consumer that holds it), one k-tile of wgmmas in
// flight.  A (m x k) and B (k x n) are row-major; B is MN-major for wgmma; everything past the
// matrices reads as zeros, so any m, n, k work.
#include <cuda_bf16.h>

#include "hopper.cuh"
#include "split_k.cuh"

// The parameters (BM, BN, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel
// (BK, CONSUMERS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
#ifndef STAGE_BYTES
#error "BM, BN, STAGES, CLUSTER, GROUP and the registry's derived facts must be defined"
#endif

constexpr int BOXES = BN / 64;  // 64-column boxes of a B tile
static_assert(CONSUMERS == 2, "two consumer warpgroups take the units in turn");
static_assert(BM % 64 == 0, "a consumer computes whole m64 products");
static_assert(BN % 64 == 0 && BN <= 256, "wgmma n of 64..256 in whole 64-column boxes");
static_assert((BM / 64) * (BN / 2) <= 128, "at most 128 accumulators a consumer thread");
static_assert(BOXES % CLUSTER == 0, "the B boxes divide among the cluster's blocks");
static_assert(sizeof(elem_t) == 2 && sizeof(out_t) == 4, "bfloat16 in, float32 out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");

// The kernel's body, built twice as persistent_bf16's: SPLIT = false for launches of one split,
// true for several; each an entry point of its own (below).
template <bool SPLIT>
__device__ __forceinline__ void pingpong_bf16_body(const CUtensorMap *mapA,
                                                   const CUtensorMap *mapB,
                                                   out_t *__restrict__ C, int M, int N, int K,
                                                   int ldc, int accumulate, int split_count,
                                                   void *workspace) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    // order[c]: consumer c's 128 threads arrive once they passed every wait of a unit's k-loop
    __shared__ __align__(8) uint64_t order[CONSUMERS];
    __shared__ int split_last[CONSUMERS];  // split_k.cuh: whether this unit finishes its tile
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

    if (threadIdx.x == 0)
        for (int c = 0; c < CONSUMERS; ++c) barrier_init(&order[c], 128);
    // one consumer of each block of the cluster reads a stage (ring_init's fence and barrier
    // publish the order barriers too)
    ring_init(full, empty, STAGES, CLUSTER, CLUSTER);

    if (wg == 0) {  // producer: the ring in the order of the block's units
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
    } else {  // consumers: units 0, 2, 4, ... of the block to the first, 1, 3, 5, ... to the second
        setmaxnreg_inc<232>();
        const int c = wg - 1;
        const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
        // the wgmmas that read stage s are done
        auto release = [&](int s) { ring_release<CLUSTER>(&empty[s], t0 == 0); };
        // float2 stores of column pairs: C 8-byte aligned with an even leading dimension
        const bool pairs = (reinterpret_cast<uintptr_t>(C) & 7) == 0 && ldc % 2 == 0;
        float d[BM / 64][BN / 2];
        unsigned it = 0;  // the ring position: every unit's k-tiles, this consumer's or not
        int turn = 0;     // the block's units so far: this consumer's where turn % 2 == c
        for (int u = cluster; u < units; u += clusters, ++turn) {
            const int t = u / splits;
            int tm, tn, kt0, kt1;
            grouped_tile<GROUP>(t, rows, cols, tm, tn);
            split_range(ktiles, splits, u % splits, kt0, kt1);
            if ((turn & 1) != c) {  // the other consumer's unit: its stages are not ours
                it += kt1 - kt0;
                continue;
            }
            const int row0 = (tm * CLUSTER + rank) * BM, col0 = tn * BN;
            // the other consumer's k-loop of the unit before (turn - 1, its (turn - 1) / 2-th)
            // has passed all its waits: every stage's `full` barrier is then within one phase
            if (turn > 0) barrier_wait(&order[1 - c], ((turn - 1) / 2) & 1);
            for (int kt = kt0; kt < kt1; ++kt, ++it) {
                const int s = it % STAGES;
                barrier_wait(&full[s], (it / STAGES) & 1);
                const unsigned a = smem_addr(As + s * A_BYTES);
                const unsigned b = smem_addr(Bs + s * B_BYTES);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
                    for (int i = 0; i < BM / 64; ++i)
                        wgmma_bf16<BN>(d[i], descriptor_sw128(a + i * 64 * 128 + kk * 32),
                                       descriptor_sw128(b + kk * 16 * 128, B_BOX),
                                       kt > kt0 || kk > 0);  // the unit's first product sets d
                wgmma_commit();
                wgmma_wait<1>();  // the previous k-tile's wgmmas are done: release its stage
                if (kt > kt0) release((it - 1) % STAGES);
            }
            barrier_arrive(&order[c]);  // the other consumer may wait on its next unit's stages
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < BM / 64; ++i) accumulators_fence<BN / 2>(d[i]);
            if (kt1 > kt0) release((it - 1) % STAGES);
            if (SPLIT) {  // a split tile: the unit that finishes it stores the sum
                const SplitK<float, BM / 64 * (BN / 2)> part(workspace, tiles * CLUSTER,
                                                            t * CLUSTER + rank, u % splits,
                                                            splits, t0, 128);
                part.put_all(&d[0][0]);
                // this consumer's 128 threads only (named barrier 1 + c): the other is busy
                if (!part.finish([c] { named_barrier_sync(1 + c, 128); }, &split_last[c]))
                    continue;
                part.sum_into(&d[0][0]);
            }
            // d[i][4 j + e] = C[row0 + 64 i + 16 w + g + 8 (e / 2)][col0 + 8 j + 2 q + e % 2]:
            // pairs of adjacent columns, stored as one float2 where C allows
#pragma unroll
            for (int i = 0; i < BM / 64; ++i)
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int row = row0 + 64 * i + 16 * w + g + 8 * h;
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

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    pingpong_bf16(const __grid_constant__ CUtensorMap mapA,
                  const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M, int N,
                  int K, int ldc, int accumulate, int splits, void *workspace) {
    pingpong_bf16_body<false>(&mapA, &mapB, C, M, N, K, ldc, accumulate, 1, workspace);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    pingpong_bf16_split(const __grid_constant__ CUtensorMap mapA,
                        const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M,
                        int N, int K, int ldc, int accumulate, int splits, void *workspace) {
    pingpong_bf16_body<true>(&mapA, &mapB, C, M, N, K, ldc, accumulate, splits, workspace);
}

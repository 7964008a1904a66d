// TF32 on Hopper's road: persistent_bf16's structure (TMA ring with mbarriers, a producer
// warpgroup and two consumer warpgroups with setmaxnreg, one block per multiprocessor walking
// grouped tiles, one k-tile of wgmmas in flight) for float32 matrices on the TF32 tensor cores.
//
// wgmma takes TF32 operands from shared memory only K-major (K contiguous).  A (m x k,
// row-major) is K-major; B (k x n, row-major) is not, and is not transposed anywhere: the kernel
// computes C^T = B^T . A^T, so that A is wgmma's shared-memory operand (a [BM][32] tile with
// 128-byte swizzle, described by a matrix descriptor) and B^T is wgmma's register operand, which
// each consumer thread reads from the B tile in shared memory (4 words per k8 step, rounded with
// cvt.rna), for the next k-tile while the tensor cores work on this one.  Each consumer
// warpgroup owns 64 columns of C (the rows of its m64nBMk8 products) and all BM rows.
//
// The B tile comes in boxes of 32 columns with 128-byte swizzle (16-byte units of a row XORed
// with the row's index mod 8).  Which column of C each of a warp's 16 product rows holds is
// chosen so that the 32 lanes' reads of a k8 step fall in 32 different banks: lane (g, t) reads
// row k = t (+4) and column 16 (g / 4) + 4 e + g % 4 (+ 8 for the warp's second half of the box),
// e = 0 for product row g, 1 for row g + 8; the epilogue maps the rows back.
//
// CLUSTER blocks side by side along n share each A tile (the larger one: BM x 32 floats against
// 32 x 128): each loads 1/CLUSTER of its rows and the copy engine multicasts them into every
// block of the cluster; a stage is refilled only when the consumers of every block released it.
//
// Where the tiles are fewer than the clusters, each tile's k-tiles are split among `splits` work
// units (split_k.cuh, as in persistent_bf16); where they fill fewer than 8 waves of clusters but
// leave the last one short, only the last wave's tiles are split (`head` tiles run whole).
#include "hopper.cuh"
#include "split_k.cuh"

// The parameters (BM, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel (BK,
// BN, CONSUMERS, THREADS, A_ROWS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry
// entry (-D each).
#ifndef STAGE_BYTES
#error "BM, STAGES, CLUSTER, GROUP and the registry's derived facts must be defined"
#endif

static_assert(BM == 64 || BM == 128 || BM == 256, "wgmma n of 64, 128 or 256");
static_assert(BN == 64 * CONSUMERS, "each consumer warpgroup owns 64 columns of C");
static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
static_assert(A_ROWS % 8 == 0, "whole 1024-byte swizzle periods per block's part of A");
// registers after setmaxnreg (128 (P + 2 C) <= 65536): the clustered producer needs more than 40
// (ptxas, CUDA 13.0: 24 bytes spilled at 40)
constexpr int PRODUCER_REGS = CLUSTER > 1 ? 56 : 40, CONSUMER_REGS = CLUSTER > 1 ? 224 : 232;

// The kernel's body, built twice: SPLIT = false for launches of one split (the work units are
// the tiles, and the k-loop and tile walk compile as they did before split-K existed), true for
// several; each is an entry point of its own (below).
template <bool SPLIT>
__device__ __forceinline__ void persistent_tf32_body(
    const CUtensorMap *mapA, const CUtensorMap *mapB, out_t *__restrict__ C, int M, int N, int K,
    int ldc, int accumulate, int split_count, void *workspace, int split_head) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ int split_last;  // split_k.cuh: whether this unit finishes its tile
    const int splits = SPLIT ? split_count : 1;
    unsigned char *smem = align_1024(smem_raw);
    unsigned char *As = smem;                     // STAGES x [BM][32] float
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x 4 x [32][32] float

    const int wg = threadIdx.x / 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int rows = (M + BM - 1) / BM, cols = (N + BN * CLUSTER - 1) / (BN * CLUSTER);
    const int tiles = rows * cols;
    // the work units (per cluster): the first `head` tiles whole, the others (tile, split) pairs
    const int head = SPLIT ? split_head : tiles;
    const int units = head + (tiles - head) * splits;
    const int ktiles = (K + BK - 1) / BK;

    ring_init(full, empty, STAGES, CONSUMERS * CLUSTER, CLUSTER);

    if (wg == 0) {  // producer
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            unsigned it = 0;
            for (int u = cluster; u < units; u += clusters) {
                const SplitUnit su = SPLIT ? split_unit(u, head, splits) : SplitUnit{u, 0, 1};
                int tm, tn, kt0, kt1;
                grouped_tile<GROUP>(su.tile, rows, cols, tm, tn);
                split_range(ktiles, su.n, su.s, kt0, kt1);
                const int row0 = tm * BM, col0 = (tn * CLUSTER + rank) * BN;
                for (int kt = kt0; kt < kt1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) barrier_wait(&empty[s], ((it / STAGES) + 1) & 1);
                    barrier_expect(&full[s], STAGE_BYTES);
                    unsigned char *a = As + s * A_BYTES + rank * A_ROWS * 128;
                    if (CLUSTER > 1)
                        tma_load_multicast(a, mapA, &full[s], kt * BK, row0 + rank * A_ROWS,
                                           (1u << CLUSTER) - 1);
                    else
                        tma_load(a, mapA, &full[s], kt * BK, row0);
#pragma unroll
                    for (int j = 0; j < BN / 32; ++j)
                        tma_load(Bs + s * B_BYTES + j * B_BOX, mapB, &full[s], col0 + 32 * j,
                                 kt * BK);
                }
            }
        }
    } else {  // consumers
        setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;
        const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
        const int t = q;  // the k of a lane's B^T fragment (the mma.sync layout's "t")
        // this thread's four B^T fragment words of k8 step 0, as byte offsets in a B stage:
        // box 2c + w / 2, row k = t + 4 hi, 16-byte unit u_e ^ (k % 8), word g % 4
        unsigned frag[2][2];  // [hi][e]
#pragma unroll
        for (int hi = 0; hi < 2; ++hi)
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const int u = 2 * (w % 2) + 4 * (g / 4) + e;
                const int k = t + 4 * hi;
                frag[hi][e] = (2 * c + w / 2) * B_BOX + k * 128 + ((u ^ k) * 16) + (g % 4) * 4;
            }
        auto load_fragments = [&](unsigned (&a)[BK / 8][4], int s) {
            const unsigned char *b = Bs + s * B_BYTES;
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) {  // 8 rows further: 1024 bytes, same swizzle
                a[kk][0] = to_tf32(*reinterpret_cast<const float *>(b + frag[0][0] + kk * 1024));
                a[kk][1] = to_tf32(*reinterpret_cast<const float *>(b + frag[0][1] + kk * 1024));
                a[kk][2] = to_tf32(*reinterpret_cast<const float *>(b + frag[1][0] + kk * 1024));
                a[kk][3] = to_tf32(*reinterpret_cast<const float *>(b + frag[1][1] + kk * 1024));
            }
        };
        // the wgmmas that read stage s are done
        auto release = [&](int s) { ring_release<CLUSTER>(&empty[s], t0 == 0); };
        float d[BM / 2];
        unsigned a0[BK / 8][4], a1[BK / 8][4];
        unsigned it = 0;
        // one k-tile: its stage has landed; B^T into registers, the wgmmas issued; then the
        // previous k-tile's wgmmas are waited for, which frees its stage and its registers
        int kt0, kt1;  // the k-tiles of the unit at hand
        auto step = [&](unsigned (&a)[BK / 8][4], int kt) {
            const int s = it % STAGES;
            barrier_wait(&full[s], (it / STAGES) & 1);
            load_fragments(a, s);
            const unsigned at = smem_addr(As + s * A_BYTES);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk)
                wgmma_tf32_rs<BM>(d, a[kk], descriptor_sw128(at + kk * 32), kt > kt0 || kk > 0);
            wgmma_commit();
            wgmma_wait<1>();
            if (kt > kt0) release((it - 1) % STAGES);
            ++it;
        };
        for (int u = cluster; u < units; u += clusters) {
            const SplitUnit su = SPLIT ? split_unit(u, head, splits) : SplitUnit{u, 0, 1};
            int tm, tn;
            grouped_tile<GROUP>(su.tile, rows, cols, tm, tn);
            split_range(ktiles, su.n, su.s, kt0, kt1);
            const int row0 = tm * BM, col0 = (tn * CLUSTER + rank) * BN;
            int kt = kt0;
            for (; kt + 1 < kt1; kt += 2) {
                step(a0, kt);
                step(a1, kt + 1);
            }
            if (kt < kt1) step(a0, kt);
            wgmma_wait<0>();
            accumulators_fence<BM / 2>(d);
            release((it - 1) % STAGES);
            // a split tile (past the head): the unit that finishes it stores the sum (its place
            // among the split tiles worked out again from u, as in ws_f64)
            if (SPLIT && u >= head) {
                const SplitK<float, BM / 2> part(workspace, (tiles - head) * CLUSTER,
                                                 (u - head) / splits * CLUSTER + rank,
                                                 (u - head) % splits, splits, threadIdx.x - 128,
                                                 CONSUMERS * 128);
                part.put_all(d);
                if (!part.finish([] { named_barrier_sync(1, CONSUMERS * 128); }, &split_last))
                    continue;
                part.sum_into(d);
            }
            // d[4 j + e] = C^T[product row 16 w + g + 8 (e / 2)][8 j + 2 q + e % 2]: C row
            // row0 + 8 j + 2 q + e % 2, C column (the chosen row-to-column map above)
            const int colw = col0 + 64 * c + 32 * (w / 2) + 8 * (w % 2) + 16 * (g / 4) + g % 4;
#pragma unroll
            for (int j = 0; j < BM / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = row0 + 8 * j + 2 * q + e % 2;
                    const int col = colw + 4 * (e / 2);
                    if (row < M && col < N) {
                        out_t *p = C + static_cast<long long>(row) * ldc + col;
                        *p = accumulate ? *p + d[4 * j + e] : d[4 * j + e];
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
    persistent_tf32(const __grid_constant__ CUtensorMap mapA,
                    const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M, int N,
                    int K, int ldc, int accumulate, int splits, void *workspace, int head) {
    persistent_tf32_body<false>(&mapA, &mapB, C, M, N, K, ldc, accumulate, 1, workspace, 0);
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    persistent_tf32_split(const __grid_constant__ CUtensorMap mapA,
                          const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M,
                          int N, int K, int ldc, int accumulate, int splits, void *workspace,
                          int head) {
    persistent_tf32_body<true>(&mapA, &mapB, C, M, N, K, ldc, accumulate, splits, workspace,
                               head);
}

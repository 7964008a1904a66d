// FP64 on Hopper's road: the double-precision tensor cores (DMMA) have no wgmma form, so the
// products stay warp-wide mma.sync.m16n8k8.f64 (as mma_f64 and cuBLAS's own Hopper DGEMM), but
// the tiles reach shared memory the Hopper way: a producer warpgroup issues TMA copies with
// 128-byte swizzle into a STAGES-deep ring of full/empty mbarriers, and the consumer warps, given
// the registers the producer gives up (setmaxnreg), only load fragments and multiply.  The
// kernel is persistent (BLOCKS blocks per multiprocessor, walking the output tiles in groups of
// 8 tile rows), so one tile's epilogue overlaps the next tile's first copies, and the consumers
// spend no instructions on addresses of global memory or on guards: what lies past the matrix
// arrives as zeros.
//
// mma_f64 pads its tile rows to spread a fragment load over the banks; a swizzled TMA tile
// cannot be padded, so the rows and columns each lane reads are chosen instead.  A k-tile is 16
// doubles (one 128-byte swizzle row): the A tile is [BM][16], the B tile BN / 16 boxes of
// [16][16], and the copy engine stores 16-byte unit u of row r at unit u ^ (r % 8).  A lane
// (group g, place t) of an m16n8k8 step reads A at mma row g -> tile row 2 (g % 4) + g / 4 and B
// at mma column g -> tile column 8 ((g / 2) % 2) + 2 (g / 4) + g % 2 (+ 4 for odd n8 steps, in
// 16-column pairs of steps): each half warp's sixteen 8-byte reads then cover the 32 banks
// once.  A lane's two results of a row stay side by side in C (mma columns 2t and 2t + 1 map to
// adjacent tile columns), so the epilogue stores them as one 16-byte double2 where C allows.
// Where the tiles are fewer than the blocks, each tile's k-tiles are split among `splits` work
// units (split_k.cuh, as in persistent_bf16); where they fill fewer than 8 waves of blocks but
// leave the last one short, only the last wave's tiles are split (`head` tiles run whole).
#include "hopper.cuh"
#include "split_k.cuh"

#include <type_traits>

// The parameters (BM, BN, WM, WN, STAGES, BLOCKS) and what the launch shares with the kernel
// (BK, WARPS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
#ifndef STAGE_BYTES
#error "BM, BN, WM, WN, STAGES, BLOCKS and the registry's derived facts must be defined"
#endif

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
constexpr int MI = WM / 16, NI = WN / 8;  // m16n8 products per warp tile
static_assert(sizeof(elem_t) == 8 && sizeof(out_t) == 8, "float64 in and out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "whole warp tiles");
static_assert(WARPS % 4 == 0, "setmaxnreg works on whole warpgroups of consumers");
static_assert(BN % 16 == 0 && BM <= 256, "the TMA boxes: A [BM][16], B [16][16]");
// registers after setmaxnreg: a block holds at most REGS per thread (the launch bound's share of
// the 65536); the producer keeps 40, the consumers share the rest in steps of 8, at most 232
constexpr int REGS = 65536 / BLOCKS / THREADS;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_SHARE = (REGS * THREADS - 128 * PRODUCER_REGS) / (32 * WARPS) / 8 * 8;
constexpr int CONSUMER_REGS = CONSUMER_SHARE > 232 ? 232 : CONSUMER_SHARE;
static_assert(CONSUMER_REGS >= 168, "the consumers need 64 accumulators and their fragments");

// The kernel's body, built twice: SPLIT = false for launches of one split (the work units are
// the tiles, and the k-loop and tile walk compile as they did before split-K existed), true for
// several; each is an entry point of its own (below).
template <bool SPLIT>
__device__ __forceinline__ void ws_f64_body(
    const CUtensorMap *mapA, const CUtensorMap *mapB, out_t *__restrict__ C, int M, int N, int K,
    int ldc, int accumulate, int split_count, void *workspace, int split_head, int split_units) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    __shared__ int split_last;  // split_k.cuh: whether this unit finishes its tile
    const int splits = SPLIT ? split_count : 1;
    unsigned char *smem = align_1024(smem_raw);
    unsigned char *As = smem;                     // STAGES x [BM][16] double
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x BN / 16 x [16][16] double

    const int rows = (M + BM - 1) / BM, cols = (N + BN - 1) / BN;
    const int tiles = rows * cols;
    // the work units: the first `head` tiles whole, the others (tile, split) pairs, `units` in
    // all (head + (tiles - head) x splits, passed in: a kernel parameter takes no register)
    const int head = SPLIT ? split_head : tiles;
    const int units = SPLIT ? split_units : tiles;
    const int ktiles = (K + BK - 1) / BK;

    ring_init(full, empty, STAGES, WARPS, 1);

    if (threadIdx.x < 128) {  // producer
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            unsigned it = 0;
            // one work unit's k-tiles into the ring (as the consumers' units below)
            auto unit = [&](const int u, auto split_tag) {
                constexpr bool split = decltype(split_tag)::value;
                int tm, tn, kt0, kt1;
                grouped_tile<8>(split ? head + (u - head) / splits : u, rows, cols, tm, tn);
                split_range(ktiles, split ? splits : 1, split ? (u - head) % splits : 0, kt0,
                            kt1);
                for (int kt = kt0; kt < kt1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) barrier_wait(&empty[s], ((it / STAGES) + 1) & 1);
                    barrier_expect(&full[s], STAGE_BYTES);
                    tma_load(As + s * A_BYTES, mapA, &full[s], kt * BK, tm * BM);
#pragma unroll
                    for (int j = 0; j < BN / 16; ++j)
                        tma_load(Bs + s * B_BYTES + j * B_BOX, mapB, &full[s], tn * BN + 16 * j,
                                 kt * BK);
                }
            };
            int u = blockIdx.x;
            for (; u < head; u += gridDim.x) unit(u, std::false_type{});
            if (SPLIT)
                for (; u < units; u += gridDim.x) unit(u, std::true_type{});
        }
    } else {  // consumers
        setmaxnreg_inc<CONSUMER_REGS>();
        const int warp = threadIdx.x / 32 - 4, lane = threadIdx.x % 32;
        const int g = lane / 4, t = lane % 4;
        const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
        const int r = 2 * (g % 4) + g / 4;                     // the tile row of mma row g
        const int p = 8 * ((g / 2) % 2) + 2 * (g / 4) + g % 2;  // the tile column of mma column g
        // byte offsets in a stage of this lane's fragment words at k-step kk = 0; further rows
        // of A (16-row steps, the + 8 half) and further 16-column B boxes add whole 1024-byte
        // swizzle periods and boxes, which keep the swizzle
        // A: [k8 step][h: column t or t + 4]; B: [k8 step][h: row t or t + 4][n8 step parity:
        // column p or p + 4, inside the swizzle, so not a fixed byte distance]
        unsigned offA[2][2], offB[2][2][2];
#pragma unroll
        for (int ks = 0; ks < 2; ++ks)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int ca = 8 * ks + 4 * h + t;  // A's column (k)
                offA[ks][h] = (wm0 + r) * 128 + (((ca / 2) ^ r) * 16) + (ca % 2) * 8;
                const int k = 8 * ks + 4 * h + t;  // B's row
#pragma unroll
                for (int jp = 0; jp < 2; ++jp) {
                    const int n = p + 4 * jp;  // B's column in its 16-column box
                    offB[ks][h][jp] =
                        (wn0 / 16) * B_BOX + k * 128 + (((n / 2) ^ (k % 8)) * 16) + (n % 2) * 8;
                }
            }
        double acc[MI][NI][4];
        unsigned it = 0;
        // one work unit: tile u whole, or (split: a constant) a share of a tail tile
        auto unit = [&](const int u, auto split_tag) {
            constexpr bool split = decltype(split_tag)::value;
            int tm, tn, kt0, kt1;
            grouped_tile<8>(split ? head + (u - head) / splits : u, rows, cols, tm, tn);
            split_range(ktiles, split ? splits : 1, split ? (u - head) % splits : 0, kt0, kt1);
            zero_fragments(acc);
            for (int kt = kt0; kt < kt1; ++kt, ++it) {
                const int s = it % STAGES;
                barrier_wait(&full[s], (it / STAGES) & 1);
                const unsigned char *a = As + s * A_BYTES;
                const unsigned char *b = Bs + s * B_BYTES;
#pragma unroll
                for (int ks = 0; ks < 2; ++ks) {
                    double af[MI][4], bf[NI][2];
#pragma unroll
                    for (int i = 0; i < MI; ++i)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const unsigned char *q = a + offA[ks][h] + i * 16 * 128;
                            af[i][2 * h] = *reinterpret_cast<const double *>(q);
                            af[i][2 * h + 1] = *reinterpret_cast<const double *>(q + 8 * 128);
                        }
#pragma unroll
                    for (int j = 0; j < NI; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h)  // n8 step j: box j / 2
                            bf[j][h] = *reinterpret_cast<const double *>(
                                b + offB[ks][h][j % 2] + (j / 2) * B_BOX);
                    if (ks == 1) {  // every fragment of the stage is loaded: release it
                        proxy_fence_async();  // (before the copy engine may overwrite it)
                        __syncwarp();
                        if (lane == 0) barrier_arrive(&empty[s]);
                    }
#pragma unroll
                    for (int i = 0; i < MI; ++i)
#pragma unroll
                        for (int j = 0; j < NI; ++j) mma_f64_m16n8k8(acc[i][j], af[i], bf[j]);
                }
            }
            // a split tile (past the head): the unit that finishes it stores the sum
            if (split) {
                // (counts for every tile, partial sums for the tail's: first = head)
                const SplitK<double, MI * NI * 4> part(
                    workspace, tiles, head + (u - head) / splits, (u - head) % splits, splits,
                    threadIdx.x - 128, 32 * WARPS, head);
                part.put_all(&acc[0][0][0]);
                if (!part.finish([] { named_barrier_sync(1, 32 * WARPS); }, &split_last)) return;
                part.sum_into(&acc[0][0][0]);
            }
            // lane (g, t) holds mma rows g, g + 8 and columns 2t, 2t + 1 of each m16n8 product:
            // tile rows r, r + 8 and the adjacent tile columns 8 (t % 2) + 2 (t / 2) (+ 1)
            const long long row0 = static_cast<long long>(tm) * BM + wm0 + r;
            const int col0 = tn * BN + wn0 + 8 * (t % 2) + 2 * (t / 2);
            const bool pairs = (ldc % 2) == 0 && (reinterpret_cast<uintptr_t>(C) & 15) == 0;
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int hi = 0; hi < 2; ++hi) {
                    const long long row = row0 + 16 * i + 8 * hi;
                    if (row >= M) continue;
#pragma unroll
                    for (int j = 0; j < NI; ++j) {
                        const int col = col0 + 16 * (j / 2) + 4 * (j % 2);
                        double v0 = acc[i][j][2 * hi], v1 = acc[i][j][2 * hi + 1];
                        out_t *q = C + row * ldc + col;
                        if (pairs && col + 1 < N) {
                            double2 *q2 = reinterpret_cast<double2 *>(q);
                            if (accumulate) {
                                const double2 old = *q2;
                                v0 += old.x;
                                v1 += old.y;
                            }
                            *q2 = make_double2(v0, v1);
                        } else {
                            if (col < N) q[0] = accumulate ? q[0] + v0 : v0;
                            if (col + 1 < N) q[1] = accumulate ? q[1] + v1 : v1;
                        }
                    }
                }
        };
        // the head's whole tiles, then the tail's shares: two loops, each with its kind of unit
        // compiled in (one loop choosing per unit made ptxas spill 12 bytes in BM=128 BN=128)
        int u = blockIdx.x;
        for (; u < head; u += gridDim.x) unit(u, std::false_type{});
        if (SPLIT)
            for (; u < units; u += gridDim.x) unit(u, std::true_type{});
    }
}

// Two entry points, one per body, each compiled on its own: the first for a launch of one
// split (its machine code is the kernel's before split-K, instruction for instruction:
// cuobjdump -sass, CUDA 13.0), `_split` for several (the registry's `symbols` picks it where
// SPLITS > 1).  One kernel holding both bodies behind a branch compiled the unsplit one
// differently; one body for both (the splits a runtime value) ran 0.3-2.1% slower at 4096 on
// an H100, side by side with the kernel before split-K.
extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS)
    ws_f64(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
           out_t *__restrict__ C, int M, int N, int K, int ldc, int accumulate, int splits,
           void *workspace, int head, int units) {
    ws_f64_body<false>(&mapA, &mapB, C, M, N, K, ldc, accumulate, 1, workspace, 0, 0);
}

extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS)
    ws_f64_split(const __grid_constant__ CUtensorMap mapA,
                 const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M, int N,
                 int K, int ldc, int accumulate, int splits, void *workspace, int head,
                 int units) {
    ws_f64_body<true>(&mapA, &mapB, C, M, N, K, ldc, accumulate, splits, workspace, head, units);
}

// Warp tiling with double-buffered tiles, float32: warptile's math, but the A and B tiles of the
// next step along K are loaded from global memory into registers *before* the math on the current
// tile and written to the second shared-memory buffer after it, so the global loads' latency hides
// behind the FMAs and each step needs one barrier instead of two.  (A register stage rather than
// cp.async, because the A tile is stored transposed, which a cp.async copy cannot do.)  The
// fragments a thread reads from shared memory for each step along k are double-buffered in
// registers, across the barrier too: the next k-tile's first fragments are read right after it,
// while the last step's FFMAs run, so no k-tile starts waiting on shared memory (lab notebook,
// "warptile_db's fragments double-buffered across the barrier").  Loads are guarded like warptile's: any M, N, K and
// leading dimensions; blocks wholly inside aligned matrices skip the checks until the last k-tile
// (a few percent of the instructions of a k-tile, where FFMAs are the rest).  Split-K
// (split_k.cuh): the tile rows from `split_rows` on are split `split_count` ways along k, each tile
// row of them a run of split_count rows of blocks, block s of a tile multiplying its share of A's
// columns and B's rows, the block that finishes the tile adding the others' partial sums from
// `workspace` and storing it.  Every row is split where the tiles are fewer than the
// multiprocessors; where they fill whole waves and leave the last one short, the rows past the last
// whole wave's (so that the last wave lasts a share of a tile).  The rows before split_rows run
// whole; the split left their machine code as it was before it, but for 34 of the 2048 FFMAs'
// register numbers (tools/same_cubins.py --loops, CUDA 13.0, sm_90, the tuned 128 x 256
// instantiation): taking the tile from a one-dimensional unit number instead renumbered the
// registers of every FFMA and ran slower (lab notebook, "Tried and taken back: warptile_db's last
// wave split").
#include "warp_tile.cuh"

template <typename T> struct is_float32 { static constexpr bool value = false; };
template <> struct is_float32<float> { static constexpr bool value = true; };
static_assert(is_float32<elem_t>::value, "warptile_db moves float4: float32 only");

static_assert(BK % 2 == 0, "the last step's fragments and the next tile's first: two register sets");

// Per thread, the float4s of the A and B tiles it loads (stage() fills them from global memory,
// put() writes them to one of the two shared-memory buffers).
constexpr int A4 = BM * BK / 4 / THREADS, B4 = BK * BN / 4 / THREADS;
static_assert(A4 * THREADS * 4 == BM * BK && B4 * THREADS * 4 == BK * BN, "whole float4s per thread");

__device__ __forceinline__ float4 load4(const elem_t *__restrict__ p, long long r, long long c,
                                        long long rows, long long cols, long long ld, bool vec) {
    if (vec && r < rows && c + 3 < cols) return *reinterpret_cast<const float4 *>(&p[r * ld + c]);
    float4 v;
    v.x = (r < rows && c < cols) ? p[r * ld + c] : 0.f;
    v.y = (r < rows && c + 1 < cols) ? p[r * ld + c + 1] : 0.f;
    v.z = (r < rows && c + 2 < cols) ? p[r * ld + c + 2] : 0.f;
    v.w = (r < rows && c + 3 < cols) ? p[r * ld + c + 3] : 0.f;
    return v;
}

extern "C" __global__ void __launch_bounds__(THREADS)
    warptile_db(MM_PARAMS, void *workspace, int split_rows, int split_count) {
    __shared__ __align__(16) elem_t As[2][BK * BM];  // transposed: As[s][k * BM + row]
    __shared__ __align__(16) elem_t Bs[2][BK * BN];  // Bs[s][k * BN + col]
    const int tid = threadIdx.x;
    const WarpPlace w(tid);
    const bool split = blockIdx.y >= split_rows;
    const int splits = split ? split_count : 1;
    const int tileRow = split ? split_rows + (blockIdx.y - split_rows) / splits : blockIdx.y;
    const long long row0 = (long long)tileRow * BM, col0 = (long long)blockIdx.x * BN;
    if (splits > 1) {  // this block's k-tiles, from kt0 * BK on: a narrower A, a shorter B
        int kt0, kt1;
        split_range((K + BK - 1) / BK, splits, (blockIdx.y - split_rows) % splits, kt0, kt1);
        A += kt0 * BK;
        B += static_cast<long long>(kt0) * BK * ldb;
        K = min(K, kt1 * BK) - kt0 * BK;
    }
    const bool vecA = ((reinterpret_cast<unsigned long long>(A) & 15) == 0) && lda % 4 == 0;
    const bool vecB = ((reinterpret_cast<unsigned long long>(B) & 15) == 0) && ldb % 4 == 0;
    float4 sa[A4], sb[B4];
    // A block wholly inside the matrices (and both 16-byte aligned with leading dimensions
    // divisible by 4) loads each staged float4 of a k-tile wholly inside K with one unchecked
    // 16-byte load from a source set up once; edge blocks and the last k-tile go through load4.
    const bool interior = vecA && vecB && row0 + BM <= M && col0 + BN <= N;
    // the thread's first float4 of each tile; float4 q lies (q * THREADS) / (COLS / 4) rows and
    // (q * THREADS) % (COLS / 4) float4s further (compile-time numbers)
    const elem_t *pa = A + (interior ? (row0 + tid / (BK / 4)) * lda + (tid % (BK / 4)) * 4 : 0);
    const elem_t *pb =
        B + (interior ? (tid / (BN / 4)) * static_cast<long long>(ldb) + col0 + (tid % (BN / 4)) * 4
                      : 0);
    auto stage = [&](int k0) {  // global -> registers
        if (interior && k0 + BK <= K) {
            const elem_t *a = pa + k0, *b = pb + k0 * static_cast<long long>(ldb);
#pragma unroll
            for (int q = 0; q < A4; ++q)
                sa[q] = *reinterpret_cast<const float4 *>(
                    a + (q * THREADS) / (BK / 4) * static_cast<long long>(lda) +
                    (q * THREADS) % (BK / 4) * 4);
#pragma unroll
            for (int q = 0; q < B4; ++q)
                sb[q] = *reinterpret_cast<const float4 *>(
                    b + (q * THREADS) / (BN / 4) * static_cast<long long>(ldb) +
                    (q * THREADS) % (BN / 4) * 4);
            return;
        }
#pragma unroll
        for (int q = 0; q < A4; ++q) {
            const int f = tid + q * THREADS, r = f / (BK / 4), c = (f % (BK / 4)) * 4;
            sa[q] = load4(A, row0 + r, k0 + c, M, K, lda, vecA);
        }
#pragma unroll
        for (int q = 0; q < B4; ++q) {
            const int f = tid + q * THREADS, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            sb[q] = load4(B, k0 + r, col0 + c, K, N, ldb, vecB);
        }
    };
    auto put = [&](int s) {  // registers -> shared buffer s (A transposed)
#pragma unroll
        for (int q = 0; q < A4; ++q) {
            const int f = tid + q * THREADS, r = f / (BK / 4), c = (f % (BK / 4)) * 4;
            As[s][(c + 0) * BM + r] = sa[q].x;
            As[s][(c + 1) * BM + r] = sa[q].y;
            As[s][(c + 2) * BM + r] = sa[q].z;
            As[s][(c + 3) * BM + r] = sa[q].w;
        }
#pragma unroll
        for (int q = 0; q < B4; ++q) {
            const int f = tid + q * THREADS, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            *reinterpret_cast<float4 *>(&Bs[s][r * BN + c]) = sb[q];
        }
    };
    elem_t acc[FRAG_M][FRAG_N];
    warp_zero(acc);
    // The fragments of one dot step, in two register sets: the next step's are loaded while the
    // current step's FFMAs run, across the k-tiles' barrier too (the next tile's first
    // fragments are read from the other buffer right after the barrier, before the last step's
    // FFMAs), so that no k-tile starts by waiting on shared memory.
    elem_t regM[2][FRAG_M], regN[2][FRAG_N];
    auto fragments = [&](int buf, int dot, int f) {  // shared buffer buf, step dot -> set f
        warp_fragments<BM>(regM[f], regN[f], As[buf], Bs[buf], dot, w);
    };
    auto product = [&](int f) { warp_product(acc, regM[f], regN[f]); };
    stage(0);
    put(0);
    __syncthreads();
    fragments(0, 0, 0);
    int s = 0;
    for (int k0 = 0; k0 < K; k0 += BK, s ^= 1) {
        const bool more = k0 + BK < K;
        if (more) stage(k0 + BK);  // the next tile's global loads are in flight during the math
#pragma unroll
        for (int dot = 0; dot < BK - 1; ++dot) {  // step dot's fragments are in set dot % 2
            fragments(s, dot + 1, (dot + 1) % 2);
            product(dot % 2);
        }
        // the other buffer was last read before the previous barrier: safe to fill now
        if (more) put(s ^ 1);
        __syncthreads();
        // the next tile's first fragments (after the last tile: unused), then the last step
        fragments(s ^ 1, 0, 0);
        product((BK - 1) % 2);
    }
    // a split tile: the block that finishes it stores the sum (the A buffer is free: its last
    // reads were before the k-loop's last barrier)
    if (splits > 1 && !warp_split_sum(acc, workspace, split_rows, splits, tileRow, tid,
                                      reinterpret_cast<int *>(&As[0][0])))
        return;
    warp_store(C, acc, row0, col0, w, M, N, ldc, accumulate);
}

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
#include "split_k.cuh"

template <typename T> struct is_float32 { static constexpr bool value = false; };
template <> struct is_float32<float> { static constexpr bool value = true; };
static_assert(is_float32<elem_t>::value, "warptile_db moves float4: float32 only");

constexpr int WARPS = (BM / WM) * (BN / WN);
constexpr int THREADS = 32 * WARPS;
constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
static_assert(WMITER >= 1 && (WSUBN / TN) * (WSUBM / TM) == 32, "a sub-tile is one warp's");
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
    const int warp = tid / 32, lane = tid % 32;
    const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
    const int tRow = lane / (WSUBN / TN), tCol = lane % (WSUBN / TN);
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
    elem_t acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.f;
    // The fragments of one dot step, in two register sets: the next step's are loaded while the
    // current step's FFMAs run, across the k-tiles' barrier too (the next tile's first
    // fragments are read from the other buffer right after the barrier, before the last step's
    // FFMAs), so that no k-tile starts by waiting on shared memory.
    elem_t regM[2][WMITER * TM], regN[2][WNITER * TN];
    auto four = [](elem_t *to, const elem_t *from) {  // one float4 of shared memory, as 4 values
        const float4 v = *reinterpret_cast<const float4 *>(from);
        to[0] = v.x, to[1] = v.y, to[2] = v.z, to[3] = v.w;
    };
    auto fragments = [&](int buf, int dot, int f) {  // shared buffer buf, step dot -> set f
#pragma unroll
        for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
            for (int i = 0; i < TM; i += 4)
                four(&regM[f][wm * TM + i],
                     &As[buf][dot * BM + warpRow * WM + wm * WSUBM + tRow * TM + i]);
#pragma unroll
        for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
            for (int j = 0; j < TN; j += 4)
                four(&regN[f][wn * TN + j],
                     &Bs[buf][dot * BN + warpCol * WN + wn * WSUBN + tCol * TN + j]);
    };
    // The FFMAs of one step, from set f, in a serpentine order: row i's B values in turn, then
    // row i + 1's in reverse, so that two FFMAs in a row share a register (A's value along a row,
    // B's where the rows meet) and ptxas can mark it for the operand reuse cache.  In the tuned
    // 128 x 256 x 16 instantiation's k-loop (nvdisasm, CUDA 13.0): 2090 reuse flags on its 2048
    // FFMAs against 1771 row by row, 413 FFMAs with two register-file operands in one bank (the
    // register's number mod 2) against 963, the same 2589 instructions and 255 registers.
    auto product = [&](int f) {
#pragma unroll
        for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
            for (int jj = 0; jj < WNITER * TN; ++jj) {
                const int j = i % 2 ? WNITER * TN - 1 - jj : jj;
                acc[i][j] += regM[f][i] * regN[f][j];
            }
    };
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
    if (splits > 1) {  // a split tile: the block that finishes it stores the sum
        constexpr int N_ACC = WMITER * TM * WNITER * TN;
        // (a count for every tile, partial sums for the split ones: first = the whole ones)
        const int tiles = (split_rows + (gridDim.y - split_rows) / splits) * gridDim.x;
        const SplitK<float, N_ACC> part(workspace, tiles, tileRow * gridDim.x + blockIdx.x,
                                        (blockIdx.y - split_rows) % splits, splits, tid, THREADS,
                                        split_rows * gridDim.x);
        part.put_all(&acc[0][0]);
        // (the A buffer is free: its last reads were before the k-loop's last barrier)
        if (!part.finish([] { __syncthreads(); }, reinterpret_cast<int *>(&As[0][0]))) return;
        part.sum_into(&acc[0][0]);
    }
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long row = row0 + warpRow * WM + wm * WSUBM + tRow * TM + i;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const long long col = col0 + warpCol * WN + wn * WSUBN + tCol * TN + j;
                    if (row < M && col < N)
                        store_result(C, row * ldc + col, acc[wm * TM + i][wn * TN + j],
                                     accumulate);
                }
        }
}

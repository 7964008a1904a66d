// The warp tiling of the float32 CUDA-core rungs (warptile_db, warptile_ring), written once: a
// block of BM x BN outputs is (BM / WM) x (BN / WN) warps, a warp's WM x WN tile WMITER x WNITER
// sub-tiles, and each thread holds a TM x TN patch of every sub-tile.  A dot step reads the
// thread's fragments (WMITER * TM values of A's column, WNITER * TN of B's row) from shared
// memory in 16-byte reads and adds their outer product to the accumulators; the kernels differ
// in how the A and B tiles reach shared memory and in where the fragments of the next step come
// from.  The A tile lies transposed in shared memory (k-major rows of SA elements: BM, or more
// where the rows are padded), the B tile in rows of BN.  Split-K's fix-up (split_k.cuh) and the
// guarded store of the accumulators are here too.
#pragma once
#include "split_k.cuh"

constexpr int WARPS = (BM / WM) * (BN / WN);
constexpr int THREADS = 32 * WARPS;
constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
static_assert(WMITER >= 1 && (WSUBN / TN) * (WSUBM / TM) == 32, "a sub-tile is one warp's");
constexpr int FRAG_M = WMITER * TM, FRAG_N = WNITER * TN;  // a thread's fragment values

// where a thread's patches lie: its warp's tile in the block, its patch in the sub-tiles
struct WarpPlace {
    int warpRow, warpCol, tRow, tCol;
    __device__ __forceinline__ explicit WarpPlace(int tid) {
        const int warp = tid / 32, lane = tid % 32;
        warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
        tRow = lane / (WSUBN / TN), tCol = lane % (WSUBN / TN);
    }
};

// a thread's accumulators set to zero
__device__ __forceinline__ void warp_zero(elem_t (&acc)[FRAG_M][FRAG_N]) {
#pragma unroll
    for (int i = 0; i < FRAG_M; ++i)
#pragma unroll
        for (int j = 0; j < FRAG_N; ++j) acc[i][j] = 0.f;
}

// one float4 of shared memory, as 4 values
__device__ __forceinline__ void four(elem_t *to, const elem_t *from) {
    const float4 v = *reinterpret_cast<const float4 *>(from);
    to[0] = v.x, to[1] = v.y, to[2] = v.z, to[3] = v.w;
}

// step `dot` of the A tile As (rows of SA) and the B tile Bs -> the fragments regM, regN
template <int SA>
__device__ __forceinline__ void warp_fragments(elem_t *regM, elem_t *regN, const elem_t *As,
                                               const elem_t *Bs, int dot, const WarpPlace &w) {
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; i += 4)
            four(&regM[wm * TM + i], &As[dot * SA + w.warpRow * WM + wm * WSUBM + w.tRow * TM + i]);
#pragma unroll
    for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
        for (int j = 0; j < TN; j += 4)
            four(&regN[wn * TN + j], &Bs[dot * BN + w.warpCol * WN + wn * WSUBN + w.tCol * TN + j]);
}

// The FFMAs of one step, in a serpentine order: row i's B values in turn, then row i + 1's in
// reverse, so that two FFMAs in a row share a register (A's value along a row, B's where the
// rows meet) and ptxas can mark it for the operand reuse cache.  In warptile_db's tuned
// 128 x 256 x 16 instantiation's k-loop (nvdisasm, CUDA 13.0): 2090 reuse flags on its 2048
// FFMAs against 1771 row by row, 413 FFMAs with two register-file operands in one bank (the
// register's number mod 2) against 963, the same 2589 instructions and 255 registers.
__device__ __forceinline__ void warp_product(elem_t (&acc)[FRAG_M][FRAG_N], const elem_t *regM,
                                             const elem_t *regN) {
#pragma unroll
    for (int i = 0; i < FRAG_M; ++i)
#pragma unroll
        for (int jj = 0; jj < FRAG_N; ++jj) {
            const int j = i % 2 ? FRAG_N - 1 - jj : jj;
            acc[i][j] += regM[i] * regN[j];
        }
}

// Split-K's fix-up for a block of a launch whose tile rows from split_rows on are split
// `splits` ways (a tile row of them a run of `splits` rows of blocks): the partial sums put in
// the workspace, and true for the block that finishes the tile, whose acc then holds the sum;
// `flag`: a shared int no thread reads any more
__device__ __forceinline__ bool warp_split_sum(elem_t (&acc)[FRAG_M][FRAG_N], void *workspace,
                                               int split_rows, int splits, int tileRow,
                                               int tid, int *flag) {
    // (a count for every tile, partial sums for the split ones: first = the whole ones)
    const int tiles = (split_rows + (gridDim.y - split_rows) / splits) * gridDim.x;
    const SplitK<float, FRAG_M * FRAG_N> part(workspace, tiles, tileRow * gridDim.x + blockIdx.x,
                                              (blockIdx.y - split_rows) % splits, splits, tid,
                                              THREADS, split_rows * gridDim.x);
    part.put_all(&acc[0][0]);
    if (!part.finish([] { __syncthreads(); }, flag)) return false;
    part.sum_into(&acc[0][0]);
    return true;
}

// the accumulators to C from (row0, col0), the block's corner; only what lies inside M x N
__device__ __forceinline__ void warp_store(elem_t *C, const elem_t (&acc)[FRAG_M][FRAG_N],
                                           long long row0, long long col0, const WarpPlace &w,
                                           int M, int N, int ldc, int accumulate) {
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long row = row0 + w.warpRow * WM + wm * WSUBM + w.tRow * TM + i;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const long long col = col0 + w.warpCol * WN + wn * WSUBN + w.tCol * TN + j;
                    if (row < M && col < N)
                        store_result(C, row * ldc + col, acc[wm * TM + i][wn * TN + j],
                                     accumulate);
                }
        }
}

// Thread coarsening (seed 003, PMPP ch. 4 "granularity"): each thread computes COARSEN outputs,
// in COARSEN horizontally adjacent tiles of C.  The tile of A is loaded into shared memory once
// and reused for all of them, cutting global loads of A by COARSEN and giving each thread more
// independent work.  Guarded like tiled_guarded, so any M, N, K works.
#include "common.cuh"

extern "C" __global__ void coarsened(MM_PARAMS) {
    __shared__ elem_t sA[TILE][TILE];
    __shared__ elem_t sB[COARSEN][TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col0 = blockIdx.x * TILE * COARSEN + tx;
    elem_t acc[COARSEN];
#pragma unroll
    for (int c = 0; c < COARSEN; ++c) acc[c] = 0;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        sA[ty][tx] = (row < M && ka < K) ? A[(long long)row * lda + ka] : elem_t(0);
#pragma unroll
        for (int c = 0; c < COARSEN; ++c) {
            int col = col0 + c * TILE;
            sB[c][ty][tx] = (kb < K && col < N) ? B[(long long)kb * ldb + col] : elem_t(0);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) {
            elem_t a = sA[ty][k];
#pragma unroll
            for (int c = 0; c < COARSEN; ++c) acc[c] += a * sB[c][k][tx];
        }
        __syncthreads();
    }
#pragma unroll
    for (int c = 0; c < COARSEN; ++c) {
        int col = col0 + c * TILE;
        if (row < M && col < N) store_result(C, (long long)row * ldc + col, acc[c], accumulate);
    }
}

// kernel11 of seed 002: the shared-memory tiled kernel made correct for any M, N, K.
// Loads outside the matrices put 0 in the tile (so the last partial tile along K adds nothing)
// and only threads inside C store.  The guards cost a little at sizes that are multiples of TILE.
#include "common.cuh"

extern "C" __global__ void tiled_guarded(MM_PARAMS) {
    __shared__ elem_t sA[TILE][TILE];
    __shared__ elem_t sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    elem_t tmp = 0;
    for (int k0 = 0; k0 < K; k0 += TILE) {
        int ka = k0 + tx, kb = k0 + ty;
        sA[ty][tx] = (row < M && ka < K) ? A[(long long)row * lda + ka] : elem_t(0);
        sB[ty][tx] = (kb < K && col < N) ? B[(long long)kb * ldb + col] : elem_t(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) tmp += sA[ty][k] * sB[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) store_result(C, (long long)row * ldc + col, tmp, accumulate);
}

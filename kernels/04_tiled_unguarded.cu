// kernel10 of seed 002 / MatrixMulKernelShared of seed 000 / the SDK matrixMul of seed 001 /
// kernel2 of seed 004: TILE x TILE blocks of A and B are staged in shared memory, so each element
// is read from global memory K/TILE times instead of K times.  No bounds checks: correct only
// when M, N and K are multiples of TILE (a precondition in the registry).  Elsewhere it reads and
// writes past the matrices (seed 002 at 641): the pipeline runs it there only inside guard zones.
#include "common.cuh"

extern "C" __global__ void tiled_unguarded(MM_PARAMS) {
    __shared__ elem_t sA[TILE][TILE];
    __shared__ elem_t sB[TILE][TILE];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * TILE + ty;
    int col = blockIdx.x * TILE + tx;
    elem_t tmp = 0;
    for (int s = 0; s < K / TILE; ++s) {
        sA[ty][tx] = A[(long long)row * lda + s * TILE + tx];
        sB[ty][tx] = B[(long long)(s * TILE + ty) * ldb + col];
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) tmp += sA[ty][k] * sB[k][tx];
        __syncthreads();
    }
    store_result(C, (long long)row * ldc + col, tmp, accumulate);
}

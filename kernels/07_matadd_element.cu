// Matrix sum, one thread per element (seed 003, PMPP ch. 4 coalescing): C = A + B, N x N.
// Consecutive threads of a warp touch consecutive elements of a row: fully coalesced.
#include "common.cuh"

extern "C" __global__ void matadd_element(MM_PARAMS) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N)
        store_result(C, (long long)row * ldc + col,
                     A[(long long)row * lda + col] + B[(long long)row * ldb + col], accumulate);
}

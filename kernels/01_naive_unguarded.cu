// kernel00 of seed 002: one thread per element of C, no bounds check.
// Launched as in the seed with grid = floor(N / block), so at a size that is not a multiple of
// the block the last rows and columns of C are never written: verification must FAIL there.
// It never reads or writes outside the matrices, so the failure is safe to demonstrate.
#include "common.cuh"

extern "C" __global__ void naive_unguarded(MM_PARAMS) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    elem_t tmp = 0;
    for (int k = 0; k < K; ++k) tmp += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
    store_result(C, (long long)row * ldc + col, tmp, accumulate);
}

// kernel01 of seed 002 / MatrixMulKernel of seed 000: one thread per element of C, threadIdx.x
// along columns (consecutive threads read consecutive B and write consecutive C: coalesced),
// guarded so any rectangular M x K . K x N works with grid = ceil(N / block).
// Every operand is read from global memory K times: bandwidth-bound.
#include "common.cuh"

extern "C" __global__ void naive_guarded(MM_PARAMS) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        elem_t tmp = 0;
        for (int k = 0; k < K; ++k)
            tmp += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
        store_result(C, (long long)row * ldc + col, tmp, accumulate);
    }
}

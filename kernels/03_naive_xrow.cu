// kernel1 of seed 004: like naive_guarded, but threadIdx.x runs along the ROWS of C.
// Consecutive threads of a warp now read A and write C a whole row apart (stride lda / ldc):
// uncoalesced accesses, many more memory transactions, slower than naive_guarded.
#include "common.cuh"

extern "C" __global__ void naive_xrow(MM_PARAMS) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < M && col < N) {
        elem_t tmp = 0;
        for (int k = 0; k < K; ++k)
            tmp += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
        store_result(C, (long long)row * ldc + col, tmp, accumulate);
    }
}

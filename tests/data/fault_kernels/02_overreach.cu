// Test-only kernel: naive_guarded, plus one write 40 rows past the last row of C (thread 0 of
// block 0), further than the old fixed guard zone of 33 rows reached.  Its registry entry
// declares that reach, so the guard zone around C must catch the write (oob_writes > 0).
#include "../../../kernels/common.cuh"

extern "C" __global__ void overreach(MM_PARAMS) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < M && col < N) {
        elem_t tmp = 0;
        for (int k = 0; k < K; ++k)
            tmp += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
        store_result(C, (long long)row * ldc + col, tmp, accumulate);
    }
    if (blockIdx.x == 0 && blockIdx.y == 0 && threadIdx.x == 0 && threadIdx.y == 0)
        C[(long long)(M - 1 + 40) * ldc] = elem_t(7);
}

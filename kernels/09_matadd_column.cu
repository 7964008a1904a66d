// Matrix sum, one thread per COLUMN (seed 003): each thread walks down its column; at every
// step the threads of a warp touch consecutive elements of one row: coalesced (seed 003's
// fastest), but only N threads do all the work.
#include "common.cuh"

extern "C" __global__ void matadd_column(MM_PARAMS) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col >= N) return;
    for (int row = 0; row < M; ++row)
        store_result(C, (long long)row * ldc + col,
                     A[(long long)row * lda + col] + B[(long long)row * ldb + col], accumulate);
}

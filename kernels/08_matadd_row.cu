// Matrix sum, one thread per ROW (seed 003): each thread walks its row; at every step the
// threads of a warp touch elements a whole row apart (stride ld): uncoalesced, slow.
#include "common.cuh"

extern "C" __global__ void matadd_row(MM_PARAMS) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= M) return;
    for (int col = 0; col < N; ++col)
        store_result(C, (long long)row * ldc + col,
                     A[(long long)row * lda + col] + B[(long long)row * ldb + col], accumulate);
}

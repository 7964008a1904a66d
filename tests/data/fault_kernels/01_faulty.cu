// Test-only kernel: naive_guarded, except that at m == 13 every thread writes through a null
// pointer, an illegal address that ends the CUDA context (a "sticky" error).  Used to check
// that such a fault costs one configuration, not the job.
#include "../../../kernels/common.cuh"

extern "C" __global__ void faulty(MM_PARAMS) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (M == 13) *((volatile elem_t *)0) = elem_t(1);
    if (row < M && col < N) {
        elem_t tmp = 0;
        for (int k = 0; k < K; ++k)
            tmp += A[(long long)row * lda + k] * B[(long long)k * ldb + col];
        store_result(C, (long long)row * ldc + col, tmp, accumulate);
    }
}

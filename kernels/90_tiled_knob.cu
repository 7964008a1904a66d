// A test kernel, not a rung: seed 002's guarded tiled kernel (05_tiled_guarded.cu) with a knob
// that adds a known share of work, for testing the comparison (issue "a comparison that sees a
// 1% change"): each thread does WORK per mille of its K inner-product steps, the product's and
// (WORK - 1000) per mille of them again after it, on the last tile still in shared memory, into
// a sum that changes nothing it stores.  WORK = 1000 is tiled_guarded's work; the share each
// WORK adds to the time is measured, not assumed (docs/method.md, "Paired comparison").
#include "common.cuh"

#ifndef WORK
#define WORK 1000
#endif

extern "C" __global__ void tiled_knob(MM_PARAMS) {
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
    // the knob: K * (WORK - 1000) / 1000 more steps over the last tile; the sum is stored times
    // zero, which IEEE arithmetic forbids the compiler to drop (x * 0 is NaN for x = inf)
    elem_t extra = 0;
    const int steps = (int)(((long long)K * (WORK - 1000)) / 1000);
    for (int j = 0; j < steps; ++j) extra += sA[ty][j % TILE] * sB[j % TILE][tx];
    if (row < M && col < N)
        store_result(C, (long long)row * ldc + col, tmp + extra * elem_t(0), accumulate);
}

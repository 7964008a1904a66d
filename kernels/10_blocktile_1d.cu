// 1-D register blocking (siboehm/SGEMM_CUDA kernel 4): each block computes a BM x BN tile of C
// from BM x BK and BK x BN tiles of A and B in shared memory; each of its BM*BN/TM threads keeps
// TM results of one column in registers.  One value of B read from shared memory now feeds TM
// multiply-adds instead of one, so shared-memory traffic per FLOP drops by TM: the tiled
// kernel's limit.  Guarded loads and stores: any M, N, K and leading dimensions.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__(BM * BN / TM) blocktile_1d(MM_PARAMS) {
    __shared__ elem_t As[BM * BK];
    __shared__ elem_t Bs[BK * BN];
    constexpr int threads = BM * BN / TM;
    const int tid = threadIdx.x;
    const int threadCol = tid % BN, threadRow = tid / BN;  // threadRow in [0, BM / TM)
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    elem_t acc[TM];
#pragma unroll
    for (int i = 0; i < TM; ++i) acc[i] = elem_t(0);
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int i = tid; i < BM * BK; i += threads) {  // A tile, row-major, zero outside A
            const long long r = row0 + i / BK;
            const int c = k0 + i % BK;
            As[i] = (r < M && c < K) ? A[r * lda + c] : elem_t(0);
        }
        for (int i = tid; i < BK * BN; i += threads) {  // B tile, row-major, zero outside B
            const int r = k0 + i / BN;
            const long long c = col0 + i % BN;
            Bs[i] = (r < K && c < N) ? B[(long long)r * ldb + c] : elem_t(0);
        }
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
            const elem_t b = Bs[dot * BN + threadCol];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] += As[(threadRow * TM + i) * BK + dot] * b;
        }
        __syncthreads();
    }
    const long long col = col0 + threadCol;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = row0 + threadRow * TM + i;
        if (row < M && col < N) store_result(C, row * ldc + col, acc[i], accumulate);
    }
}

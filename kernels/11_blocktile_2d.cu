// 2-D register blocking (siboehm/SGEMM_CUDA kernel 5): each of a block's (BM/TM) x (BN/TN)
// threads computes a TM x TN patch of the BM x BN tile of C.  Per step along K it loads TM
// values of A and TN values of B from shared memory into registers and does TM*TN multiply-adds
// with them: TM*TN FMAs per TM+TN shared-memory loads, against TM per TM+1 for 1-D blocking.
// The accumulators stay in registers (TM*TN of them per thread).  Guarded loads and stores: any
// M, N, K and leading dimensions.
#include "common.cuh"

extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN))
    blocktile_2d(MM_PARAMS) {
    __shared__ elem_t As[BM * BK];
    __shared__ elem_t Bs[BK * BN];
    constexpr int threads = (BM / TM) * (BN / TN);
    const int tid = threadIdx.x;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    elem_t acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = elem_t(0);
    elem_t regM[TM], regN[TN];
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
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = As[(threadRow * TM + i) * BK + dot];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = Bs[dot * BN + threadCol * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const long long row = row0 + threadRow * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const long long col = col0 + threadCol * TN + j;
            if (row < M && col < N) store_result(C, row * ldc + col, acc[i][j], accumulate);
        }
    }
}

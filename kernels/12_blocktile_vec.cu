// 2-D register blocking with a transposed A tile and 16-byte loads (siboehm/SGEMM_CUDA kernel 6),
// float32 only.  The A tile is stored transposed in shared memory (As[k][row]), so the TM values
// of A a thread needs at one step along K are contiguous, like the TN values of B: both come in
// as float4 loads, and a warp's A loads no longer fall into a few banks.  Global loads of A and
// B are float4 where the four values are inside the matrix and the matrix is 16-byte aligned
// with a leading dimension divisible by 4 (checked once per launch); the edges and any other
// layout load element by element, so any M, N, K and leading dimensions stay correct.
#include "common.cuh"

template <typename T> struct is_float32 { static constexpr bool value = false; };
template <> struct is_float32<float> { static constexpr bool value = true; };
static_assert(is_float32<elem_t>::value, "blocktile_vec moves float4: float32 only");

extern "C" __global__ void __launch_bounds__((BM / TM) * (BN / TN))
    blocktile_vec(MM_PARAMS) {
    __shared__ __align__(16) elem_t As[BK * BM];  // transposed: As[k * BM + row]
    __shared__ __align__(16) elem_t Bs[BK * BN];  // Bs[k * BN + col]
    constexpr int threads = (BM / TM) * (BN / TN);
    const int tid = threadIdx.x;
    const int threadCol = tid % (BN / TN), threadRow = tid / (BN / TN);
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    const bool vecA = ((reinterpret_cast<unsigned long long>(A) & 15) == 0) && lda % 4 == 0;
    const bool vecB = ((reinterpret_cast<unsigned long long>(B) & 15) == 0) && ldb % 4 == 0;
    elem_t acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = elem_t(0);
    elem_t regM[TM], regN[TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int f = tid; f < BM * BK / 4; f += threads) {  // A: 4 consecutive k of one row
            const int r = f / (BK / 4), c = (f % (BK / 4)) * 4;
            const long long gr = row0 + r;
            const int gc = k0 + c;
            float4 v;
            if (vecA && gr < M && gc + 3 < K) {
                v = *reinterpret_cast<const float4 *>(&A[gr * lda + gc]);
            } else {
                v.x = (gr < M && gc < K) ? A[gr * lda + gc] : 0.f;
                v.y = (gr < M && gc + 1 < K) ? A[gr * lda + gc + 1] : 0.f;
                v.z = (gr < M && gc + 2 < K) ? A[gr * lda + gc + 2] : 0.f;
                v.w = (gr < M && gc + 3 < K) ? A[gr * lda + gc + 3] : 0.f;
            }
            As[(c + 0) * BM + r] = v.x;
            As[(c + 1) * BM + r] = v.y;
            As[(c + 2) * BM + r] = v.z;
            As[(c + 3) * BM + r] = v.w;
        }
        for (int f = tid; f < BK * BN / 4; f += threads) {  // B: 4 consecutive columns
            const int r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            const int gr = k0 + r;
            const long long gc = col0 + c;
            float4 v;
            if (vecB && gr < K && gc + 3 < N) {
                v = *reinterpret_cast<const float4 *>(&B[(long long)gr * ldb + gc]);
            } else {
                const elem_t *row = &B[(long long)gr * ldb];
                v.x = (gr < K && gc < N) ? row[gc] : 0.f;
                v.y = (gr < K && gc + 1 < N) ? row[gc + 1] : 0.f;
                v.z = (gr < K && gc + 2 < N) ? row[gc + 2] : 0.f;
                v.w = (gr < K && gc + 3 < N) ? row[gc + 3] : 0.f;
            }
            *reinterpret_cast<float4 *>(&Bs[r * BN + c]) = v;
        }
        __syncthreads();
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
#pragma unroll
            for (int i = 0; i < TM; i += 4) {
                const float4 a =
                    *reinterpret_cast<const float4 *>(&As[dot * BM + threadRow * TM + i]);
                regM[i] = a.x, regM[i + 1] = a.y, regM[i + 2] = a.z, regM[i + 3] = a.w;
            }
#pragma unroll
            for (int j = 0; j < TN; j += 4) {
                const float4 b =
                    *reinterpret_cast<const float4 *>(&Bs[dot * BN + threadCol * TN + j]);
                regN[j] = b.x, regN[j + 1] = b.y, regN[j + 2] = b.z, regN[j + 3] = b.w;
            }
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

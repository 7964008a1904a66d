// Warp tiling (siboehm/SGEMM_CUDA kernel 10), float32: the block's BM x BN tile is split into
// WM x WN warp tiles, and each warp walks its tile in WMITER x WNITER sub-tiles, each of its 32
// threads computing a TM x TN patch of every sub-tile.  A warp's threads now read a compact
// stretch of the A and B tiles at each step along K (shared-memory loads broadcast within the
// warp), and a thread's patches lie WSUBM rows and WSUBN columns apart, so its loads of A and B
// from shared memory are float4 and conflict-free.  Loads are those of blocktile_vec: the A tile
// transposed in shared memory, float4 global loads where the matrix allows, element by element
// at the edges: any M, N, K and leading dimensions.
#include "common.cuh"

template <typename T> struct is_float32 { static constexpr bool value = false; };
template <> struct is_float32<float> { static constexpr bool value = true; };
static_assert(is_float32<elem_t>::value, "warptile moves float4: float32 only");

constexpr int WARPS = (BM / WM) * (BN / WN);
constexpr int THREADS = 32 * WARPS;
constexpr int WMITER = (WM * WN) / (32 * TM * TN * WNITER);
constexpr int WSUBM = WM / WMITER, WSUBN = WN / WNITER;
static_assert(WMITER >= 1 && (WSUBN / TN) * (WSUBM / TM) == 32, "a sub-tile is one warp's");

extern "C" __global__ void __launch_bounds__(THREADS) warptile(MM_PARAMS) {
    __shared__ __align__(16) elem_t As[BK * BM];  // transposed: As[k * BM + row]
    __shared__ __align__(16) elem_t Bs[BK * BN];  // Bs[k * BN + col]
    const int tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int warpRow = warp / (BN / WN), warpCol = warp % (BN / WN);
    const int tRow = lane / (WSUBN / TN), tCol = lane % (WSUBN / TN);
    const long long row0 = (long long)blockIdx.y * BM, col0 = (long long)blockIdx.x * BN;
    const bool vecA = ((reinterpret_cast<unsigned long long>(A) & 15) == 0) && lda % 4 == 0;
    const bool vecB = ((reinterpret_cast<unsigned long long>(B) & 15) == 0) && ldb % 4 == 0;
    elem_t acc[WMITER * TM][WNITER * TN];
#pragma unroll
    for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
        for (int j = 0; j < WNITER * TN; ++j) acc[i][j] = 0.f;
    elem_t regM[WMITER * TM], regN[WNITER * TN];
    for (int k0 = 0; k0 < K; k0 += BK) {
        for (int f = tid; f < BM * BK / 4; f += THREADS) {  // A: 4 consecutive k of one row
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
        for (int f = tid; f < BK * BN / 4; f += THREADS) {  // B: 4 consecutive columns
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
            for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
                for (int i = 0; i < TM; i += 4) {
                    const float4 a = *reinterpret_cast<const float4 *>(
                        &As[dot * BM + warpRow * WM + wm * WSUBM + tRow * TM + i]);
                    regM[wm * TM + i] = a.x, regM[wm * TM + i + 1] = a.y;
                    regM[wm * TM + i + 2] = a.z, regM[wm * TM + i + 3] = a.w;
                }
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN; j += 4) {
                    const float4 b = *reinterpret_cast<const float4 *>(
                        &Bs[dot * BN + warpCol * WN + wn * WSUBN + tCol * TN + j]);
                    regN[wn * TN + j] = b.x, regN[wn * TN + j + 1] = b.y;
                    regN[wn * TN + j + 2] = b.z, regN[wn * TN + j + 3] = b.w;
                }
#pragma unroll
            for (int i = 0; i < WMITER * TM; ++i)
#pragma unroll
                for (int j = 0; j < WNITER * TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int wm = 0; wm < WMITER; ++wm)
#pragma unroll
        for (int i = 0; i < TM; ++i) {
            const long long row = row0 + warpRow * WM + wm * WSUBM + tRow * TM + i;
#pragma unroll
            for (int wn = 0; wn < WNITER; ++wn)
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const long long col = col0 + warpCol * WN + wn * WSUBN + tCol * TN + j;
                    if (row < M && col < N)
                        store_result(C, row * ldc + col, acc[wm * TM + i][wn * TN + j],
                                     accumulate);
                }
        }
}

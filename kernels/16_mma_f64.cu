// Tensor cores in FP64 (the double-precision MMA, DMMA), float64 in and out: the structure of
// mma_tf32 (a STAGES-deep cp.async ring of A and B tiles, warp tiles walked in mma.sync steps)
// with Hopper's double-precision shapes, 16 x 8 x MMAK (mma.sync.m16n8k4 or m16n8k8 .f64, sm_90
// and newer; one m16n8k8 does the work of two m16n8k4 in one instruction).
// Every product and sum is an IEEE double operation, so the result is verified with the float64
// tolerance and compared with cuBLAS DGEMM.  Rows of the shared tiles are padded by 4 doubles,
// which spreads a fragment load's 32 lanes over all banks.  Loads are guarded (cp.async
// zero-fills what lies outside the matrix): any M, N, K and leading dimension; 16-byte copies
// (two doubles) where A or B is 16-byte aligned with an even leading dimension, 8-byte copies
// otherwise.
#include "common.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "mma_f64 uses mma.sync.m16n8k4.f64, which needs sm_90 or newer"
#endif

template <typename T> struct is_float64 { static constexpr bool value = false; };
template <> struct is_float64<double> { static constexpr bool value = true; };
static_assert(is_float64<elem_t>::value, "mma_f64 multiplies float64 matrices");

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int MI = WM / 16, NI = WN / 8;  // mma tiles (16 x 8) per warp tile
constexpr int AS = BK + 4, BS = BN + 4;   // padded row strides of the A and B tiles (doubles)
constexpr int A_STAGE = BM * AS, B_STAGE = BK * BS;
static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % MMAK == 0, "whole mma tiles");
static_assert(MMAK == 4 || MMAK == 8, "the f64 mma shapes used here: m16n8k4 and m16n8k8");
static_assert((BM * BK / 2) % THREADS == 0 && (BK * BN / 2) % THREADS == 0, "whole copies per thread");

__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// rows x cols of P (leading dimension ld) from (r0, c0) into a shared tile with row stride S;
// what lies outside the rows x cols matrix is zero-filled (cp.async with a shorter source)
template <int ROWS, int COLS, int S>
__device__ __forceinline__ void load_tile(elem_t *tile, const elem_t *__restrict__ P, long long r0,
                                          long long c0, long long rows, long long cols,
                                          long long ld, bool vec) {
    constexpr int PER_ROW = COLS / 2;
#pragma unroll
    for (int q = 0; q < ROWS * COLS / 2 / THREADS; ++q) {
        const int f = threadIdx.x + q * THREADS, r = f / PER_ROW, c = (f % PER_ROW) * 2;
        const long long gr = r0 + r, gc = c0 + c;
        const unsigned dst = smem_addr(tile + r * S + c);
        if (vec) {
            const long long left = gr < rows ? cols - gc : 0;
            const int valid = left <= 0 ? 0 : (left >= 2 ? 2 : 1);
            const elem_t *src = valid ? P + gr * ld + gc : P;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
                         "r"(valid * 8));
        } else {
#pragma unroll
            for (int e = 0; e < 2; ++e) {
                const bool in = gr < rows && gc + e < cols;
                const elem_t *src = in ? P + gr * ld + gc + e : P;
                asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst + 8 * e),
                             "l"(src), "r"(in ? 8 : 0));
            }
        }
    }
}

extern "C" __global__ void __launch_bounds__(THREADS) mma_f64(MM_PARAMS) {
    extern __shared__ __align__(16) unsigned char smem[];
    elem_t *As = reinterpret_cast<elem_t *>(smem);  // STAGES x [BM][AS]
    elem_t *Bs = As + STAGES * A_STAGE;              // STAGES x [BK][BS]
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;  // the lane's group and place in it (mma fragments)
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const long long row0 = static_cast<long long>(blockIdx.y) * BM;
    const long long col0 = static_cast<long long>(blockIdx.x) * BN;
    const bool vecA = (reinterpret_cast<unsigned long long>(A) & 15) == 0 && lda % 2 == 0;
    const bool vecB = (reinterpret_cast<unsigned long long>(B) & 15) == 0 && ldb % 2 == 0;
    const int ktiles = (K + BK - 1) / BK;
    auto load = [&](int stage, int kt) {
        load_tile<BM, BK, AS>(As + stage * A_STAGE, A, row0, static_cast<long long>(kt) * BK, M,
                              K, lda, vecA);
        load_tile<BK, BN, BS>(Bs + stage * B_STAGE, B, static_cast<long long>(kt) * BK, col0, K,
                              N, ldb, vecB);
    };
    double acc[MI][NI][4];
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) load(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        // tile kt has landed (at most STAGES - 2 younger copies still in flight), and every warp
        // is done with the stage the next copy overwrites (it held tile kt - 1)
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads();
        if (kt + STAGES - 1 < ktiles) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        asm volatile("cp.async.commit_group;\n" ::);
        const elem_t *a = As + (kt % STAGES) * A_STAGE;
        const elem_t *b = Bs + (kt % STAGES) * B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += MMAK) {
            // fragments of a 16 x MMAK slice of A and an MMAK x 8 slice of B: lane (g, t) holds
            // A rows g and g + 8 at columns t (+ 4), B column g at rows t (+ 4)
            double af[MI][MMAK / 2], bf[NI][MMAK / 4];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const elem_t *p = a + (wm0 + i * 16 + g) * AS + kk + t;
#pragma unroll
                for (int h = 0; h < MMAK / 4; ++h) {
                    af[i][2 * h] = p[4 * h];
                    af[i][2 * h + 1] = p[8 * AS + 4 * h];
                }
            }
#pragma unroll
            for (int j = 0; j < NI; ++j)
#pragma unroll
                for (int h = 0; h < MMAK / 4; ++h)
                    bf[j][h] = b[(kk + t + 4 * h) * BS + wn0 + j * 8 + g];
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    if constexpr (MMAK == 4)
                        asm volatile(
                            "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                            "{%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                            : "+d"(acc[i][j][0]), "+d"(acc[i][j][1]), "+d"(acc[i][j][2]),
                              "+d"(acc[i][j][3])
                            : "d"(af[i][0]), "d"(af[i][1]), "d"(bf[j][0]));
                    else
                        asm volatile(
                            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                            "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                            : "+d"(acc[i][j][0]), "+d"(acc[i][j][1]), "+d"(acc[i][j][2]),
                              "+d"(acc[i][j][3])
                            : "d"(af[i][0]), "d"(af[i][1]), "d"(af[i][2]), "d"(af[i][3]),
                              "d"(bf[j][0]), "d"(bf[j][1]));
                }
        }
    }
    asm volatile("cp.async.wait_all;\n" ::);
    // a 16 x 8 result fragment: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const long long row = row0 + wm0 + i * 16 + g + (e / 2) * 8;
                const long long col = col0 + wn0 + j * 8 + 2 * t + e % 2;
                if (row < M && col < N) store_result(C, row * ldc + col, acc[i][j][e], accumulate);
            }
}

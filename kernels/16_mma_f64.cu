// Tensor cores in FP64 (the double-precision MMA, DMMA), float64 in and out: the structure of
// mma_tf32 (a STAGES-deep cp.async ring of A and B tiles, warp tiles walked in mma.sync steps)
// with Hopper's double-precision shapes, 16 x 8 x MMAK (mma.sync.m16n8k4, m16n8k8 or m16n8k16
// .f64, sm_90 and newer; one m16n8k16 does the work of four m16n8k4 in one instruction).
// Every product and sum is an IEEE double operation, so the result is verified with the float64
// tolerance and compared with cuBLAS DGEMM.  Rows of the shared tiles are padded by 4 doubles,
// which spreads a fragment load's 32 lanes over all banks.  Loads are guarded (cp.async
// zero-fills what lies outside the matrix, tile_copy.cuh): any M, N, K and leading dimension;
// 16-byte copies (two doubles) where A or B is 16-byte aligned with an even leading dimension,
// set up once per block, 8-byte copies otherwise.
#include "tile_copy.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#error "mma_f64 uses mma.sync.m16n8k4.f64, which needs sm_90 or newer"
#endif

template <typename T> struct is_float64 { static constexpr bool value = false; };
template <> struct is_float64<double> { static constexpr bool value = true; };
static_assert(is_float64<elem_t>::value, "mma_f64 multiplies float64 matrices");

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int MI = WM / 16, NI = WN / 8;  // mma tiles (16 x 8) per warp tile
constexpr int AS = BK + 4, BS = BN + 4;   // padded row strides of the A and B tiles (doubles)
static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % MMAK == 0, "whole mma tiles");
static_assert(MMAK == 4 || MMAK == 8 || MMAK == 16, "the f64 mma shapes: m16n8k4, m16n8k8, m16n8k16");
static_assert((BM * BK / 2) % THREADS == 0 && (BK * BN / 2) % THREADS == 0, "whole copies per thread");
using Tiles = PaddedTiles<BM, BN, BK, AS, BS, THREADS>;  // the shared tiles (tile_copy.cuh)

extern "C" __global__ void __launch_bounds__(THREADS) mma_f64(MM_PARAMS) {
    extern __shared__ __align__(16) unsigned char smem[];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;  // the lane's group and place in it (mma fragments)
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const long long row0 = static_cast<long long>(blockIdx.y) * BM;
    const long long col0 = static_cast<long long>(blockIdx.x) * BN;
    const int ktiles = (K + BK - 1) / BK;
    elem_t *As = reinterpret_cast<elem_t *>(smem);  // STAGES x [BM][AS]
    elem_t *Bs = As + STAGES * Tiles::A_STAGE;       // STAGES x [BK][BS]
    const auto load = Tiles::loader(As, Bs, A, B, row0, col0, M, N, K, lda, ldb);
    double acc[MI][NI][4];
    zero_fragments(acc);

    const CpAsyncRing<STAGES, decltype(load)> ring(load, ktiles);
    for (int kt = 0; kt < ktiles; ++kt) {
        const int stage = ring.next(kt);
        const elem_t *a = As + stage * Tiles::A_STAGE, *b = Bs + stage * Tiles::B_STAGE;
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
                    else if constexpr (MMAK == 8)
                        mma_f64_m16n8k8(acc[i][j], reinterpret_cast<const double (&)[4]>(af[i]),
                                        reinterpret_cast<const double (&)[2]>(bf[j]));
                    else
                        asm volatile(
                            "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
                            "{%4, %5, %6, %7, %8, %9, %10, %11}, {%12, %13, %14, %15}, "
                            "{%0, %1, %2, %3};\n"
                            : "+d"(acc[i][j][0]), "+d"(acc[i][j][1]), "+d"(acc[i][j][2]),
                              "+d"(acc[i][j][3])
                            : "d"(af[i][0]), "d"(af[i][1]), "d"(af[i][2]), "d"(af[i][3]),
                              "d"(af[i][4]), "d"(af[i][5]), "d"(af[i][6]), "d"(af[i][7]),
                              "d"(bf[j][0]), "d"(bf[j][1]), "d"(bf[j][2]), "d"(bf[j][3]));
                }
        }
    }
    ring.drain();
    store_fragments(C, acc, row0 + wm0, col0 + wn0, g, t, M, N, ldc, accumulate);
}

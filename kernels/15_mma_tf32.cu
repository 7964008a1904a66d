// Tensor cores in TF32 (mma.sync), float32 in and out: the block tile's A and B tiles go from
// global to shared memory with cp.async in a STAGES-deep ring (the copies of the next tiles are
// in flight while the tensor cores work on the current one), each warp walks its WM x WN warp
// tile in 16 x 8 x 8 mma.sync steps, its A and B fragments read from shared memory rows padded
// so that the 32 lanes of a fragment load hit 32 different banks.  Inputs are rounded to TF32
// (cvt.rna: 10 explicit mantissa bits), products are summed in FP32: compared with cuBLAS in
// TF32 mode (`cublas_tf32`), verified with the TF32 tolerance (docs/method.md).  Loads are
// guarded (cp.async zero-fills what lies outside the matrix, tile_copy.cuh): any M, N, K and
// leading dimension; 16-byte copies, set up once per block, where A or B is 16-byte aligned with a
// leading dimension divisible by 4, 4-byte copies otherwise.
#include "tile_copy.cuh"

template <typename T> struct is_float32 { static constexpr bool value = false; };
template <> struct is_float32<float> { static constexpr bool value = true; };
static_assert(is_float32<elem_t>::value, "mma_tf32 multiplies float32 matrices");

constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN, THREADS = 32 * WARPS_M * WARPS_N;
constexpr int MI = WM / 16, NI = WN / 8;  // mma tiles (16 x 8) per warp tile
constexpr int AS = BK + 4, BS = BN + 8;   // padded row strides of the A and B tiles (floats)
static_assert(WM % 16 == 0 && WN % 8 == 0 && BK % 8 == 0, "whole mma tiles");
static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0, "whole copies per thread");
using Tiles = PaddedTiles<BM, BN, BK, AS, BS, THREADS>;  // the shared tiles (tile_copy.cuh)

extern "C" __global__ void __launch_bounds__(THREADS) mma_tf32(MM_PARAMS) {
    extern __shared__ __align__(16) unsigned char smem[];
    elem_t *As = reinterpret_cast<elem_t *>(smem);  // STAGES x [BM][AS]
    elem_t *Bs = As + STAGES * Tiles::A_STAGE;       // STAGES x [BK][BS]
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;  // the lane's group and place in it (mma fragments)
    const int wm0 = (warp / WARPS_N) * WM, wn0 = (warp % WARPS_N) * WN;
    const long long row0 = static_cast<long long>(blockIdx.y) * BM;
    const long long col0 = static_cast<long long>(blockIdx.x) * BN;
    const int ktiles = (K + BK - 1) / BK;
    const auto load = Tiles::loader(As, Bs, A, B, row0, col0, M, N, K, lda, ldb);
    float acc[MI][NI][4];
    zero_fragments(acc);

    const CpAsyncRing<STAGES, decltype(load)> ring(load, ktiles);
    for (int kt = 0; kt < ktiles; ++kt) {
        const int stage = ring.next(kt);
        const elem_t *a = As + stage * Tiles::A_STAGE, *b = Bs + stage * Tiles::B_STAGE;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            unsigned af[MI][4], bf[NI][2];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
                const elem_t *p = a + (wm0 + i * 16 + g) * AS + kk + t;
                af[i][0] = to_tf32(p[0]);
                af[i][1] = to_tf32(p[8 * AS]);
                af[i][2] = to_tf32(p[4]);
                af[i][3] = to_tf32(p[8 * AS + 4]);
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) {
                const elem_t *p = b + (kk + t) * BS + wn0 + j * 8 + g;
                bf[j][0] = to_tf32(p[0]);
                bf[j][1] = to_tf32(p[4 * BS]);
            }
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int j = 0; j < NI; ++j)
                    asm volatile(
                        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, "
                        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                        : "+f"(acc[i][j][0]), "+f"(acc[i][j][1]), "+f"(acc[i][j][2]),
                          "+f"(acc[i][j][3])
                        : "r"(af[i][0]), "r"(af[i][1]), "r"(af[i][2]), "r"(af[i][3]),
                          "r"(bf[j][0]), "r"(bf[j][1]));
        }
    }
    ring.drain();
    store_fragments(C, acc, row0 + wm0, col0 + wn0, g, t, M, N, ldc, accumulate);
}

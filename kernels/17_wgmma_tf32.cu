// Hopper's warpgroup MMA (wgmma, sm_90a) in TF32, float32 in and out.  Four warps (a warpgroup)
// issue one asynchronous m64nBMk8 product together, so the tensor cores see 64 x BM x 8 at a time
// instead of mma.sync's 16 x 8 x 8 per warp, and the operand held in shared memory goes straight
// to them without passing through registers.  wgmma in TF32 takes its shared-memory operands only
// K-major (K contiguous), and our A (m x k, row-major) is K-major but B (k x n, row-major) is not,
// so the kernel computes C^T = B^T . A^T: the wgmma "A" operand is B^T, read from a padded
// [BK][BN] shared tile into registers (the mma.sync fragment layout, rounded with cvt.rna), and
// the wgmma "B" operand is A, copied by cp.async into shared memory in the canonical layout of
// 8-row x 16-byte core matrices (no swizzle) and described to the tensor cores by a matrix
// descriptor; the tensor cores read it as TF32 (the low 13 bits of each float ignored).  A block
// is WG warpgroups side by side along n (BN = 64 WG columns of C), each owning a 64 x BM tile of
// C^T; tiles go through a STAGES-deep cp.async ring as in mma_tf32.  Loads are guarded by
// cp.async's zero fill (any M, N, K; tile_copy.cuh); 16-byte copies, set up once per block, where
// A or B is 16-byte aligned with a leading dimension divisible by 4, 4-byte copies otherwise.
#include "hopper.cuh"  // tile_copy.cuh, the wgmma wrappers

template <typename T> struct is_float32 { static constexpr bool value = false; };
template <> struct is_float32<float> { static constexpr bool value = true; };
static_assert(is_float32<elem_t>::value, "wgmma_tf32 multiplies float32 matrices");

constexpr int BN = 64 * WG, THREADS = 128 * WG;
constexpr int BS = BN + 8;               // padded row stride of the B tile (floats)
constexpr int A_STAGE = BM * BK, B_STAGE = BK * BS;
static_assert(BM == 64 || BM == 128 || BM == 256, "wgmma n of 64, 128 or 256");
static_assert(BK % 8 == 0, "whole k8 steps");
using LayoutA = CoreMatrices<BM, BK, THREADS>;  // the A tile in core matrices (tile_copy.cuh)
using LayoutB = RowMajor<BK, BN, BS, THREADS>;  // the B tile, rows padded to BS floats
constexpr int CM_BYTES = 128;        // one core matrix: 8 rows x 16 bytes
constexpr int SBO = LayoutA::SBO;    // bytes between core matrices 8 rows apart
static_assert((BM * BK / 4) % THREADS == 0 && (BK * BN / 4) % THREADS == 0, "whole copies per thread");

extern "C" __global__ void __launch_bounds__(THREADS) wgmma_tf32(MM_PARAMS) {
    extern __shared__ __align__(128) unsigned char smem[];
    const unsigned as0 = smem_addr(smem);                           // STAGES x A tile
    const unsigned bs0 = as0 + STAGES * A_STAGE * sizeof(elem_t);   // STAGES x [BK][BS]
    const elem_t *Bs = reinterpret_cast<const elem_t *>(smem) + STAGES * A_STAGE;
    const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
    const int g = lane / 4, t = lane % 4;
    const int n0 = wg * 64 + warp * 16;  // this warp's 16 columns of C (rows of C^T)
    const long long row0 = static_cast<long long>(blockIdx.y) * BM;
    const long long col0 = static_cast<long long>(blockIdx.x) * BN;
    const bool vecA = (reinterpret_cast<unsigned long long>(A) & 15) == 0 && lda % 4 == 0;
    const bool vecB = (reinterpret_cast<unsigned long long>(B) & 15) == 0 && ldb % 4 == 0;
    const int ktiles = (K + BK - 1) / BK;
    const TileCopy<BM, BK, true, LayoutA> copyA(row0, M);
    const TileCopy<BK, BN, false, LayoutB> copyB(col0, N);
    auto load = [&](int stage, int kt) {
        const long long k0 = static_cast<long long>(kt) * BK;
        const unsigned as = as0 + stage * A_STAGE * sizeof(elem_t);
        const unsigned bs = bs0 + stage * B_STAGE * sizeof(elem_t);
        if (vecA) copyA.issue(as, A + row0 * lda + k0, lda, K - k0, A);
        else copy_tile_elementwise<BM, BK, THREADS, LayoutA>(as, A, row0, k0, M, K, lda);
        if (vecB) copyB.issue(bs, B + k0 * ldb + col0, ldb, K - k0, B);
        else copy_tile_elementwise<BK, BN, THREADS, LayoutB>(bs, B, k0, col0, K, N, ldb);
    };
    float d[BM / 2];
#pragma unroll
    for (int i = 0; i < BM / 2; ++i) d[i] = 0.f;

#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < ktiles) load(s, s);
        asm volatile("cp.async.commit_group;\n" ::);
    }
    for (int kt = 0; kt < ktiles; ++kt) {
        // tile kt has landed; the fence hands this thread's copies to the tensor cores' (async)
        // proxy; every warpgroup finished with the stage the next copy overwrites (tile kt - 1)
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
        __syncthreads();
        if (kt + STAGES - 1 < ktiles) load((kt + STAGES - 1) % STAGES, kt + STAGES - 1);
        asm volatile("cp.async.commit_group;\n" ::);
        const int stage = kt % STAGES;
        const elem_t *b = Bs + stage * B_STAGE;
        unsigned a[BK / 8][4];  // B^T fragments: (n0 + g [+8], kk + t [+4])
#pragma unroll
        for (int s = 0; s < BK / 8; ++s) {
            const elem_t *p = b + (8 * s + t) * BS + n0 + g;
            a[s][0] = to_tf32(p[0]);
            a[s][1] = to_tf32(p[8]);
            a[s][2] = to_tf32(p[4 * BS]);
            a[s][3] = to_tf32(p[4 * BS + 8]);
        }
        asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
        for (int s = 0; s < BK / 8; ++s)
            wgmma_tf32_rs<BM>(d, a[s],
                              descriptor_interleave(as0 + stage * A_STAGE * sizeof(elem_t) +
                                                        2 * s * CM_BYTES,
                                                    CM_BYTES, SBO),
                              1);
        asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
        asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
#pragma unroll
        for (int i = 0; i < BM / 2; ++i) asm volatile("" : "+f"(d[i])::"memory");
    }
    asm volatile("cp.async.wait_all;\n" ::);
    // accumulator (C^T) register 4j + e of lane (g, t): row n0 + g + 8 (e / 2) of C^T, column
    // 8j + 2t + e % 2, i.e. C[row0 + 8j + 2t + e % 2][col0 + n0 + g + 8 (e / 2)]
#pragma unroll
    for (int j = 0; j < BM / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
            const long long row = row0 + 8 * j + 2 * t + e % 2;
            const long long col = col0 + n0 + g + 8 * (e / 2);
            if (row < M && col < N) store_result(C, row * ldc + col, d[4 * j + e], accumulate);
        }
}

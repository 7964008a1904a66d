// persistent_bf16 for FP8 (e4m3) inputs (wgmma k = 32), each k-tile's sums moved to FP32
// registers while the next k-tile's wgmmas run: what the rung does, and the lab notebook's "An FP8
// rung" its measurements.
//   - FP8 wgmma reads both operands K-major from shared memory: A (m x k) row-major as the other
//     rungs, B given transposed, Bt (n x k) row-major, as cuBLASLt's FP8 matmul takes it
//     ("TN"); both tiles are rows of 128 bytes (BK = 128 e4m3 values) in 128-byte swizzle, and
//     a wgmma (k = 32) reads 32 bytes of each row;
//   - the tensor cores keep only about 14 bits in the sums of FP8 products (core/elements.py),
//     so each consumer sums each k-tile (128 products: 4 wgmmas) into a set of partial sums
//     (`parts`) and adds them to its FP32 accumulators `d` on the CUDA cores (DeepSeek-V3's
//     promotion, every 128): the bound of docs/method.md with promoted_every = BK; the other
//     consumer warpgroup's wgmmas keep
//     the tensor cores busy meanwhile, and in chains of CHAIN k-tiles (CHAIN > 1) so do the
//     consumer's own: two sets of partial sums, the next k-tile's wgmmas running into one while
//     the other is added to `d`;
//   - per-tensor scales: C = scale * (A . B) (+ C where accumulate), scale = scale_a * scale_b
//     of the dequantisation, applied once in the epilogue;
//   - one block per multiprocessor walking the tiles in groups of GROUP tile rows, CLUSTER
//     blocks along m sharing each Bt tile by multicast (each loads BN / CLUSTER of its rows),
//     as persistent_bf16; no split-K yet.
#include <cuda_fp8.h>

#include <type_traits>

#include "hopper.cuh"

#ifndef STAGE_BYTES
#error "BM, BN, STAGES, CLUSTER, GROUP and the registry's derived facts must be defined"
#endif

constexpr int WM = BM / CONSUMERS;  // rows of C per consumer warpgroup
constexpr int B_ROWS = BN / CLUSTER;  // rows of a Bt tile each block of a cluster loads
constexpr int PRODUCER_REGS = CLUSTER > 1 ? 48 : 40, CONSUMER_REGS = CLUSTER > 1 ? 224 : 232;
static_assert((168 - PRODUCER_REGS) * 128 >= (CONSUMER_REGS - 168) * 256,
              "the consumers take no more registers than the producer gives back");
static_assert(WM % 64 == 0, "each consumer computes whole m64 products");
static_assert(BN % 64 == 0 && WM / 64 * BN <= 128,
              "d and each set of partial sums: at most 64 registers a thread each (192 in all)");
static_assert(CHAIN >= 1, "k-tiles in a chain of promotions");
static_assert(BN % (8 * CLUSTER) == 0, "the Bt rows divide among the cluster in 8-row groups");
static_assert(sizeof(elem_t) == 1 && sizeof(out_t) == 4, "e4m3 in, float32 out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    persistent_fp8(const __grid_constant__ CUtensorMap mapA,
                   const __grid_constant__ CUtensorMap mapBt, out_t *__restrict__ C, int M,
                   int N, int K, int ldc, int accumulate, float scale) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    unsigned char *smem = align_1024(smem_raw);
    unsigned char *As = smem;                     // STAGES x [BM][128 bytes]
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x [BN][128 bytes]

    const int wg = threadIdx.x / 128;
    const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
    const int cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
    const int rows = (M + BM * CLUSTER - 1) / (BM * CLUSTER), cols = (N + BN - 1) / BN;
    const int tiles = rows * cols;
    const int ktiles = (K + BK - 1) / BK;

    ring_init(full, empty, STAGES, CONSUMERS * CLUSTER, CLUSTER);

    if (wg == 0) {  // producer
        // registers: 168 a thread at launch; the producer gives back what the consumers take
        // ((168 - 40) x 128 = (232 - 168) x 256; in clusters the multicast loop needs 48:
        // (168 - 48) x 128 >= (224 - 168) x 256)
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            unsigned it = 0;  // k-tiles issued so far: the ring position
            for (int t = cluster; t < tiles; t += clusters) {
                int tm, tn;
                grouped_tile<GROUP>(t, rows, cols, tm, tn);
                const int row0 = (tm * CLUSTER + rank) * BM, col0 = tn * BN;
                for (int kt = 0; kt < ktiles; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) barrier_wait(&empty[s], ((it / STAGES) + 1) & 1);
                    barrier_expect(&full[s], STAGE_BYTES);
                    tma_load(As + s * A_BYTES, &mapA, &full[s], kt * BK, row0);
                    unsigned char *mine = Bs + s * B_BYTES + rank * B_ROWS * 128;
                    if (CLUSTER > 1)
                        tma_load_multicast(mine, &mapBt, &full[s], kt * BK, col0 + rank * B_ROWS,
                                           (1u << CLUSTER) - 1);
                    else
                        tma_load(mine, &mapBt, &full[s], kt * BK, col0);
                }
            }
        }
    } else {  // consumers
        setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;
        const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
        // the wgmmas that read stage s are done
        auto release = [&](int s) { ring_release<CLUSTER>(&empty[s], t0 == 0); };
        const bool pairs = (reinterpret_cast<uintptr_t>(C) & 7) == 0 && ldc % 2 == 0;
        float d[WM / 64][BN / 2];  // the tile's sums, FP32 on the CUDA cores
        // one k-tile's sums each, in the tensor cores' narrower sums: in a chain the next
        // k-tile's wgmmas run into one while the other's sums are added to d
        float parts[2][WM / 64][BN / 2];
        auto issue = [&](float(&part)[WM / 64][BN / 2], unsigned at) {  // k-tile `at` of the ring
            const int s = at % STAGES;
            barrier_wait(&full[s], (at / STAGES) & 1);
            const unsigned a = smem_addr(As + s * A_BYTES) + c * WM * 128;
            const unsigned b = smem_addr(Bs + s * B_BYTES);
            wgmma_fence();  // also orders the previous promotion's reads of `part` before
#pragma unroll
            for (int kk = 0; kk < BK / 32; ++kk)
#pragma unroll
                for (int i = 0; i < WM / 64; ++i)
                    wgmma_e4m3<BN>(part[i], descriptor_sw128(a + i * 64 * 128 + kk * 32),
                                   descriptor_sw128(b + kk * 32), kk > 0);
            wgmma_commit();
        };
        auto promote = [&](float(&part)[WM / 64][BN / 2]) {  // its wgmmas are done
#pragma unroll
            for (int i = 0; i < WM / 64; ++i) {
                accumulators_fence<BN / 2>(part[i]);
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) d[i][j] += part[i][j];
                // the adds stay here, before the next wgmma.fence: moved past it, they would
                // read `part` inside the next group's stage and ptxas serialises (C7514)
                accumulators_fence<BN / 2>(d[i]);
            }
        };
        unsigned it = 0;  // k-tiles taken from the ring so far
        // n k-tiles, each one's sums promoted while the next one's wgmmas run, nothing left in
        // flight at the end: ptxas follows the wgmma groups through straight code only, and
        // serialises every wgmma (C7514) where one is still in flight across a loop's back
        // edge or a branch
        auto chain = [&](auto n_) {
            constexpr int n = decltype(n_)::value;
            issue(parts[0], it);
#pragma unroll
            for (int j = 0; j < n; ++j) {
                if (j + 1 < n) {
                    issue(parts[(j + 1) & 1], it + j + 1);
                    wgmma_wait<1>();  // k-tile j's group is done, j + 1's runs on
                } else {
                    wgmma_wait<0>();
                }
                release((it + j) % STAGES);
                promote(parts[j & 1]);
            }
            it += n;
        };
        for (int t = cluster; t < tiles; t += clusters) {
            int tm, tn;
            grouped_tile<GROUP>(t, rows, cols, tm, tn);
            const int row0 = (tm * CLUSTER + rank) * BM, col0 = tn * BN;
#pragma unroll
            for (int i = 0; i < WM / 64; ++i)
#pragma unroll
                for (int j = 0; j < BN / 2; ++j) d[i][j] = 0.f;
            int kt = 0;
            for (; kt + CHAIN <= ktiles; kt += CHAIN) chain(std::integral_constant<int, CHAIN>{});
            for (; kt < ktiles; ++kt) chain(std::integral_constant<int, 1>{});
            // d[i][4 j + e] = C[row0 + c WM + 64 i + 16 w + g + 8 (e / 2)][col0 + 8 j + 2 q + e % 2]
#pragma unroll
            for (int i = 0; i < WM / 64; ++i)
#pragma unroll
                for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                    for (int h = 0; h < 2; ++h) {
                        const int row = row0 + c * WM + 64 * i + 16 * w + g + 8 * h;
                        const int col = col0 + 8 * j + 2 * q;
                        if (row >= M) continue;
                        float2 v = make_float2(scale * d[i][4 * j + 2 * h],
                                               scale * d[i][4 * j + 2 * h + 1]);
                        out_t *p = C + static_cast<long long>(row) * ldc + col;
                        if (pairs && col + 1 < N) {
                            float2 *p2 = reinterpret_cast<float2 *>(p);
                            if (accumulate) {
                                const float2 old = *p2;
                                v.x += old.x;
                                v.y += old.y;
                            }
                            *p2 = v;
                        } else {
                            if (col < N) p[0] = accumulate ? p[0] + v.x : v.x;
                            if (col + 1 < N) p[1] = accumulate ? p[1] + v.y : v.y;
                        }
                    }
        }
    }
    if (CLUSTER > 1) {  // no block leaves while another may still write to its shared memory
        __syncwarp();
        cluster_sync();
    }
}

// persistent_tf32 with B handed over transposed ("TN"): both TF32 operands in shared memory,
// as wgmma reads them there (lab notebook, "TF32 with both operands K-major").
//   - wgmma takes TF32 operands from shared memory only K-major.  persistent_tf32 takes B as
//     the other rungs do (k x n, row-major, N-major), so it computes C^T = B^T . A^T with B^T
//     as wgmma's register operand: each consumer thread reads its fragment of B from shared
//     memory and rounds it (cvt.rna) for every k8 step (its issue slots 26-30% busy at 4096
//     and 8192 where persistent_bf16's are 19-20%, Nsight Compute, in the lab notebook), which
//     cuBLAS's TF32 kernels do not;
//   - this rung takes B transposed, Bt (n x k) row-major, as persistent_fp8 and cuBLASLt's FP8
//     matmul do: both tiles are rows of 128 bytes (BK = 32 floats) in 128-byte swizzle, loaded
//     by TMA, and a wgmma (k = 8) reads 32 bytes of each row through descriptors; the consumers
//     only issue wgmmas.  Its reference is cuBLAS's TF32 SGEMM on the same transposed B
//     (cublas_tf32_tn: op T on B);
//   - wgmma reads the FP32 values as TF32 (their low 13 mantissa bits ignored: truncation, where
//     persistent_tf32 rounds B to nearest); the sums are FP32 in the accumulators;
//   - one block per multiprocessor walking the tiles in groups of GROUP tile rows, CLUSTER
//     blocks along m sharing each Bt tile by multicast (each loads BN / CLUSTER of its rows),
//     as persistent_fp8; one k-tile's wgmmas in flight while the next stage is waited for, as
//     persistent_bf16; no split-K yet.
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
static_assert(BN == 64 || BN == 128 || BN == 256, "wgmma n of 64, 128 or 256");
static_assert(WM / 64 * BN <= 256, "at most 128 accumulators a consumer thread");
static_assert(BN % (8 * CLUSTER) == 0, "the Bt rows divide among the cluster in 8-row groups");
static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    persistent_tf32_tn(const __grid_constant__ CUtensorMap mapA,
                       const __grid_constant__ CUtensorMap mapBt, out_t *__restrict__ C, int M,
                       int N, int K, int ldc, int accumulate) {
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
        // float2 stores of column pairs: C 8-byte aligned with an even leading dimension
        const bool pairs = (reinterpret_cast<uintptr_t>(C) & 7) == 0 && ldc % 2 == 0;
        float d[WM / 64][BN / 2];
        unsigned it = 0;  // k-tiles taken from the ring so far
        for (int t = cluster; t < tiles; t += clusters) {
            int tm, tn;
            grouped_tile<GROUP>(t, rows, cols, tm, tn);
            const int row0 = (tm * CLUSTER + rank) * BM, col0 = tn * BN;
            for (int kt = 0; kt < ktiles; ++kt, ++it) {
                const int s = it % STAGES;
                barrier_wait(&full[s], (it / STAGES) & 1);
                const unsigned a = smem_addr(As + s * A_BYTES) + c * WM * 128;
                const unsigned b = smem_addr(Bs + s * B_BYTES);
                wgmma_fence();
#pragma unroll
                for (int kk = 0; kk < BK / 8; ++kk)
#pragma unroll
                    for (int i = 0; i < WM / 64; ++i)
                        wgmma_tf32<BN>(d[i], descriptor_sw128(a + i * 64 * 128 + kk * 32),
                                       descriptor_sw128(b + kk * 32),
                                       kt > 0 || kk > 0);  // the tile's first product sets d
                wgmma_commit();
                wgmma_wait<1>();  // the previous k-tile's wgmmas are done: release its stage
                if (kt > 0) release((it - 1) % STAGES);
            }
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < WM / 64; ++i) accumulators_fence<BN / 2>(d[i]);
            if (ktiles > 0) release((it - 1) % STAGES);
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
                        float2 v = make_float2(d[i][4 * j + 2 * h], d[i][4 * j + 2 * h + 1]);
                        if (ktiles == 0) v = make_float2(0.f, 0.f);
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

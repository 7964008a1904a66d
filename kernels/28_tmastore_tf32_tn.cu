// persistent_tf32_tn with its tiles stored by the copy engine (TMA stores), as tmastore_bf16
// does for persistent_bf16 (lab notebook, "TMA stores of C for TF32"):
//   - each consumer warpgroup hands its part of a finished tile to the copy engine in 64 x 32
//     chunks through two shared-memory buffers (kernels/tma_store.cuh, store_tile), which
//     writes them while the consumers go on to the next tile's wgmmas; where n % 4 != 0 the
//     chunk holding a row's last, partial 16-byte unit is stored by the threads;
//   - everything else is persistent_tf32_tn's: B handed over transposed (n x k), both TF32
//     operands by TMA into shared memory in 128-byte swizzle and read by wgmma through
//     descriptors, one block per multiprocessor walking the tiles in groups of GROUP tile rows,
//     CLUSTER blocks sharing each Bt tile by multicast; its reference is cuBLAS's TF32 SGEMM on
//     the same transposed B (cublas_tf32_tn).
#include "tma_store.cuh"  // hopper.cuh and the store epilogue

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
static_assert((STAGES * STAGE_BYTES) % 1024 == 0, "the chunk buffers start 1024-byte aligned");

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    tmastore_tf32_tn(const __grid_constant__ CUtensorMap mapA,
                     const __grid_constant__ CUtensorMap mapBt,
                     const __grid_constant__ CUtensorMap mapC, out_t *__restrict__ C, int M,
                     int N, int K, int ldc, int accumulate) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    unsigned char *smem = align_1024_shared(smem_raw);  // LDS and STS (hopper.cuh)
    unsigned char *As = smem;                     // STAGES x [BM][128 bytes]
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x [BN][128 bytes]
    // after the ring: CONSUMERS x 2 chunk buffers of [64][CHUNK_COLS] floats
    unsigned char *Cs = smem + STAGES * STAGE_BYTES;

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
        const int t0 = threadIdx.x % 128;
        // the wgmmas that read stage s are done
        auto release = [&](int s) { ring_release<CLUSTER>(&empty[s], t0 == 0); };
        float d[WM / 64][BN / 2];
        unsigned it = 0;     // k-tiles taken from the ring so far
        unsigned chunk = 0;  // chunks this consumer has handed over: its buffer is chunk % 2
        unsigned char *buffers = Cs + c * 2 * CHUNK_BYTES;
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
            store_tile<WM, BN>(d, ktiles == 0, buffers, chunk, 2 + c, &mapC, C, ldc, M, N,
                               row0 + c * WM, col0, accumulate);
        }
        store_tile_drain();  // every chunk written before the block's memory goes
    }
    if (CLUSTER > 1) {  // no block leaves while another may still write to its shared memory
        __syncwarp();
        cluster_sync();
    }
}

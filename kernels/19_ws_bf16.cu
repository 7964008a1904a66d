// bfloat16 inputs, float32 sums and output, Hopper's way: the tensor-memory accelerator (TMA)
// brings the A and B tiles into a STAGES-deep ring of shared-memory buffers with 128-byte
// swizzle, and wgmma reads both operands from there through matrix descriptors.  The block is
// warp-specialised: warpgroup 0 is the producer (one thread issues the copies, the warpgroup
// gives up registers with setmaxnreg), warpgroups 1..CONSUMERS compute (each takes registers
// for its accumulators).  A stage goes round two mbarriers: `full` (the copy engine completes it
// when the stage's bytes have landed; consumers wait on it) and `empty` (each consumer arrives
// when its wgmmas have read the stage; the producer waits on it before refilling).
//
// Tile: BM x BN of C per block, BK = 64 (one 128-byte swizzle row of bfloat16), each consumer
// BM / CONSUMERS rows as m64nBNk16 products.  A (m x k, row-major) is K-major as wgmma wants;
// B (k x n, row-major) is MN-major, which wgmma takes for 16-bit types (its transpose bit), so
// no operand is rearranged.  The copy engine's boxes are 64 columns wide at most with 128-byte
// swizzle, so a B tile is BN / 64 boxes side by side; everything past the matrix reads as zero,
// so any m, n, k work (the pipeline pads leading dimensions to 16 bytes: `align` in the
// registry).
//
// This rung keeps its own body: it is the road's first warp-specialised step, one output tile a
// block and every k-tile's wgmmas waited for, the form the persistent skeleton
// (kernels/persistent.cuh) that the rungs after it share grew from.
#include <cuda_bf16.h>

#include "hopper.cuh"

// The parameters (BM, BN, STAGES, CONSUMERS) and what the launch shares with the kernel (BK,
// THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry (-D each).
#ifndef STAGE_BYTES
#error "BM, BN, STAGES, CONSUMERS and the registry's derived facts must be defined"
#endif

constexpr int WM = BM / CONSUMERS;  // rows of C per consumer warpgroup
// registers per thread after setmaxnreg: the producer keeps few, the consumers take the rest
// of the 64 K (the counts are multiples of 8; 128 (P + C x CONSUMERS) <= 65536)
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_REGS = CONSUMERS == 1 ? 232 : 232;
static_assert(WM % 64 == 0, "each consumer computes whole m64 products");
static_assert(BN % 64 == 0 && BN <= 256, "wgmma n of 64..256 in whole 64-column boxes");
static_assert(sizeof(elem_t) == 2 && sizeof(out_t) == 4, "bfloat16 in, float32 out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    ws_bf16(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
            out_t *__restrict__ C, int M, int N, int K, int ldc, int accumulate) {
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    unsigned char *smem = align_1024(smem_raw);
    unsigned char *As = smem;                     // STAGES x [BM][64] bfloat16
    unsigned char *Bs = smem + STAGES * A_BYTES;  // STAGES x BN/64 x [64][64] bfloat16

    const int wg = threadIdx.x / 128;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    const int ktiles = (K + BK - 1) / BK;

    ring_init(full, empty, STAGES, CONSUMERS, 1);

    if (wg == 0) {  // producer
        setmaxnreg_dec<PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            for (int kt = 0; kt < ktiles; ++kt) {
                const int s = kt % STAGES;
                if (kt >= STAGES) barrier_wait(&empty[s], ((kt / STAGES) + 1) & 1);
                barrier_expect(&full[s], STAGE_BYTES);
                tma_load(As + s * A_BYTES, &mapA, &full[s], kt * BK, row0);
#pragma unroll
                for (int j = 0; j < BN / 64; ++j)
                    tma_load(Bs + s * B_BYTES + j * B_BOX, &mapB, &full[s], col0 + 64 * j,
                             kt * BK);
            }
        }
    } else {  // consumers
        setmaxnreg_inc<CONSUMER_REGS>();
        const int c = wg - 1;
        float d[WM / 64][BN / 2];
#pragma unroll
        for (int i = 0; i < WM / 64; ++i)
#pragma unroll
            for (int j = 0; j < BN / 2; ++j) d[i][j] = 0.f;
        for (int kt = 0; kt < ktiles; ++kt) {
            const int s = kt % STAGES;
            barrier_wait(&full[s], (kt / STAGES) & 1);
            const unsigned a = smem_addr(As + s * A_BYTES) + c * WM * 128;
            const unsigned b = smem_addr(Bs + s * B_BYTES);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
                for (int i = 0; i < WM / 64; ++i)
                    // A: 64 rows further is 64 x 128 bytes; 16 k further is 32 bytes.
                    // B: 16 k further is 16 rows of 128 bytes; atoms B_BOX apart along n
                    wgmma_bf16<BN>(d[i], descriptor_sw128(a + i * 64 * 128 + kk * 32),
                                   descriptor_sw128(b + kk * 16 * 128, B_BOX), 1);
            wgmma_commit();
            wgmma_wait<0>();
#pragma unroll
            for (int i = 0; i < WM / 64; ++i) accumulators_fence<BN / 2>(d[i]);
            if (threadIdx.x % 128 == 0) barrier_arrive(&empty[s]);
        }
        // d[i][4 j + e] = C[row0 + c WM + 64 i + 16 w + g + 8 (e / 2)][col0 + 8 j + 2 q + e % 2]
        const int t = threadIdx.x % 128, w = t / 32, g = (t % 32) / 4, q = t % 4;
#pragma unroll
        for (int i = 0; i < WM / 64; ++i)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = row0 + c * WM + 64 * i + 16 * w + g + 8 * (e / 2);
                    const int col = col0 + 8 * j + 2 * q + e % 2;
                    if (row < M && col < N) {
                        out_t *p = C + static_cast<long long>(row) * ldc + col;
                        *p = accumulate ? *p + d[i][4 * j + e] : d[i][4 * j + e];
                    }
                }
    }
}

// The steps of the FP64 rungs on the persistent skeleton (kernels/22, 36): their TMA loads, their
// warp-wide mma.sync k-loop and their double2 stores (22_ws_f64.cu tells how the lanes read
// the swizzled tiles; kernels/persistent.cuh says what a rung's steps are).
#pragma once
#define GROUP 8  // tile rows a group of the tile walk (not a parameter of this rung)
#include "persistent.cuh"

// The parameters (BM, BN, WM, WN, STAGES, BLOCKS) and what the launch shares with the kernel
// (BK, WARPS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
constexpr int WARPS_M = BM / WM, WARPS_N = BN / WN;
constexpr int MI = WM / 16, NI = WN / 8;  // m16n8 products per warp tile
static_assert(sizeof(elem_t) == 8 && sizeof(out_t) == 8, "float64 in and out");
static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "whole warp tiles");
static_assert(WARPS % 4 == 0, "setmaxnreg works on whole warpgroups of consumers");
static_assert(BN % 16 == 0 && BM <= 256, "the TMA boxes: A [BM][16], B [16][16]");
// registers after setmaxnreg: a block holds at most REGS per thread (the launch bound's share of
// the 65536, rounded down to the 8 a thread in which registers are allotted: setmaxnreg.inc
// waits for registers, so asking for more than the block holds never returns); the producer
// keeps 40, the consumers share the rest in steps of 8, at most 232
constexpr int REGS = 65536 / BLOCKS / THREADS / 8 * 8;
constexpr int PRODUCER_REGS = 40;
constexpr int CONSUMER_SHARE = (REGS * THREADS - 128 * PRODUCER_REGS) / (32 * WARPS) / 8 * 8;
constexpr int CONSUMER_REGS = CONSUMER_SHARE > 232 ? 232 : CONSUMER_SHARE;
// the accumulators (two registers each) and about 40 for the fragments and addresses
static_assert(CONSUMER_REGS >= 2 * MI * NI * 4 + 40,
              "the consumers need their accumulators and their fragments");

struct F64Steps {
    static constexpr bool ALONG_M = true, PINGPONG = false, OWN_LOOP = true;
    static constexpr int PRODUCER_REGS = ::PRODUCER_REGS, CONSUMER_REGS = ::CONSUMER_REGS;
    static constexpr int CONSUMER_THREADS = 32 * WARPS, RELEASES = WARPS;
    using Extra = NoExtra;
    using Acc = double[MI][NI][4];
    __device__ static __forceinline__ unsigned char *align(unsigned char *p) {
        return align_1024(p);
    }
    __device__ static __forceinline__ bool leader() { return threadIdx.x % 32 == 0; }

    // the A box and B's 16-column boxes
    template <class S>
    __device__ static __forceinline__ void load(const Params &p, S &sm, const Copy &c) {
        tma_load(sm.a[c.s], p.a, c.bar, c.k, c.row0);
        load_boxes<BN / 16, 16, B_BOX, false>(sm.b[c.s], p.b, c.bar, c.col0, c.k, c.rank);
    }

    struct Consumer {
        const Params &p;
        const int wm0, wn0, r, t;  // the warp's tile; the lane's tile row r and quad place t
        // byte offsets in a stage of this lane's fragment words at k-step kk = 0; further rows
        // of A (16-row steps, the + 8 half) and further 16-column B boxes add whole 1024-byte
        // swizzle periods and boxes, which keep the swizzle
        // A: [k8 step][h: column t or t + 4]; B: [k8 step][h: row t or t + 4][n8 step parity:
        // column p or p + 4, inside the swizzle, so not a fixed byte distance]
        unsigned offA[2][2], offB[2][2][2];

        template <class S>
        __device__ __forceinline__ Consumer(const Params &p_, S &)
            : p(p_), wm0(((threadIdx.x / 32 - 4) / WARPS_N) * WM),
              wn0(((threadIdx.x / 32 - 4) % WARPS_N) * WN),
              r(2 * ((threadIdx.x % 32 / 4) % 4) + (threadIdx.x % 32 / 4) / 4),  // of mma row g
              t(threadIdx.x % 4) {
            const int g = threadIdx.x % 32 / 4;
            // the tile column of mma column g
            const int pc = 8 * ((g / 2) % 2) + 2 * (g / 4) + g % 2;
#pragma unroll
            for (int ks = 0; ks < 2; ++ks)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int ca = 8 * ks + 4 * h + t;  // A's column (k)
                    offA[ks][h] = (wm0 + r) * 128 + (((ca / 2) ^ r) * 16) + (ca % 2) * 8;
                    const int k = 8 * ks + 4 * h + t;  // B's row
#pragma unroll
                    for (int jp = 0; jp < 2; ++jp) {
                        const int n = pc + 4 * jp;  // B's column in its 16-column box
                        offB[ks][h][jp] =
                            (wn0 / 16) * B_BOX + k * 128 + (((n / 2) ^ (k % 8)) * 16) + (n % 2) * 8;
                    }
                }
            pin(offA);
            pin(offB);
        }

        template <class S>
        __device__ __forceinline__ void mainloop(Acc &acc, Ring &ring, S &sm, int kt0, int kt1) {
            zero_fragments(acc);
            for (int kt = kt0; kt < kt1; ++kt, ++ring.it) {
                const int s = ring.wait(ring.it);
                const unsigned char *a = sm.a[s];
                const unsigned char *b = sm.b[s];
#pragma unroll
                for (int ks = 0; ks < 2; ++ks) {
                    double af[MI][4], bf[NI][2];
#pragma unroll
                    for (int i = 0; i < MI; ++i)
#pragma unroll
                        for (int h = 0; h < 2; ++h) {
                            const unsigned char *q = a + offA[ks][h] + i * 16 * 128;
                            af[i][2 * h] = *reinterpret_cast<const double *>(q);
                            af[i][2 * h + 1] = *reinterpret_cast<const double *>(q + 8 * 128);
                        }
#pragma unroll
                    for (int j = 0; j < NI; ++j)
#pragma unroll
                        for (int h = 0; h < 2; ++h)  // n8 step j: box j / 2
                            bf[j][h] = *reinterpret_cast<const double *>(
                                b + offB[ks][h][j % 2] + (j / 2) * B_BOX);
                    if (ks == 1) {  // every fragment of the stage is loaded: release it
                        proxy_fence_async();  // (before the copy engine may overwrite it)
                        __syncwarp();
                        ring.release(ring.it);
                    }
#pragma unroll
                    for (int i = 0; i < MI; ++i)
#pragma unroll
                        for (int j = 0; j < NI; ++j) mma_f64_m16n8k8(acc[i][j], af[i], bf[j]);
                }
            }
        }

        // lane (g, t) holds mma rows g, g + 8 and columns 2t, 2t + 1 of each m16n8 product:
        // tile rows r, r + 8 and the adjacent tile columns 8 (t % 2) + 2 (t / 2) (+ 1); C = the
        // sums or C += them, in pairs or one by one, each way compiled on its own
        __device__ __forceinline__ void store(const Acc &acc, int tile_row, int tile_col,
                                              bool) const {
            // double2 stores of column pairs: C 16-byte aligned with an even leading dimension
            const bool pairs = (p.ldc % 2) == 0 && (reinterpret_cast<uintptr_t>(p.C) & 15) == 0;
            if (p.accumulate && pairs)
                store_as<true, true>(acc, tile_row, tile_col);
            else if (p.accumulate)
                store_as<true, false>(acc, tile_row, tile_col);
            else if (pairs)
                store_as<false, true>(acc, tile_row, tile_col);
            else
                store_as<false, false>(acc, tile_row, tile_col);
        }
        template <bool ACCUMULATE, bool PAIRS>
        __device__ __forceinline__ void store_as(const Acc &acc, int tile_row, int tile_col) const {
            const long long row0 = static_cast<long long>(tile_row) + wm0 + r;
            const int col0 = tile_col + wn0 + 8 * (t % 2) + 2 * (t / 2);
#pragma unroll
            for (int i = 0; i < MI; ++i)
#pragma unroll
                for (int hi = 0; hi < 2; ++hi) {
                    const long long row = row0 + 16 * i + 8 * hi;
                    if (row >= p.M) continue;
#pragma unroll
                    for (int j = 0; j < NI; ++j) {
                        const int col = col0 + 16 * (j / 2) + 4 * (j % 2);
                        double v0 = acc[i][j][2 * hi], v1 = acc[i][j][2 * hi + 1];
                        out_t *q = p.C + row * p.ldc + col;
                        if (PAIRS && col + 1 < p.N) {
                            double2 *q2 = reinterpret_cast<double2 *>(q);
                            if (ACCUMULATE) {
                                const double2 old = *q2;
                                v0 += old.x;
                                v1 += old.y;
                            }
                            *q2 = make_double2(v0, v1);
                        } else {
                            if (col < p.N) q[0] = ACCUMULATE ? q[0] + v0 : v0;
                            if (col + 1 < p.N) q[1] = ACCUMULATE ? q[1] + v1 : v1;
                        }
                    }
                }
        }
        __device__ __forceinline__ void drain() const {}
    };
};

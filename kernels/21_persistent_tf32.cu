// TF32 on Hopper's road: persistent_bf16's structure (TMA ring with mbarriers, a producer
// warpgroup and two consumer warpgroups with setmaxnreg, one block per multiprocessor walking
// grouped tiles, one k-tile of wgmmas in flight) for float32 matrices on the TF32 tensor cores.
//
// wgmma takes TF32 operands from shared memory only K-major (K contiguous).  A (m x k,
// row-major) is K-major; B (k x n, row-major) is not, and is not transposed anywhere: the kernel
// computes C^T = B^T . A^T, so that A is wgmma's shared-memory operand (a [BM][32] tile with
// 128-byte swizzle, described by a matrix descriptor) and B^T is wgmma's register operand, which
// each consumer thread reads from the B tile in shared memory (4 words per k8 step, rounded with
// cvt.rna), for the next k-tile while the tensor cores work on this one.  Each consumer
// warpgroup owns 64 columns of C (the rows of its m64nBMk8 products) and all BM rows.
//
// The B tile comes in boxes of 32 columns with 128-byte swizzle (16-byte units of a row XORed
// with the row's index mod 8).  Which column of C each of a warp's 16 product rows holds is
// chosen so that the 32 lanes' reads of a k8 step fall in 32 different banks: lane (g, t) reads
// row k = t (+4) and column 16 (g / 4) + 4 e + g % 4 (+ 8 for the warp's second half of the box),
// e = 0 for product row g, 1 for row g + 8; the epilogue maps the rows back.
//
// CLUSTER blocks side by side along n share each A tile (the larger one: BM x 32 floats against
// 32 x 128): each loads 1/CLUSTER of its rows and the copy engine multicasts them into every
// block of the cluster; a stage is refilled only when the consumers of every block released it.
//
// Where the tiles are fewer than the clusters, each tile's k-tiles are split among `splits` work
// units (split_k.cuh, as in persistent_bf16); where they fill fewer than 8 waves of clusters but
// leave the last one short, only the last wave's tiles are split (`head` tiles run whole).
//
// On the persistent skeleton (kernels/persistent.cuh), clustered along n (ALONG_M false), with a
// k-loop of its own (OWN_LOOP: B^T's fragments into registers) and a store of its own (C's rows
// are the products' columns).
#include "persistent.cuh"

// The parameters (BM, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel (BK,
// BN, CONSUMERS, THREADS, A_ROWS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry
// entry (-D each).
struct PersistentTf32 : WgmmaRung<CONSUMERS> {
    static_assert(BM == 64 || BM == 128 || BM == 256, "wgmma n of 64, 128 or 256");
    static_assert(BN == 64 * CONSUMERS, "each consumer warpgroup owns 64 columns of C");
    static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
    static_assert(BK * sizeof(elem_t) == 128, "a k-tile is one 128-byte swizzle row");
    static_assert(A_ROWS % 8 == 0, "whole 1024-byte swizzle periods per block's part of A");
    static constexpr bool ALONG_M = false, OWN_LOOP = true;
    // registers after setmaxnreg (128 (P + 2 C) <= 65536): the clustered producer needs more
    // than 40 (ptxas, CUDA 13.0: 24 bytes spilled at 40)
    static constexpr int PRODUCER_REGS = CLUSTER > 1 ? 56 : 40;
    static constexpr int CONSUMER_REGS = CLUSTER > 1 ? 224 : 232;
    using Acc = float[BM / 2];

    // A's tile shared by the cluster's blocks along n, B's in 32-column boxes
    template <class S>
    __device__ static __forceinline__ void load(const Params &p, S &sm, const Copy &c) {
        load_rows_shared<BM>(sm.a[c.s], p.a, c.bar, c.k, c.row0, c.rank);
        load_boxes<BN / 32, 32, B_BOX, false>(sm.b[c.s], p.b, c.bar, c.col0, c.k, c.rank);
    }

    struct Consumer {
        const Params &p;
        const int c, w, g, q;  // the consumer warpgroup; the thread's warp, lane group, quad
        // this thread's four B^T fragment words of k8 step 0, as byte offsets in a B stage:
        // box 2c + w / 2, row k = q + 4 hi, 16-byte unit u_e ^ (k % 8), word g % 4
        unsigned frag[2][2];  // [hi][e]
        unsigned a0[BK / 8][4], a1[BK / 8][4];  // B^T fragments of two k-tiles in turn

        template <class S>
        __device__ __forceinline__ Consumer(const Params &p_, S &)
            : p(p_), c(threadIdx.x / 128 - 1), w(threadIdx.x % 128 / 32),
              g(threadIdx.x % 32 / 4), q(threadIdx.x % 4) {
#pragma unroll
            for (int hi = 0; hi < 2; ++hi)
#pragma unroll
                for (int e = 0; e < 2; ++e) {
                    const int u = 2 * (w % 2) + 4 * (g / 4) + e;
                    const int k = q + 4 * hi;  // the k of a lane's fragment (mma.sync's "t")
                    frag[hi][e] = (2 * c + w / 2) * B_BOX + k * 128 + ((u ^ k) * 16) + (g % 4) * 4;
                }
        }

        __device__ __forceinline__ void load_fragments(unsigned (&a)[BK / 8][4],
                                                       const unsigned char *b) const {
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk) {  // 8 rows further: 1024 bytes, same swizzle
                a[kk][0] = to_tf32(*reinterpret_cast<const float *>(b + frag[0][0] + kk * 1024));
                a[kk][1] = to_tf32(*reinterpret_cast<const float *>(b + frag[0][1] + kk * 1024));
                a[kk][2] = to_tf32(*reinterpret_cast<const float *>(b + frag[1][0] + kk * 1024));
                a[kk][3] = to_tf32(*reinterpret_cast<const float *>(b + frag[1][1] + kk * 1024));
            }
        }

        // one k-tile: its stage has landed; B^T into registers, the wgmmas issued; then the
        // previous k-tile's wgmmas are waited for, which frees its stage and its registers
        template <class S>
        __device__ __forceinline__ void step(Acc &d, unsigned (&a)[BK / 8][4], Ring &ring, S &sm,
                                             bool first) {
            const int s = ring.wait(ring.it);
            load_fragments(a, sm.b[s]);
            const unsigned at = smem_addr(sm.a[s]);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < BK / 8; ++kk)
                wgmma_tf32_rs<BM>(d, a[kk], descriptor_sw128(at + kk * 32), !first || kk > 0);
            wgmma_commit();
            wgmma_wait<1>();
            if (!first) ring.release(ring.it - 1);
            ++ring.it;
        }

        template <class S>
        __device__ __forceinline__ void mainloop(Acc &d, Ring &ring, S &sm, int kt0, int kt1) {
            int kt = kt0;
            for (; kt + 1 < kt1; kt += 2) {
                step(d, a0, ring, sm, kt == kt0);
                step(d, a1, ring, sm, false);
            }
            if (kt < kt1) step(d, a0, ring, sm, kt == kt0);
            wgmma_wait<0>();
            accumulators_fence<BM / 2>(d);
            if (kt1 > kt0) ring.release(ring.it - 1);  // (no k-tiles: the store writes zeros)
        }

        // d[4 j + e] = C^T[product row 16 w + g + 8 (e / 2)][8 j + 2 q + e % 2]: C row
        // row0 + 8 j + 2 q + e % 2, C column (the chosen row-to-column map above); zeros where
        // the unit had no k-tiles (zeroing d in the k-loop instead made ptxas spill at BM = 256)
        __device__ __forceinline__ void store(const Acc &d, int row0, int col0, bool zero) const {
            const int colw = col0 + 64 * c + 32 * (w / 2) + 8 * (w % 2) + 16 * (g / 4) + g % 4;
#pragma unroll
            for (int j = 0; j < BM / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = row0 + 8 * j + 2 * q + e % 2;
                    const int col = colw + 4 * (e / 2);
                    if (row < p.M && col < p.N) {
                        out_t *o = p.C + static_cast<long long>(row) * p.ldc + col;
                        const float v = zero ? 0.f : d[4 * j + e];
                        *o = p.accumulate ? *o + v : v;
                    }
                }
        }
        __device__ __forceinline__ void drain() const {}
    };
};

PERSISTENT_KERNELS(persistent_tf32, PersistentTf32,
                   (const __grid_constant__ CUtensorMap mapA,
                    const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M, int N,
                    int K, int ldc, int accumulate, int splits, void *workspace, int head),
                   (&mapA, &mapB, nullptr, C, M, N, K, ldc, accumulate, 1.f),
                   (splits, head, workspace))

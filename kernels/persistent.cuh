// The persistent warp-specialised GEMM of the Hopper rungs, written once.  A rung (kernels/20-34
// but 23, which builds 20 with other parameters) supplies only what is its own: its tile
// loads, its MMA step and its store, as a struct of static steps (the `Rung` below); this
// header owns the rest:
//
//   - the block: one or BLOCKS per multiprocessor, each walking the launch's work units in
//     turn (a block's unit u, u + gridDim.x / CLUSTER, ...), so the producer fetches the next
//     unit's first stages while the consumers store the last one;
//   - the shared memory: a STAGES-deep ring, A's tiles then B's (`Shared`, its stage size
//     checked against the registry's STAGE_BYTES), then the rung's own buffers;
//   - the ring's barriers: `full` (the copy engine completes a stage's) and `empty` (the
//     consumers release a stage with), and the producer's loop over them: wait for a stage to
//     be empty, tell its barrier the bytes to expect, and hand it to the rung's `load`;
//   - register reallocation: the producer warpgroup gives registers back (setmaxnreg), the
//     consumers take them;
//   - the work units (`Schedule`): the output tiles in whole clusters, walked in groups of GROUP
//     tile rows (blocks at work at the same time share rows of A and columns of B in L2); in a
//     launch of several splits, the first `head` tiles whole and the others each split among
//     `splits` units over its k-tiles (split_k.cuh), compiled as two loops, so that a whole
//     tile's k-loop carries no split arithmetic; or stream-K (stream_k.cuh): the whole tiles,
//     then the cluster's even share of the others' k-loops, segment by segment;
//   - the consumers' k-loop for rungs whose MMA step reads both operands from shared memory: a
//     stage waited for, the rung's wgmmas issued, the previous k-tile's wgmmas waited for and
//     its stage released (one k-tile of wgmmas in flight); a rung whose k-loop is its own
//     (`OWN_LOOP`: register operands, promotions, warp-wide MMA) writes it with the ring's
//     waits and releases (`Ring`);
//   - two orders of the consumers: cooperative (each consumer warpgroup a part of every unit's
//     tile) and ping-pong (each a whole tile, the two taking the block's units in turn, one
//     storing while the other multiplies; CUTLASS's ordered sequence barrier keeps their waits
//     on the ring in the units' order);
//   - the fix-up: the unit that finishes a split or shared tile adds the others' partial sums
//     in their order (split_k.cuh: SplitK, StreamKPart) and stores it as an unsplit one;
//   - the end: no block of a cluster leaves while another may still write to its shared memory.
//
// A rung is a struct (WgmmaRung<GROUPS> holds the defaults of a rung of wgmma warpgroups) with:
//   ALONG_M        true: a cluster's blocks lie along m (each block BM rows of a BM * CLUSTER
//                  tile, sharing B); false: along n (BN columns of a BN * CLUSTER tile,
//                  sharing A)
//   PINGPONG       the consumers' order (false: cooperative)
//   OWN_LOOP       whether the rung writes its consumers' k-loop (Consumer::mainloop)
//   PRODUCER_REGS, CONSUMER_REGS   the registers a thread after setmaxnreg
//   CONSUMER_THREADS, RELEASES     the threads after the producer warpgroup, and how many of
//                  them release a stage (one a warpgroup, or a warp)
//   Extra          its shared-memory buffers after the ring (NoExtra for none)
//   Acc            a consumer thread's accumulators of a unit (an array)
//   align(p)       the first 1024-byte boundary at or after p (hopper.cuh's two ways)
//   leader()       whether this consumer thread releases a stage for its group
//   load(p, sm, copy)   the producer's copies of one k-tile of the block's tile into a stage
//                  (Copy: which, and where from)
//   mma(d, a, b, accumulate)   one k-tile of wgmmas from the stage addresses a (this consumer's
//                  rows of A) and b; accumulate false for the unit's first k-tile
//   Consumer       a consumer thread's own state, built once (Consumer(p, sm)):
//                  store(d, row0, col0, zero) per unit (zero: the unit had no k-tiles, and C
//                  gets zeros), drain() at the end, and with OWN_LOOP, in place of mma,
//                  mainloop(d, ring, sm, kt0, kt1): the unit's k-loop, every stage it waited
//                  for released, nothing left in flight; where kt0 == kt1 it leaves d all
//                  zeros or its store heeds `zero` (whichever ptxas compiles better)
// The kernel's arguments reach every step as one `Params`.
#pragma once
#include "hopper.cuh"
#include "split_k.cuh"
#include "stream_k.cuh"

#include <type_traits>

#ifndef STAGE_BYTES
#error "the rung's parameters and the registry's derived facts (STAGE_BYTES, ...) must be defined"
#endif
#ifndef CLUSTER
#define CLUSTER 1  // blocks of a cluster; rungs without the parameter run unclustered
#endif
#ifndef BLOCKS
#define BLOCKS 1  // blocks per multiprocessor
#endif

static_assert(A_BYTES + B_BYTES == STAGE_BYTES, "a stage is an A tile and a B tile");

struct NoExtra {};

// What the kernel was given: the operands' tensor maps (c: C's, for the TMA-store rungs), C and
// its leading dimension, the product's sizes, C += A.B where `accumulate`, and the scale of the
// FP8 rung's dequantisation (C = scale A.B)
struct Params {
    const CUtensorMap *a, *b, *c;
    out_t *C;
    int M, N, K, ldc, accumulate;
    float scale;
};

// The block's dynamic shared memory from its first 1024-byte boundary: the ring's A tiles, its
// B tiles, then the rung's own buffers (a stage's tiles start 1024-byte aligned where A_BYTES
// and B_BYTES are multiples of 1024, as the 128-byte swizzle wants)
template <class Extra>
struct Shared {
    unsigned char a[STAGES][A_BYTES];
    unsigned char b[STAGES][B_BYTES];
    Extra extra;
};
static_assert(sizeof(Shared<NoExtra>::a) + sizeof(Shared<NoExtra>::b) == STAGES * STAGE_BYTES,
              "the ring is STAGES stages of the registry's STAGE_BYTES");

// Keeps each of an array's values in a register where it was computed: the compiler may
// otherwise compute it again where it is used (a fragment offset inside the k-loop, from the
// thread's index), which costs instructions in the loop to save registers it has
template <class T>  // an array of unsigned, of any rank
__device__ __forceinline__ void pin(T &x) {
    static_assert(std::is_same<std::remove_all_extents_t<T>, unsigned>::value, "unsigned values");
    unsigned *w = reinterpret_cast<unsigned *>(&x);
#pragma unroll
    for (int i = 0; i < static_cast<int>(sizeof(T) / sizeof(unsigned)); ++i)
        asm volatile("" : "+r"(w[i]));
}

// One work unit as a block sees it: its part of the tile (the first row and column of C it
// computes) and the k-tiles [kt0, kt1) it sums
struct Work {
    int row0, col0, kt0, kt1;
};

// One k-tile's copies as the producer hands them to a rung's `load`: into stage s, completing
// on bar, k-tile kt (k = kt * BK) of the block's tile at (row0, col0); rank: the block's in its
// cluster
struct Copy {
    int s;
    uint64_t *bar;
    int k, row0, col0;
    unsigned rank;
};

// The kernel body's three schedules: every unit a whole tile; the tiles past a head split
// `splits` ways (split_k.cuh); stream-K (stream_k.cuh)
enum Mode { WHOLE = 0, SPLIT_K = 1, STREAM_K = 2 };

// What a launch of several splits is told: the tiles past the first `head` are split `splits`
// ways; the partial sums go to `workspace` (split_k.cuh)
struct Split {
    int splits, head;
    void *workspace;
};

// The launch's work units (per cluster): its tiles, in whole clusters along m or n, the first
// `head` whole, each of the others split `splits` ways
template <bool ALONG_M>
struct Schedule {
    int rows, cols, tiles, head, splits, units, ktiles;

    __device__ __forceinline__ Schedule(int M, int N, int K, bool split, const Split &sp,
                                        bool stream = false) {
        rows = ALONG_M ? (M + BM * CLUSTER - 1) / (BM * CLUSTER) : (M + BM - 1) / BM;
        cols = ALONG_M ? (N + BN - 1) / BN : (N + BN * CLUSTER - 1) / (BN * CLUSTER);
        tiles = rows * cols;
        splits = split ? sp.splits : 1;
        head = split ? sp.head : tiles;
        units = head + (tiles - head) * splits;
        ktiles = (K + BK - 1) / BK;
        if (stream) head = units = stream_k_head(tiles, ktiles, gridDim.x / CLUSTER);
    }

    // unit u: a whole tile (SPLIT false: u < head) or a share of a split one
    template <bool SPLIT>
    __device__ __forceinline__ Work work(int u, unsigned rank) const {
        const int tile = SPLIT ? head + (u - head) / splits : u;
        int tm, tn, kt0, kt1;
        grouped_tile<GROUP>(tile, rows, cols, tm, tn);
        split_range(ktiles, SPLIT ? splits : 1, SPLIT ? (u - head) % splits : 0, kt0, kt1);
        if (ALONG_M) return {(tm * CLUSTER + static_cast<int>(rank)) * BM, tn * BN, kt0, kt1};
        return {tm * BM, (tn * CLUSTER + static_cast<int>(rank)) * BN, kt0, kt1};
    }

    __device__ __forceinline__ Work work(int u, std::false_type, unsigned rank) const {
        return work<false>(u, rank);
    }
    __device__ __forceinline__ Work work(int u, std::true_type, unsigned rank) const {
        return work<true>(u, rank);
    }
    // a stream-K segment: its tile (counted after the head) and k-tiles
    __device__ __forceinline__ Work work(int, const Segment &seg, unsigned rank) const {
        Work w = work<false>(head + seg.tile, rank);  // the tile's place, whole
        w.kt0 = seg.kt0;
        w.kt1 = seg.kt1;
        return w;
    }
    // the stream-K shares of the tiles past the head on `clusters` workers
    __device__ __forceinline__ StreamK stream_k(int clusters) const {
        return {tiles, ktiles, stream_k_workers(tiles, ktiles, head, clusters, BK), head};
    }

    // a split unit's share of its tile's workspace (its tile counted among the split ones, in
    // whole clusters)
    template <class T, int N>
    __device__ __forceinline__ SplitK<T, N> share(void *workspace, int u, unsigned rank, int r,
                                                  int threads) const {
        return SplitK<T, N>(workspace, (tiles - head) * CLUSTER,
                            (u - head) / splits * CLUSTER + rank, (u - head) % splits, splits, r,
                            threads);
    }
};

// A consumer's view of the ring: `it` the k-tiles it has taken so far (its position), `leader`
// the thread of its group that releases a stage for it
struct Ring {
    uint64_t *full, *empty;
    unsigned it;
    bool leader;

    // the stage of k-tile `at` of the ring, once the copy engine has filled it
    __device__ __forceinline__ int wait(unsigned at) const {
        const int s = at % STAGES;
        barrier_wait(&full[s], (at / STAGES) & 1);
        return s;
    }
    // the stage of k-tile `at` is read: the producers of the cluster's blocks may fill it again
    __device__ __forceinline__ void release(unsigned at) const {
        ring_release<CLUSTER>(&empty[at % STAGES], leader);
    }
};

// The tile loads the rungs share.  `rows_shared`: ROWS rows of 128 bytes from (k, row) of a
// K-major operand, divided among the cluster's blocks along the other dimension (each loads
// ROWS / CLUSTER of them at its rank's place and the copy engine multicasts them into every
// block); without clusters, the whole box.
template <int ROWS>
__device__ __forceinline__ void load_rows_shared(unsigned char *stage, const CUtensorMap *map,
                                                 uint64_t *bar, int k, int row, unsigned rank) {
    constexpr int MINE = ROWS / CLUSTER;
    unsigned char *mine = stage + rank * MINE * 128;
    if (CLUSTER > 1)
        tma_load_multicast(mine, map, bar, k, row + rank * MINE, (1u << CLUSTER) - 1);
    else
        tma_load(mine, map, bar, k, row);
}

// `boxes`: BOXES boxes of WIDTH columns side by side from (col, k) of an MN-major operand, each
// BOX bytes; SHARED: divided among the cluster's blocks (box j by block j % CLUSTER, multicast)
template <int BOXES, int WIDTH, int BOX, bool SHARED>
__device__ __forceinline__ void load_boxes(unsigned char *stage, const CUtensorMap *map,
                                           uint64_t *bar, int col, int k, unsigned rank) {
#pragma unroll
    for (int j = SHARED ? rank : 0; j < BOXES; j += SHARED ? CLUSTER : 1) {
        if (SHARED && CLUSTER > 1)
            tma_load_multicast(stage + j * BOX, map, bar, col + WIDTH * j, k,
                               (1u << CLUSTER) - 1);
        else
            tma_load(stage + j * BOX, map, bar, col + WIDTH * j, k);
    }
}

// One k-tile of wgmmas on a K-major A (ROWS / 64 m64 products, rows of 128 bytes, four k-steps
// of 32 bytes: k16 of bfloat16, k8 of TF32, k32 of e4m3) and B: `wgmma(d_i, desc_a, desc_b,
// scale_d)` each, `b_desc(b, kk)` B's descriptor at k-step kk
template <int ROWS, class Acc, class Wgmma, class BDesc>
__device__ __forceinline__ void wgmma_ktile(Acc &d, unsigned a, unsigned b, bool accumulate,
                                            Wgmma wgmma, BDesc b_desc) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
#pragma unroll
        for (int i = 0; i < ROWS / 64; ++i)
            wgmma(d[i], descriptor_sw128(a + i * 64 * 128 + kk * 32), b_desc(b, kk),
                  accumulate || kk > 0);  // the unit's first product sets d
}

// The store most rungs share: d[i][4 j + e] = C[row0 + 64 i + 16 w + g + 8 (e / 2)][col0 + 8 j +
// 2 q + e % 2] for thread 32 w + 4 g + q of a warpgroup (wgmma's layout), times `scale`; pairs of
// adjacent columns stored as one float2 where C allows (8-byte aligned, even leading dimension);
// C += the product where `accumulate`
template <int ROWS, int COLS>
__device__ __forceinline__ void store_pairs(const float (&d)[ROWS / 64][COLS / 2], bool zero,
                                            float *C, int ldc, int M, int N, int row0, int col0,
                                            bool accumulate, bool pairs, float scale = 1.f) {
    const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
#pragma unroll
    for (int i = 0; i < ROWS / 64; ++i)
#pragma unroll
        for (int j = 0; j < COLS / 8; ++j)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int row = row0 + 64 * i + 16 * w + g + 8 * h;
                const int col = col0 + 8 * j + 2 * q;
                if (row >= M) continue;
                float2 v =
                    make_float2(scale * d[i][4 * j + 2 * h], scale * d[i][4 * j + 2 * h + 1]);
                if (zero) v = make_float2(0.f, 0.f);
                float *p = C + static_cast<long long>(row) * ldc + col;
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

// whether C takes float2 stores of column pairs: 8-byte aligned, an even leading dimension
__device__ __forceinline__ bool column_pairs(const float *C, int ldc) {
    return (reinterpret_cast<uintptr_t>(C) & 7) == 0 && ldc % 2 == 0;
}

#ifdef CONSUMERS  // the rungs of wgmma warpgroups
// The defaults of a rung of GROUPS wgmma consumer warpgroups (derive and hide what differs)
template <int GROUPS>
struct WgmmaRung {
    static constexpr bool ALONG_M = true, PINGPONG = false, OWN_LOOP = false;
    static constexpr int PRODUCER_REGS = 40, CONSUMER_REGS = 232;
    static constexpr int CONSUMER_THREADS = 128 * GROUPS, RELEASES = GROUPS;
    using Extra = NoExtra;
    __device__ static __forceinline__ unsigned char *align(unsigned char *p) {
        return align_1024(p);
    }
    __device__ static __forceinline__ bool leader() { return threadIdx.x % 128 == 0; }
};

#endif  // CONSUMERS

// The consumer of the rungs that store with store_pairs: its part of the tile (ROWS rows from
// OFFSET rows in), times the kernel's scale where SCALED
template <int ROWS, bool SCALED = false>
struct PairStore {
    const Params &p;
    const bool pairs;  // float2 stores: C 8-byte aligned with an even leading dimension
    const int offset;  // this consumer's first row of the tile

    template <class S>
    __device__ __forceinline__ PairStore(const Params &p_, S &)
        : p(p_), pairs(column_pairs(p_.C, p_.ldc)),
          offset(ROWS == BM ? 0 : (threadIdx.x / 128 - 1) * ROWS) {}

    __device__ __forceinline__ void store(const float (&d)[ROWS / 64][BN / 2], int row0, int col0,
                                          bool zero) const {
        store_pairs<ROWS, BN>(d, zero, p.C, p.ldc, p.M, p.N, row0 + offset, col0, p.accumulate,
                              pairs, SCALED ? p.scale : 1.f);
    }
    __device__ __forceinline__ void drain() const {}
};

// The consumer of the rungs that multiply with the operands exchanged (C^T = Bt . A^T: the
// kernel's M is the product's n, its N the product's m, its A the n x k Bt and its B the m x k
// A): its part of the kernel's tile, element (row, col) stored to C[col][row], times the
// kernel's scale where SCALED.  A warp's store of one accumulator writes 8 consecutive floats
// of each of 4 rows of C (whole 32-byte sectors).
template <int ROWS, bool SCALED = false>
struct TransposedStore {
    const Params &p;
    const int offset;  // this consumer's first row of the kernel's tile

    template <class S>
    __device__ __forceinline__ TransposedStore(const Params &p_, S &)
        : p(p_), offset(ROWS == BM ? 0 : (threadIdx.x / 128 - 1) * ROWS) {}

    __device__ __forceinline__ void store(const float (&d)[ROWS / 64][BN / 2], int row0, int col0,
                                          bool zero) const {
        const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
        const float scale = SCALED ? p.scale : 1.f;
#pragma unroll
        for (int i = 0; i < ROWS / 64; ++i)
#pragma unroll
            for (int j = 0; j < BN / 8; ++j)
#pragma unroll
                for (int e = 0; e < 4; ++e) {
                    const int row = row0 + offset + 64 * i + 16 * w + g + 8 * (e / 2);
                    const int col = col0 + 8 * j + 2 * q + e % 2;
                    if (row >= p.M || col >= p.N) continue;
                    const float v = zero ? 0.f : scale * d[i][4 * j + e];
                    float *c = p.C + static_cast<long long>(col) * p.ldc + row;
                    *c = p.accumulate ? *c + v : v;
                }
    }
    __device__ __forceinline__ void drain() const {}
};

// The kernel's body, built twice: SPLIT = false for launches of one split (the work units are
// the tiles; no split arithmetic is compiled in), true for several.  Each is an entry point of
// its own (PERSISTENT_KERNELS): one body for both, the splits a runtime value, ran slower at
// the ladder's sizes than the kernel before split-K (lab notebook, "Measurements behind code
// choices").
template <class Rung, int MODE>
__device__ __forceinline__ void persistent_gemm(const Params &p, const Split &sp) {
    constexpr bool SPLIT = MODE == SPLIT_K, STREAM = MODE == STREAM_K;
    constexpr bool PINGPONG = Rung::PINGPONG;
    static_assert(!(STREAM && PINGPONG), "stream-K: cooperative consumers");
    static_assert(!PINGPONG || (Rung::CONSUMER_THREADS == 256 && !Rung::OWN_LOOP),
                  "ping-pong: two consumer warpgroups on the shared k-loop");
    // the threads that hold a tile: one warpgroup in ping-pong, every consumer otherwise
    constexpr int TILE_THREADS = PINGPONG ? 128 : Rung::CONSUMER_THREADS;
    using Smem = Shared<typename Rung::Extra>;
    using Acc = typename Rung::Acc;
    using T = std::remove_all_extents_t<Acc>;  // the accumulators' type
    constexpr int ACCS = sizeof(Acc) / sizeof(T);

    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES], empty[STAGES];
    // ping-pong: order[c], consumer c's 128 threads arrive once they passed every wait of a
    // unit's k-loop
    __shared__ __align__(8) uint64_t order[PINGPONG ? 2 : 1];
    __shared__ int split_last[PINGPONG ? 2 : 1];  // split_k.cuh: whether this unit finishes
    Smem &sm = *reinterpret_cast<Smem *>(Rung::align(smem_raw));

    if (PINGPONG && threadIdx.x == 0)
        for (int c = 0; c < 2; ++c) barrier_init(&order[c], 128);
    // a stage is released in each block of the cluster by every consumer group (ping-pong: by
    // the one that read it); ring_init's fence and barrier publish the order barriers too
    ring_init(full, empty, STAGES, (PINGPONG ? 1 : Rung::RELEASES) * CLUSTER, CLUSTER);

    // each block's units, the whole tiles first, then the split ones (unsigned: a launch
    // whose head is 0 compiles no loop of whole tiles).  Each side works out the schedule
    // after its setmaxnreg: values live across it are spilled where registers are few.
    using Sched = Schedule<Rung::ALONG_M>;
    // Stream-K: the whole tiles (stream_k_head) as waves, then this cluster's share of the
    // others' k-loops, segment by segment (a Segment in place of the split tag).
    auto walk = [&](const Sched &sched, auto unit) {
        const unsigned cluster = blockIdx.x / CLUSTER, clusters = gridDim.x / CLUSTER;
        unsigned u = cluster;
        for (; u < static_cast<unsigned>(sched.head); u += clusters) unit(u, std::false_type{});
        if (SPLIT)
            for (; u < static_cast<unsigned>(sched.units); u += clusters)
                unit(u, std::true_type{});
        if constexpr (STREAM) {
            const StreamK sk = sched.stream_k(clusters);
            if (static_cast<int>(cluster) < sk.workers) {
                Share share(sk, cluster);
                Segment seg;
                while (share.next(seg)) unit(cluster, seg);
            }
        }
    };

    if (threadIdx.x < 128) {  // producer
        setmaxnreg_dec<Rung::PRODUCER_REGS>();
        if (threadIdx.x == 0) {
            const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
            const Sched sched(p.M, p.N, p.K, SPLIT, sp, STREAM);
            unsigned it = 0;  // k-tiles issued so far: the ring position
            walk(sched, [&](int u, auto split) {
                const Work w = sched.work(u, split, rank);
                for (int kt = w.kt0; kt < w.kt1; ++kt, ++it) {
                    const int s = it % STAGES;
                    if (it >= STAGES) barrier_wait(&empty[s], ((it / STAGES) + 1) & 1);
                    barrier_expect(&full[s], STAGE_BYTES);
                    Rung::load(p, sm, Copy{s, &full[s], kt * BK, w.row0, w.col0, rank});
                }
            });
        }
    } else {  // consumers
        setmaxnreg_inc<Rung::CONSUMER_REGS>();
        const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
        const Sched sched(p.M, p.N, p.K, SPLIT, sp, STREAM);
        const int c = threadIdx.x / 128 - 1;  // the consumer warpgroup
        const int r = PINGPONG ? threadIdx.x % 128 : threadIdx.x - 128;  // among TILE_THREADS
        Ring ring{full, empty, 0, Rung::leader()};
        typename Rung::Consumer consumer(p, sm);
        Acc d;
        int turn = 0;  // ping-pong: the block's units so far, this consumer's where turn % 2 == c
        walk(sched, [&](int u, auto split) {
            constexpr bool SPLIT_UNIT = std::is_same<decltype(split), std::true_type>::value;
            constexpr bool SEGMENT = std::is_same<decltype(split), Segment>::value;
            const Work w = sched.work(u, split, rank);
            if (PINGPONG) {
                if ((turn++ & 1) != c) {  // the other consumer's unit: its stages are not ours
                    ring.it += w.kt1 - w.kt0;
                    return;
                }
                // the other consumer's k-loop of the unit before has passed all its waits:
                // every stage's `full` barrier is then within one phase
                if (turn > 1) barrier_wait(&order[1 - c], ((turn - 2) / 2) & 1);
            }
            if constexpr (Rung::OWN_LOOP) {
                consumer.mainloop(d, ring, sm, w.kt0, w.kt1);
            } else {
                // this consumer's rows of the stage's A tile (ping-pong: all of them)
                const unsigned rows = PINGPONG ? 0 : c * (BM / (TILE_THREADS / 128)) * 128;
                for (int kt = w.kt0; kt < w.kt1; ++kt, ++ring.it) {
                    const int s = ring.wait(ring.it);
                    wgmma_fence();
                    Rung::mma(d, smem_addr(sm.a[s]) + rows, smem_addr(sm.b[s]), kt > w.kt0);
                    wgmma_commit();
                    wgmma_wait<1>();  // the previous k-tile's wgmmas are done: release its stage
                    if (kt > w.kt0) ring.release(ring.it - 1);
                }
                if (PINGPONG) barrier_arrive(&order[c]);  // the other may wait on its next unit
                wgmma_wait<0>();
                accumulators_fence<ACCS>(reinterpret_cast<float *>(&d));
                if (w.kt1 > w.kt0) ring.release(ring.it - 1);
            }
            if (SPLIT_UNIT) {  // a split tile: the unit that finishes it stores the sum
                T *flat = reinterpret_cast<T *>(&d);
                const auto part =
                    sched.template share<T, ACCS>(sp.workspace, u, rank, r, TILE_THREADS);
                part.put_all(flat);
                const int bar = PINGPONG ? 1 + c : 1;  // the named barrier of the tile's threads
                if (!part.finish([bar] { named_barrier_sync(bar, TILE_THREADS); },
                                 &split_last[PINGPONG ? c : 0]))
                    return;
                part.sum_into(flat);
            }
            if constexpr (SEGMENT) {  // a stream-K tile several share: the last adds them up
                if (split.sharers > 1) {
                    const StreamK &sk = *split.shares;
                    const int first = sk.first_worker(split.tile);
                    T *flat = reinterpret_cast<T *>(&d);
                    const StreamKPart<T, ACCS> part(
                        sp.workspace, (sched.tiles - sched.head) * CLUSTER,
                        split.tile * CLUSTER + rank, sk.slot(u, split.tile) * CLUSTER + rank,
                        split.sharers, r, TILE_THREADS);
                    part.put_all(flat);
                    if (!part.finish([] { named_barrier_sync(1, TILE_THREADS); }, &split_last[0]))
                        return;
                    part.sum_into(flat, [&](int j) {
                        return sk.slot(first + j, split.tile) * CLUSTER + static_cast<int>(rank);
                    });
                }
            }
            consumer.store(d, w.row0, w.col0, w.kt1 == w.kt0);
        });
        consumer.drain();
    }
    if (CLUSTER > 1) {  // no block leaves while another may still write to its shared memory
        __syncwarp();
        cluster_sync();
    }
}

// A rung's entry points: NAME, for launches of one split, and NAME_split for several (the
// registry's `symbols` picks it where SPLITS > 1), each compiled on its own.  PARAMS: the
// kernel's parameter list; ARGS: the Params' fields from them; SPLIT: the Split's (each in
// parentheses).  PERSISTENT_KERNEL: NAME alone, for a rung whose launches are never split.
#define PERSISTENT_LIST(...) __VA_ARGS__
#define PERSISTENT_KERNEL(NAME, RUNG, PARAMS, ARGS)                                        \
    extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS) NAME PARAMS {            \
        persistent_gemm<RUNG, WHOLE>(Params{PERSISTENT_LIST ARGS}, Split{1, 0, nullptr}); \
    }
#define PERSISTENT_KERNELS(NAME, RUNG, PARAMS, ARGS, SPLIT)                                \
    PERSISTENT_KERNEL(NAME, RUNG, PARAMS, ARGS)                                            \
    extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS) NAME##_split PARAMS {    \
        persistent_gemm<RUNG, SPLIT_K>(Params{PERSISTENT_LIST ARGS},                      \
                                    Split{PERSISTENT_LIST SPLIT});                        \
    }

// The entry points of a rung with the usual arguments: A's and B's tensor maps, C, m, n, k, C's
// leading dimension, accumulate, then the splits and their workspace
#define PERSISTENT_KERNELS_AB(NAME, RUNG)                                                  \
    PERSISTENT_KERNELS(NAME, RUNG,                                                         \
                       (const __grid_constant__ CUtensorMap mapA,                          \
                        const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C,   \
                        int M, int N, int K, int ldc, int accumulate, int splits,          \
                        void *workspace),                                                  \
                       (&mapA, &mapB, nullptr, C, M, N, K, ldc, accumulate, 1.f),          \
                       (splits, 0, workspace))

// A rung's entry point with the stream-K schedule: NAME, whatever the shape (the shares are
// worked out on the device from the grid; the host gives the workspace, WORKSPACE, its name
// among PARAMS)
#define PERSISTENT_STREAM_K(NAME, RUNG, PARAMS, ARGS, WORKSPACE)                           \
    extern "C" __global__ void __launch_bounds__(THREADS, BLOCKS) NAME PARAMS {            \
        persistent_gemm<RUNG, STREAM_K>(Params{PERSISTENT_LIST ARGS},                     \
                                        Split{1, 0, WORKSPACE});                          \
    }

// A rung's stream-K entry point with the usual arguments: the kernel's A and B tensor maps, C,
// the kernel's m, n and k, C's leading dimension, accumulate (_SCALED: then the FP8 rungs'
// scale), then the workspace.  A rung with its operands exchanged takes the product's B^T as
// its A and the product's n as its m: the registry's args hand them over so.
#define PERSISTENT_STREAM_K_AB(NAME, RUNG)                                                 \
    PERSISTENT_STREAM_K(NAME, RUNG,                                                        \
                        (const __grid_constant__ CUtensorMap mapA,                         \
                         const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C,  \
                         int M, int N, int K, int ldc, int accumulate, void *workspace),   \
                        (&mapA, &mapB, nullptr, C, M, N, K, ldc, accumulate, 1.f), workspace)
#define PERSISTENT_STREAM_K_AB_SCALED(NAME, RUNG)                                          \
    PERSISTENT_STREAM_K(NAME, RUNG,                                                        \
                        (const __grid_constant__ CUtensorMap mapA,                         \
                         const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C,  \
                         int M, int N, int K, int ldc, int accumulate, float scale,        \
                         void *workspace),                                                 \
                        (&mapA, &mapB, nullptr, C, M, N, K, ldc, accumulate, scale),       \
                        workspace)

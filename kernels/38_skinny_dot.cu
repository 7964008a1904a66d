// A small n on the CUDA cores (float32 and float64) with k along the lanes: where n is a few
// columns, skinny_simt's SIDE = 2 tiles hold 8 to 32 of them whole, and a product of n = 71
// pays for 96; here a warp computes R rows of C, NT columns wide, as R x NT dot products along
// k, each lane its own 16-byte runs of k of every row (A's rows are contiguous in k: a warp's
// loads of a row are 512 consecutive bytes).  The block's NT columns of B are staged in shared
// memory a slab at a time, column by column (each lane then reads its run of a column in one
// 16-byte read, the warp's 32 reads side by side), so that a value of B read once from shared
// memory serves R rows.  After the last slab each lane holds partial sums of all R x NT
// results; five exchanges of halves between lanes 16, 8, 4, 2 and 1 apart add them up, each
// lane keeping the half its partner does not, so that lane L ends with the R x NT / 32 sums
// from R x NT / 32 * L on, whole (R x NT - R x NT / 32 shuffles in all, against five per result
// for a reduction of each).  PIPE = 2 issues the next slab's loads of A and B before the
// current slab is used.  The tiles are few where m is small, so each is split along k
// (split_k.cuh's deterministic fix-up, on the summed results alone).
// Any m, n, k and leading dimensions: every load is guarded; a run of A wholly inside the
// matrix, on 16 bytes, is loaded 16 bytes at a time.
#include "split_k.cuh"
#include "runs.cuh"

constexpr int KV = 16 / static_cast<int>(sizeof(elem_t));  // k-steps of a lane's 16-byte run
constexpr int KS = 32 * KV * STEPS;                           // k-steps of a slab
constexpr int LD = KS + KV;           // a column's stride in shared memory (padded by one run)
constexpr int WARPS = THREADS / 32;
constexpr int ALL = R * NT;           // a lane's partial sums
constexpr int KEEP = ALL / 32;        // a lane's whole sums after the exchanges
constexpr int RUNS = KS * NT / KV;                       // runs of KV columns in a B slab
constexpr int SHARE = (RUNS + THREADS - 1) / THREADS;    // a thread's runs of a B slab
static_assert(BM == WARPS * R && BN == NT && BK == KS, "the registry's tile");
static_assert(ALL % 32 == 0, "whole sums shared out evenly among the lanes");
static_assert(PIPE == 1 || PIPE == 2, "PIPE: 1 or 2");

// One exchange of halves between lanes H apart, over the first W of v: the lane without bit H
// keeps v[0, W/2) and adds its partner's; the lane with it keeps v[W/2, W) (moved to v[0, W/2))
// and adds its partner's.  Then the next exchange, H/2 apart, over the W/2 kept.
template <int H, int W, int N>
__device__ __forceinline__ void exchange(elem_t (&v)[N]) {
    const bool upper = (threadIdx.x & H) != 0;
#pragma unroll
    for (int i = 0; i < W / 2; ++i) {
        const elem_t send = upper ? v[i] : v[i + W / 2];
        const elem_t keep = upper ? v[i + W / 2] : v[i];
        v[i] = keep + __shfl_xor_sync(0xffffffffu, send, H);
    }
    if constexpr (H > 1) exchange<H / 2, W / 2>(v);
}

extern "C" __global__ void __launch_bounds__(THREADS)
    skinny_dot(MM_PARAMS, void *workspace, int splits) {
    // the slab of B's NT columns, Bs[c * LD + kk]: column c at step kk of the slab
    __shared__ __align__(16) elem_t Bs[NT * LD];
    __shared__ int last;
    const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    const int tileRow = blockIdx.y / splits, s = blockIdx.y % splits;
    const long long r0 = static_cast<long long>(tileRow) * BM + warp * R;  // the warp's 1st row
    const int c0 = blockIdx.x * NT;  // the block's first column
    int kt0 = 0, kt1 = (K + KS - 1) / KS;
    if (splits > 1) split_range((K + KS - 1) / KS, splits, s, kt0, kt1);
    const int kbeg = kt0 * KS, kend = min(K, kt1 * KS);
    const bool vec = (reinterpret_cast<unsigned long long>(A) & 15) == 0 &&
                     (static_cast<long long>(lda) * sizeof(elem_t)) % 16 == 0;

    // this lane's runs of A's R rows in the slab from k0: a[r][st][v] is row r0 + r at step
    // k0 + st * 32 * KV + lane * KV + v
    auto load_a = [&](elem_t (&a)[R][STEPS][KV], int k0) {
#pragma unroll
        for (int r = 0; r < R; ++r)
#pragma unroll
            for (int st = 0; st < STEPS; ++st) {
                const long long row = r0 + r;
                const int k = k0 + st * 32 * KV + lane * KV;
                const elem_t *p = A + row * lda + k;
                if (vec && row < M && k + KV <= kend) {
                    load_run<KV>(a[r][st], p);
                } else {
#pragma unroll
                    for (int v = 0; v < KV; ++v)
                        a[r][st][v] = row < M && k + v < kend ? p[v] : elem_t(0);
                }
            }
    };
    const bool vec_b = (reinterpret_cast<unsigned long long>(B) & 15) == 0 &&
                       (static_cast<long long>(ldb) * sizeof(elem_t)) % 16 == 0;
    // this thread's share of the B slab from k0, in runs of KV columns of a row of B: run
    // f = tid + p * THREADS is columns (f % (NT / KV)) * KV on at step f / (NT / KV)
    // (consecutive threads read consecutive runs of a row)
    auto load_b = [&](elem_t (&b)[SHARE][KV], int k0) {
#pragma unroll
        for (int p = 0; p < SHARE; ++p) {
            const int f = tid + p * THREADS, kk = f / (NT / KV), c = (f % (NT / KV)) * KV;
            const int k = k0 + kk, col = c0 + c;
            const elem_t *q = B + static_cast<long long>(k) * ldb + col;
            if (vec_b && f < RUNS && k < kend && col + KV <= N) {
                load_run<KV>(b[p], q);
            } else {
#pragma unroll
                for (int v = 0; v < KV; ++v)
                    b[p][v] = f < RUNS && k < kend && col + v < N ? q[v] : elem_t(0);
            }
        }
    };
    auto store_b = [&](const elem_t (&b)[SHARE][KV]) {
#pragma unroll
        for (int p = 0; p < SHARE; ++p) {
            const int f = tid + p * THREADS, kk = f / (NT / KV), c = (f % (NT / KV)) * KV;
            if (f < RUNS)
#pragma unroll
                for (int v = 0; v < KV; ++v) Bs[(c + v) * LD + kk] = b[p][v];
        }
    };

    elem_t acc[R][NT];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < NT; ++c) acc[r][c] = elem_t(0);
    elem_t a[R][STEPS][KV], b[SHARE][KV];
    if (PIPE == 2 && kbeg < kend) {
        load_a(a, kbeg);
        load_b(b, kbeg);
    }
    for (int k0 = kbeg; k0 < kend; k0 += KS) {
        if constexpr (PIPE == 1) {  // this slab's loads, A's in flight while B's are stored
            load_a(a, k0);
            load_b(b, k0);
        }
        __syncthreads();  // the slab before was read by every warp
        store_b(b);
        __syncthreads();
        elem_t next[R][STEPS][KV];
        if constexpr (PIPE == 2) {  // the next slab's loads in flight while this one is used
            if (k0 + KS < kend) {
                load_a(next, k0 + KS);
                load_b(b, k0 + KS);
            }
        }
#pragma unroll
        for (int st = 0; st < STEPS; ++st)
#pragma unroll
            for (int c = 0; c < NT; ++c) {
                elem_t bv[KV];
                load_run<KV>(bv, &Bs[c * LD + st * 32 * KV + lane * KV]);
#pragma unroll
                for (int r = 0; r < R; ++r)
#pragma unroll
                    for (int v = 0; v < KV; ++v) acc[r][c] += a[r][st][v] * bv[v];
            }
        if constexpr (PIPE == 2) {
#pragma unroll
            for (int r = 0; r < R; ++r)
#pragma unroll
                for (int st = 0; st < STEPS; ++st)
#pragma unroll
                    for (int v = 0; v < KV; ++v) a[r][st][v] = next[r][st][v];
        }
    }

    // the lanes' partial sums added up: lane L keeps results [KEEP * L, KEEP * L + KEEP) of
    // the row-major R x NT, whole
    elem_t sum[ALL];
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
        for (int c = 0; c < NT; ++c) sum[r * NT + c] = acc[r][c];
    exchange<16, ALL>(sum);
    if (splits > 1) {  // a split tile: the block that finishes it stores the sum
        const int tiles = (gridDim.y / splits) * gridDim.x;
        const SplitK<elem_t, KEEP> part(workspace, tiles, tileRow * gridDim.x + blockIdx.x, s,
                                        splits, tid, THREADS);
        part.put_all(sum);
        if (!part.finish([] { __syncthreads(); }, &last)) return;
        part.sum_into(sum);
    }
#pragma unroll
    for (int j = 0; j < KEEP; ++j) {
        const int i = KEEP * lane + j, r = i / NT, c = i % NT;
        const long long row = r0 + r;
        const int col = c0 + c;
        if (row < M && col < N) store_result(C, row * ldc + col, sum[j], accumulate);
    }
}

// Warp tiling fed by a cp.async ring, float32: warptile_db's math (warp_tile.cuh), but the A and B
// tiles of STAGES - 1 steps along K are in flight at once, copied from global to shared memory by
// cp.async with no register stage (tile_copy.cuh's CpAsyncRing), so that with few blocks on a
// multiprocessor STAGES - 1 k-tiles' loads wait behind the math where warptile_db has one.  The A
// tile lies transposed in shared memory, as warptile_db's, which a 16-byte copy cannot do: each of
// its elements is a 4-byte copy (cp.async.ca, through L1, so the sector a row's copies share comes
// from L2 once) to row k of BM + 4 elements, the 4 of padding placing a warp's copies in distinct
// banks (BK 8: 4 rows x 8 k; BK 16, two to a bank).  B's rows go in 16-byte copies where B is
// 16-byte aligned with a leading dimension of whole 16 bytes, one element a copy otherwise.  Small
// tiles (down to 32 x 32, one warp) keep many blocks on a multiprocessor where a side is a few
// tens; split-K as warptile_db's (the registry's SPLITS and SPLIT_ROWS, the same launch
// arguments), for the products whose tiles are fewer than the multiprocessors.  Any M, N, K and
// leading dimensions: every copy is guarded (zero-filled outside the matrices).
#include "tile_copy.cuh"
#include "warp_tile.cuh"

static_assert(sizeof(elem_t) == 4, "warptile_ring copies float32 elements 4 bytes at a time");
static_assert(STAGES >= 2, "a ring of at least two stages");
constexpr int SA = BM + 4;  // a row (one k) of the transposed A tile, padded
constexpr int A_STAGE = BK * SA, B_STAGE = BK * BN;  // elements of a stage's tiles
static_assert((A_STAGE + B_STAGE) * 4 == STAGE_BYTES, "the registry's STAGE_BYTES: a ring stage");
// A's copies: thread t copies column (k) t % BK of rows t / BK, t / BK + ASTEP, ...
static_assert(THREADS % BK == 0 && (BM * BK) % THREADS == 0, "whole rows of A's copies");
constexpr int ASTEP = THREADS / BK, ACOPIES = BM * BK / THREADS;
static_assert(ACOPIES <= 32, "a bit of the inside mask per copy");

// element (r, c) of the A tile (row r, step c along k) at row c of the transposed stage
struct TransposedA {
    __device__ static unsigned offset(int r, int c) { return (c * SA + r) * sizeof(elem_t); }
};
using LayoutB = RowMajor<BK, BN, BN, THREADS>;

extern "C" __global__ void __launch_bounds__(THREADS)
    warptile_ring(MM_PARAMS, void *workspace, int split_rows, int split_count) {
    extern __shared__ __align__(16) unsigned char smem[];
    elem_t *const As = reinterpret_cast<elem_t *>(smem);  // STAGES x [BK][SA]
    elem_t *const Bs = As + STAGES * A_STAGE;             // STAGES x [BK][BN]
    __shared__ int last;  // the split fix-up's flag
    const int tid = threadIdx.x;
    const WarpPlace w(tid);
    const bool split = blockIdx.y >= split_rows;
    const int splits = split ? split_count : 1;
    const int tileRow = split ? split_rows + (blockIdx.y - split_rows) / splits : blockIdx.y;
    const long long row0 = static_cast<long long>(tileRow) * BM;
    const long long col0 = static_cast<long long>(blockIdx.x) * BN;
    int kt0 = 0, kt1 = (K + BK - 1) / BK;
    if (splits > 1) split_range(kt1, splits, (blockIdx.y - split_rows) % splits, kt0, kt1);
    const int kend = min(K, kt1 * BK);

    // A: this thread's copies, column ac of rows ar + q * ASTEP, and which rows lie inside M
    const int ac = tid % BK, ar = tid / BK;
    unsigned inside = 0;
#pragma unroll
    for (int q = 0; q < ACOPIES; ++q)
        if (row0 + ar + q * ASTEP < M) inside |= 1u << q;
    const elem_t *const pa = A + (row0 + ar) * lda + ac;
    const unsigned da = TransposedA::offset(ar, ac);
    // B: 16-byte copies where its rows are 16-byte aligned
    const bool vecB = (reinterpret_cast<unsigned long long>(B) & 15) == 0 && ldb % 4 == 0;
    const TileCopy<BK, BN, false, LayoutB> copyB(col0, N);
    auto load = [&](int stage, int t) {  // k-tile kt0 + t into ring stage `stage`
        const long long k0 = static_cast<long long>(kt0 + t) * BK;
        const unsigned as = smem_addr(As + stage * A_STAGE), bs = smem_addr(Bs + stage * B_STAGE);
        const bool kin = k0 + ac < kend;
#pragma unroll
        for (int q = 0; q < ACOPIES; ++q) {
            const int n = kin && ((inside >> q) & 1) ? 4 : 0;
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(
                             as + da + static_cast<unsigned>(q * ASTEP * sizeof(elem_t))),
                         "l"(n ? pa + static_cast<long long>(q) * ASTEP * lda + k0 : A), "r"(n));
        }
        if (vecB) copyB.issue(bs, B + k0 * ldb + col0, ldb, kend - k0, B);
        else copy_tile_elementwise<BK, BN, THREADS, LayoutB>(bs, B, k0, col0, kend, N, ldb);
    };

    elem_t acc[FRAG_M][FRAG_N];
    warp_zero(acc);
    // the fragments of one dot step in two register sets: the next step's read while this
    // step's FFMAs run
    elem_t regM[2][FRAG_M], regN[2][FRAG_N];
    const int ktiles = kt1 - kt0;
    const CpAsyncRing<STAGES, decltype(load)> ring(load, ktiles);
    for (int t = 0; t < ktiles; ++t) {
        const int st = ring.next(t);
        const elem_t *a = As + st * A_STAGE, *b = Bs + st * B_STAGE;
        warp_fragments<SA>(regM[0], regN[0], a, b, 0, w);
#pragma unroll
        for (int dot = 0; dot < BK; ++dot) {
            if (dot + 1 < BK) warp_fragments<SA>(regM[(dot + 1) % 2], regN[(dot + 1) % 2], a, b,
                                                 dot + 1, w);
            warp_product(acc, regM[dot % 2], regN[dot % 2]);
        }
    }
    ring.drain();
    // a split tile: the block that finishes it stores the sum
    if (splits > 1 && !warp_split_sum(acc, workspace, split_rows, splits, tileRow, tid, &last))
        return;
    warp_store(C, acc, row0, col0, w, M, N, ldc, accumulate);
}

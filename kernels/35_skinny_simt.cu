// One small side on the CUDA cores (float32 and float64): a product whose small side (m, or n
// with SIDE = 2) is a few rows wastes most of a 64-row tile of warptile_db or ws_f64, and leaves
// most multiprocessors idle where the tiles are few.  Here a block holds MT rows of the small
// side whole and THREADS * TN columns of the other, each thread all MT rows of its TN columns,
// so no thread shares a value of the large operand with another: it goes from global memory
// straight into registers, and only the small operand's slab of BK steps along k is staged in
// shared memory, where every thread reads the same address (a broadcast).  A slab's loads of
// both operands are all issued before any is used, so that a slab costs one wait on global
// memory (at a few rows and a short k the kernel is little more than those waits, slab after
// slab); PIPE = 2 issues the next slab's loads before this one is used, a second slab of the
// large operand in registers, so that the wait is spent on this slab's arithmetic.  PIPE = 3
// or more keeps PIPE slabs of both operands in a ring of shared memory filled by cp.async
// (tile_copy.cuh's CpAsyncRing), PIPE - 1 of them in flight while one is used, so that more
// bytes are in flight than registers hold; there a thread's TN columns are THREADS apart
// (consecutive threads read consecutive columns: no bank conflicts), and for SIDE = 2 the
// 16-byte pieces of a row of A in the ring are swizzled, so that eight threads' 16-byte reads
// of eight rows fall in distinct banks.  The tiles
// are few, so each is split along k into up to MOST_SPLITS shares of at least four slabs
// (split_k.cuh's deterministic fix-up: the block that finishes a tile adds every share in
// split order, loading SUM_GROUP shares' partial sums at once).  The row tiles of one column
// tile and share are neighbours in the grid, so the slab of the large operand that they all
// read comes from DRAM once and from L2 after.
// SIDE = 2 (SWAP) exchanges the operands for a small n: the kernel computes C^T = B^T . A^T,
// the small operand read from B's columns and the large one from A's rows (each thread reading
// BK consecutive k of its rows of A), and C written transposed back.
// Any m, n, k and leading dimensions: every load is guarded; a slab of the large operand wholly
// inside the matrices, in 16-byte rows, is loaded 16 bytes at a time.
#include "split_k.cuh"
#include "runs.cuh"
#include "tile_copy.cuh"

constexpr bool SWAP = SIDE == 2;  // the small side is n: C^T = B^T . A^T
static_assert(BM == MT && BN == THREADS * TN, "the registry's tile: MT rows, THREADS * TN columns");
constexpr int SLAB_SHARE = (BK * MT + THREADS - 1) / THREADS;  // a thread's values of a slab
static_assert(MT % 4 == 0, "whole groups of four rows");
static_assert(PIPE >= 1, "PIPE: 1, 2, or the slabs of a ring in shared memory (3 or more)");
constexpr bool RING = PIPE >= 3;  // the slabs in a cp.async ring in shared memory
constexpr int E = 16 / sizeof(elem_t);  // elements of a 16-byte copy
static_assert(BK % E == 0, "whole 16-byte runs of k");
// a ring stage: the small operand's slab S[kk][r] (rows of MT + 4: the copies of A's rows
// along k write it in fewer bank conflicts), then the large operand's, B's BK rows of BN
// columns or (SWAP) A's BN rows of BK steps
constexpr int SROW = MT + 4, LROWS = SWAP ? BN : BK, LCOLS = SWAP ? BK : BN;
constexpr int STAGE = BK * SROW + LROWS * LCOLS;
static_assert(STAGE * sizeof(elem_t) == STAGE_BYTES, "the registry's STAGE_BYTES: a ring stage");
static_assert((LROWS * LCOLS / E) % THREADS == 0, "whole 16-byte copies a thread");
// SWAP: piece p of row r of A lies at piece p ^ ((r / RP) % SW) of the row, RP rows sharing
// 128 bytes (the banks once); the eight rows that eight threads read at once then differ in
// (r / RP) % 8 or in r % RP, so their pieces fall in distinct 16-byte columns of banks
constexpr int ROW_BYTES = BK * sizeof(elem_t), RP = ROW_BYTES < 128 ? 128 / ROW_BYTES : 1;
constexpr int PIECES = BK / E, SW = PIECES < 8 ? PIECES : 8;
static_assert((PIECES & (PIECES - 1)) == 0, "the pieces of a row a power of two");
__device__ __forceinline__ int piece_at(int r, int p) { return SWAP ? p ^ ((r / RP) % SW) : p; }

// the split fix-up's splits loaded at once: their partial sums in 64 registers more at most
constexpr int ACC_BYTES = MT * TN * sizeof(elem_t);  // a thread's accumulators
constexpr int SUM_GROUP = ACC_BYTES < 256 ? 256 / ACC_BYTES : 1;

// a ring stage's tiles as copy_tile_elementwise lays them out: element (r, c) of the small
// operand's tile (A's rows r, k c; for SWAP, B's k r, columns c) and of the large operand's
struct SmallLayout {
    __device__ static unsigned offset(int r, int c) {
        return (SWAP ? r * SROW + c : c * SROW + r) * sizeof(elem_t);
    }
};
struct LargeLayout {
    __device__ static unsigned offset(int r, int c) {
        return (r * LCOLS + piece_at(r, c / E) * E + c % E) * sizeof(elem_t);
    }
};

// at least two blocks a multiprocessor: no cap on the largest builds (255 registers fit twice),
// and without it ptxas spilled the smallest build to the stack
extern "C" __global__ void __launch_bounds__(THREADS, 2)
    skinny_simt(MM_PARAMS, void *workspace, int splits) {
    // the small operand's slab, S[kk][r]: row r of the small side at step kk of the slab
    // (PIPE = 1 or 2; the ring's stages are the dynamic shared memory)
    __shared__ __align__(16) elem_t S[RING ? 1 : BK * MT];
    extern __shared__ __align__(16) unsigned char smem[];
    __shared__ int last;
    const int tid = threadIdx.x;
    const int small = SWAP ? N : M, large = SWAP ? M : N;
    // one block a row tile, split and column tile, the row tiles fastest: the blocks that read
    // the same slab of the large operand run side by side and share it through L2
    const int rows = (small + MT - 1) / MT, cols = gridDim.x / (rows * splits);
    const int tileRow = blockIdx.x % rows, s = blockIdx.x / rows % splits;
    const int tileCol = blockIdx.x / rows / splits;
    const long long r0 = static_cast<long long>(tileRow) * MT;  // first row of the small side
    const long long cb = static_cast<long long>(tileCol) * BN;  // the block's first column
    const long long c0 = cb + tid * TN;  // this thread's first column (PIPE = 1 or 2)
    int kt0 = 0, kt1 = (K + BK - 1) / BK;
    if (splits > 1) split_range((K + BK - 1) / BK, splits, s, kt0, kt1);
    const int kbeg = kt0 * BK, kend = min(K, kt1 * BK);

    // the large operand at step k of column c (a guarded load: 0 past the matrices)
    auto big = [&](long long k, long long c) -> elem_t {
        if (k >= kend || c >= large) return elem_t(0);
        return SWAP ? A[c * lda + k] : B[k * ldb + c];
    };
    elem_t acc[MT][TN];
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = elem_t(0);
    // the large operand's rows on 16 bytes (A's for SWAP, else B's)
    const elem_t *L = SWAP ? A : B;
    const int ldl = SWAP ? lda : ldb;
    const bool vec = (reinterpret_cast<unsigned long long>(L) & 15) == 0 &&
                     (static_cast<long long>(ldl) * sizeof(elem_t)) % 16 == 0;
    // the large operand's values of one slab from k, BK steps of k of its TN columns
    auto fetch = [&](elem_t (&cur)[BK][TN], long long k) {
        if (vec && k + BK <= kend && c0 + TN <= large) {  // wholly inside: 16-byte loads
            if (SWAP) {  // BK consecutive k of each of its TN rows of A
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    elem_t run[BK];
                    load_run<BK>(run, A + (c0 + j) * lda + k);
#pragma unroll
                    for (int q = 0; q < BK; ++q) cur[q][j] = run[q];
                }
            } else {  // TN consecutive columns of each of BK rows of B
#pragma unroll
                for (int q = 0; q < BK; ++q) load_run<TN>(cur[q], B + (k + q) * ldb + c0);
            }
            return;
        }
#pragma unroll
        for (int j = 0; j < TN; ++j)
#pragma unroll
            for (int q = 0; q < BK; ++q) cur[q][j] = big(k + q, c0 + j);
    };
    // this thread's share of the small operand's slab from k0: element f = tid + p * THREADS is
    // step kk along k of row r of the small side (k along the threads: A's rows are contiguous
    // in k; or the rows along the threads: B's rows are contiguous in n)
    auto share = [&](elem_t (&part)[SLAB_SHARE], int k0) {
#pragma unroll
        for (int p = 0; p < SLAB_SHARE; ++p) {
            const int f = tid + p * THREADS;
            const int kk = SWAP ? f / MT : f % BK, r = SWAP ? f % MT : f / BK;
            const long long k = k0 + kk, row = r0 + r;
            part[p] = f < BK * MT && k < kend && row < small
                          ? (SWAP ? B[k * ldb + row] : A[row * lda + k])
                          : elem_t(0);
        }
    };
    // one slab, kt0 + t, of both operands into ring stage `stage` (16-byte copies of the large
    // operand where its rows are 16-byte aligned, else one element a copy; zeros outside)
    elem_t *const ring = reinterpret_cast<elem_t *>(smem);
    auto ring_load = [&](int stage, int t) {
        const long long k0 = static_cast<long long>(kt0 + t) * BK;
        const unsigned sS = smem_addr(ring + stage * STAGE), sL = sS + BK * SROW * sizeof(elem_t);
        if (SWAP) copy_tile_elementwise<BK, MT, THREADS, SmallLayout>(sS, B, k0, r0, K, N, ldb);
        else copy_tile_elementwise<MT, BK, THREADS, SmallLayout>(sS, A, r0, k0, M, K, lda);
        // element (r, c) of the large operand's tile is (gr0 + r, gc0 + c) of the matrix L,
        // of lrows x lcols
        const long long gr0 = SWAP ? cb : k0, gc0 = SWAP ? k0 : cb;
        const long long lrows = SWAP ? M : K, lcols = SWAP ? K : N;
        if (!vec) {
            copy_tile_elementwise<LROWS, LCOLS, THREADS, LargeLayout>(sL, L, gr0, gc0, lrows,
                                                                      lcols, ldl);
            return;
        }
        constexpr int PER_ROW = LCOLS / E;
#pragma unroll
        for (int p = 0; p < LROWS * PER_ROW / THREADS; ++p) {
            const int f = tid + p * THREADS, r = f / PER_ROW, c = (f % PER_ROW) * E;
            const long long left = lcols - (gc0 + c);
            const int n = gr0 + r < lrows && left > 0
                              ? (left >= E ? 16 : static_cast<int>(left * sizeof(elem_t)))
                              : 0;
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                             sL + LargeLayout::offset(r, c)),
                         "l"(n ? L + (gr0 + r) * ldl + gc0 + c : L), "r"(n));
        }
    };
    if constexpr (RING) {
        const int slabs = kt1 - kt0;
        const CpAsyncRing<PIPE, decltype(ring_load)> slab(ring_load, slabs);
        for (int t = 0; t < slabs; ++t) {
            const elem_t *Ss = ring + slab.next(t) * STAGE, *Ls = Ss + BK * SROW;
#pragma unroll 1
            for (int q0 = 0; q0 < BK; q0 += E) {
                elem_t v[E][TN];  // the large operand at steps q0.. of this thread's columns
#pragma unroll
                for (int j = 0; j < TN; ++j) {
                    const int c = tid + j * THREADS;
                    if (SWAP) {
                        elem_t run[E];
                        load_run<E>(run, &Ls[c * LCOLS + piece_at(c, q0 / E) * E]);
#pragma unroll
                        for (int qq = 0; qq < E; ++qq) v[qq][j] = run[qq];
                    } else {
#pragma unroll
                        for (int qq = 0; qq < E; ++qq) v[qq][j] = Ls[(q0 + qq) * LCOLS + c];
                    }
                }
#pragma unroll
                for (int qq = 0; qq < E; ++qq)
#pragma unroll
                    for (int i = 0; i < MT; i += 4) {
                        elem_t a[4];
                        load_run<4>(a, &Ss[(q0 + qq) * SROW + i]);
#pragma unroll
                        for (int ii = 0; ii < 4; ++ii)
#pragma unroll
                            for (int j = 0; j < TN; ++j) acc[i + ii][j] += a[ii] * v[qq][j];
                    }
            }
        }
        slab.drain();
    } else {  // PIPE = 1 or 2: the large operand's slabs in registers
        elem_t part[SLAB_SHARE], cur[BK][TN];
        if (PIPE == 2 && kbeg < kend) {
            share(part, kbeg);
            fetch(cur, kbeg);
        }
        for (int k0 = kbeg; k0 < kend; k0 += BK) {
            // PIPE = 1: every load of the slab issued before any is used (the small operand's
            // share, then the large operand's values), so that a slab costs one wait on global
            // memory
            if constexpr (PIPE == 1) {
                share(part, k0);
                fetch(cur, k0);
            }
            __syncthreads();  // the slab before was read by every thread
#pragma unroll
            for (int p = 0; p < SLAB_SHARE; ++p) {
                const int f = tid + p * THREADS;
                if (f < BK * MT) S[SWAP ? f : (f % BK) * MT + f / BK] = part[p];
            }
            __syncthreads();
            // PIPE = 2: the next slab's loads in flight while this one is used
            elem_t next[BK][TN];
            if constexpr (PIPE == 2) {
                if (k0 + BK < kend) {
                    share(part, k0 + BK);
                    fetch(next, k0 + BK);
                }
            }
#pragma unroll
            for (int q = 0; q < BK; ++q)
#pragma unroll
                for (int i = 0; i < MT; i += 4) {  // four rows of S in one 16-byte read or two
                    elem_t a[4];
                    load_run<4>(a, &S[q * MT + i]);
#pragma unroll
                    for (int ii = 0; ii < 4; ++ii)
#pragma unroll
                        for (int j = 0; j < TN; ++j) acc[i + ii][j] += a[ii] * cur[q][j];
                }
            if constexpr (PIPE == 2) {
#pragma unroll
                for (int q = 0; q < BK; ++q)
#pragma unroll
                    for (int j = 0; j < TN; ++j) cur[q][j] = next[q][j];
            }
        }
    }
    if (splits > 1) {  // a split tile: the block that finishes it stores the sum
        const SplitK<elem_t, MT * TN> part(workspace, rows * cols, tileRow * cols + tileCol, s,
                                           splits, tid, THREADS);
        part.put_all(&acc[0][0]);
        if (!part.finish([] { __syncthreads(); }, &last)) return;
        part.sum_into<SUM_GROUP>(&acc[0][0]);
    }
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const long long row = r0 + i, col = RING ? cb + tid + j * THREADS : c0 + j;
            if (row < small && col < large)
                store_result(C, SWAP ? col * ldc + row : row * ldc + col, acc[i][j], accumulate);
        }
}

// Copying the A and B tiles of a k-loop from global to shared memory with cp.async (the
// tensor-core rungs mma_tf32, mma_f64 and wgmma_tf32): a tile of Rows x Cols elements of a
// row-major matrix into a shared tile laid out by a Layout (padded rows, or wgmma's core
// matrices), by Threads threads, zero-filled where it lies outside the matrix (cp.async with a
// shorter source), so any M, N, K and leading dimension work.
//
// TileCopy is the fast path (16-byte copies, for a matrix that is 16-byte aligned with a leading
// dimension divisible by 16 bytes): everything about a thread's copies that does not change along
// k -- its row and column in the tile, which of its rows (A) or how much of its column (B) lies
// inside the matrix -- is worked out once per block.  A tile along k then costs one pointer
// step per copy, and the bounds along k are checked only in the last, partial tile.  (Done per
// tile and per copy with 64-bit arithmetic, the 16-byte path of mma_f64's k-loop was 216
// instructions for 16 DMMAs, most of them integer; 185 this way.  mma_tf32 gained 11% from it.)
//
// copy_tile_elementwise is the path for other matrices: one element per copy.
#pragma once
#include "ptx.cuh"

// Where a thread's 16-byte copies go.  A layout gives the thread's first copy (row r0, column c0
// of the tile, in elements), how far copy q lies from it in the tile (dr, dc) and in shared
// memory (delta, bytes) -- compile-time constants -- and the byte offset of tile element (r, c).
//
// RowMajor<Rows, Cols, Stride, Threads>: rows of stride Stride elements (padded against bank conflicts);
// consecutive threads copy consecutive pieces of a row.
template <int Rows, int Cols, int Stride, int Threads>
struct RowMajor {
    static constexpr int E = 16 / sizeof(elem_t), PER_ROW = Cols / E;
    static_assert(Cols % E == 0 && Threads % PER_ROW == 0 && Rows % (Threads / PER_ROW) == 0,
                  "a thread's copies are whole 16-byte pieces in one column, STEP rows apart");
    static constexpr int STEP = Threads / PER_ROW, N = Rows / STEP;  // rows between copies, copies
    __device__ static int r0() { return threadIdx.x / PER_ROW; }
    __device__ static int c0() { return (threadIdx.x % PER_ROW) * E; }
    __host__ __device__ static constexpr int dr(int q) { return q * STEP; }
    __host__ __device__ static constexpr int dc(int) { return 0; }
    __host__ __device__ static constexpr unsigned delta(int q) {
        return dr(q) * Stride * sizeof(elem_t);
    }
    __device__ static unsigned offset(int r, int c) { return (r * Stride + c) * sizeof(elem_t); }
};

// CoreMatrices<Rows, Cols, Threads>: a K-major wgmma operand without swizzle, in core matrices of
// 8 rows x 16 bytes: row r, piece p (16 bytes) at byte (r / 8) * SBO + p * 128 + (r % 8) * 16,
// SBO = Cols / E * 128.  Two neighbouring threads copy one 32-byte sector of a row, and the eight
// rows of a core matrix go to eight thread pairs in a row (no bank conflicts on the way in).
template <int Rows, int Cols, int Threads>
struct CoreMatrices {
    static constexpr int E = 16 / sizeof(elem_t), PIECES = Cols / E, SBO = PIECES * 128;
    static constexpr int HALF = Threads / 2;  // thread pairs
    static_assert(Cols % (2 * E) == 0 && (Rows * PIECES) % Threads == 0 && HALF % 8 == 0 &&
                      (HALF % Rows == 0 || Rows % HALF == 0),
                  "thread pairs cover whole core matrices, whole rows or whole columns of pieces");
    static constexpr int N = Rows * PIECES / Threads;
    __device__ static int r0() { return (threadIdx.x / 2) % Rows; }
    __device__ static int c0() { return (2 * ((threadIdx.x / 2) / Rows) + threadIdx.x % 2) * E; }
    __host__ __device__ static constexpr int dr(int q) { return (q * HALF) % Rows; }
    __host__ __device__ static constexpr int dc(int q) { return 2 * ((q * HALF) / Rows) * E; }
    __host__ __device__ static constexpr unsigned delta(int q) {
        return dr(q) / 8 * SBO + dc(q) / E * 128;
    }
    __device__ static unsigned offset(int r, int c) {
        return (r / 8) * SBO + (c / E) * 128 + (r % 8) * 16 + (c % E) * sizeof(elem_t);
    }
};

// One thread's share of the copies of a tile of a row-major matrix along a k-loop.  KInCols:
// the tile moves along its columns from one k-step to the next (the A tile, BM x BK; its rows are
// bounded by M once and for all); otherwise along its rows (the B tile, BK x BN; its columns are
// bounded by N, and a thread's copies share one column).
template <int Rows, int Cols, bool KInCols, class Layout>
struct TileCopy {
    static constexpr int ES = sizeof(elem_t), E = 16 / ES;  // bytes per element, elements per copy
    static constexpr int N = Layout::N;
    static_assert(N <= 32, "the inside mask has a bit per copy");
    int r, c;        // the thread's first copy: row and column in the tile
    unsigned inside; // bit q: copy q lies inside the matrix along the fixed dimension
    int bytes;       // bytes of a copy inside along the fixed dimension (B: partial at the edge)

    // fixed0/extent: where the block's tile starts along the dimension that stays (A: row0, M;
    // B: col0, N)
    __device__ __forceinline__ TileCopy(long long fixed0, long long extent) {
        r = Layout::r0();
        c = Layout::c0();
        inside = 0;
        if constexpr (KInCols) {
            bytes = 16;
#pragma unroll
            for (int q = 0; q < N; ++q)
                if (fixed0 + r + Layout::dr(q) < extent) inside |= 1u << q;
        } else {
            static_assert(Layout::dc(N - 1) == 0, "B copies share one column");
            const long long left = extent - fixed0 - c;
            bytes = left <= 0 ? 0 : (left >= E ? 16 : static_cast<int>(left) * ES);
            inside = bytes ? ~0u : 0u;
        }
    }

    // Copies the tile whose corner is `corner` (element (0, 0) of the tile in the matrix) to the
    // shared tile at byte address `tile`.  kleft = K - k0: elements left along k from the tile's
    // start; base: any address inside the matrix (the source of an empty copy).
    __device__ __forceinline__ void issue(unsigned tile, const elem_t *corner, long long ld,
                                          long long kleft, const elem_t *base) const {
        constexpr int KT = KInCols ? Cols : Rows;  // the tile's extent along k
        const elem_t *p = corner + r * ld + c;
        const unsigned d = tile + Layout::offset(r, c);
#pragma unroll
        for (int q = 0; q < N; ++q) {
            int n = (inside >> q) & 1 ? bytes : 0;
            if (kleft < KT) {  // the last tile along k, partly outside
                if constexpr (KInCols) {
                    const long long left = kleft - c - Layout::dc(q);
                    n = left <= 0 ? 0 : (left >= E ? n : min(n, static_cast<int>(left) * ES));
                } else if (r + Layout::dr(q) >= kleft) {
                    n = 0;
                }
            }
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(
                             d + Layout::delta(q)),
                         "l"(n ? p + Layout::dr(q) * ld + Layout::dc(q) : base), "r"(n));
        }
    }
};

// rows x cols of P (leading dimension ld) from (r0, c0), one element per copy, into the shared
// tile at byte address `tile` laid out by Layout; zero-filled outside the matrix
template <int Rows, int Cols, int Threads, class Layout>
__device__ __forceinline__ void copy_tile_elementwise(unsigned tile, const elem_t *__restrict__ P,
                                                      long long r0, long long c0, long long rows,
                                                      long long cols, long long ld) {
    constexpr int ES = sizeof(elem_t);
#pragma unroll
    for (int f = threadIdx.x; f < Rows * Cols; f += Threads) {
        const int r = f / Cols, c = f % Cols;
        const long long gr = r0 + r, gc = c0 + c;
        const bool in = gr < rows && gc < cols;
        const unsigned dst = tile + Layout::offset(r, c);
        if constexpr (ES == 8)
            asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;\n" ::"r"(dst),
                         "l"(in ? P + gr * ld + gc : P), "r"(in ? 8 : 0));
        else
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst),
                         "l"(in ? P + gr * ld + gc : P), "r"(in ? 4 : 0));
    }
}

// The A and B tiles of a k-loop in stages of shared memory, rows padded to StrideA and StrideB
// elements (mma_tf32, mma_f64): loader() makes one block's load(stage, kt), which puts tile kt's
// copies in flight, 16-byte copies (TileCopy, set up once per block) where the matrix is 16-byte
// aligned with a leading dimension of whole 16 bytes, one element per copy otherwise.  (A
// lambda rather than a struct holding the same state: as a struct, mma_f64's tuned kernel
// took 174 registers instead of 168, two blocks per SM instead of three.)
template <int TileM, int TileN, int TileK, int StrideA, int StrideB, int Threads>
struct PaddedTiles {
    using LayoutA = RowMajor<TileM, TileK, StrideA, Threads>;
    using LayoutB = RowMajor<TileK, TileN, StrideB, Threads>;
    static constexpr int A_STAGE = TileM * StrideA, B_STAGE = TileK * StrideB;  // per stage
    static constexpr int PER16 = 16 / sizeof(elem_t);  // elements per 16-byte copy

    // As: stages x [TileM][StrideA], Bs: stages x [TileK][StrideB]
    static __device__ __forceinline__ auto loader(elem_t *As, elem_t *Bs,
                                                  const elem_t *__restrict__ A,
                                                  const elem_t *__restrict__ B, long long row0,
                                                  long long col0, int M, int N, int K, int lda,
                                                  int ldb) {
        const bool vecA = (reinterpret_cast<unsigned long long>(A) & 15) == 0 && lda % PER16 == 0;
        const bool vecB = (reinterpret_cast<unsigned long long>(B) & 15) == 0 && ldb % PER16 == 0;
        const TileCopy<TileM, TileK, true, LayoutA> copyA(row0, M);
        const TileCopy<TileK, TileN, false, LayoutB> copyB(col0, N);
        return [=](int stage, int kt) {
            const long long k0 = static_cast<long long>(kt) * TileK;
            const unsigned as = smem_addr(As + stage * A_STAGE), bs = smem_addr(Bs + stage * B_STAGE);
            if (vecA) copyA.issue(as, A + row0 * lda + k0, lda, K - k0, A);
            else copy_tile_elementwise<TileM, TileK, Threads, LayoutA>(as, A, row0, k0, M, K, lda);
            if (vecB) copyB.issue(bs, B + k0 * ldb + col0, ldb, K - k0, B);
            else copy_tile_elementwise<TileK, TileN, Threads, LayoutB>(bs, B, k0, col0, K, N, ldb);
        };
    }
};

// The k-loop of a Depth-deep cp.async ring (mma_tf32, mma_f64), written once; the kernel keeps
// the loop itself (`for kt: stage = ring.next(kt); compute on stage;` then `ring.drain()`), which
// compiles to the same cubin as the loop written out by hand.  Constructing the ring puts the
// first Depth - 1 tiles in flight; next(kt) waits until tile kt has landed (at most Depth - 2
// younger copies still in flight) and every warp is done with the stage the next copy overwrites
// (it held tile kt - 1), puts tile kt + Depth - 1 in flight (load(stage, tile)) and returns tile
// kt's stage.
template <int Depth, class Load> struct CpAsyncRing {
    const Load &load;
    const int ktiles;
    // puts the first Depth - 1 tiles in flight
    __device__ __forceinline__ CpAsyncRing(const Load &load, int ktiles) : load(load), ktiles(ktiles) {
#pragma unroll
        for (int s = 0; s < Depth - 1; ++s) {
            if (s < ktiles) load(s, s);
            asm volatile("cp.async.commit_group;\n" ::);
        }
    }
    // waits for tile kt, puts tile kt + Depth - 1 in flight; returns tile kt's stage
    __device__ __forceinline__ int next(int kt) const {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(Depth - 2));
        __syncthreads();
        if (kt + Depth - 1 < ktiles) load((kt + Depth - 1) % Depth, kt + Depth - 1);
        asm volatile("cp.async.commit_group;\n" ::);
        return kt % Depth;
    }
    __device__ __forceinline__ void drain() const { asm volatile("cp.async.wait_all;\n" ::); }
};

// A warp's MI x NI mma.sync result fragments (16 x 8 each) written to C from (r0, c0), the warp
// tile's corner: lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each; only what
// lies inside the M x N matrix is written.
template <typename T, int MI, int NI>
__device__ __forceinline__ void store_fragments(elem_t *C, const T (&acc)[MI][NI][4], long long r0,
                                                long long c0, int g, int t, int M, int N, int ldc,
                                                int accumulate) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) {
                const long long row = r0 + i * 16 + g + (e / 2) * 8;
                const long long col = c0 + j * 8 + 2 * t + e % 2;
                if (row < M && col < N) store_result(C, row * ldc + col, acc[i][j][e], accumulate);
            }
}

// The TMA-store epilogue of the tmastore rungs (kernels/27, 28): a consumer warpgroup's finished
// part of a tile, ROWS x COLS float32 accumulators in wgmma's register layout, written to C by
// the copy engine while the warpgroup goes on to its next tile's wgmmas.
//
//   - the part goes out in chunks of 64 rows x 32 columns (8 KiB, one 128-byte row of floats
//     per row of C), written to shared memory in the 128-byte swizzle the copy engine reads
//     (chunk_offset), so that a warp's 8-byte stores meet each bank at most twice;
//   - two chunk buffers a warpgroup in turn: one thread hands each chunk to the copy engine
//     (cp.async.bulk.tensor; cp.reduce.async.bulk.tensor .add for C += A.B), and a buffer is
//     written again only once the copy engine has read the chunk before it (bulk
//     wait_group.read);
//   - the copy engine writes whole 16-byte units of a row: past column N up to the next
//     multiple of 4 it would write C's padding (triton-lang/triton#11583; seen here as writes
//     into the padding at n = 31, 33 and 4097), so where N % 4 != 0 the chunk holding a row's
//     last, partial unit is stored by the warpgroup's threads, bounds-checked.  Its thread
//     commits an empty bulk group for it, so that the buffer waits count one group a chunk;
//   - the kernel waits for every chunk (store_tile_drain) before its block's shared memory goes.
//
// C's rows are 16-byte aligned (registry `align`), as its tensor map needs.
#pragma once
#include "persistent.cuh"  // hopper.cuh, split_k.cuh (named_barrier_sync), Params

constexpr int CHUNK_COLS = 128 / sizeof(float);  // a chunk's row: one 128-byte swizzle row
constexpr int CHUNK_BYTES = 64 * 128;            // a chunk: 64 rows of C

// the byte of a chunk buffer (rows of 128 bytes, 4-byte elements: 32 columns of C) holding
// (row, col): 16-byte unit col / 4 of the row, XORed with row % 8, the layout the copy engine
// reads with CU_TENSOR_MAP_SWIZZLE_128B from a 1024-byte-aligned buffer
__device__ __forceinline__ int chunk_offset(int row, int col) {
    return row * 128 + (((col / 4) ^ (row % 8)) << 4) + (col % 4) * 4;
}

// One warpgroup's ROWS x COLS part of a tile, whose first element is C[row0][col0], from its
// accumulators d (d[i][4 j + e] = C[row0 + 64 i + 16 w + g + 8 (e / 2)][col0 + 8 j + 2 q + e % 2]
// for thread 32 w + 4 g + q of the warpgroup; chunk cc of row block i holds columns 32 cc ..
// 32 cc + 31).  zero: the tile had no k-tiles, C gets zeros.  buffers: the warpgroup's two
// chunk buffers, 1024-byte aligned; chunk: the chunks it has handed over so far (its buffer is
// chunk % 2), advanced here; barrier: the warpgroup's named barrier.  SCALED: C gets d times
// `scale` (the FP8 rungs' dequantisation), else d itself (`scale` unread).
template <int ROWS, int COLS, bool SCALED = false>
__device__ __forceinline__ void store_tile(const float (&d)[ROWS / 64][COLS / 2], bool zero,
                                           unsigned char *buffers, unsigned &chunk, int barrier,
                                           const CUtensorMap *mapC, float *C, int ldc, int M,
                                           int N, int row0, int col0, bool accumulate,
                                           float scale) {
    static_assert(ROWS % 64 == 0 && COLS % CHUNK_COLS == 0, "whole chunks across a tile");
    const int t0 = threadIdx.x % 128, w = t0 / 32, g = (t0 % 32) / 4, q = t0 % 4;
#pragma unroll
    for (int i = 0; i < ROWS / 64; ++i)
#pragma unroll
        for (int cc = 0; cc < COLS / CHUNK_COLS; ++cc, ++chunk) {
            unsigned char *buf = buffers + (chunk % 2) * CHUNK_BYTES;
            if (t0 == 0) bulk_wait_read<1>();  // the chunk two before has left buf
            named_barrier_sync(barrier, 128);
#pragma unroll
            for (int jj = 0; jj < CHUNK_COLS / 8; ++jj)
#pragma unroll
                for (int h = 0; h < 2; ++h) {
                    const int j = CHUNK_COLS / 8 * cc + jj;
                    float2 v = make_float2(d[i][4 * j + 2 * h], d[i][4 * j + 2 * h + 1]);
                    if (SCALED) v = make_float2(scale * v.x, scale * v.y);
                    if (zero) v = make_float2(0.f, 0.f);
                    *reinterpret_cast<float2 *>(buf + chunk_offset(16 * w + g + 8 * h,
                                                                   8 * jj + 2 * q)) = v;
                }
            proxy_fence_async();  // the stores, before the copy engine reads them
            named_barrier_sync(barrier, 128);
            const int row = row0 + 64 * i, col = col0 + CHUNK_COLS * cc;
            const bool by_threads = N % 4 != 0 && col + CHUNK_COLS > N;
            if (by_threads) {  // the row's last, partial 16-byte unit: not the copy engine
#pragma unroll 4
                for (int e = t0; e < 64 * CHUNK_COLS; e += 128) {
                    const int r = e / CHUNK_COLS, j = e % CHUNK_COLS;
                    if (row + r < M && col + j < N) {
                        const float v = *reinterpret_cast<const float *>(buf + chunk_offset(r, j));
                        float *dst = C + size_t(row + r) * ldc + col + j;
                        *dst = accumulate ? *dst + v : v;
                    }
                }
            }
            if (t0 == 0) {
                if (!by_threads && accumulate)
                    tma_reduce_add(buf, mapC, col, row);
                else if (!by_threads)
                    tma_store(buf, mapC, col, row);
                bulk_commit();  // (an empty group for a chunk the threads stored)
            }
        }
}

// every chunk handed over has been written to C (the calling warpgroup's thread 0 waits): before
// the block's shared memory goes
__device__ __forceinline__ void store_tile_drain() {
    if (threadIdx.x % 128 == 0) bulk_wait<0>();
}

// The consumer of the TMA-store rungs on the persistent skeleton: its part of a tile (ROWS rows
// from its warpgroup's place in it) through its two chunk buffers, which lie after the ring
// (Extra = Chunks; the rung's shared memory is aligned with align_1024_shared, so that the
// chunks are written with STS), times the kernel's scale where SCALED (PairStore's parameters,
// so that a step set written for PairStore takes it: Fp8Steps<TmaStore>)
struct Chunks {
    unsigned char c[CONSUMERS][2][CHUNK_BYTES];
};
static_assert((STAGES * STAGE_BYTES) % 1024 == 0, "the chunk buffers start 1024-byte aligned");

template <int ROWS, bool SCALED = false>
struct TmaStore {
    const Params &p;
    const int c;             // the consumer warpgroup
    unsigned char *buffers;  // its two chunk buffers
    unsigned chunk = 0;      // chunks it has handed over: its buffer is chunk % 2

    template <class S>
    __device__ __forceinline__ TmaStore(const Params &p_, S &sm)
        : p(p_), c(threadIdx.x / 128 - 1), buffers(sm.extra.c[c][0]) {}

    __device__ __forceinline__ void store(const float (&d)[ROWS / 64][BN / 2], int row0,
                                          int col0, bool zero) {
        store_tile<ROWS, BN, SCALED>(d, zero, buffers, chunk, 2 + c, p.c, p.C, p.ldc, p.M, p.N,
                                     row0 + c * ROWS, col0, p.accumulate, p.scale);
    }
    __device__ __forceinline__ void drain() const { store_tile_drain(); }
};

// A rung of BASE with TmaStore's chunk buffers after the ring
template <class Base>
struct WithChunks : Base {
    using Extra = Chunks;
    __device__ static __forceinline__ unsigned char *align(unsigned char *p) {
        return align_1024_shared(p);  // LDS and STS (hopper.cuh)
    }
};

// A rung of STEPS (the skeleton's step sets) storing its tiles with TmaStore
template <class Steps>
struct WithTmaStore : WithChunks<Steps> {
    using Consumer = TmaStore<Steps::ROWS>;
};

// A rung of the step set STEPS<STORE> (Fp8Steps: its consumer is built on the store it is
// given) storing its tiles with TmaStore
template <template <template <int, bool> class> class STEPS>
using TmaStored = WithChunks<STEPS<TmaStore>>;

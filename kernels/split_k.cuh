// Split-K: more work units than output tiles where a product has too few tiles to fill the GPU
// (a small square, or one small side with a long k: 128 x 4096 x 4096 in 128 x 256 tiles is 16
// tiles for 132 multiprocessors).  Tile t's k-tiles are divided among `splits` units (t, s),
// which different blocks run at the same time.  Each unit leaves its partial sums in a
// workspace; the last of a tile's units to finish (an atomic count per tile tells which) adds
// the partial sums in split order, 0 first, whichever unit finished last (so the result is the
// same in every run: its own are read back too), and stores the tile as the kernel stores an
// unsplit one.  (The sum runs split by split over every accumulator in place: summing
// accumulator by accumulator with its own partial kept in registers made ptxas spill 7 KiB in
// persistent_bf16.)  No unit waits
// for another, so a persistent kernel cannot deadlock on it.
//
// The workspace (registry `{workspace: SPLIT_BYTES}`, zeroed once when the launch is set up):
// one int count per output tile, set back to 0 by the unit that finishes the tile (so the next
// launch finds every count at 0), padded to 256 bytes; then, per (tile, split), the partial sums
// of the `threads` threads that hold the tile, accumulator i of thread r at [i][r] (coalesced).
// A kernel with splits == 1 never touches it.
#pragma once
#include "common.cuh"

// A launch whose first `head` tiles run whole and whose others are split `splits` ways (the
// persistent kernels' last wave: where the tiles fill a few waves of blocks but not the last
// one, head is the tiles of the whole waves and only the rest are split, so that the last wave
// is as long as a tile's share rather than a tile; head = 0 where the tiles do not fill one
// wave) has head + (tiles - head) * splits work units; unit u >= head is split (u - head) %
// splits of tile head + (u - head) / splits, whose workspace index is its place among the split
// tiles (the persistent skeleton's Schedule, kernels/persistent.cuh).

// the k-tiles [kt0, kt1) of split s of `splits` over `ktiles` k-tiles: none empty while
// splits <= ktiles, none longer than another by more than one
__device__ __forceinline__ void split_range(int ktiles, int splits, int s, int &kt0, int &kt1) {
    kt0 = static_cast<int>(static_cast<long long>(s) * ktiles / splits);
    kt1 = static_cast<int>(static_cast<long long>(s + 1) * ktiles / splits);
}

// `count` threads (numbered from 0) arrive at named barrier `id` and wait for each other; id 0
// is __syncthreads()'s
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}

// After every thread of a unit has left its partial sums: true for the one of the tile's `units`
// units that finishes it (the last to arrive at its `count`, which it sets back to 0 for the
// next launch).  `sync` makes the tile's threads wait for each other (a named barrier, or
// __syncthreads where the whole block holds the tile); `last` is an int of shared memory that
// none of them reads or writes meanwhile (thread r = 0 tells the others through it).
template <class Sync>
__device__ __forceinline__ bool finish_tile(int *count, int units, int r, Sync sync,
                                            volatile int *last) {
    __threadfence();  // this thread's partial sums before the count, to every block
    sync();
    if (r == 0) {
        const bool done = atomicAdd(count, 1) == units - 1;
        if (done) {
            *count = 0;        // for the next launch (no other unit of the tile is left)
            __threadfence();  // the other units' partial sums before ours are read
        }
        *last = done;
    }
    sync();
    return *last;
}

// One unit's share of a split tile.  T: the accumulators' type; N: accumulators per thread.
template <typename T, int N>
struct SplitK {
    int *count;  // the tile's count of finished units
    T *slots;    // the tile's first split's partial sums; split s at s * N * threads
    int s, splits, r, threads;

    // tile: the tile's index among the launch's `tiles` counts; its partial sums are at its
    // place among the split tiles, tile - first (warptile_db counts every tile, the whole ones
    // first; the persistent skeleton only the split ones)
    __device__ __forceinline__ SplitK(void *workspace, int tiles, int tile, int s_, int splits_,
                                      int r_, int threads_, int first = 0)
        : s(s_), splits(splits_), r(r_), threads(threads_) {
        unsigned char *w = static_cast<unsigned char *>(workspace);
        count = reinterpret_cast<int *>(w) + tile;
        const long long head = (static_cast<long long>(tiles) * 4 + 255) / 256 * 256;
        slots = reinterpret_cast<T *>(w + head) +
                static_cast<long long>(tile - first) * splits * N * threads;
    }

    // this unit's accumulator i (before finish)
    __device__ __forceinline__ void put(int i, T v) const {
        slots[(static_cast<long long>(s) * N + i) * threads + r] = v;
    }

    // after every put of every thread: true for the one unit that finishes the tile
    // (finish_tile)
    template <class Sync>
    __device__ __forceinline__ bool finish(Sync sync, volatile int *last) const {
        return finish_tile(count, splits, r, sync, last);
    }

    // accumulator i of split u's partial sums (after finish, in the unit that finishes the
    // tile: its own included, so that every run adds them in the same order, split 0 first)
    __device__ __forceinline__ T partial(int u, int i) const {
        return __ldcg(&slots[(static_cast<long long>(u) * N + i) * threads + r]);
    }

    // all N accumulators of this thread, acc[0..N) (a thread's accumulator array, however many
    // dimensions it has, in its row-major order)
    __device__ __forceinline__ void put_all(const T *acc) const {
#pragma unroll
        for (int i = 0; i < N; ++i) put(i, acc[i]);
    }

    // acc[0..N) = the tile's sum: every split's partial sums, split by split (after finish).
    // G > 1 loads G splits' partial sums at once (G x N more registers), so that the sum waits
    // on memory once every G splits rather than every split; the sums are added in the same
    // order, so the bits are the same.
    template <int G = 1>
    __device__ __forceinline__ void sum_into(T *acc) const {
        if constexpr (G == 1) {
            for (int v = 0; v < splits; ++v)
#pragma unroll
                for (int i = 0; i < N; ++i) acc[i] = (v ? acc[i] : T(0)) + partial(v, i);
        } else {
            for (int v = 0; v < splits; v += G) {
                T p[G][N];  // the partial sums of splits v to v + G - 1 (those that exist)
#pragma unroll
                for (int g = 0; g < G; ++g)
#pragma unroll
                    for (int i = 0; i < N; ++i) p[g][i] = v + g < splits ? partial(v + g, i) : T(0);
#pragma unroll
                for (int g = 0; g < G; ++g)
                    if (v + g < splits)
#pragma unroll
                        for (int i = 0; i < N; ++i) acc[i] = (v + g ? acc[i] : T(0)) + p[g][i];
            }
        }
    }
};

// One worker's segment of a stream-K tile (kernels/stream_k.cuh) that several share: the
// workspace holds one int count per shared tile (padded to 256 bytes), then two slots of
// partial sums a worker, accumulator i of thread r at [slot][i][r]; the sharer that finishes
// the tile adds every sharer's slot in the workers' order, its own included.
template <typename T, int N>
struct StreamKPart {
    int *count;  // the tile's count of finished segments
    T *slots;    // the first slot
    int slot, sharers, r, threads;

    __device__ __forceinline__ StreamKPart(void *workspace, int tiles, int tile, int slot_,
                                           int sharers_, int r_, int threads_)
        : slot(slot_), sharers(sharers_), r(r_), threads(threads_) {
        unsigned char *w = static_cast<unsigned char *>(workspace);
        count = reinterpret_cast<int *>(w) + tile;
        const long long head = (static_cast<long long>(tiles) * 4 + 255) / 256 * 256;
        slots = reinterpret_cast<T *>(w + head);
    }
    __device__ __forceinline__ T *at(int q, int i) const {
        return slots + (static_cast<long long>(q) * N + i) * threads + r;
    }
    __device__ __forceinline__ void put_all(const T *acc) const {
#pragma unroll
        for (int i = 0; i < N; ++i) *at(slot, i) = acc[i];
    }
    template <class Sync>
    __device__ __forceinline__ bool finish(Sync sync, volatile int *last) const {
        return finish_tile(count, sharers, r, sync, last);
    }
    // acc = the tile's sum: the slots `slot_of(j)` of its sharers j = 0, 1, ... in order
    template <class SlotOf>
    __device__ __forceinline__ void sum_into(T *acc, SlotOf slot_of) const {
        for (int j = 0; j < sharers; ++j) {
            const int q = slot_of(j);
#pragma unroll
            for (int i = 0; i < N; ++i) acc[i] = (j ? acc[i] : T(0)) + __ldcg(at(q, i));
        }
    }
};

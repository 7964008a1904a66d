// Stream-K (Osama et al., PPoPP 2023; CUTLASS's stream-K tile scheduler): the k-loops of a
// launch's tiles laid end to end, one iteration a k-tile, and the line cut into one even share
// a worker (a cluster of the persistent grid), so that every multiprocessor has as much to do
// whatever the number of tiles.  Here in its hybrid form: the first `head` tiles run whole, a
// worker at a time as data-parallel waves, and only the others (`sk` tiles, at least one wave's
// worth where there are that many) are cut into shares, so that a product of many tiles keeps
// most of its tiles whole and its last waves even.
//
// A worker's share runs through one or more tiles: each (tile, k-tiles) piece of it is a
// segment.  A tile that one worker runs whole is stored as an unsplit one; a tile that several
// share is summed by the last of them to finish (an atomic count per tile), in the order of
// the workers (so, of k), from partial sums each left in the workspace, its own included: the
// same bits in every run, and no worker waits for another.  A worker has at most two partial
// segments, its first and its last tile, so the partial sums need 2 slots a worker.
//
// Plain arithmetic, for the host as for the device: tests/stream_k_check.cu runs it on the host
// over random launches, and workflow/scripts/mmbench/core/schedule.py works out the same host
// facts (the whole tiles, the sharing workers) for a launch.
#pragma once

#if defined(__CUDACC__)
#define STREAM_K_FN __host__ __device__ __forceinline__
#else
#define STREAM_K_FN inline
#endif

// The shares of a launch: `tiles` output tiles of `ktiles` k-tiles each, the first `head`
// whole, the others' k-tiles shared among `workers` workers (the first `workers` of the grid's:
// stream_k_workers), each share at least one k-tile
struct StreamK {
    int tiles, ktiles, workers, head;

    // the k-tiles of the shared tiles, end to end
    STREAM_K_FN long long iterations() const {
        return static_cast<long long>(tiles - head) * ktiles;
    }
    // the first iteration of worker w's share (w = workers: the end)
    STREAM_K_FN long long begin(int w) const { return iterations() * w / workers; }
    // the worker whose share holds iteration i
    STREAM_K_FN int worker_of(long long i) const {
        return static_cast<int>(((i + 1) * workers + iterations() - 1) / iterations()) - 1;
    }
    // the workers that share shared tile t (0 = the first after the head): first and count
    STREAM_K_FN int first_worker(int t) const {
        return worker_of(static_cast<long long>(t) * ktiles);
    }
    STREAM_K_FN int sharers(int t) const {
        return worker_of(static_cast<long long>(t + 1) * ktiles - 1) - first_worker(t) + 1;
    }
    // the workspace slot of worker w's partial sums of shared tile t: 2 w for the first tile of
    // its share, 2 w + 1 for its last (and for its only one)
    STREAM_K_FN int slot(int w, int t) const {
        const int last = static_cast<int>((begin(w + 1) - 1) / ktiles);
        return 2 * w + (t == last ? 1 : 0);
    }
};

// One segment of a worker's share: shared tile `tile` (counted from the head), its k-tiles
// [kt0, kt1), and how it ends: stored whole (sharers == 1) or summed with the others' (their
// slots: `shares`, the launch's shares it belongs to)
struct Segment {
    int tile, kt0, kt1, sharers, index;  // index: this worker's place among the tile's sharers
    const StreamK *shares;
};

// The segments of worker w's share, in order: `next` walks them (true while there is one)
struct Share {
    const StreamK &sk;
    int w;
    long long i, end;

    STREAM_K_FN Share(const StreamK &sk_, int w_)
        : sk(sk_), w(w_), i(sk_.begin(w_)), end(sk_.begin(w_ + 1)) {}

    STREAM_K_FN bool next(Segment &s) {
        if (i >= end) return false;
        const int t = static_cast<int>(i / sk.ktiles);
        const int kt0 = static_cast<int>(i % sk.ktiles);
        const long long stop = static_cast<long long>(t + 1) * sk.ktiles < end
                                   ? static_cast<long long>(t + 1) * sk.ktiles
                                   : end;
        s.tile = t;
        s.kt0 = kt0;
        s.kt1 = kt0 + static_cast<int>(stop - i);
        s.sharers = sk.sharers(t);
        s.index = w - sk.first_worker(t);
        s.shares = &sk;
        i = stop;
        return true;
    }
};

// The tiles a launch runs whole before the shares: where the tiles fill `workers` an exact
// number of times (or have no k-tiles), all of them; otherwise all but the last whole wave and
// the part-wave after it, which are shared (so that a share is between one and two tiles'
// k-loops); none where they fill no wave
STREAM_K_FN int stream_k_head(int tiles, int ktiles, int workers) {
    const int waves = tiles / workers, rest = tiles % workers;
    if (rest == 0 || ktiles == 0) return tiles;
    return waves > 0 ? (waves - 1) * workers : 0;
}

// k of a share at least (as split-K's LEAST_DEPTH): a shorter one costs its tile's fix-up more
// than it adds
constexpr int STREAM_K_LEAST_DEPTH = 256;

// The workers that share the tiles past `head`, their k-tiles `bk` deep: every worker of the
// grid, or fewer where the shares would be shallower than STREAM_K_LEAST_DEPTH (at least one
// where there is anything to share; the other workers have no share)
STREAM_K_FN int stream_k_workers(int tiles, int ktiles, int head, int grid_workers, int bk) {
    const long long iterations = static_cast<long long>(tiles - head) * ktiles;
    const int least = STREAM_K_LEAST_DEPTH / bk > 1 ? STREAM_K_LEAST_DEPTH / bk : 1;
    const long long most = iterations / least > 0 ? iterations / least : (iterations > 0);
    return most < grid_workers ? static_cast<int>(most) : grid_workers;
}

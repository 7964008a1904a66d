// kernels/stream_k.cuh on the host (tests/test_stream_k.py builds and runs it with nvcc):
//   stream_k_check            20000 random launches (tiles, k-tiles, workers): every k-tile of
//                             the shared tiles in exactly one segment, shares even to one k-tile,
//                             at most two partial segments a worker, the sharers of a tile in
//                             the workers' order, their workspace slots distinct and in range;
//                             prints "N cases, B bad" and exits 1 where B > 0
//   stream_k_check T K G B .. for each launch of T tiles of K k-tiles B deep on a grid of G
//                             workers, one line: the whole tiles, the sharing workers
#include <cstdio>
#include <cstdlib>
#include <vector>
#include "stream_k.cuh"
int main(int argc, char **argv) {
    if (argc > 1) {  // the host facts of the launches named
        for (int a = 1; a + 3 < argc; a += 4) {
            const int tiles = atoi(argv[a]), ktiles = atoi(argv[a + 1]);
            const int grid = atoi(argv[a + 2]), bk = atoi(argv[a + 3]);
            const int head = stream_k_head(tiles, ktiles, grid);
            printf("%d %d\n", head, stream_k_workers(tiles, ktiles, head, grid, bk));
        }
        return 0;
    }
    int bad = 0, cases = 0;
    auto fail = [&](const char *what, int tiles, int ktiles, int workers) {
        if (++bad <= 5)
            printf("%s: %d tiles of %d k-tiles on %d workers\n", what, tiles, ktiles, workers);
    };
    unsigned seed = 1;  // a linear congruential generator: the same launches on every machine
    auto draw = [&](int lo, int hi) {
        seed = seed * 1103515245u + 12345u;
        return lo + static_cast<int>((seed >> 8) % static_cast<unsigned>(hi - lo + 1));
    };
    for (int c = 0; c < 20000; ++c) {
        const int tiles = c % 3 == 0 ? draw(1, 40) : draw(1, 600);
        const int ktiles = c % 50 == 0 ? 0 : draw(1, 300), grid = draw(1, 132);
        const int bk = c % 2 ? 64 : 16;
        const int head = stream_k_head(tiles, ktiles, grid);
        const StreamK sk{tiles, ktiles, stream_k_workers(tiles, ktiles, head, grid, bk), head};
        const int workers = sk.workers, shared = tiles - head;
        if (sk.iterations() == 0) continue;
        ++cases;
        std::vector<int> cover(static_cast<size_t>(shared) * ktiles, 0), seen(shared, 0);
        std::vector<std::vector<int>> slots(shared);  // each shared tile's sharers' slots
        const long long even = sk.iterations() / workers;
        for (int w = 0; w < workers; ++w) {
            const long long n = sk.begin(w + 1) - sk.begin(w);
            if (n < even || n > even + 1) fail("uneven shares", tiles, ktiles, workers);
            if (workers > 1 && n * bk < STREAM_K_LEAST_DEPTH) fail("shallow", tiles, ktiles, workers);
            Share share(sk, w);
            Segment s;
            int partial = 0;
            while (share.next(s)) {
                if (s.kt0 < 0 || s.kt1 > ktiles || s.kt0 >= s.kt1)
                    fail("k-tiles", tiles, ktiles, workers);
                for (int k = s.kt0; k < s.kt1; ++k)
                    cover[static_cast<size_t>(s.tile) * ktiles + k]++;
                if (s.index < 0 || s.index >= s.sharers) fail("index", tiles, ktiles, workers);
                if (s.sharers > 1) {
                    ++partial;
                    slots[s.tile].push_back(sk.slot(w, s.tile));
                    if (s.index != static_cast<int>(slots[s.tile].size()) - 1)
                        fail("sharers out of order", tiles, ktiles, workers);
                } else if (s.kt0 != 0 || s.kt1 != ktiles) {
                    fail("a tile run alone but not whole", tiles, ktiles, workers);
                }
                seen[s.tile]++;
            }
            if (partial > 2) fail("more than two partial segments", tiles, ktiles, workers);
        }
        for (int x : cover)
            if (x != 1) {
                fail("a k-tile not in exactly one segment", tiles, ktiles, workers);
                break;
            }
        std::vector<int> used(2 * workers, 0);
        for (int t = 0; t < shared; ++t) {
            if (seen[t] != sk.sharers(t)) fail("sharers miscounted", tiles, ktiles, workers);
            for (int q : slots[t])
                if (q < 0 || q >= 2 * workers || used[q]++) fail("slot", tiles, ktiles, workers);
        }
    }
    printf("%d cases, %d bad\n", cases, bad);
    return bad != 0;
}

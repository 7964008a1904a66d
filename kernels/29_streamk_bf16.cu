// persistent_bf16 with the stream-K schedule (kernels/stream_k.cuh): the k-loops of the tiles
// past the whole waves laid end to end and cut into one even share a cluster, so that a
// product of few tiles, or of a few waves and a short one, keeps every multiprocessor busy
// for the same time, where split-K splits each tile a whole number of ways:
//   - the first tiles run whole, a cluster at a time, as the persistent rungs' waves; all but
//     the last whole wave and the part-wave after it (all of them where they fill a whole
//     number of waves, none where they fill no wave);
//   - the other tiles' k-tiles, end to end, are cut into as many shares as there are clusters
//     (or one a k-tile where there are fewer), each between one and two tiles' k-loops; a tile
//     one cluster runs whole is stored as any other, a tile several share is summed by the
//     last of them to finish, in the clusters' order, from the partial sums each left in the
//     workspace (split_k.cuh, StreamKPart): the same bits in every run, and no cluster waits
//     for another;
//   - the rest is persistent_bf16's (Bf16Steps on the persistent skeleton, kernels/
//     persistent.cuh): TMA with 128-byte swizzle, a producer and two consumer warpgroups,
//     CLUSTER blocks along m sharing each B tile by multicast, the tiles in groups of GROUP.
// One entry point for every shape; the host gives the workspace (core/schedule.py works out
// the whole tiles and the sharing clusters as the device does, for its size).
#include <cuda_bf16.h>

#include "bf16_steps.cuh"  // the persistent skeleton and the bfloat16 steps

struct StreamKBf16 : Bf16Steps<BM / CONSUMERS> {
    using Consumer = PairStore<BM / CONSUMERS>;
};

PERSISTENT_STREAM_K_AB(streamk_bf16, StreamKBf16)

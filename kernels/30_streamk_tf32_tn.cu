// persistent_tf32_tn with the stream-K schedule (kernels/stream_k.cuh), as streamk_bf16 is
// persistent_bf16's: the tiles past the whole waves have their k-loops laid end to end and cut
// into one even share a cluster, the last of a tile's sharers adding their partial sums in
// order (split_k.cuh, StreamKPart), so that a product of few tiles (one small side) keeps
// every multiprocessor busy where persistent_tf32_tn, which never splits k, leaves most idle.
// The rest is persistent_tf32_tn's: A and B^T K-major by TMA with 128-byte swizzle, TF32
// wgmmas from shared memory, CLUSTER blocks along m sharing each B^T tile by multicast.
// One entry point for every shape; the host gives the workspace (core/schedule.py).
#include "kmajor_steps.cuh"  // the persistent skeleton and its K-major steps

struct StreamKTf32Tn : KMajorSteps<WgmmaTf32> {
    static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
    using Consumer = PairStore<ROWS>;
};

PERSISTENT_STREAM_K_AB(streamk_tf32_tn, StreamKTf32Tn)

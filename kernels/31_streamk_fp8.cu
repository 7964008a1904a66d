// persistent_fp8 with the stream-K schedule (kernels/stream_k.cuh), as streamk_bf16 is
// persistent_bf16's: the tiles past the whole waves have their k-loops laid end to end and cut
// into one even share a cluster, the last of a tile's sharers adding their partial sums (FP32,
// each already promoted every k-tile) in order (split_k.cuh, StreamKPart), so that a product
// of few tiles (one small side) keeps every multiprocessor busy where persistent_fp8, which
// never splits k, leaves most idle.  The rest is persistent_fp8's (fp8_steps.cuh).
// One entry point for every shape; the host gives the workspace (core/schedule.py).
#include "fp8_steps.cuh"  // the skeleton and the FP8 steps

PERSISTENT_STREAM_K_AB_SCALED(streamk_fp8, PersistentFp8)

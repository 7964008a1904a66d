// ws_f64 with the stream-K schedule (kernels/stream_k.cuh), as streamk_bf16 is persistent_bf16's:
// the tiles past the whole waves have their k-loops laid end to end and cut into one even share
// a block, the last of a tile's sharers adding their partial sums in order (split_k.cuh,
// StreamKPart: the same bits in every run), so that a product of fewer tiles than blocks, or of
// a few waves and a short one, keeps every multiprocessor busy where ws_f64 splits each tile a
// whole number of ways (and not at all where the tiles are more than a wave, however short the
// last).  The rest is ws_f64's (F64Steps on the persistent skeleton): TMA with 128-byte swizzle,
// a producer warpgroup and consumer warps on mma.sync.m16n8k8.f64, BLOCKS blocks a
// multiprocessor.  One entry point for every shape; the host gives the workspace
// (core/schedule.py works out the whole tiles and the sharing blocks as the device does).
#include "f64_steps.cuh"  // the persistent skeleton and the FP64 steps

PERSISTENT_STREAM_K_AB(streamk_f64, F64Steps)

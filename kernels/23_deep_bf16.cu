// persistent_bf16 with 128 x 192 tiles, so that five stages fit: a stage of a 128 x 256 tile
// holds 48 KiB (four fit in the 227 KiB of a multiprocessor), of a 128 x 192 tile 40 KiB (five
// fit), so the copy engine runs one more k-tile ahead of the tensor cores, and each consumer
// thread holds 96 accumulators instead of 128 (one m64n192k16 wgmma per k16 step).  The B tile is
// three 64-column boxes, so its blocks are not clustered (CLUSTER 1).  The kernel is
// persistent_bf16's, built with these parameters (kernels/20_persistent_bf16.cu).
// How it compares with persistent_bf16: lab/entries (code-choices, "deep_bf16").
#include "20_persistent_bf16.cu"

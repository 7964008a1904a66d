// ws_bf16 (TMA, 128-byte swizzle, a producer warpgroup and two consumer warpgroups) made
// persistent and clustered:
//   - one block per multiprocessor (the grid is sized by the GPU's count, `sms`), each walking
//     the output tiles in turn, so the producer fetches the next tile's first stages while the
//     consumers store the last one, and no block waits to be scheduled;
//   - the tiles are walked in groups of GROUP tile rows (the order Triton's matmul tutorial
//     calls grouped): blocks running at the same time share rows of A and columns of B in L2;
//   - the consumers keep one k-tile of wgmmas in flight (wait_group 1) and release a stage as
//     soon as the wgmmas that read it are done, so the tensor cores do not drain between tiles;
//   - CLUSTER blocks stacked along m share each B tile: each loads 1/CLUSTER of its 64-column
//     boxes and the copy engine multicasts them into every block of the cluster.  A stage is
//     refilled only when the consumers of every block of the cluster have released it (their
//     `empty` arrivals go to each block's barrier), and no block leaves before the others.
//   - where the tiles are fewer than the clusters (a small product, or one small side), each
//     tile's k-tiles are split among `splits` work units (split_k.cuh; the registry's
//     shape_facts choose how many), walked like tiles; the unit that finishes a tile adds the
//     others' partial sums from `workspace` and stores it.
// A (m x k) and B (k x n) are row-major; B is MN-major for wgmma (its transpose bit, as in
// ws_bf16); everything past the matrices reads as zeros, so any m, n, k work.
//
// All of that but the steps is the persistent skeleton's (kernels/persistent.cuh): the rung is
// its bfloat16 steps (Bf16Steps: the A box and the B boxes, the m64nBNk16 wgmmas) with the two
// consumer warpgroups cooperating on each tile and storing their rows as column pairs.
#include <cuda_bf16.h>

#include "bf16_steps.cuh"  // the persistent skeleton and the bfloat16 steps

// The parameters (BM, BN, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel
// (BK, CONSUMERS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
struct PersistentBf16 : Bf16Steps<BM / CONSUMERS> {
    using Consumer = PairStore<BM / CONSUMERS>;
};

PERSISTENT_KERNELS_AB(persistent_bf16, PersistentBf16)

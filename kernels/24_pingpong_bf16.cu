// persistent_bf16 with ping-pong consumers (the order of CUTLASS's "ping-pong" warp-specialised
// kernel): each consumer warpgroup computes whole output tiles, the two taking a block's work
// units in turn (consumer 0 the block's 1st, 3rd, ... unit, consumer 1 the 2nd, 4th, ...), so
// that one warpgroup stores its tile while the other's wgmmas keep the tensor cores busy.  In
// persistent_bf16 both warpgroups share each tile (BM / 2 rows each) and store it together, and
// the tensor cores wait for the store: Nsight Compute had the tensor pipe idle 22.6% of the
// elapsed cycles at 4096 and 11.2% at 8192 (lab notebook, "Past cuBLAS at 4096 and 8192: what the profiler names").
//
// The producer fills the ring in the order of the block's units, as in persistent_bf16, so a
// consumer's first stage of a unit arrives only as the other consumer's unit is running out of
// k-tiles: their k-loops follow each other, and each epilogue lies beside the other's k-loop.
// A stage is read by one consumer (of each block of the cluster): its `empty` barrier expects
// CLUSTER arrivals, one per block.  Each consumer walks every unit of its block to keep its place
// in the ring, and skips the other's.  A consumer starts waiting on its unit's stages only once
// the other has passed every wait of the unit before (`order`, CUTLASS's ordered sequence
// barrier): waited on earlier, a stage's `full` barrier could be two phases behind, and a wait by
// parity would take the phase before last for the one awaited.
//
// The rest is persistent_bf16's: TMA with 128-byte swizzle into a STAGES-deep ring, one block
// per multiprocessor walking grouped tiles, CLUSTER blocks along m sharing each B tile through
// the copy engine's multicast, split-K where the tiles leave clusters idle (a split tile's
// partial sums from the 128 threads of the consumer that holds it), one k-tile of wgmmas in
// flight.  A (m x k) and B (k x n) are row-major; B is MN-major for wgmma; everything past the
// matrices reads as zeros, so any m, n, k work.
//
// The ping-pong order, the ring and the split fix-up are the persistent skeleton's
// (kernels/persistent.cuh, PINGPONG); the steps are persistent_bf16's (Bf16Steps).
#include <cuda_bf16.h>

#include "bf16_steps.cuh"  // the persistent skeleton and the bfloat16 steps

// The parameters (BM, BN, STAGES, CLUSTER, GROUP) and what the launch shares with the kernel
// (BK, CONSUMERS, THREADS, A_BYTES, B_BOX, B_BYTES, STAGE_BYTES) come from the registry entry.
struct PingpongBf16 : Bf16Steps<BM> {  // each consumer multiplies the tile's BM rows
    static constexpr bool PINGPONG = true;
    static_assert((BM / 64) * (BN / 2) <= 128, "at most 128 accumulators a consumer thread");
    using Consumer = PairStore<BM>;
};

PERSISTENT_KERNELS_AB(pingpong_bf16, PingpongBf16)

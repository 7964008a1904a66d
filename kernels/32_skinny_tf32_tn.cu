// streamk_tf32_tn for products with one small side m (a decode step: 16 to a few hundred rows
// of A against thousands of columns and depth): the operands exchanged, so that the small side
// is the wgmma's n, not its m (swap AB).
//   - wgmma's m is 64 rows a warpgroup at the least: at m = 16 a tile of 128 rows of A would
//     multiply 112 rows of zeros, and its A tile and accumulators would stand idle; wgmma's n
//     goes down to 8.  So the kernel computes C^T = Bt . A^T: its A is the n x k Bt (BM of its
//     rows a tile), its B the m x k A (BN of its rows, 16 to 64), both K-major rows of 128 bytes
//     as the TN rungs load them, and its tile's element (row, col) is C's [col][row]
//     (TransposedStore);
//   - at one small side the product streams Bt once from memory: few output tiles and a long
//     k, so the stream-K schedule (kernels/stream_k.cuh) spreads every tile's k-loop over the
//     clusters, and a stage is mostly Bt, so more stages keep more bytes in flight;
//   - the rest is streamk_tf32_tn's: TF32 wgmmas from shared memory, the last of a tile's
//     sharers adding their partial sums in order (the same bits in every run).
// One entry point for every shape; the host gives the workspace (core/schedule.py) and hands
// the operands over exchanged (the registry's args: Bt's map, A's map, C, n, m, k).
#include "kmajor_steps.cuh"  // the persistent skeleton and its K-major steps

struct SkinnyTf32Tn : KMajorSteps<WgmmaTf32> {
    static_assert(BN == 16 || BN == 32 || BN == 64, "wgmma n of 16, 32 or 64: the small side");
    static_assert(sizeof(elem_t) == 4 && sizeof(out_t) == 4, "float32 in and out");
    using Consumer = TransposedStore<ROWS>;
};

PERSISTENT_STREAM_K_AB(skinny_tf32_tn, SkinnyTf32Tn)  // its A: the product's B^T

// FP64 on Hopper's road: the double-precision tensor cores (DMMA) have no wgmma form, so the
// products stay warp-wide mma.sync.m16n8k8.f64 (as mma_f64 and cuBLAS's own Hopper DGEMM), but
// the tiles reach shared memory the Hopper way: a producer warpgroup issues TMA copies with
// 128-byte swizzle into a STAGES-deep ring of full/empty mbarriers, and the consumer warps, given
// the registers the producer gives up (setmaxnreg), only load fragments and multiply.  The
// kernel is persistent (BLOCKS blocks per multiprocessor, walking the output tiles in groups of
// 8 tile rows), so one tile's epilogue overlaps the next tile's first copies, and the consumers
// spend no instructions on addresses of global memory or on guards: what lies past the matrix
// arrives as zeros.
//
// mma_f64 pads its tile rows to spread a fragment load over the banks; a swizzled TMA tile
// cannot be padded, so the rows and columns each lane reads are chosen instead.  A k-tile is 16
// doubles (one 128-byte swizzle row): the A tile is [BM][16], the B tile BN / 16 boxes of
// [16][16], and the copy engine stores 16-byte unit u of row r at unit u ^ (r % 8).  A lane
// (group g, place t) of an m16n8k8 step reads A at mma row g -> tile row 2 (g % 4) + g / 4 and B
// at mma column g -> tile column 8 ((g / 2) % 2) + 2 (g / 4) + g % 2 (+ 4 for odd n8 steps, in
// 16-column pairs of steps): each half warp's sixteen 8-byte reads then cover the 32 banks
// once.  A lane's two results of a row stay side by side in C (mma columns 2t and 2t + 1 map to
// adjacent tile columns), so the epilogue stores them as one 16-byte double2 where C allows.
// Where the tiles are fewer than the blocks, each tile's k-tiles are split among `splits` work
// units (split_k.cuh, as in persistent_bf16); where they fill fewer than 8 waves of blocks but
// leave the last one short, only the last wave's tiles are split (`head` tiles run whole).
//
// On the persistent skeleton (kernels/persistent.cuh), with warps rather than warpgroups as its
// consumers (each warp releases a stage once its fragments are loaded: RELEASES = WARPS), a
// k-loop of its own (OWN_LOOP: fragments and mma.sync) and a store of its own (double2 pairs).
#include "f64_steps.cuh"  // the persistent skeleton and the FP64 steps

// the work units (the last argument, HEAD + TAIL x SPLITS) are worked out again by the skeleton
PERSISTENT_KERNELS(ws_f64, F64Steps,
                   (const __grid_constant__ CUtensorMap mapA,
                    const __grid_constant__ CUtensorMap mapB, out_t *__restrict__ C, int M, int N,
                    int K, int ldc, int accumulate, int splits, void *workspace, int head,
                    int units),
                   (&mapA, &mapB, nullptr, C, M, N, K, ldc, accumulate, 1.f),
                   (splits, head, workspace))

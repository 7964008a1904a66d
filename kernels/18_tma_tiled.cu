// Tiles through the tensor-memory accelerator (TMA): one thread asks the copy engine for each
// A and B tile (cp.async.bulk.tensor.2d, from a CUtensorMap the host made and passed by value),
// which lands in shared memory and completes on that stage's mbarrier; STAGES tiles are in
// flight while the block computes on the oldest.  The engine fills whatever lies past the
// matrix with zeros, so edges need no checks until the store.  Launched in clusters of CLUSTER
// blocks along x (the kernel checks it was: a launch without the cluster writes NaN, and fails
// verification).  The arithmetic is the register-blocked FMA of the course (TM x TN outputs per
// thread): this rung proves the launch path (tensor maps, clusters, mbarriers), not the speed.
#include "hopper.cuh"  // mbarriers, tma_load, cluster_blocks

// The parameters (BM, BN, BK, TM, TN, STAGES, CLUSTER) and what the launch shares with the
// kernel (THREADS_X, THREADS_Y, STAGE_BYTES) come from the registry entry (-D each).
#ifndef STAGE_BYTES
#error "BM, BN, BK, TM, TN, STAGES, CLUSTER and the registry's derived facts must be defined"
#endif

constexpr int THREADS = THREADS_X * THREADS_Y;

extern "C" __global__ void __launch_bounds__(THREADS)
    tma_tiled(const __grid_constant__ CUtensorMap mapA, const __grid_constant__ CUtensorMap mapB,
              elem_t *__restrict__ C, int M, int N, int K, int ldc, int accumulate) {
    extern __shared__ __align__(128) unsigned char smem_raw[];
    __shared__ __align__(8) uint64_t full[STAGES];
    // TMA destinations: 128-byte aligned
    elem_t *As = reinterpret_cast<elem_t *>(
        (reinterpret_cast<uintptr_t>(smem_raw) + 127) & ~static_cast<uintptr_t>(127));
    elem_t *Bs = As + STAGES * BM * BK;

    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * THREADS_X + tx;
    const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
    if (col0 >= N) return;  // the cluster's padding blocks past the last column
    const int ktiles = (K + BK - 1) / BK;

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) barrier_init(&full[s], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();

    auto issue = [&](int kt, int s) {
        barrier_expect(&full[s], STAGE_BYTES);
        tma_load(As + s * BM * BK, &mapA, &full[s], kt * BK, row0);
        tma_load(Bs + s * BK * BN, &mapB, &full[s], col0, kt * BK);
    };
    if (tid == 0)
        for (int s = 0; s < STAGES && s < ktiles; ++s) issue(s, s);

    elem_t acc[TM][TN] = {};
    for (int kt = 0; kt < ktiles; ++kt) {
        const int s = kt % STAGES;
        barrier_wait(&full[s], (kt / STAGES) & 1);
        const elem_t *a = As + s * BM * BK;
        const elem_t *b = Bs + s * BK * BN;
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            elem_t bv[TN];
#pragma unroll
            for (int j = 0; j < TN; ++j) bv[j] = b[kk * BN + tx + j * THREADS_X];
#pragma unroll
            for (int i = 0; i < TM; ++i) {
                const elem_t av = a[(ty * TM + i) * BK + kk];
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += av * bv[j];
            }
        }
        __syncthreads();  // every thread is done with stage s before the engine refills it
        if (tid == 0 && kt + STAGES < ktiles) {
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            issue(kt + STAGES, s);
        }
    }

    const bool in_cluster = cluster_blocks() == CLUSTER;
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        const int r = row0 + ty * TM + i;
        if (r >= M) continue;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int c = col0 + tx + j * THREADS_X;
            if (c < N)
                store_result(C, (long long)r * ldc + c, in_cluster ? acc[i][j] : elem_t(NAN),
                             accumulate);
        }
    }
}

// Runs of consecutive values loaded 16 bytes at a time, for the CUDA-core kernels that load
// rows of a matrix (or a row's run of k) so where they can (skinny_simt, skinny_dot).
#pragma once
#include "common.cuh"

// W consecutive values from p, in loads of up to 16 bytes (p aligned to them)
template <int W>
__device__ __forceinline__ void load_run(elem_t (&to)[W], const elem_t *p) {
    constexpr int BYTES = W * static_cast<int>(sizeof(elem_t));
    if constexpr (BYTES % 16 == 0) {
#pragma unroll
        for (int b = 0; b < BYTES / 16; ++b) {
            const uint4 v = reinterpret_cast<const uint4 *>(p)[b];
            memcpy(&to[b * 16 / sizeof(elem_t)], &v, 16);
        }
    } else if constexpr (BYTES == 8) {
        const uint2 v = *reinterpret_cast<const uint2 *>(p);
        memcpy(&to[0], &v, 8);
    } else {
#pragma unroll
        for (int w = 0; w < W; ++w) to[w] = p[w];
    }
}

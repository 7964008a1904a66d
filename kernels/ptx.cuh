// Small PTX helpers every tensor-core kernel shares (included by tile_copy.cuh and hopper.cuh).
#pragma once
#include "common.cuh"

// the shared-memory address of a generic pointer into shared memory (what PTX's .shared operands
// take)
__device__ __forceinline__ unsigned smem_addr(const void *p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// x rounded to TF32 (to nearest, ties away from zero), in a 32-bit register
__device__ __forceinline__ unsigned to_tf32(float x) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r;
}

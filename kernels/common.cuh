// Shared definitions for every matrix-multiplication kernel in this folder.
//
// Each kernel file is compiled once per instantiation with -DELEM_T=<float|double|int|...> and
// -D<NAME>=<value> for each compile-time parameter its registry entry declares (TILE, COARSEN,
// BM, ...), and exposes one `extern "C"` entry point named after its registry variant, so the host side
// (CuPy's RawModule) can load it by name.  All kernels share one signature:
//
//   C[M x N] (ldc)  =  A[M x K] (lda) . B[K x N] (ldb)            when accumulate == 0
//   C[M x N] (ldc) +=  A[M x K] (lda) . B[K x N] (ldb)            when accumulate != 0
//
// Matrices are row-major with leading dimensions lda >= K, ldb >= N, ldc >= N (seed 004).
// The seeds name the same product N x P . P x M (002) or N x M . M x P (004): see README.
#pragma once

#ifndef ELEM_T
#error "ELEM_T must be defined: -DELEM_T=float, double or int"
#endif

// The inputs' type; the output's and the sums' types default to it (the pipeline passes
// -DOUT_T and -DACC_T only where they differ: bfloat16 or half inputs with float output).
#ifndef OUT_T
#define OUT_T ELEM_T
#endif
#ifndef ACC_T
#define ACC_T OUT_T
#endif

typedef ELEM_T elem_t;
typedef OUT_T out_t;
typedef ACC_T acc_t;

#define MM_PARAMS                                                                        \
    const elem_t *__restrict__ A, const elem_t *__restrict__ B, elem_t *__restrict__ C, \
        int M, int N, int K, int lda, int ldb, int ldc, int accumulate

// Writes one result: C = v, or C += v for the C = C + A.B form of seed 004.  A template (of C's
// type, always elem_t) only so that it is compiled where used: elem_t may have no `+` (FP8).
template <typename T>
__device__ __forceinline__ void store_result(T *C, long long idx, elem_t v, int accumulate) {
    C[idx] = accumulate ? C[idx] + v : v;
}

// One FP64 tensor-core product (DMMA, sm_90 and newer): d (16 x 8) += a (16 x 8) . b (8 x 8), in
// the mma.sync fragment layout (lane (g, t): a = A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4];
// b = B[t][g], B[t + 4][g]; d = D[g][2t], D[g][2t + 1], D[g + 8][2t], D[g + 8][2t + 1])
__device__ __forceinline__ void mma_f64_m16n8k8(double (&d)[4], const double (&a)[4],
                                                const double (&b)[2]) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, "
        "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

// A warp's mma.sync accumulators, MI x NI fragments of four, set to zero (mma_tf32, mma_f64,
// ws_f64)
template <typename T, int MI, int NI>
__device__ __forceinline__ void zero_fragments(T (&acc)[MI][NI][4]) {
#pragma unroll
    for (int i = 0; i < MI; ++i)
#pragma unroll
        for (int j = 0; j < NI; ++j)
#pragma unroll
            for (int e = 0; e < 4; ++e) acc[i][j][e] = T(0);
}

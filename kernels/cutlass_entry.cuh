// The two C entry points of a CUTLASS build (kernels/cutlass_gemm.cu, cutlass_gemm_f64.cu),
// included last by its source, which defines in namespace mmbench_cutlass the library's `Gemm`,
// the epilogue's `Scalar` and `arguments(a, b, c, m, n, k, lda, ldb, ldc, beta)`:
//
//   size_t cutlass_gemm_workspace(m, n, k, lda, ldb, ldc)   bytes of workspace a launch needs
//   int    cutlass_gemm(A, B, C, m, n, k, lda, ldb, ldc, accumulate, workspace, stream)
//
// C = A . B (+ C where accumulate), through CUTLASS's device API as a user calls it for each
// product: 0, or 1 where CUTLASS cannot implement the product (alignment, shape), 2 where
// initialize fails (the kernel's parameters, its TMA descriptors, the workspace set up), 3 where
// the launch fails.
#pragma once
#include <cuda_runtime.h>

#include <cutlass/cutlass.h>

extern "C" size_t cutlass_gemm_workspace(int m, int n, int k, long lda, long ldb, long ldc) {
  using namespace mmbench_cutlass;
  return Gemm::get_workspace_size(
      arguments(nullptr, nullptr, nullptr, m, n, k, lda, ldb, ldc, Scalar(0)));
}

extern "C" int cutlass_gemm(const void* a, const void* b, void* c, int m, int n, int k, long lda,
                            long ldb, long ldc, int accumulate, void* workspace, void* stream) {
  using namespace mmbench_cutlass;
  Gemm gemm;
  auto args = arguments(a, b, c, m, n, k, lda, ldb, ldc, Scalar(accumulate ? 1 : 0));
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return 1;
  auto s = static_cast<cudaStream_t>(stream);
  if (gemm.initialize(args, workspace, s) != cutlass::Status::kSuccess) return 2;
  return gemm.run(s) == cutlass::Status::kSuccess ? 0 : 3;
}

// CUTLASS's Hopper FP64 GEMM as a reference line beside cuBLAS: CUTLASS has no FP64 kernel in
// its 3.x collective builders (wgmma takes no doubles), so this is its 2.x device GEMM for
// arch::Sm90, a multistage (cp.async) mainloop on the double-precision tensor-core MMA (DMMA,
// 16 x 8 x 4), as CUTLASS's own SM90 FP64 tests build it, from the headers of NVIDIA's
// nvidia-cutlass wheel (found where it is installed, never copied here).  Built as a shared
// library (registry `backend: shared`) with cutlass_gemm.cu's two C entry points
// (kernels/cutlass_entry.cuh).  C (m x n, row-major, leading dimension ldc) = A . B (+ C where
// accumulate), A m x k row-major and B k x n row-major, as the FP64 rungs take them.
// Parameters (-D): BM, BN, BK (the block's tile), WM, WN (a warp's), STAGES.
#include <cuda_runtime.h>

#include <cutlass/cutlass.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#include <cutlass/gemm/device/gemm.h>

namespace mmbench_cutlass {
using Layout = cutlass::layout::RowMajor;
using Gemm = cutlass::gemm::device::Gemm<
    double, Layout, double, Layout, double, Layout, double, cutlass::arch::OpClassTensorOp,
    cutlass::arch::Sm90, cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>,
    cutlass::gemm::GemmShape<16, 8, 4>,
    cutlass::epilogue::thread::LinearCombination<double, 1, double, double>,
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>, STAGES>;

using Scalar = double;  // alpha and beta
static Gemm::Arguments arguments(const void* a, const void* b, void* c, int m, int n, int k,
                                 long lda, long ldb, long ldc, Scalar beta) {
  auto* cc = static_cast<double*>(c);
  return Gemm::Arguments({m, n, k}, {static_cast<const double*>(a), lda},
                         {static_cast<const double*>(b), ldb}, {cc, ldc}, {cc, ldc}, {1.0, beta});
}
}  // namespace mmbench_cutlass

#include "cutlass_entry.cuh"  // the C entry points

// CUTLASS 3.x's Hopper GEMM as a reference line beside cuBLAS: the warp-specialised TMA + wgmma
// kernel built by CUTLASS's collective builders from the headers of NVIDIA's nvidia-cutlass
// wheel (found where it is installed, never copied here), its schedule and tile scheduler chosen
// by the registry's parameters.  Built as a shared library (registry `backend: shared`); the
// harness calls its two C entry points (kernels/cutlass_entry.cuh) through ctypes.
//
// C (m x n, row-major, leading dimension ldc) = A . B (+ C where accumulate), A m x k row-major,
// B k x n row-major (B_K_MAJOR = 0) or n x k row-major (B_K_MAJOR = 1, K-major, as FP8 and TF32
// take it).
//
// Parameters (-D): ELEM_T, OUT_T (core/elements.py; float inputs run on TF32 wgmma, as CUTLASS's
// builder maps them; e4m3 inputs on CUTLASS's FP8 mainloop, its sums promoted to FP32 registers
// every 4 MMAs, alpha 1: the inputs' scales), BM, BN (the output tile), CLUSTER (blocks
// of a cluster along m: TMA multicast of B), SCHEDULE (1: cooperative, both consumer warpgroups
// on one tile; 2: ping-pong, each warpgroup on a tile of its own), SCHEDULER (1: the persistent
// data-parallel tile scheduler; 2: stream-K), B_K_MAJOR.
// CUTLASS's headers in angle brackets: found on the include path of the installed wheel, not
// among the kernels' own headers (core/registry.py kernel_dependencies follows "..." alone)
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include <cute/tensor.hpp>
#include <cutlass/cutlass.h>
#include <cutlass/epilogue/collective/collective_builder.hpp>
#include <cutlass/gemm/collective/collective_builder.hpp>
#include <cutlass/gemm/device/gemm_universal_adapter.h>
#include <cutlass/gemm/kernel/gemm_universal.hpp>
#include <cutlass/util/packed_stride.hpp>

#ifndef OUT_T
#define OUT_T ELEM_T
#endif

namespace mmbench_cutlass {
using namespace cute;

template <class T> struct Cutlass { using type = T; };
template <> struct Cutlass<__nv_bfloat16> { using type = cutlass::bfloat16_t; };
template <> struct Cutlass<__nv_fp8_e4m3> { using type = cutlass::float_e4m3_t; };

using Element = typename Cutlass<ELEM_T>::type;
using ElementC = OUT_T;
using ElementAcc = float;
using LayoutA = cutlass::layout::RowMajor;
using LayoutB = cute::conditional_t<B_K_MAJOR, cutlass::layout::ColumnMajor, cutlass::layout::RowMajor>;
using LayoutC = cutlass::layout::RowMajor;
// TMA: 16 bytes of each operand's rows
constexpr int kAlign = 16 / sizeof(Element);
constexpr int kAlignC = 16 / sizeof(ElementC);
using TileShape = Shape<Int<BM>, Int<BN>, Int<128 / sizeof(Element)>>;
using ClusterShape = Shape<Int<CLUSTER>, _1, _1>;
using KernelSchedule = cute::conditional_t<SCHEDULE == 1,
                                           cutlass::gemm::KernelTmaWarpSpecializedCooperative,
                                           cutlass::gemm::KernelTmaWarpSpecializedPingpong>;
using EpilogueSchedule = cute::conditional_t<SCHEDULE == 1,
                                             cutlass::epilogue::TmaWarpSpecializedCooperative,
                                             cutlass::epilogue::TmaWarpSpecialized>;
using Scheduler = cute::conditional_t<SCHEDULER == 2, cutlass::gemm::StreamKScheduler,
                                      cutlass::gemm::PersistentScheduler>;

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, ElementAcc, ElementC, LayoutC,
    kAlignC, ElementC, LayoutC, kAlignC, EpilogueSchedule>::CollectiveOp;

using Mainloop = typename cutlass::gemm::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, Element, LayoutA, kAlign, Element,
    LayoutB, kAlign, ElementAcc, TileShape, ClusterShape,
    cutlass::gemm::collective::StageCountAutoCarveout<static_cast<int>(
        sizeof(typename Epilogue::SharedStorage))>,
    KernelSchedule>::CollectiveOp;

using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, Mainloop, Epilogue,
                                                    Scheduler>;
using Gemm = cutlass::gemm::device::GemmUniversalAdapter<Kernel>;

// B's leading dimension: as n x k row-major (K-major) its rows are ldb apart; as k x n row-major,
// seen as n x k, its k-steps are
template <bool KMajor, class Stride>
static void set_ldb(Stride& s, long ldb) {
  if constexpr (KMajor) {
    get<0>(s) = ldb;
  } else {
    get<1>(s) = ldb;
  }
}

using Scalar = float;  // alpha and beta

// the packed strides of each operand, their leading dimension set to the harness's
static typename Gemm::Arguments arguments(const void* a, const void* b, void* c, int m, int n,
                                          int k, long lda, long ldb, long ldc, Scalar beta) {
  auto sa = cutlass::make_cute_packed_stride(typename Kernel::StrideA{}, {m, k, 1});
  auto sb = cutlass::make_cute_packed_stride(typename Kernel::StrideB{}, {n, k, 1});
  auto sc = cutlass::make_cute_packed_stride(typename Kernel::StrideC{}, {m, n, 1});
  get<0>(sa) = lda;  // A (m x k) row-major: rows lda apart
  set_ldb<B_K_MAJOR != 0>(sb, ldb);
  get<0>(sc) = ldc;
  return typename Gemm::Arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {m, n, k, 1},
      {static_cast<const Element*>(a), sa, static_cast<const Element*>(b), sb},
      {{1.0f, beta}, static_cast<const ElementC*>(c), sc, static_cast<ElementC*>(c), sc}};
}
}  // namespace mmbench_cutlass

#include "cutlass_entry.cuh"  // the C entry points

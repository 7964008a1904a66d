#!/usr/bin/env bash
# Builds CUTLASS's own profiler with the kernels of our CUTLASS builds' configuration alone, for
# the harness-against-theirs table (lab/gpu.sh peers OUT profiler), into
# .cutlass/cutlass-profiler.tar.xz (ignored by git; a device call carries it alone, without the
# wheels, which with it would pass the 64 MiB a call carries: carry [".cutlass"]):
#
#   lab/cutlass_profiler.sh SRC [BUILD]
#
# SRC: a CUTLASS source tree at the version of the nvidia-cutlass wheel (the wheel carries the
# profiler's sources but not CUTLASS's root CMake files). From the tool library's mirror:
#   git -C /work/.mirror/NVIDIA+cutlass/repo archive v4.2.0 CMakeLists.txt CUDA.cmake \
#     bin2hex.cmake cuBLAS.cmake cuDNN.cmake customConfigs.cmake cmake include tools python \
#     LICENSE.txt | tar x -C SRC
# BUILD (default /tmp/cutlass-build): the CMake build folder.  The kernels: bfloat16, e4m3 and
# tf32 in, float32 sums and output, 128 x 128 tiles (k 64, 128, 32), clusters of one, A
# row-major and B column-major (CUTLASS's "tn"), cooperative, data-parallel and stream-K, TMA
# epilogue: eight kernels (the e4m3 ones with and without fast accumulation).  sm_90a only.
# The profiler's sources include cuRAND's device header (curand_kernel.h); where the CUDA
# toolkit lacks it (this project's CI machine does), CURAND_INCLUDE names a folder that holds it,
# such as the nvidia-curand wheel's nvidia/cu13/include (`pip download --no-deps nvidia-curand`,
# unzipped): it reaches the compilers through CPATH.
set -euo pipefail
src=$(realpath "${1:?usage: lab/cutlass_profiler.sh SRC [BUILD]}")
build=${2:-/tmp/cutlass-build}
root=$(cd "$(dirname "$0")/.." && pwd)
kernels="cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_f32_f32_128x128x64_1x1x1_0_tnn_align8_*cooperative_epi_tma"
kernels+=",cutlass3x_sm90_tensorop_gemm_e4m3_e4m3_f32_f32_f32_128x128x128_1x1x1_0_tnn_align16_*cooperative*epi_tma"
kernels+=",cutlass3x_sm90_tensorop_gemm_tf32_tf32_f32_f32_f32_128x128x32_1x1x1_0_tnn_align4_*cooperative_epi_tma"
mkdir -p "$build"
cmake -G Ninja -S "$src" -B "$build" -DCUTLASS_NVCC_ARCHS=90a -DCUTLASS_ENABLE_TESTS=OFF \
  -DCUTLASS_ENABLE_EXAMPLES=OFF -DCUTLASS_ENABLE_CUBLAS=OFF -DCUTLASS_ENABLE_CUDNN=OFF \
  -DCUTLASS_LIBRARY_OPERATIONS=gemm -DCUTLASS_UNITY_BUILD_ENABLED=ON \
  -DCUTLASS_LIBRARY_INSTANTIATION_LEVEL=max -DCUTLASS_LIBRARY_KERNELS="$kernels" > "$build/configure.log"
echo "kernels: $(find "$build/tools/library/generated" -name 'cutlass3x*.cu' | wc -l)"
start=$(date +%s)
# The libraries link against the driver by the name cuda_driver, which CUTLASS's CMake finds as
# the toolkit's stub libcuda.so; where the toolkit has no stubs (this project's CI machine), an
# empty library of that name with the driver's soname stands in (CUTLASS reaches the driver's
# functions through cudaGetDriverEntryPoint, so nothing is left unresolved).
stub=$(mktemp -d)
echo "" > "$stub/empty.c"
gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$stub/libcuda_driver.so" "$stub/empty.c"
LIBRARY_PATH=$stub${LIBRARY_PATH:+:$LIBRARY_PATH} \
  CPATH=${CURAND_INCLUDE:+$CURAND_INCLUDE:}${CPATH:-} ninja -C "$build" cutlass_profiler \
  > "$build/build.log" 2>&1 || { tail -20 "$build/build.log"; exit 1; }
echo "built in $(($(date +%s) - start)) s"
# the profiler, its libraries and the CUDA runtime it was linked against, stripped, in one
# archive (libcutlass.so holds CUTLASS's reference kernels: tens of MB unpacked, under 30 packed)
stage=$(mktemp -d)
cp "$build/tools/profiler/cutlass_profiler" "$build"/tools/library/libcutlass*.so "$stage/"
cp -L "$(ldd "$build/tools/profiler/cutlass_profiler" | awk '/libcudart/ {print $3}')" "$stage/"
strip "$stage"/*
mkdir -p "$root/.cutlass"
tar cf - -C "$stage" . | xz -9 -T2 > "$root/.cutlass/cutlass-profiler.tar.xz"
rm -rf "$stage"
du -h "$root/.cutlass/cutlass-profiler.tar.xz"

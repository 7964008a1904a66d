#!/usr/bin/env bash
# CUTLASS and Triton beside cuBLAS on a GPU machine (issue "CUTLASS and Triton as reference
# lines"):
#   lab/gpu.sh peers OUT check     the GPU tests of the CUTLASS builds (cutlass_bf16, _tf32,
#                                  _fp8, _f64: every build at 1024^3 and two odd shapes, padded where
#                                  CUTLASS's TMA refuses them) and of the flushed load, then
#                                  compute-sanitizer memcheck of each CUTLASS variant's first and
#                                  last build at two odd shapes run padded (33 x 32 x 48,
#                                  17 x 4112 x 144); CHECK_K (pytest -k) and CHECK_VARIANTS
#                                  (memcheck's) narrow it to some builds
#   lab/gpu.sh peers OUT msmf      cuBLAS BF16 (cublasGemmEx) and cuBLASLt FP8 at 4096 and 8192,
#                                  normal inputs, sustained and flushed (mamf-finder's MSMF: L2
#                                  flushed before every product), with the CUTLASS builds beside
#                                  them (PEERS=no leaves them out): OUT/msmf.csv, each row's
#                                  TFLOP/s, SM clock, power and duty
#   lab/gpu.sh peers OUT triton    the GPU tests of the Triton builds (triton_bf16, _tf32, _fp8:
#                                  the first and last build at 1024^3 and two odd shapes), then
#                                  memcheck of each one's first and last build at 33 x 4099 x 129
#                                  and 17 x 31 x 37, then Triton's own timings of the same kernel
#                                  (lab/benchmarks/triton_matmul_check.py: do_bench, do_bench's
#                                  loop without its L2 clearing, its CUDA-graph variant,
#                                  back-to-back events) at 4096 and 8192
#   lab/gpu.sh peers OUT profiler  CUTLASS's own profiler (.cutlass/cutlass-profiler.tar.xz,
#                                  built by lab/cutlass_profiler.sh; the call carries it alone,
#                                  without the wheels) on its kernels of our CUTLASS builds'
#                                  configuration (128 x 128, cooperative, data-parallel and
#                                  stream-K) at 4096 and 8192, the SM clock and power read every
#                                  20 ms meanwhile, with two kinds of input (DISTS, default
#                                  both): `normal`, N(0, 1) as the harness's normal inputs
#                                  (--dist=gaussian,...,scale:-1); `integer`, the same rounded
#                                  to integers, which is what --dist=gaussian,mean:0,stddev:1
#                                  gives (CUTLASS's Distribution rounds unless scale is
#                                  negative): OUT/profiler-SIZE-DIST.*.csv, OUT/clocks-SIZE-DIST.csv
#   lab/gpu.sh peers OUT harness-cutlass   the harness's figures of our CUTLASS builds of that
#                                  configuration and the cuBLAS of each class, burst and
#                                  sustained (OUT/harness-cutlass.csv)
#   lab/gpu.sh peers OUT one-place cutlass_fp8 (that configuration), cuBLASLt and persistent_fp8
#                                  (VARIANTS) in bursts from one place (sampling.placements 1:
#                                  the same buffers every launch, as CUTLASS's profiler times
#                                  them) at 4096, and verified at the ladder's odd sizes, int09
#                                  and normal inputs; then at 4096 from four places on the same
#                                  machine: OUT/one-place.csv (its column `placements`)
#   lab/gpu.sh peers OUT harness   the harness's figures of the same: the Triton builds at
#                                  STAGES 4 and the cuBLAS of each class at 4096 and 8192, normal
#                                  inputs, burst and sustained (HARNESS_LOADS='[sustained]':
#                                  those alone): OUT/harness.csv
#   lab/gpu.sh peers OUT launches  whether the profiler's lead is its timing of launches back to
#                                  back: PART=profiler (carry .cutlass alone) runs each of
#                                  LAUNCH_KERNELS (default BF16 data-parallel, FP8 data-parallel
#                                  and stream-K) at 4096 alone, normal and integer inputs, timed
#                                  over 1 launch (five runs), 100 (its default) and 2000 (the SM
#                                  clock read every 20 ms meanwhile; ITERS: other counts,
#                                  WARMUP: the profiler's warm-up launches, default its own 10);
#                                  PART=harness (carry .whl,
#                                  on the same machine right after) the harness's cutlass_bf16
#                                  and cutlass_fp8 builds of those kernels at 4096 from one place,
#                                  int09 and normal inputs, bursts: each row's single launch
#                                  (kernel_ms) and its batched launches (batch_ms);
#                                  PART=cache cutlass_fp8's and persistent_fp8's single
#                                  launches with L2 as the pass's copy left it and flushed:
#                                  OUT/launches-*.csv
# OUT receives the logs and tables.
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
# shellcheck source=lab/gpu/timed.bash
. "$(dirname "$0")/timed.bash"
# memcheck VARIANTS SHAPE...: compute-sanitizer memcheck of each variant's first and last build
# at each shape ("m n k") into OUT/memcheck.log, then how many were clean
memcheck() {
  local variants=$1
  shift
  local shapes=()
  for shape in "$@"; do shapes+=(--shape $shape); done  # each build checked at every shape
  for v in $variants; do
    for which in first last; do
      python3 tools/memcheck.py "$v" "${shapes[@]}" --$which 1
    done
  done > "$out/memcheck.log" 2>&1
  local count=$(($(echo $variants | wc -w) * $# * 2))
  echo "memcheck: $(grep -c "ERROR SUMMARY: 0 errors" "$out/memcheck.log") of $count clean"
  grep -h "ERROR SUMMARY" "$out/memcheck.log" | sort | uniq -c
}
# rates EXPERIMENT CSV: the experiment's rows, each one's rate, clock, power, duty and whether
# its clocks settled, into CSV
rates() {
  python3 - "results/$1/tables/timings.csv" "$2" <<'PY'
import sys
import pandas as pd
t = pd.read_csv(sys.argv[1])
keep = ["variant", "instance", "dtype", "m", "load", "verification", "kernel_gflops",
        "kernel_ms_median", "sm_clock_mhz", "power_w_median", "gflops_per_w", "duty", "settled"]
t = t[[c for c in keep if c in t]].sort_values(["dtype", "m", "variant", "load", "kernel_gflops"])
t.to_csv(sys.argv[2], index=False)
print(t.to_string(index=False))
PY
}
case "$stage" in
check)
  start=$(date +%s)
  python3 -m pytest -q -m gpu -p no:cacheprovider -s -k "${CHECK_K:-cutlass_builds or flushed_load}" \
    > "$out/tests.log" 2>&1
  echo "GPU tests: exit $?, $(($(date +%s) - start)) s"
  grep -h "passed\|failed\|FAILED\|TFLOP/s\|GFLOP/s" "$out/tests.log" | tail -30
  memcheck "${CHECK_VARIANTS:-cutlass_bf16 cutlass_tf32 cutlass_fp8 cutlass_f64}" "33 32 48" "17 4112 144"
  ;;
msmf)
  variants="[cublas, cublaslt_fp8, cutlass_bf16, cutlass_fp8]"
  [ "${PEERS:-yes}" = no ] && variants="[cublas, cublaslt_fp8]"
  timed msmf --config experiment=msmf "variants=$variants" 'sizes=[4096, 8192]' \
    'dtypes=[bfloat16, float8_e4m3]' 'distribution=[normal]' 'load=[sustained, flushed]' \
    'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
  rates msmf "$out/msmf.csv"
  ;;
triton)
  start=$(date +%s)
  python3 -m pytest -q -m gpu -p no:cacheprovider -s -k "triton_builds" > "$out/tests.log" 2>&1
  echo "GPU tests: exit $?, $(($(date +%s) - start)) s"
  grep -ah "passed\|failed\|FAILED\|not PASS\|GFLOP/s" "$out/tests.log" | cut -c1-300 | tail -20
  memcheck "triton_bf16 triton_tf32 triton_fp8" "33 4099 129" "17 31 37"
  python3 lab/benchmarks/triton_matmul_check.py 2>&1 | tee "$out/triton_tools.log" | tail -20
  ;;
harness)
  timed harness --config experiment=triton-harness \
    "variants=[triton_bf16, triton_tf32, triton_fp8, cublas, cublas_tf32, cublaslt_fp8]" \
    'sizes=[4096, 8192]' 'dtypes=[float32, bfloat16, float8_e4m3]' 'distribution=[normal]' \
    "load=${HARNESS_LOADS:-[burst, sustained]}" \
    'params={triton_bf16: {STAGES: [4]}, triton_tf32: {STAGES: [4]}, triton_fp8: {STAGES: [4]}}' \
    'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
  rates triton-harness "$out/harness.csv"
  ;;
profiler)
  pack=.cutlass/cutlass-profiler.tar.xz
  [ -f "$pack" ] || { echo "no $pack: build it with lab/cutlass_profiler.sh and carry .cutlass" >&2; exit 2; }
  dir=$(mktemp -d)
  tar xJf "$pack" -C "$dir"
  for size in 4096 8192; do
    for dist in ${DISTS:-normal integer}; do
      case $dist in
      normal) spec=gaussian,mean:0,stddev:1,scale:-1 ;;
      integer) spec=gaussian,mean:0,stddev:1 ;;
      *) echo "DISTS: $dist is not normal or integer" >&2; exit 2 ;;
      esac
      nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw --format=csv,noheader -lms 20 \
        > "$out/clocks-$size-$dist.csv" &
      smi=$!
      # the profiler's own protocol: warm-up runs, then timed ones after a sleep (its defaults)
      LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$dir/cutlass_profiler" \
        --operation=Gemm --m=$size --n=$size --k=$size --beta=0 \
        --dist=$spec --verification-enabled=false --kernels=cutlass3x_sm90_tensorop_gemm \
        --output="$out/profiler-$size-$dist" > "$out/profiler-$size-$dist.log" 2>&1
      echo "profiler at $size, $dist inputs ($spec): exit $?"
      kill $smi
      grep -h "Operation:\|Math:\|Runtime:\|Status:" "$out/profiler-$size-$dist.log" | paste - - - - | head -20
    done
  done
  ;;
one-place)
  # CUTLASS's profiler times every launch from the same buffers; the harness from four places in
  # turn (sampling.placements).  FP8 at 4096 (A and B: 32 MiB, within the 50 MiB L2) from one
  # place, and the ladder's odd sizes verified in the same run
  variants=${VARIANTS:-[cutlass_fp8, cublaslt_fp8, persistent_fp8]}
  params='params={cutlass_fp8: {BN: [128], SCHEDULE: [1]}, persistent_fp8: {BM: [128], BN: [128], STAGES: [6], CLUSTER: [1], GROUP: [8], CHAIN: [8]}}'
  timed one-place --config experiment=one-place \
    "variants=$variants" \
    'sizes=[1, 31, 33, 4096, 4097]' 'shapes=[[1000, 1100, 37]]' 'dtypes=[float8_e4m3]' \
    'distribution=[int09, normal]' 'load=[burst]' 'sampling={placements: 1}' \
    "$params" \
    'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
  grep -h "configurations:\|UNEXPECTED" results/one-place/tables/summary.txt
  cp results/one-place/tables/timings.csv /tmp/one-place-1.csv
  # the same experiment (its builds kept) at 4096 from four places, on the same machine
  timed one-place-4 --config experiment=one-place \
    "variants=$variants" \
    'sizes=[4096]' 'shapes=[]' 'dtypes=[float8_e4m3]' 'distribution=[normal]' 'load=[burst]' \
    'sampling={placements: 4}' \
    "$params" \
    'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
  python3 - /tmp/one-place-1.csv results/one-place/tables/timings.csv "$out/one-place.csv" <<'PY'
import sys
import pandas as pd
keep = ["variant", "instance", "m", "n", "k", "distribution", "memory", "placements",
        "verification", "max_abs_error", "tolerance", "kernel_gflops", "sm_clock_mhz"]
t = pd.concat([pd.read_csv(f) for f in sys.argv[1:3]], ignore_index=True)
t = t[[c for c in keep if c in t]]
t.to_csv(sys.argv[3], index=False)
print(t[t.m == 4096].sort_values(["variant", "placements"]).to_string(index=False))
PY
  ;;
launches)
  case "${PART:?PART=profiler, harness or cache}" in
  profiler)
    pack=.cutlass/cutlass-profiler.tar.xz
    [ -f "$pack" ] || { echo "no $pack: build it with lab/cutlass_profiler.sh and carry .cutlass" >&2; exit 2; }
    dir=$(mktemp -d)
    tar xJf "$pack" -C "$dir"
    base=cutlass3x_sm90_tensorop_gemm
    kernels=${LAUNCH_KERNELS:-"${base}_bf16_bf16_f32_f32_f32_128x128x64_1x1x1_0_tnn_align8_warpspecialized_cooperative_epi_tma ${base}_e4m3_e4m3_f32_f32_f32_128x128x128_1x1x1_0_tnn_align16_warpspecialized_cooperative_epi_tma ${base}_e4m3_e4m3_f32_f32_f32_128x128x128_1x1x1_0_tnn_align16_stream_k_warpspecialized_cooperative_epi_tma"}
    for dist in normal integer; do
      spec=gaussian,mean:0,stddev:1; [ $dist = normal ] && spec=$spec,scale:-1
      for kernel in $kernels; do
        for iters in ${ITERS:-1 1 1 1 1 100 2000}; do
          tag=$dist-$iters
          [ $iters = 2000 ] && { nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw \
            --format=csv,noheader -lms 20 > "/tmp/clocks-$kernel-$dist.csv" & smi=$!; }
          LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} "$dir/cutlass_profiler" \
            --operation=Gemm --m=4096 --n=4096 --k=4096 --beta=0 --dist=$spec \
            --verification-enabled=false --kernels="$kernel" --profiling-iterations=$iters ${WARMUP:+--warmup-iterations=$WARMUP} \
            --output="/tmp/launches-$tag" > /tmp/launches.log 2>&1
          [ $iters = 2000 ] && kill $smi
          rt=$(grep -h "Runtime:" /tmp/launches.log | head -1 | awk '{print $2}')
          clock=""
          [ $iters = 2000 ] && clock=$(awk -F', ' '{gsub(/ MHz/,"",$2); if ($2+0 > 1000) print $2}' \
            "/tmp/clocks-$kernel-$dist.csv" | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)], a[1], a[NR], NR}')
          echo "$kernel,$dist,$iters,$rt,$clock"
        done
      done
    done | tee "$out/launches-profiler.csv"
    tar czf "$out/launches-clocks.tgz" -C /tmp $(cd /tmp && ls clocks-*.csv)
    ;;
  harness)
    timed launches --config experiment=launches \
      'variants=[cutlass_bf16, cutlass_fp8]' 'sizes=[4096]' 'shapes=[]' \
      'dtypes=[bfloat16, float8_e4m3]' 'distribution=[int09, normal]' 'load=[burst]' \
      'sampling={placements: 1}' \
      'params={cutlass_bf16: {BM: [128], BN: [128], CLUSTER: [1], SCHEDULE: [1], SCHEDULER: [1]}, cutlass_fp8: {BM: [128], BN: [128], CLUSTER: [1], SCHEDULE: [1], SCHEDULER: [1, 2]}}' \
      'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
    python3 - results/launches/tables/timings.csv "$out/launches-harness.csv" <<'PY'
import sys
import pandas as pd
t = pd.read_csv(sys.argv[1])
keep = ["variant", "instance", "dtype", "m", "distribution", "verification", "samples",
        "kernel_ms_median", "kernel_ms_iqr", "batch_size", "batch_samples", "batch_ms_median",
        "batch_ms_iqr", "sm_clock_mhz", "sm_clock_mhz_min", "gpu_uuid"]
t = t[[c for c in keep if c in t]]
t["single_tflops"] = 2 * 4096**3 / t.kernel_ms_median / 1e9
t["batched_tflops"] = 2 * 4096**3 / t.batch_ms_median / 1e9
t.to_csv(sys.argv[2], index=False)
print(t.drop(columns=["gpu_uuid"]).to_string(index=False))
PY
    ;;
  cache)
    # the same single launches after the pass's copy with L2 as the copy left it (warm) and
    # flushed by a memset of twice its size (cold): is the copy's L2 the single launch's gap?
    timed launches-cache --config experiment=launches-cache \
      'variants=[cutlass_fp8, persistent_fp8]' 'sizes=[4096]' 'shapes=[]' \
      'dtypes=[float8_e4m3]' 'distribution=[int09]' 'load=[burst]' 'memory=[pinned]' \
      'cache=[warm, cold]' 'sampling={placements: 1}' \
      'params={cutlass_fp8: {BM: [128], BN: [128], CLUSTER: [1], SCHEDULE: [1], SCHEDULER: [1]}, persistent_fp8: {BM: [128], BN: [128], STAGES: [6], CLUSTER: [1], GROUP: [8], CHAIN: [8]}}' \
      'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
    python3 - results/launches-cache/tables/timings.csv "$out/launches-cache.csv" <<'PY'
import sys
import pandas as pd
t = pd.read_csv(sys.argv[1])
keep = ["variant", "instance", "cache", "verification", "samples", "kernel_ms_median",
        "kernel_ms_iqr", "batch_size", "batch_ms_median", "sm_clock_mhz", "gpu_uuid"]
t = t[[c for c in keep if c in t]]
t.to_csv(sys.argv[2], index=False)
print(t.drop(columns=["gpu_uuid"]).to_string(index=False))
PY
    ;;
  *) echo "PART: profiler, harness or cache, not $PART" >&2; exit 2 ;;
  esac
  ;;
harness-cutlass)
  timed harness-cutlass --config experiment=cutlass-harness \
    "variants=[cutlass_bf16, cutlass_tf32, cutlass_fp8, cublas, cublas_tf32_tn, cublaslt_fp8]" \
    'sizes=[4096, 8192]' 'dtypes=[float32, bfloat16, float8_e4m3]' 'distribution=[normal]' \
    'load=[burst, sustained]' \
    'params={cutlass_bf16: {BN: [128], SCHEDULE: [1]}, cutlass_tf32: {BN: [128], SCHEDULE: [1]}, cutlass_fp8: {BN: [128], SCHEDULE: [1]}}' \
    'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
  rates cutlass-harness "$out/harness-cutlass.csv"
  ;;
*)
  echo "unknown peers stage $stage; valid: check, msmf, triton, profiler, harness, harness-cutlass, one-place, launches" >&2
  exit 2
  ;;
esac

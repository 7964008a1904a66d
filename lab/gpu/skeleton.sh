#!/usr/bin/env bash
# The persistent skeleton on a GPU machine (issue "past cuBLAS at any shape", item 1): the Hopper
# rungs written once in kernels/persistent.cuh, checked against their sources before it.
#   lab/gpu.sh skeleton OUT check        the GPU tests of the rungs on the skeleton (same bits in
#                                          two runs, split-K products, odd shapes and leading
#                                          dimensions; TESTS=no leaves them out), then
#                                          compute-sanitizer memcheck of each rung's first and
#                                          last instantiation at three odd shapes
#                                          (MEMCHECK_SHAPES, default "33 31 37|17 4099 129|1000 77
#                                          3001": a side < 32, a split product)
#   lab/gpu.sh skeleton OUT pair         OLD_TREE=<a checkout before the skeleton>: each of
#                                          VARIANTS (default the skeleton's ladder rungs) against
#                                          its sources in OLD_TREE side by side (lab/gpu/paired.sh
#                                          sources) at SOURCES_SIZES (default [4096,8192]),
#                                          TUNED_GPU's tuned instantiation
# OUT receives the logs and tables.
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
rungs="persistent_bf16 pingpong_bf16 tmastore_bf16 streamk_bf16 persistent_fp8 persistent_tf32 persistent_tf32_tn tmastore_tf32_tn ws_f64"
if [ "$stage" = check ]; then
  if [ "${TESTS:-yes}" = yes ]; then
    start=$(date +%s)
    python3 -m pytest -q -m gpu -p no:cacheprovider -s \
      -k "same_bits or split_k_products or tensor_core_rungs or driver_launched" \
      > "$out/tests.log" 2>&1
    echo "tests: exit $?, $(($(date +%s) - start)) s"
    grep -h "rungs,\|passed\|failed\|FAILED\|Error" "$out/tests.log" | tail -12
  fi
  shapes=${MEMCHECK_SHAPES:-"33 31 37|17 4099 129|1000 77 3001"}
  IFS='|' read -ra list <<< "$shapes"
  for shape in "${list[@]}"; do
    start=$(date +%s)
    python3 tools/memcheck.py $rungs --shape $shape --first 1 > "$out/memcheck_${shape// /x}.log" 2>&1
    first=$?
    python3 tools/memcheck.py $rungs --shape $shape --last 1 >> "$out/memcheck_${shape// /x}.log" 2>&1
    echo "memcheck $shape: exit $first and $?, $(($(date +%s) - start)) s"
    grep -c "ERROR SUMMARY: 0 errors" "$out/memcheck_${shape// /x}.log"
    grep -v "ERROR SUMMARY: 0 errors" "$out/memcheck_${shape// /x}.log" | head -5
  done
elif [ "$stage" = pair ]; then
  VARIANTS=${VARIANTS:-"persistent_bf16 tmastore_bf16 persistent_fp8 persistent_tf32 persistent_tf32_tn tmastore_tf32_tn ws_f64"} \
    SOURCES_SIZES=${SOURCES_SIZES:-[4096,8192]} SOURCES_SHAPES=${SOURCES_SHAPES:-[]} \
    exec "$here/paired.sh" "$out" sources
else
  echo "unknown stage $stage: check, pair"; exit 2
fi

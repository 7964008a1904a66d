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
#   lab/gpu.sh skeleton OUT streamk      streamk_bf16, streamk_tf32_tn, streamk_fp8 (stream-K):
#                                          the GPU tests that run them (same bits in two runs,
#                                          odd shapes and leading dimensions), memcheck of their
#                                          first and last instantiation at the three odd shapes,
#                                          then every instantiation of each beside the rung it is
#                                          built from (TUNED_GPU's tuning, the nearest tuned
#                                          shape) and the cuBLAS of its class at the
#                                          issue's kinds of shape (SK_SHAPES, one small side, LLM
#                                          layers; SK_SIZES, squares between the tuned ones),
#                                          normal inputs, bursts: each shape's best GFLOP/s of
#                                          each and their ratios
#   lab/gpu.sh skeleton OUT skinny       skinny_bf16, _tf32_tn, _fp8 (the operands exchanged for one
#                                          small side) as streamk does the stream-K rungs, each
#                                          beside its stream-K rung and the cuBLAS of its class
#                                          at products with one small side (SK_SHAPES)
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
rungs="persistent_bf16 pingpong_bf16 tmastore_bf16 streamk_bf16 streamk_tf32_tn streamk_fp8 persistent_fp8 persistent_tf32 persistent_tf32_tn tmastore_tf32_tn ws_f64"
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
elif [ "$stage" = streamk ] || [ "$stage" = skinny ]; then
  if [ "$stage" = streamk ]; then
    new_rungs="streamk_bf16 streamk_tf32_tn streamk_fp8"
    classes=("bf16 bfloat16 streamk_bf16 persistent_bf16 cublas"
             "tf32 float32 streamk_tf32_tn persistent_tf32_tn cublas_tf32_tn"
             "fp8 float8_e4m3 streamk_fp8 persistent_fp8 cublaslt_fp8")
    shapes=${SK_SHAPES:-"[[16,8192,8192],[64,14336,4096],[128,4096,4096],[320,11008,4096],[8192,128,8192],[1000,1100,37],[8192,11008,4096],[4096,4096,14336]]"}
    sizes=${SK_SIZES:-"[2560,3584,4096]"}
    tests="same_bits or streamk"
    ref_tuned=(tuned=kernels/tuned.csv "tuned_gpu=${TUNED_GPU:-auto}")  # the base rungs' tuning
  else
    new_rungs=${SKINNY:-"skinny_bf16 skinny_tf32_tn skinny_fp8"}
    classes=("bf16 bfloat16 skinny_bf16 streamk_bf16 cublas"
             "tf32 float32 skinny_tf32_tn streamk_tf32_tn cublas_tf32_tn"
             "fp8 float8_e4m3 skinny_fp8 streamk_fp8 cublaslt_fp8")
    shapes=${SK_SHAPES:-"[[16,8192,8192],[32,4096,4096],[64,14336,4096],[128,4096,4096],[128,11008,4096],[200,8192,8192],[320,11008,4096]]"}
    sizes=${SK_SIZES:-"[]"}
    tests="same_bits or skinny"
    ref_tuned=()  # the stream-K rungs are not tuned: every instantiation
  fi
  if [ "${TESTS:-yes}" = yes ]; then  # TESTS=no: the comparison only
    start=$(date +%s)
    python3 -m pytest -q -m gpu -p no:cacheprovider -s -k "$tests" > "$out/tests.log" 2>&1
    echo "tests: exit $?, $(($(date +%s) - start)) s"
    grep -h "rungs,\|passed\|failed\|FAILED\|Error" "$out/tests.log" | tail -8
    for shape in "33 31 37" "17 4099 129" "1000 77 3001"; do
      for which in first last; do
        python3 tools/memcheck.py $new_rungs --shape $shape --$which 1
      done
    done > "$out/memcheck.log" 2>&1
    echo "memcheck: $(grep -c 'ERROR SUMMARY: 0 errors' "$out/memcheck.log") of" \
      "$((6 * $(wc -w <<< "$new_rungs"))) clean"
  fi
  common=("sizes=$sizes" "shapes=$shapes" 'load=[burst]' 'distribution=[normal]'
          'profile={enabled: false}' 'memory=[pinned]' 'report={figures: [], tables: []}')
  # each class: the new rung, the rung it is built from (tuned: the nearest tuned shape), and
  # the cuBLAS of its class
  for class in "${classes[@]}"; do
    read -r name dtype new old ref <<< "$class"
    [[ " $new_rungs " == *" $new "* ]] || continue  # SKINNY: those rungs' classes only
    start=$(date +%s)
    timeout "${LIMIT:-240}" snakemake --cores 16 --config "experiment=sk_ref_$name" \
      "variants=[$old,$ref]" "dtypes=[$dtype]" "${ref_tuned[@]}" "${common[@]}" > "$out/sk_ref_$name.log" 2>&1
    echo "$old and $ref: exit $?, $(($(date +%s) - start)) s"
    start=$(date +%s)
    timeout "${LIMIT:-240}" snakemake --cores 16 --config "experiment=sk_new_$name" \
      "variants=[$new]" "dtypes=[$dtype]" "${common[@]}" > "$out/sk_new_$name.log" 2>&1
    echo "$new: exit $?, $(($(date +%s) - start)) s"
    cp "results/sk_ref_$name/tables/timings.csv" "$out/sk_ref_$name.csv" 2>/dev/null
    cp "results/sk_new_$name/tables/timings.csv" "$out/sk_new_$name.csv" 2>/dev/null
    python3 - "$out" "$name" "$new" "$old" "$ref" <<'PY'
import sys
import pandas as pd
out, name, new, old, ref = sys.argv[1:]
t = pd.concat([pd.read_csv(f"{out}/sk_ref_{name}.csv"), pd.read_csv(f"{out}/sk_new_{name}.csv")])
bad = t[t.verification != "PASS"]
for _, r in bad.iterrows():
    print("NOT PASS:", r.variant, r.instance, r.m, r.n, r.k, r.verification, str(r.get("error", ""))[:200])
ok = t[t.verification == "PASS"]
best = ok.groupby(["m", "n", "k", "variant"]).kernel_gflops.max().unstack("variant") / 1e3
best["new/rung"] = best[new] / best[old]
best["new/cublas"] = best[new] / best[ref]
best["rung/cublas"] = best[old] / best[ref]
print(f"{name}: TFLOP/s, best instantiation each (normal inputs, bursts)")
print(best.round(3).to_string())
PY
  done
elif [ "$stage" = pair ]; then
  VARIANTS=${VARIANTS:-"persistent_bf16 tmastore_bf16 persistent_fp8 persistent_tf32 persistent_tf32_tn tmastore_tf32_tn ws_f64"} \
    SOURCES_SIZES=${SOURCES_SIZES:-[4096,8192]} SOURCES_SHAPES=${SOURCES_SHAPES:-[]} \
    exec "$here/paired.sh" "$out" sources
else
  echo "unknown stage $stage: check, streamk, skinny, pair"; exit 2
fi

#!/usr/bin/env bash
# The ladder at every size on a GPU machine (issue "The ladder at every size"), one device call
# per sub-stage (they run in the order given; LIMIT seconds, default 560, stops a long run so
# that the call returns, and the same sub-stage run again on the same machine resumes it):
#   test      the split-K GPU test (tests/test_gpu.py -k split_k)
#   memcheck  compute-sanitizer memcheck of the sweep's rungs (the first instantiation and each
#             tuning row's) at two odd shapes where they split k: 129 x 1001 x 3001 and
#             1 x 33 x 5000 (MEMCHECK_VARIANTS, MEMCHECK_SHAPES="m n k;m n k": others;
#             MEMCHECK_WHERE="STAGES > 4": the instantiations for which it holds, not the first;
#             every variant named must have one; TUNED_GPU=MODEL: that model's tuned rows, on a
#             GPU kernels/tuned.csv lacks)
#   tune      the tune preset cut to the sweep's rungs, in bursts (results/tune_sizes): every
#             instantiation at TUNE_SIZES (default [1024,1536,2048,3072,4096]) and TUNE_SHAPES
#             (default the tune preset's three with one small side), its fastest per shape
#   (RUNGS="a,b": memcheck these rungs only; TUNE_VARIANTS=[a,cublas] and TUNE_PARAMS={a: {...}}
#   tune those only; TUNE_SUSTAINED=[8192] also tunes those sizes under sustained load;
#   TUNE_EXPERIMENT=name writes results/name instead of results/tune_sizes)
#   sweep     the sweep preset (results/sweep) with TUNED (default kernels/tuned.csv)
#   tail      lab/benchmarks/tail_split.py: TAIL_VARIANT's (default ws_f64) tuned instantiation at
#             TAIL_SIZES (default "4096 8192") with its last wave split 1, 2, ... ways, each timed
#             beside cuBLAS (TAIL_EXPR: another TAIL fact to try)
#   sources   VARIANTS="a b" OLD_TREE=<an older checkout>: lab/gpu/paired.sh's side-by-side
#             check of each variant's ladder instantiation against OLD_TREE's kernel file
#             (SOURCES_SIZES, SOURCES_SHAPES: where)
# Usage (repository root): lab/gpu.sh sizes OUT test memcheck tune sweep
set -uo pipefail
out=$1
shift
mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
rungs="${RUNGS:-warptile_db,persistent_tf32,persistent_bf16,ws_f64}"
# shellcheck source=lab/gpu/timed.bash
. "$(dirname "$0")/timed.bash"
for sub in "$@"; do
  case "$sub" in
  test)
    python3 -m pytest -q -m gpu -p no:cacheprovider -k split_k -s tests/test_gpu.py \
      > "$out/test.log" 2>&1
    echo "split-K test: exit $?"
    grep "SPLITS=\|passed\|failed\|Error" "$out/test.log" | tail -60
    ;;
  memcheck)
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
    IFS=';' read -ra shapes <<< "${MEMCHECK_SHAPES:-129 1001 3001;1 33 5000}"
    sel=(--first 1)
    [ -n "${MEMCHECK_WHERE:-}" ] && sel=(--where "$MEMCHECK_WHERE")
    for shape in "${shapes[@]}"; do
      # shellcheck disable=SC2046,SC2086  # one argument per variant, three per shape
      python3 tools/memcheck.py $(echo "${MEMCHECK_VARIANTS:-$rungs,deep_bf16}" | tr ',' ' ') \
        "${sel[@]}" --tuned kernels/tuned.csv --gpu "${TUNED_GPU:-$gpu}" --shape $shape --show 20 2>&1 |
        tee -a "$out/memcheck.log" | tail -12
    done
    ;;
  tune)
    params='{warptile_db: {dtype: [float32]}, persistent_tf32: {dtype: [float32]}, persistent_bf16: {dtype: [bfloat16]}, ws_f64: {dtype: [float64]}, cublas: {dtype: [float32, bfloat16, float64]}, cublas_tf32: {dtype: [float32]}}'
    exp=${TUNE_EXPERIMENT:-tune_sizes}
    load='[burst]'
    [ "${TUNE_SUSTAINED:-[]}" != "[]" ] && load='[burst, sustained]'
    timed "$exp" --configfile config/presets/tune.yaml --config "experiment=$exp" \
      "variants=${TUNE_VARIANTS:-[$rungs,cublas,cublas_tf32]}" \
      "sizes=${TUNE_SIZES:-[1024,1536,2048,3072,4096]}" \
      "shapes=${TUNE_SHAPES:-[[128,8192,8192],[256,8192,8192],[512,8192,8192]]}" \
      "load=$load" "sustained_sizes=${TUNE_SUSTAINED:-[]}" \
      "params=${TUNE_PARAMS:-$params}" \
      'sampling={warmup: 1, min_samples: 5, max_samples: 20, min_time_s: 0.02, max_time_s: 0.3, sustained_window_s: 1.5}'
    grep -h "configurations:" "results/$exp/tables/summary.txt" 2>/dev/null
    cp "results/$exp/tables/timings.csv" "$out/${exp}_timings.csv" 2>/dev/null
    cp "results/$exp/report/tuned.csv" "$out/tuned.csv" 2>/dev/null &&
      cut -d, -f2,5,7,8,9,13 "$out/tuned.csv"
    ;;
  sweep)
    timed sweep --configfile config/presets/sweep.yaml --config "tuned=${TUNED:-kernels/tuned.csv}"
    grep -h "configurations:" results/sweep/tables/summary.txt 2>/dev/null
    [ -f results/sweep/report/sweep.md ] && cat results/sweep/report/sweep.md
    tar czf "$out/sweep.tar.gz" --exclude='results/sweep/build' results/sweep 2>/dev/null
    ;;
  tail)
    # shellcheck disable=SC2086  # the sizes, one argument each
    python3 lab/benchmarks/tail_split.py "${TAIL_VARIANT:-ws_f64}" --sizes ${TAIL_SIZES:-4096 8192} \
      ${TAIL_EXPR:+--tail "$TAIL_EXPR"} 2>&1 | tee "$out/tail.txt"
    ;;
  sources)
    "$here/paired.sh" "$out" sources
    ;;
  *)
    echo "unknown sub-stage $sub; valid: test, memcheck, tune, sweep, tail, sources" >&2
    exit 2
    ;;
  esac
done

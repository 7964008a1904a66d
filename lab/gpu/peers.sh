#!/usr/bin/env bash
# CUTLASS (and later Triton) beside cuBLAS on a GPU machine (issue "CUTLASS and Triton as
# reference lines"):
#   lab/gpu.sh peers OUT check     the GPU tests of the CUTLASS builds (cutlass_bf16, _tf32,
#                                  _fp8: every build at 1024^3 and two odd shapes, padded where
#                                  CUTLASS's TMA refuses them) and of the flushed load, then
#                                  compute-sanitizer memcheck of each CUTLASS variant's first and
#                                  last build at two odd shapes run padded (33 x 32 x 48,
#                                  17 x 4112 x 144)
#   lab/gpu.sh peers OUT msmf      cuBLAS BF16 (cublasGemmEx) and cuBLASLt FP8 at 4096 and 8192,
#                                  normal inputs, sustained and flushed (mamf-finder's MSMF: L2
#                                  flushed before every product), with the CUTLASS builds beside
#                                  them (PEERS=no leaves them out): OUT/msmf.csv, each row's
#                                  TFLOP/s, SM clock, power and duty
# OUT receives the logs and tables.
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
# shellcheck source=lab/gpu/timed.bash
. "$(dirname "$0")/timed.bash"
case "$stage" in
check)
  start=$(date +%s)
  python3 -m pytest -q -m gpu -p no:cacheprovider -s -k "cutlass_builds or flushed_load" \
    > "$out/tests.log" 2>&1
  echo "GPU tests: exit $?, $(($(date +%s) - start)) s"
  grep -h "passed\|failed\|FAILED\|TFLOP/s\|GFLOP/s" "$out/tests.log" | tail -30
  for v in cutlass_bf16 cutlass_tf32 cutlass_fp8; do
    for shape in "33 32 48" "17 4112 144"; do
      for which in first last; do
        python3 tools/memcheck.py "$v" --shape $shape --$which 1
      done
    done
  done > "$out/memcheck.log" 2>&1
  echo "memcheck: $(grep -c "ERROR SUMMARY: 0 errors" "$out/memcheck.log") of 12 clean"
  grep -h "ERROR SUMMARY" "$out/memcheck.log" | sort | uniq -c
  ;;
msmf)
  variants="[cublas, cublaslt_fp8, cutlass_bf16, cutlass_fp8]"
  [ "${PEERS:-yes}" = no ] && variants="[cublas, cublaslt_fp8]"
  timed msmf --config experiment=msmf "variants=$variants" 'sizes=[4096, 8192]' \
    'dtypes=[bfloat16, float8_e4m3]' 'distribution=[normal]' 'load=[sustained, flushed]' \
    'report={figures: [], tables: [verification]}' 'profile={enabled: false}'
  python3 - "$out/msmf.csv" <<'PY'
import sys
import pandas as pd
t = pd.read_csv("results/msmf/tables/timings.csv")
keep = ["variant", "instance", "dtype", "m", "load", "verification", "kernel_gflops",
        "sm_clock_mhz", "power_w_median", "duty", "settled"]
t = t[keep].sort_values(["dtype", "m", "variant", "load", "kernel_gflops"])
t.to_csv(sys.argv[1], index=False)
print(t.to_string(index=False))
PY
  ;;
*)
  echo "unknown peers stage $stage; valid: check, msmf" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# Hopper's own road on a GPU machine (issue "Hopper's own road"): the development loop of the
# TMA + wgmma rungs, one device call per stage.
#   lab/gpu.sh hopper OUT dev VARIANTS DTYPES [SIZES]
#       every instantiation of VARIANTS (e.g. [ws_bf16,cublas]: name the cuBLAS reference too)
#       for DTYPES (e.g. [bfloat16]; cuBLAS runs those) at SIZES (default [1,31,33,4096,4097,8192])
#       and SHAPES (env, default [[1000,1100,37]]), int09 inputs in
#       bursts (the quick look; the ladder measures normal inputs, sustained); prints each
#       instantiation's verification and GFLOP/s per size, and cuBLAS's
#   lab/gpu.sh hopper OUT memcheck VARIANTS...
#       compute-sanitizer memcheck of every instantiation at 257 x 263 x 129 and 516 x 520 x 132
#   lab/gpu.sh hopper OUT sass VARIANT INSTANCE
#       the instantiation's SASS instruction counts (HGMMA, UTMALDG, ...) from cuobjdump
# OUT receives the logs and tables.
set -uo pipefail
out=$1
stage=$2
shift 2
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
if [ "$stage" = dev ]; then
  variants=$1 dtypes=$2 sizes=${3:-[1,31,33,4096,4097,8192]}
  start=$(date +%s)
  rm -rf results/dev
  params="${PARAMS:-}"  # cuBLAS (where named) in DTYPES
  # (the variant cublas itself, not cublas_tf32 or cublaslt_fp8, whose dtypes are their own)
  list=",$(echo "$variants" | tr -d '[] '),"
  [[ "$list" == *,cublas,* ]] && params="cublas: {dtype: $dtypes}${params:+, $params}"
  snakemake --cores 16 --config experiment=dev "variants=$variants" "dtypes=$dtypes" \
    "params={$params}" \
    "sizes=$sizes" "shapes=${SHAPES:-[[1000,1100,37]]}" 'profile={enabled: false}' 'memory=[pinned]' \
    'report={figures: [], tables: []}' > "$out/dev.log" 2>&1
  echo "dev: exit $? after $(($(date +%s) - start)) s"
  grep -h "configurations:" results/dev/tables/summary.txt
  cp results/dev/tables/timings.csv "$out/" 2>/dev/null
  python3 - <<'PY'
import pandas as pd
t = pd.read_csv("results/dev/tables/timings.csv")
t["size"] = t.m.astype(str) + "x" + t.n.astype(str) + "x" + t.k.astype(str)
bad = t[t.verification != "PASS"]
for _, r in bad.iterrows():
    print("NOT PASS:", r.instance, r["size"], r.verification, str(r.get("error", ""))[:300])
big = t[t.m >= 4096]
tab = big.pivot_table(index=["variant", "instance"], columns="m", values="kernel_gflops", aggfunc="median")
print((tab / 1e3).round(1).sort_values(tab.columns[-1], ascending=False).to_string())
PY
elif [ "$stage" = memcheck ]; then
  python3 tools/memcheck.py "$@" --shape 257 263 129 --shape 516 520 132 --show 20 2>&1 |
    tee -a "$out/memcheck.log"
elif [ "$stage" = sass ]; then
  cub=$(ls results/build/*/$1/$2.cubin | head -1)
  cuobjdump -sass "$cub" > "$out/$2.sass"
  grep -oE "^\s+/\*[0-9a-f]+\*/\s+[A-Z0-9_.]+" "$out/$2.sass" | awk '{print $2}' | sed 's/\..*//' | sort | uniq -c | sort -rn | head -30
fi

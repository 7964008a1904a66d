#!/usr/bin/env bash
# The GPU paths of issue "what a new user hit, second round" on a GPU machine:
#   point 2: a measurement job that sees no GPU (CUDA_VISIBLE_DEVICES empty) fails at once
#   point 3: a profile job that cannot run fails, writes no table, and runs again next time
# Usage (repository root): tools/gpu-new-user.sh OUT [readme]   (readme: point 8 too)
set -uo pipefail
out=$1
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
args=(--config arch=sm_90 'sizes=[64]' 'variants=[naive_guarded]' 'tiles=[16]')
start=$(date +%s)
CUDA_VISIBLE_DEVICES= timeout 120 snakemake --cores 1 results/runs/naive_guarded.csv "${args[@]}" \
  > "$out/no-gpu-measure.log" 2>&1
echo "point 2: exit $? after $(($(date +%s) - start)) s; table written: $(test -f results/runs/naive_guarded.csv && echo yes || echo no)"
grep -h "sees no GPU" "$out/no-gpu-measure.log" | head -2
target=results/profile/naive_guarded/float32_TILE32_2048x2048x2048.csv
prof=(--config arch=sm_90 'variants=[naive_guarded]' "profile={variants: [naive_guarded], sizes: [2048], ncu: 'off', nsys: 'off'}")
start=$(date +%s)
CUDA_VISIBLE_DEVICES= timeout 120 snakemake --cores 1 "$target" "${prof[@]}" > "$out/no-gpu-profile.log" 2>&1
echo "point 3, no GPU: exit $? after $(($(date +%s) - start)) s; table written: $(test -f $target && echo yes || echo no)"
grep -h "profile_kernel naive_guarded" "$out/no-gpu-profile.log" | head -2
timeout 300 snakemake --cores 1 "$target" "${prof[@]}" > "$out/gpu-profile.log" 2>&1
echo "point 3, the next run with the GPU: exit $?; table written: $(test -f $target && echo yes || echo no)"
python3 -c "
import pandas as pd
d = pd.read_csv('$target')
print(d[['variant', 'metric', 'value', 'status']].to_string(index=False))"
# point 8: the README example measures, compiles, profiles and reports only what it runs
if [ "${2:-}" = readme ]; then
  rm -rf results
  start=$(date +%s)
  snakemake --cores 16 --config 'variants=[tiled_guarded,cublas]' 'tiles=[32]' 'dtypes=[float64]' \
    > "$out/readme-example.log" 2>&1
  echo "point 8: exit $? after $(($(date +%s) - start)) s"
  echo "compiled: $(ls results/build/*/*/ 2>/dev/null | grep -c cubin) cubins: $(ls results/build/*/* 2>/dev/null | tr '\n' ' ')"
  echo "profiled: $(ls results/profile 2>/dev/null | tr '\n' ' ')"
  echo "report tables: $(ls results/report/*.html 2>/dev/null | xargs -n1 basename | tr '\n' ' ')"
  echo "figures: $(ls results/figures/*.png 2>/dev/null | xargs -n1 basename | tr '\n' ' ')"
  cat results/report/figures_left_out.txt 2>/dev/null
  head -12 results/tables/summary.txt
fi

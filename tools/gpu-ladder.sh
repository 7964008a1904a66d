#!/usr/bin/env bash
# The FP32 rungs on a GPU machine (issue "the ladder to cuBLAS"): every instantiation of
# blocktile_1d, blocktile_2d, blocktile_vec, warptile and warptile_db (float32) beside cuBLAS at
# 1, 31, 33, 4097, at 4096 and at 1000x1100x37, pinned memory; prints the summary and the best
# instantiation of each rung at 4096 against cuBLAS.
# Usage (repository root): tools/gpu-ladder.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
start=$(date +%s)
snakemake --cores 16 --config experiment=ladder \
  'variants=[blocktile_1d,blocktile_2d,blocktile_vec,warptile,warptile_db,cublas]' \
  'sizes=[1,31,33,4096,4097]' 'shapes=[[1000,1100,37]]' 'memory=[pinned]' \
  'profile={enabled: false}' 'report={figures: [], tables: [kernel_times]}' > "$out/ladder.log" 2>&1
echo "ladder: exit $? after $(($(date +%s) - start)) s"
grep -h "configurations:" results/ladder/tables/summary.txt
cp results/ladder/tables/timings.csv "$out/ladder_timings.csv"
python3 - <<'PY'
import pandas as pd
d = pd.read_csv("results/ladder/tables/timings.csv")
print(d.groupby("variant").verification.value_counts().unstack(fill_value=0).to_string())
big = d[(d.m == 4096) & (d.verification == "PASS")]
cublas = big[big.variant == "cublas"].kernel_gflops.max()
best = big.sort_values("kernel_gflops").groupby("variant").tail(1)
for r in best.itertuples():
    print(f"{r.label:45s} {r.kernel_ms_median:8.3f} ms {r.kernel_gflops:9.0f} GFLOP/s {100 * r.kernel_gflops / cublas:5.1f}% of cuBLAS")
PY

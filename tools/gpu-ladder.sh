#!/usr/bin/env bash
# The FP32 rungs on a GPU machine (issue "the ladder to cuBLAS"): every instantiation of
# blocktile_1d, blocktile_2d, blocktile_vec, warptile and warptile_db (float32) beside cuBLAS at
# 1, 31, 33, 4097, at 4096 and at 1000x1100x37, pinned memory; prints the summary and the best
# instantiation of each rung at 4096 against cuBLAS.
# Usage (repository root): tools/gpu-ladder.sh OUTDIR [8192]
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
# with a second argument `8192`: the best instantiation of each rung at 4096 (above) at 8192 too
if [ "${2:-}" = 8192 ]; then
  params=$(python3 - <<'PY'
import pandas as pd
d = pd.read_csv("results/ladder/tables/timings.csv")
best = d[(d.m == 4096) & (d.verification == "PASS") & (d.variant != "cublas")]
best = best.sort_values("kernel_gflops").groupby("variant").tail(1)
out = []
for r in best.itertuples():
    names = [p.split("=")[0] for p in r.params.split()]
    out.append(f"{r.variant}: {{" + ", ".join(f"{n}: [{int(getattr(r, n))}]" for n in names) + "}")
print("{" + ", ".join(out) + "}")
PY
)
  echo "params=$params"
  start=$(date +%s)
  snakemake --cores 16 --config experiment=ladder8192 \
    'variants=[blocktile_1d,blocktile_2d,blocktile_vec,warptile,warptile_db,cublas]' \
    'sizes=[8192]' 'memory=[pinned]' "params=$params" \
    'profile={enabled: false}' 'report={figures: [], tables: [kernel_times]}' > "$out/ladder8192.log" 2>&1
  echo "ladder at 8192: exit $? after $(($(date +%s) - start)) s"
  cp results/ladder8192/tables/timings.csv "$out/ladder8192_timings.csv"
  python3 - <<'PY'
import pandas as pd
d = pd.read_csv("results/ladder8192/tables/timings.csv")
cublas = d[d.variant == "cublas"].kernel_gflops.max()
for r in d.sort_values("kernel_gflops").itertuples():
    print(f"{r.label:60s} {r.verification} {r.kernel_ms_median:8.3f} ms {r.kernel_gflops:9.0f} GFLOP/s {100 * r.kernel_gflops / cublas:5.1f}% of cuBLAS")
PY
fi

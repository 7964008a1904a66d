#!/usr/bin/env bash
# Several GPUs of one node: the same sweep with --resources gpu=N (N jobs at once, one per
# GPU), then with gpu=1 on one GPU; prints which GPU measured what, when, and how the two
# runs' kernel medians compare.  Usage: lab/gpu.sh multi N
set -uo pipefail
n=${1:-2}
common=(--cores 16 --config 'sizes=[1024,2048,4096]' 'variants=[naive_guarded,tiled_guarded,coarsened,cublas]'
        'memory=[pinned]' 'profile={enabled: false}' 'report={figures: [], tables: []}')
nvidia-smi --query-gpu=index,name,uuid --format=csv,noheader
start=$(date +%s); snakemake "${common[@]}" experiment=multi --resources gpu=$n > /tmp/multi.log 2>&1
echo "multi-GPU run (gpu=$n): exit $? in $(($(date +%s) - start)) s"
start=$(date +%s); CUDA_VISIBLE_DEVICES=0 snakemake "${common[@]}" experiment=single --resources gpu=1 > /tmp/single.log 2>&1
echo "single-GPU run (gpu=1): exit $? in $(($(date +%s) - start)) s"
python3 - <<'PY'
import pandas as pd
m = pd.read_csv("results/multi/tables/timings.csv"); s = pd.read_csv("results/single/tables/timings.csv")
print("multi-GPU run, per variant: GPU, first and last row time")
print(m.groupby("variant").agg(gpu=("gpu_uuid", "first"), pci=("gpu_pci_bus_id", "first"),
                               start=("timestamp", "min"), end=("timestamp", "max")).to_string())
print("GPUs used:", sorted(m.gpu_uuid.unique()), "| single run:", sorted(s.gpu_uuid.unique()))
axes = ["variant", "instance", "m"]
j = m.merge(s, on=axes, suffixes=("_multi", "_single"))
j["diff_pct"] = 100 * (j.kernel_ms_median_multi - j.kernel_ms_median_single) / j.kernel_ms_median_single
print(j[axes + ["kernel_ms_median_multi", "kernel_ms_median_single", "diff_pct"]].to_string(index=False, float_format=lambda x: f"{x:.3f}"))
big = j[j.kernel_ms_median_single >= 1]
print(f"{len(j)} configurations; of >= 1 ms: median |diff| {big.diff_pct.abs().median():.2f}%, max {big.diff_pct.abs().max():.2f}%")
print("verification:", m.verification.value_counts().to_dict(), s.verification.value_counts().to_dict())
PY

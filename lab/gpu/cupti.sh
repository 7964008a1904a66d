#!/usr/bin/env bash
# CUPTI's GPU-activities table and kernel times on a GPU machine (issue "nvprof's GPU-activities
# table from CUPTI"): the main command's profiled configurations, the E3f preset, and
# tiled_guarded and cuBLAS at 1024, 4096 and 8192; prints the report tables and keeps every
# configuration's CUPTI records (cupti.json) in OUTDIR/cupti.tar.gz.
# Usage (repository root, cupti-python installed): lab/gpu.sh cupti OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out" /tmp/cupti-records
tabs=(report/gpu_activities.html report/kernel_time_sources.html)
run() {  # name, results folder, snakemake args...
  local name=$1 res=$2; shift 2
  local start=$(date +%s)
  snakemake --cores 16 "${tabs[@]/#/$res/}" "$@" > "$out/$name.log" 2>&1
  echo "$name: exit $?, $(($(date +%s) - start)) s"
  cat "$res/report/kernel_time_sources.md" "$res/report/gpu_activities.md"
  grep -h ",cupti," "$res/tables/metrics.csv" | grep -v ",ok" | head -5
  for f in $(find "$res/profile" -name cupti.json); do
    cp "$f" "/tmp/cupti-records/${name}_$(basename "$(dirname "$(dirname "$f")")")_$(basename "$(dirname "$f")").json"
  done
  cp "$res/tables/metrics.csv" "/tmp/cupti-records/${name}_metrics.csv"
}
run main results --config 'sizes=[8000,10000,12000]'
run e3f results/e3f --configfile config/presets/e3f.yaml
run sizes results/cupti --config experiment=cupti 'sizes=[4096]' 'variants=[tiled_guarded,cublas]' \
  'tiles=[32]' 'profile={enabled: true, variants: [tiled_guarded, cublas], sizes: [1024, 4096, 8192], tiles: [32], metric_set: minimal}'
tar czf "$out/cupti.tar.gz" -C /tmp cupti-records

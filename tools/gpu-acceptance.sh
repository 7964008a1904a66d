#!/usr/bin/env bash
# Acceptance run of the main job on a GPU machine, from a clean results folder:
#   the main command, a second identical run (must start nothing), an edit of one kernel file
#   (must rerun only that variant and the aggregation), and the GPU tests.
# Usage (repository root): tools/gpu-acceptance.sh [OUTDIR]
set -uo pipefail
out=${1:-acceptance}
mkdir -p "$out"
rm -rf results .snakemake
sizes='sizes=[8000,10000,12000]'
start=$(date +%s)
snakemake --cores 1 --config "$sizes" > "$out/main.log" 2>&1
echo "main command: exit $? after $(($(date +%s) - start)) s"
sed -n '/^Kernel time/,$p' results/tables/summary.txt
cp results/tables/{timings.csv,summary.txt,resources.csv,refused.csv} "$out/"
echo "== second identical run"
snakemake --cores 1 --config "$sizes" 2>&1 | grep -E "Nothing to be done|Job stats"
echo "== after editing kernels/05_tiled_guarded.cu"
cp kernels/05_tiled_guarded.cu /tmp/05.bak
echo "// edited by tools/gpu-acceptance.sh" >> kernels/05_tiled_guarded.cu
start=$(date +%s)
snakemake --cores 1 --config "$sizes" > "$out/rerun.log" 2>&1
echo "rerun: exit $? after $(($(date +%s) - start)) s; jobs:"
grep -E "^(local)?rule [a-z_]+:" "$out/rerun.log" | sort | uniq -c
grep -E "^\s+wildcards: variant=" "$out/rerun.log" | sort | uniq -c
cp /tmp/05.bak kernels/05_tiled_guarded.cu
echo "== GPU tests"
python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tail -3

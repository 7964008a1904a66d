#!/usr/bin/env bash
# Runs experiments on a GPU machine and builds each one's HTML report, printing wall times.
# Usage (repository root): lab/gpu.sh presets OUTDIR main|e1|e2|... ...
#   main = the default config (results/); others = config/presets/<name>.yaml (results/<name>/)
set -uo pipefail
out=$1; shift
mkdir -p "$out"
for name in "$@"; do
  if [ "$name" = main ]; then args=(); res=results; else args=(--configfile "config/presets/$name.yaml"); res=results/$name; fi
  start=$(date +%s)
  snakemake --cores 16 "${args[@]}" > "$out/$name.log" 2>&1
  rc=$?
  wall=$(($(date +%s) - start))
  snakemake "${args[@]}" --report "$res/report.html" >> "$out/$name.log" 2>&1
  echo "$name: exit $rc, ${wall} s, report $(du -h "$res/report.html" 2>/dev/null | cut -f1), $(ls "$res"/figures/*.png 2>/dev/null | wc -l) figures, $(ls "$res"/report/*.html 2>/dev/null | wc -l) tables"
  grep -h "configurations:" "$res/tables/summary.txt" 2>/dev/null | head -1
done

#!/usr/bin/env bash
# The GPU checks of issue "numbers that cannot go silently wrong", one stage a device call:
#   tools/gpu-trust.sh OUT identity   the default experiment, then a cubin overwritten with
#                                     garbage, then a registry grid edit: the job counts of each
#                                     rerun (only the variant concerned is built and measured)
#   tools/gpu-trust.sh OUT main       the main command (seed 003's table at 8000-12000), resumed
#                                     where a previous call was cut off; its kernel_times table
#   tools/gpu-trust.sh OUT tests      pytest -m gpu
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
stats() { sed -n '/^Job stats:/,/^total/p' "$1" | head -30; }
case "$stage" in
identity)
  snakemake --cores 16 > "$out/id-0.log" 2>&1
  echo "first run: exit $?"; stats "$out/id-0.log"
  grep -h "configurations:" results/tables/summary.txt
  cubin=results/build/sm_90/tiled_guarded/float32_TILE16.cubin
  echo "garbage" > "$cubin"
  snakemake --cores 16 > "$out/id-1.log" 2>&1
  echo "after overwriting $cubin: exit $?"; grep -h "mmbench:" "$out/id-1.log"; stats "$out/id-1.log"
  grep -c "tiled_guarded" results/tables/timings.csv
  cp kernels/registry.yaml /tmp/registry.yaml
  python3 - <<'EOF'
from pathlib import Path
p = Path("kernels/registry.yaml")
t = p.read_text()
start = t.index("  naive_guarded:")
old = 'grid: ["cdiv(n, TILE)", "cdiv(m, TILE)"]'
i = t.index(old, start)
p.write_text(t[:i] + 'grid: ["cdiv(n, TILE) + 0", "cdiv(m, TILE)"]' + t[i + len(old):])
EOF
  snakemake --cores 16 > "$out/id-2.log" 2>&1
  echo "after editing naive_guarded's grid: exit $?"; stats "$out/id-2.log"
  python3 -c "
import pandas as pd
t = pd.read_csv('results/tables/timings.csv')
print(t.groupby('variant')[['launch_sha256', 'cubin_sha256']].nunique().to_string())
print(t.groupby('variant').timestamp.max().to_string())"
  cp /tmp/registry.yaml kernels/registry.yaml
  ;;
main)
  start=$(date +%s)
  timeout "${LIMIT:-540}" snakemake --cores 1 --rerun-incomplete --config 'sizes=[8000,10000,12000]' \
    > "$out/main.log" 2>&1
  echo "main command: exit $? after $(($(date +%s) - start)) s"
  stats "$out/main.log"
  sed -n '/^Kernel time/,/^Global/p' "$out/main.log" | head -40
  grep -h "configurations:" "$out/main.log"
  [ -f results/report/kernel_times.md ] && cat results/report/kernel_times.md
  cp results/tables/timings.csv results/report/kernel_times.csv "$out/" 2>/dev/null
  ;;
tests)
  python3 -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tail -30
  ;;
esac

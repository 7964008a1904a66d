#!/usr/bin/env bash
# The GPU checks of issue "an open measurement core", one stage a device call:
#   tools/gpu-core.sh OUT kernels     the GPU tests of the driver-launched kernels (tensor maps,
#                                     clusters) and the 16-bit cuBLAS references, printed; then
#                                     compute-sanitizer memcheck of every driver-launched kernel's
#                                     first and last instantiation at 257 x 263 x 129
#   tools/gpu-core.sh OUT main DIR    the main command (seed 003's table at 8000-12000) in the
#                                     checkout DIR (. = this one); its timings -> OUT/<name>.csv
#   tools/gpu-core.sh OUT compare A B the course kernels' medians of two main-command tables
#   tools/gpu-core.sh OUT tests       pytest -m gpu
#   tools/gpu-core.sh OUT presets P.. the presets named (tools/gpu-experiments.sh)
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
case "$stage" in
kernels)
  python3 -m pytest -q -s -m gpu tests/test_gpu.py -k "sixteen_bit or driver_launched" 2>&1 |
    grep -v "^$" | tail -60
  variants=$(python3 -c "
from tests.test_gpu import _driver_launched
print(' '.join(v for v in _driver_launched() if v != 'none'))")
  for v in $variants; do
    python3 tools/memcheck.py "$v" --shape 257 263 129 --first 1 2>&1
    python3 tools/memcheck.py "$v" --shape 257 263 129 --last 1 2>&1
    python3 tools/memcheck.py "$v" --shape 516 520 132 --first 1 2>&1
  done
  ;;
main)
  dir=$3
  name=$(basename "$(cd "$dir" && pwd)")
  [ "$dir" = . ] && name=after || name=before
  start=$(date +%s)
  (cd "$dir" && PYTHONPATH=$PWD/workflow/scripts:${PYTHONPATH:-} \
    snakemake --cores 16 --config 'sizes=[8000,10000,12000]' > "$out/main-$name.log" 2>&1)
  echo "main command in $dir: exit $? after $(($(date +%s) - start)) s"
  cp "$dir/results/tables/timings.csv" "$out/main-$name.csv"
  cat "$dir/results/tables/summary.txt" | head -40
  ;;
compare)
  python3 tools/compare_times.py "$3" "$4"
  ;;
tests)
  python3 -m pytest -q -m gpu tests/ 2>&1 | tail -15
  ;;
presets)
  shift 2
  tools/gpu-experiments.sh "$out" "$@"
  ;;
esac

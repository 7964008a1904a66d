#!/usr/bin/env bash
# The run-comparison check on a GPU machine (issue "compare two runs"), printing what it found:
#   run A and run B: the same code and config/presets/compare.yaml, measured twice;
#   compare B against A (verdict counts, nothing should be FASTER or SLOWER);
#   the edit loop: tools/slowdown.py slows tiled_guarded, run C re-measures only it, the
#   summary prints before -> after, `compare` with baseline=previous and fail_on=slower exits 1,
#   and C against B shows what changed verdict.
# Usage (repository root): lab/gpu.sh compare OUTDIR [cool|ab|edit|once]...   (once: one run
# only, e.g. on another GPU model; its results go to OUTDIR/<gpu>.tar.gz; cool: wait until the
# GPU is at most 40 C, 180 s at most, so that run A does not start on a GPU that sustained load
# has just heated: docs/method.md)
set -uo pipefail
out=$1; shift
mkdir -p "$out"
P=(--configfile config/presets/compare.yaml)
R=results/compare
timed() {  # name, snakemake args...
  local name=$1; shift
  local start=$(date +%s)
  snakemake "${P[@]}" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(($(date +%s) - start)) s"
  return $rc
}
for stage in "$@"; do
  case $stage in
  cool)
    for _ in $(seq 36); do
      t=$(nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader,nounits | head -1)
      [ "$t" -le 40 ] && break
      sleep 5
    done
    echo "cool: GPU at $t C"
    ;;
  ab)
    timed run_a --cores 16 --forcerun measure_variant  # whatever results/compare held
    grep -h "configurations:" $R/tables/summary.txt
    rm -rf /tmp/run_a && cp -r $R /tmp/run_a
    timed run_b --cores 16 --forcerun measure_variant
    rm -rf /tmp/run_b && cp -r $R /tmp/run_b
    timed compare_b_vs_a --cores 1 compare --config baseline=/tmp/run_a
    cat $R/tables/compare.txt
    tar czf "$out/run_a.tar.gz" -C /tmp run_a/runs run_a/tables
    tar czf "$out/run_b.tar.gz" -C /tmp run_b/runs run_b/tables
    ;;
  edit)
    cp kernels/05_tiled_guarded.cu /tmp/05_tiled_guarded.cu.orig
    python3 tools/slowdown.py kernels/05_tiled_guarded.cu
    timed run_c --cores 16
    grep -h "configurations:" $R/tables/summary.txt
    sed -n '/^Since the previous kernel source/,$p' $R/tables/summary.txt
    timed gate --cores 1 compare --config baseline=previous 'compare={fail_on: slower}'
    tail -n 4 "$out/gate.log"
    timed compare_c_vs_b --cores 1 compare --config baseline=/tmp/run_b
    cat $R/tables/compare.txt
    rm -rf /tmp/run_c && cp -r $R /tmp/run_c
    tar czf "$out/run_c.tar.gz" -C /tmp run_c/runs run_c/tables
    cp /tmp/05_tiled_guarded.cu.orig kernels/05_tiled_guarded.cu
    ;;
  once)
    timed run_once --cores 16
    grep -h "configurations:" $R/tables/summary.txt
    gpu=$(python3 -c "import pandas as p; print(p.read_csv('$R/tables/timings.csv').gpu_name[0].split()[1].lower())")
    rm -rf "/tmp/$gpu" && cp -r $R "/tmp/$gpu"
    tar czf "$out/$gpu.tar.gz" -C /tmp "$gpu/runs" "$gpu/tables"
    ;;
  esac
done

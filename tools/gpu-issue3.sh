#!/usr/bin/env bash
# Issue 3's checks on a GPU machine.  Usage: tools/gpu-issue3.sh OUTDIR STAGE...
# stages: tests e3c repro presets big kill
set -uo pipefail
out=$1; shift
mkdir -p "$out"
for stage in "$@"; do
  echo "=================== $stage"
  case $stage in
    tests)
      python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tail -5 ;;
    e3c)
      python3 benchmarks/e3c_harness.py --cores 16 --workdir /tmp/e3c
      cp /tmp/e3c/results/tables/timings.csv "$out/e3c_timings.csv" ;;
    repro)
      python3 benchmarks/reproducibility.py --cores 8 ;;
    presets)
      for p in memory e5a e5b; do
        rm -rf /tmp/p-$p; start=$(date +%s)
        snakemake -s Snakefile -d /tmp/p-$p --cores 8 --configfile config/presets/$p.yaml > "$out/$p.log" 2>&1
        echo "preset $p: exit $? in $(($(date +%s) - start)) s"
        cp /tmp/p-$p/results/tables/timings.csv "$out/${p}_timings.csv"
        sed -n '/^Kernel time/,$p' /tmp/p-$p/results/tables/summary.txt | head -70
      done ;;
    big)
      rm -rf /tmp/big
      snakemake -s Snakefile -d /tmp/big --cores 4 --config 'sizes=[12000]' 'variants=[tiled_guarded]' 'tiles=[32]' 'memory=[pinned]' freivalds_vectors=2 > "$out/big.log" 2>&1
      python3 -c "
import pandas as pd; d = pd.read_csv('/tmp/big/results/tables/timings.csv')
print(d[['variant','m','verification','freivalds','freivalds_ms','verify_ms','kernel_ms_median','sm_clock_mhz','temperature_c','power_w','throttled_samples']].to_string())"
      python3 -c "import json; print(json.dumps(json.load(open('/tmp/big/results/runs/tiled_guarded.manifest.json'))['device'], indent=1))" ;;
    kill)
      rm -rf /tmp/kill
      args=(-s Snakefile -d /tmp/kill --cores 1 --config 'sizes=[4096,6144,8192]' 'variants=[naive_guarded]' 'tiles=[8,16,32]')
      snakemake "${args[@]}" > "$out/kill1.log" 2>&1 &
      pid=$!
      sleep 12
      ls -la /tmp/kill/results/runs/
      # a job killed outright (OOM killer, a SLURM job past its time): SIGKILL its processes
      pkill -KILL -f mmbench.measure.worker; pkill -KILL -f measure.py
      wait $pid; echo "measurement job SIGKILLed after 12 s: snakemake exit $?, rows in journal: $(grep -c '"row"' /tmp/kill/results/runs/naive_guarded.csv.journal.jsonl)"
      ls /tmp/kill/results/runs/ /tmp/kill/results/tables/ 2>&1; tail -3 "$out/kill1.log"
      snakemake "${args[@]}" > "$out/kill2.log" 2>&1; echo "rerun: exit $?"
      grep -h "resuming" /tmp/kill/results/logs/measure/naive_guarded.log
      grep -c . /tmp/kill/results/tables/timings.csv ;;
  esac
done

#!/usr/bin/env bash
# The "kernels as data" checks on a GPU machine.  Usage (repository root):
#   tools/gpu-kernels-as-data.sh OUTDIR STAGE...
# stages:
#   before1, before2  the main command's measurements (per-variant run tables) with the code from
#                     before the change, unpacked into .before/ by
#                     `git archive c0a8a68 | tar -x -C .before` (two halves, to fit a call)
#   after             the main command with this checkout
#   compare           every configuration's kernel median, before vs after
#   newkernel         blocktile_1d at 4096, at 1, 31, 33, 4097 and at 1000x37 . 37x1100, with cuBLAS
#   tests             pytest -m gpu
#   presets           every preset and its report (tools/gpu-experiments.sh)
set -uo pipefail
out=$1; shift
mkdir -p "$out"
sizes='sizes=[8000,10000,12000]'
# this checkout's package for the stages after the change (the old code finds its own)
export PYTHONPATH=/tmp/site:$PWD/workflow/scripts PATH=/tmp/site/bin:$PATH
before() {  # the old code's run tables of the given variants, same config as the main command
  local targets=()
  for v in "$@"; do targets+=("results/runs/$v.csv"); done
  (cd .before && start=$(date +%s) &&
    PYTHONPATH=/tmp/site timeout 560 snakemake --cores 16 "${targets[@]}" --config "$sizes" > "$out/before_$1.log" 2>&1
    echo "before ($*): exit $? after $(($(date +%s) - start)) s"
    mkdir -p "$out/before_runs" && cp results/runs/*.csv "$out/before_runs/" 2>/dev/null)
}
for stage in "$@"; do
  case $stage in
    before1) before naive_unguarded naive_guarded naive_xrow ;;
    before2) before tiled_unguarded tiled_guarded coarsened cublas ;;
    after)
      start=$(date +%s)
      timeout 570 snakemake --cores 16 --config "$sizes" > "$out/after.log" 2>&1
      echo "main command: exit $? after $(($(date +%s) - start)) s"
      sed -n '/^Kernel time/,/^Global/p' results/tables/summary.txt
      grep -h "configurations:" results/tables/summary.txt
      cp results/tables/timings.csv "$out/after_timings.csv" 2>/dev/null
      cp results/tables/summary.txt "$out/after_summary.txt" 2>/dev/null ;;
    compare)
      python3 - "$out" <<'PY'
import glob, sys
import pandas as pd
out = sys.argv[1]
runs = glob.glob(f"{out}/before_runs/*.csv") or glob.glob(".gpu-in/before_runs/*.csv")
b = pd.concat([pd.read_csv(p) for p in runs], ignore_index=True)
a = pd.read_csv(f"{out}/after_timings.csv")
# before: tile/coarsen columns; after: the TILE/COARSEN parameter columns
b["TILE"] = b["tile"].where(b["tile"] > 0)
b["COARSEN"] = b["coarsen"].where(b.variant == "coarsened")
keys = ["variant", "TILE", "COARSEN", "m", "memory"]
for d in (a, b):
    for c in ("TILE", "COARSEN"):
        d[c] = d[c].fillna(0).astype(int)
j = a.merge(b, on=keys, suffixes=("_after", "_before"))
j = j[(j.verification_after == "PASS") & (j.verification_before == "PASS")]
j["diff_pct"] = 100 * (j.kernel_ms_median_after - j.kernel_ms_median_before) / j.kernel_ms_median_before
pd.set_option("display.width", 200)
print(j[keys + ["kernel_ms_median_before", "kernel_ms_median_after", "diff_pct"]].to_string(
    index=False, float_format=lambda x: f"{x:.3f}"))
print(f"{len(j)} configurations compared (of {len(a)} after, {len(b)} before); "
      f"|diff| median {j.diff_pct.abs().median():.2f}%, max {j.diff_pct.abs().max():.2f}%; "
      f"{(j.diff_pct.abs() <= 2).sum()} within 2%")
PY
      ;;
    newkernel)
      start=$(date +%s)
      snakemake --cores 16 --config experiment=blocktile 'variants=[blocktile_1d,cublas]' \
        'sizes=[1,31,33,4096,4097]' 'shapes=[[1000,1100,37]]' 'memory=[pinned]' \
        'profile={enabled: false}' > "$out/newkernel.log" 2>&1
      echo "blocktile_1d: exit $? after $(($(date +%s) - start)) s"
      cat results/blocktile/tables/summary.txt
      cp results/blocktile/tables/timings.csv "$out/blocktile_timings.csv" 2>/dev/null ;;
    tests)
      python3 -m pytest -m gpu -q -p no:cacheprovider 2>&1 | tail -15 ;;
    presets)
      tools/gpu-experiments.sh "$out/presets" e1 e2 e3a e3c e3d e3f e3g e4a e4b e5a e5b memory ;;
  esac
done

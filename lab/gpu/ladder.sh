#!/usr/bin/env bash
# The ladder on a GPU machine (issue "the ladder to cuBLAS"), in two stages that each fit one
# device call:
#   lab/gpu.sh ladder OUT tune     the tune preset (every instantiation of every rung at 4096
#                                    and the odd sizes); VARIANTS=[a,b] for some rungs only
#                                    (a rung of another element type than the preset's
#                                    float32 as a:TYPE, e.g. [tmastore_fp8:float8_e4m3]);
#                                    stopped at LIMIT seconds (default 560) and resumed by
#                                    running the stage again on the same machine; writes
#                                    results/tuned_merged.csv: kernels/tuned.csv with this tune's
#                                    rows in place of its variants' rows
#   lab/gpu.sh ladder OUT test     the GPU tests of the tensor-core rungs (uniform inputs, C +=
#                                    A.B, odd shapes and leading dimensions)
#   lab/gpu.sh ladder OUT memcheck compute-sanitizer memcheck of the first and the tuned
#                                    instantiation of each rung at 33 x 31 x 37
#   lab/gpu.sh ladder OUT ladder   the ladder preset with the tuned table of the tune stage
#                                    (results/tuned_merged.csv if present, else
#                                    kernels/tuned.csv), profiled with Nsight Compute; stopped
#                                    at LIMIT seconds (default 560) and resumed by running the
#                                    stage again on the same machine; VARIANTS=[a,b,cublas] for
#                                    some rungs only; PROFILE=no without Nsight Compute
#                                    (the ladder table and figures alone),
#                                    DISTRIBUTION='[normal]' those inputs only,
#                                    PARAMS='{cutlass_bf16: {BN: [128]}}' some builds only,
#                                    TUNED_GPU=MODEL that model's tuned rows
#   lab/gpu.sh ladder OUT profile  the ladder's Nsight Compute profile alone at one size
#                                    (PROFILE_SIZE, default 8192; the preset profiles at 4096),
#                                    int09 inputs in bursts (results/prof<SIZE>): VARIANTS
#                                    (default the best TF32 and FP64 rungs and their references;
#                                    [a,cublas:float64] as builds takes them), TUNED_GPU=MODEL
#                                    that model's tuned rows; its ladder_profile table and metrics
#   lab/gpu.sh ladder OUT again    the ladder's normal-input, sustained configurations at 4096
#                                    and 8192 once more (results/ladder_again), and each one's
#                                    deviation from the ladder run (issue "numbers that hold on
#                                    real data": within 1%); VARIANTS and TUNED_GPU as for ladder
#                                    (also for pair, pair_a and pair_b)
#   lab/gpu.sh ladder OUT pair     the same configurations twice, one run right after the
#                                    other (results/ladder_again, its first run kept in
#                                    results/ladder_pair_a), and each one's deviation between
#                                    the two: the same check without a ladder run before it
#   lab/gpu.sh ladder OUT pair_a   pair in two device calls (each run measures for about
#   lab/gpu.sh ladder OUT pair_b   345 s): pair_a is the first run (OUT/ladder_pair_a.tgz);
#                                    pair_b needs it in results/ladder_pair_a (unpack the tgz
#                                    into results/ and carry it) and runs the second
# OUT receives the logs, the tables and the figures of each stage.
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
echo "GPU: $gpu"
subset() {  # PRESET -> the preset itself, or with VARIANTS (e.g. [a,b,cublas]) a copy that runs
            # those variants only, their params and profile settings with them (and with
            # CUBLAS=[bfloat16] cuBLAS in those element types only; with SIZES=[4096] those
            # sizes only: a tune whose rungs were verified at the odd sizes already, e.g. by
            # lab/gpu.sh hopper OUT dev, without settling the GPU for each of them)
  [ -z "${VARIANTS:-}" ] && { echo "$1"; return; }
  python3 "$(dirname "$0")/../../tools/preset_subset.py" "$1" "$VARIANTS" \
    "results/$(basename "$1" .yaml)_subset.yaml" ${SIZES:+--sizes "$SIZES"} ${CUBLAS:+--cublas "$CUBLAS"}
}
keep() {  # results folder -> OUT/<name>.tgz (tables, per-variant tables and samples, report,
          # figures; at most 8 files come back from the device machine)
  tar czf "$out/$2.tgz" --exclude="*.journal*" -C "$(dirname "$1")" \
    $(cd "$(dirname "$1")" && ls -d "$(basename "$1")"/{tables,runs,report,figures} 2>/dev/null)
}
if [ "$stage" = tune ]; then
  start=$(date +%s)
  preset=$(subset config/presets/tune.yaml)
  timeout "${LIMIT:-560}" snakemake --cores 16 --rerun-incomplete --configfile "$preset" \
    >> "$out/tune.log" 2>&1
  rc=$?
  echo "tune: exit $rc after $(($(date +%s) - start)) s"
  [ $rc = 124 ] && { echo "stopped at the limit: run the stage again to resume"; tail -3 "$out/tune.log"; exit 0; }
  grep -h "configurations:" results/tune/tables/summary.txt
  keep results/tune tune
  cat results/tune/report/tuned.md
  # kernels/tuned.csv with this tune's rows in place of its variants' rows for this GPU model:
  # what the ladder stage uses, and what to commit as kernels/tuned.csv
  python3 - "$out" <<'PY'
import sys
import pandas as pd
# read as text: the kept rows are written back exactly as they were
read = lambda path: pd.read_csv(path, dtype=str, keep_default_na=False)
old, new = read("kernels/tuned.csv"), read("results/tune/report/tuned.csv")
keys = set(zip(new.gpu_name, new.variant, new.dtype))
kept = old[[k not in keys for k in zip(old.gpu_name, old.variant, old.dtype)]]
merged = pd.concat([kept, new], ignore_index=True)
merged.to_csv("results/tuned_merged.csv", index=False)
merged.to_csv(f"{sys.argv[1]}/tuned_merged.csv", index=False)
print(f"results/tuned_merged.csv: {len(kept)} rows kept, {len(new)} from this tune")
PY
elif [ "$stage" = profile ]; then
  size=${PROFILE_SIZE:-8192} exp=prof${PROFILE_SIZE:-8192}
  python3 "$(dirname "$0")/../../tools/preset_subset.py" config/presets/ladder.yaml \
    "${VARIANTS:-[tmastore_tf32_tn,cublas_tf32,cublas_tf32_tn,ws_f64,cublas:float64]}" \
    "results/$exp.yaml" --sizes "[$size]" > /dev/null || exit 1
  python3 - "results/$exp.yaml" "$size" "$exp" <<'PY'
import sys
import yaml
path, size, exp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
c = yaml.safe_load(open(path))
c["profile"]["sizes"] = [size]  # what the profile batch profiles
c.update(load=["burst"], distribution=["int09"], sustained_sizes=[], experiment=exp)
c["report"] = {"figures": [], "tables": ["ladder_profile"]}
yaml.safe_dump(c, open(path, "w"))
PY
  start=$(date +%s)
  timeout "${LIMIT:-560}" snakemake --cores 16 --rerun-incomplete --configfile "results/$exp.yaml" \
    ${TUNED_GPU:+--config "tuned_gpu=$TUNED_GPU"} > "$out/$exp.log" 2>&1
  echo "profile at $size: exit $? after $(($(date +%s) - start)) s"
  grep -h "configurations:" "results/$exp/tables/summary.txt"
  cat "results/$exp/report/ladder_profile.md"
  cp "results/$exp/tables/metrics.csv" "results/$exp/tables/timings.csv" \
    "results/$exp/report/ladder_profile.csv" "$out/"
elif [ "$stage" = test ]; then
  python3 -m pytest -q -m gpu tests/test_gpu.py -k tensor_core_rungs 2>&1 | tail -25
elif [ "$stage" = memcheck ]; then
  tuned=kernels/tuned.csv
  [ -f results/tuned_merged.csv ] && tuned=results/tuned_merged.csv
  start=$(date +%s)
  # every rung of the ladder (registry `ladder:`), as the ladder preset's `variants: [ladder]`
  rungs=$(python3 -c 'from mmbench.core.registry import load_registry
from mmbench.plan.config import ladder_variants
r = load_registry()
print(" ".join(n for n in ladder_variants(r) if r[n].compiled))')
  python3 tools/memcheck.py $rungs --first 1 --tuned "$tuned" --gpu "$gpu" \
    > "$out/memcheck.log" 2>&1
  echo "memcheck: exit $? after $(($(date +%s) - start)) s"
  cat "$out/memcheck.log"
elif [ "$stage" = ladder ]; then
  tuned=kernels/tuned.csv
  [ -f results/tuned_merged.csv ] && tuned=results/tuned_merged.csv
  preset=$(subset config/presets/ladder.yaml)
  if [ "${PROFILE:-yes}" = no ] || [ -n "${DISTRIBUTION:-}" ] || [ -n "${PARAMS:-}" ]; then
    python3 - "$preset" results/ladder_edited.yaml <<'PY'
import os
import sys
import yaml
c = yaml.safe_load(open(sys.argv[1]))
if os.environ.get("PROFILE") == "no":  # no Nsight Compute: the tables and figures of the timings
    c["profile"] = {"enabled": False}
    c["report"] = {"figures": ["ladder", "ladder_load"], "tables": ["ladder", "verification"]}
if os.environ.get("DISTRIBUTION"):
    c["distribution"] = yaml.safe_load(os.environ["DISTRIBUTION"])
for name, values in yaml.safe_load(os.environ.get("PARAMS") or "{}").items():
    c["params"].setdefault(name, {}).update(values)  # some builds of a variant
yaml.safe_dump(c, open(sys.argv[2], "w"), sort_keys=False)
PY
    preset=results/ladder_edited.yaml
  fi
  start=$(date +%s)
  timeout "${LIMIT:-560}" snakemake --cores 16 --rerun-incomplete \
    --configfile "$preset" --config "tuned=$tuned" ${TUNED_GPU:+"tuned_gpu=$TUNED_GPU"} \
    >> "$out/ladder.log" 2>&1
  rc=$?
  echo "ladder: exit $rc after $(($(date +%s) - start)) s (tuned parameters: $tuned)"
  [ $rc = 124 ] && { echo "stopped at the limit: run the stage again to resume"; tail -3 "$out/ladder.log"; exit 0; }
  grep -h "configurations:" results/ladder/tables/summary.txt
  keep results/ladder ladder
  for t in ladder ladder_profile; do
    echo "== $t"
    cat "results/ladder/report/$t.md" 2>/dev/null
  done
elif [ "$stage" = again ] || [ "$stage" = pair ] || [ "$stage" = pair_a ] || [ "$stage" = pair_b ]; then
  tuned=kernels/tuned.csv
  [ -f results/tuned_merged.csv ] && tuned=results/tuned_merged.csv
  preset=$(subset config/presets/ladder.yaml)  # VARIANTS and SIZES as the ladder stage reads them
  sustained() {  # log name, more snakemake arguments
    local start=$(date +%s) name=$1; shift
    snakemake --cores 16 --rerun-incomplete --configfile "$preset" --config "tuned=$tuned" \
      ${TUNED_GPU:+"tuned_gpu=$TUNED_GPU"} experiment=ladder_again sizes=[4096,8192] shapes=[] distribution=[normal] load=[sustained] \
      profile='{enabled: false}' report='{figures: [ladder], tables: [ladder]}' "$@" \
      > "$out/$name.log" 2>&1
    local rc=$?
    echo "$name: exit $rc after $(($(date +%s) - start)) s"
    # a run that measured nothing stops the stage, its log's last lines said (no comparison)
    [ -f results/ladder_again/tables/timings.csv ] || { tail -3 "$out/$name.log"; exit 1; }
  }
  if [ "$stage" = again ]; then
    sustained again
    keep results/ladder_again ladder_again
    python3 tools/compare_times.py results/ladder/tables/timings.csv \
      results/ladder_again/tables/timings.csv --within 1 --where load=sustained distribution=normal
  else
    if [ "$stage" != pair_b ]; then
      sustained pair_a
      rm -rf results/ladder_pair_a && cp -r results/ladder_again results/ladder_pair_a
      keep results/ladder_pair_a ladder_pair_a
      [ "$stage" = pair_a ] && exit 0
    fi
    [ -f results/ladder_pair_a/tables/timings.csv ] || {
      echo "pair_b: no results/ladder_pair_a/tables/timings.csv (run pair_a, unpack its tgz into results/)"; exit 2; }
    sustained pair_b --forcerun measure_variant
    keep results/ladder_again ladder_pair_b
    python3 -c "import pandas as p; print('GPUs:', *{p.read_csv(f).gpu_uuid[0] for f in ('results/ladder_pair_a/tables/timings.csv', 'results/ladder_again/tables/timings.csv')})"
    python3 tools/compare_times.py results/ladder_pair_a/tables/timings.csv \
      results/ladder_again/tables/timings.csv --within 1 --where load=sustained distribution=normal
  fi
fi

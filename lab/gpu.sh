#!/usr/bin/env bash
# The checks that need the GPU machine: one tool, one named stage a device call (lab/README.md
# has the table).  Run from the repository root there, after installing the wheels (README,
# "GPU machine"):
#
#   lab/gpu.sh STAGE OUT [ARGS]        OUT receives the stage's logs and tables
#
# Stages written here:
#   tests                        pytest -m gpu (every GPU test)
#   main                         the main command (seed 003's table at 8000-12000), resumed where
#                                a previous call was cut off; its kernel_times table
#   rebuild-check                the default experiment, then a cubin overwritten with garbage,
#                                then a registry grid edit: what each rerun builds and measures
#   builds WHICH TREE VARIANTS   the ladder preset for VARIANTS ([a,b:bfloat16,...]: each in its
#                                ladder element types, or those after the colon, joined by +;
#                                tuned as in kernels/tuned.csv (TUNED_GPU=MODEL: that model's rows), EXTRA_TUNED=<csv> adds rows;
#                                SIZES='[4096,8192]' keeps those square sizes only,
#                                DISTRIBUTION='[normal]' those inputs only),
#                                without profiling, with the checkout at TREE (WHICH=before) or
#                                this one (WHICH=after); OUT/<WHICH>.csv is its timings table.
#                                After both: tools/compare_times.py OUT/before.csv OUT/after.csv
#   memcheck VARIANTS            compute-sanitizer memcheck of the first and the tuned
#                                instantiation of each variant at 33 x 31 x 37 (tools/memcheck.py)
# Stages in lab/gpu/<stage>.sh (their sub-stages follow OUT; each file's header lists them):
#   ladder   tune | test | memcheck | ladder | profile | again | pair | pair_a | pair_b
#   hopper   dev VARIANTS DTYPES [SIZES] | memcheck VARIANTS | sass VARIANT INSTANCE
#   compare  cool | ab | edit | once      (two runs of the compare preset, the edit loop)
#   paired   aa | calibrate | knob | edits | previous   (the paired comparison, side by side)
#   speed    oldnew [SIZES] | repro | e3c | main | main-old | default | default-old | ladder
#   cupti    (CUPTI's GPU-activities table and kernel times)
#   sizes    test | memcheck | tune | sweep | sources   (the ladder at every size: split-K)
#   skeleton check | streamk | skinny | pair       (the persistent skeleton: checks, stream-K, swapped operands, sources before)
#   shapes   calibrate | rung VARIANT | run SEED | misses SHAPES | pitch SIDES | fixup SHAPES | every SHAPES   (calibration, the shapes preset, its misses profiled, FP8 row pitch, kernels/ folders back to back, every build at some products)
#   peers    check | msmf | triton | profiler | harness | harness-cutlass | one-place | launches   (CUTLASS's and Triton's builds checked; the flushed
#                                         load; Triton's own timings and the harness's)
#   presets  main | e1 | e2 | ...         (experiments and their HTML reports, timed)
#   planted                               (another user plants the inputs cache: not used)
#   multi    N                            (N GPUs of one node against one; needs N GPUs)
#
# LIMIT (seconds, default 560) stops a long run so that its device call returns; the stage run
# again on the same machine resumes it.
set -uo pipefail
stage=${1:?"usage: lab/gpu.sh STAGE OUT [ARGS]; stages: tests, main, rebuild-check, builds, memcheck, ladder, hopper, compare, speed, cupti, presets, sizes, skeleton, shapes, peers, multi"}
out=${2:?"usage: lab/gpu.sh STAGE OUT [ARGS]"}
shift 2
mkdir -p "$out"
out=$(realpath "$out")
here=$(cd "$(dirname "$0")" && pwd)
case "$stage" in
ladder | hopper | compare | paired | speed | cupti | presets | sizes | planted | skeleton | shapes | peers) exec "$here/gpu/$stage.sh" "$out" "$@" ;;
multi) exec "$here/gpu/multi.sh" "$@" ;;
esac
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
stats() { sed -n '/^Job stats:/,/^total/p' "$1" | head -30; }

case "$stage" in
tests)
  python3 -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tail -30
  ;;
main)
  start=$(date +%s)
  timeout "${LIMIT:-560}" snakemake --cores 1 --rerun-incomplete --config 'sizes=[8000,10000,12000]' \
    > "$out/main.log" 2>&1
  echo "main command: exit $? after $(($(date +%s) - start)) s"
  stats "$out/main.log"
  grep -h "configurations:" "$out/main.log"
  [ -f results/report/kernel_times.md ] && cat results/report/kernel_times.md
  cp results/tables/timings.csv results/report/kernel_times.csv "$out/" 2>/dev/null
  ;;
rebuild-check)
  snakemake --cores 16 > "$out/rebuild-0.log" 2>&1
  echo "first run: exit $?"; stats "$out/rebuild-0.log"
  cubin=$(ls results/build/sm_*/tiled_guarded/float32_TILE16.cubin | head -1)
  echo "garbage" > "$cubin"
  snakemake --cores 16 > "$out/rebuild-1.log" 2>&1
  echo "after overwriting $cubin: exit $?"; grep -h "mmbench:" "$out/rebuild-1.log"
  stats "$out/rebuild-1.log"
  cp kernels/registry.yaml /tmp/mmbench-registry.yaml
  python3 - <<'PY'
from pathlib import Path
p = Path("kernels/registry.yaml")
t = p.read_text()
start = t.index("  naive_guarded:")
old = 'grid: ["cdiv(n, TILE)", "cdiv(m, TILE)"]'
i = t.index(old, start)
p.write_text(t[:i] + 'grid: ["cdiv(n, TILE) + 0", "cdiv(m, TILE)"]' + t[i + len(old):])
PY
  snakemake --cores 16 > "$out/rebuild-2.log" 2>&1
  echo "after editing naive_guarded's grid: exit $?"; stats "$out/rebuild-2.log"
  cp /tmp/mmbench-registry.yaml kernels/registry.yaml
  ;;
builds)
  usage="usage: lab/gpu.sh builds OUT before|after TREE VARIANTS"
  which=${1:?$usage} tree=${2:?$usage} variants=${3:?$usage}
  extra=() more=()
  [ -n "${EXTRA_TUNED:-}" ] && extra=(--extra-tuned "$(realpath "$EXTRA_TUNED")")
  [ -n "${SIZES:-}" ] && extra+=(--sizes "$SIZES")
  [ -n "${DISTRIBUTION:-}" ] && more=("distribution=$DISTRIBUTION")
  # TUNED_GPU: another model's tuned parameters (a GPU model kernels/tuned.csv lacks)
  [ -n "${TUNED_GPU:-}" ] && more+=("tuned_gpu=$TUNED_GPU")
  [ "$which" = before ] && cd "$tree"
  export PYTHONPATH=$PWD/workflow/scripts:${PYTHONPATH:-}
  preset=$(python3 "$here/../tools/preset_subset.py" config/presets/ladder.yaml "$variants" \
    "/tmp/mmbench-$which-subset.yaml" --no-profile "${extra[@]}")
  start=$(date +%s)
  timeout "${LIMIT:-560}" snakemake --cores 16 --rerun-incomplete --configfile "$preset" \
    --config experiment="$which" "${more[@]}" > "$out/$which.log" 2>&1
  echo "$which ($PWD): exit $? after $(($(date +%s) - start)) s"
  # each sustained configuration's time, clock and power (what a power limit does to a rung)
  grep -hE " sustained [a-z0-9_]+: kernel" "$out/$which.log" | sed -E 's/^[0-9:]+ \[[^]]*\] //; s/, PASS.*/, PASS/' | cut -c1-220
  stats "$out/$which.log"
  grep -h "configurations:" "results/$which/tables/summary.txt" 2>/dev/null
  cp "results/$which/tables/timings.csv" "$out/$which.csv" 2>/dev/null
  ;;
memcheck)
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  # shellcheck disable=SC2046  # one argument per variant
  python3 tools/memcheck.py $(echo "${1:?usage: lab/gpu.sh memcheck OUT VARIANTS}" | tr -d '[]' | tr ',' ' ') --first 1 \
    --tuned kernels/tuned.csv --gpu "$gpu" 2>&1 | tail -40
  ;;
*)
  echo "unknown stage $stage; valid: tests, main, rebuild-check, builds, memcheck, ladder," \
    "hopper, compare, speed, cupti, presets, sizes, planted, multi" >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# The checks that need the GPU machine, one named stage a device call (tools/README.md lists
# them).  Run from the repository root there, after installing the wheels (README, "GPU machine"):
#
#   tools/gpu.sh STAGE OUT [ARGS]
#
#   tests                       pytest -m gpu (every GPU test)
#   builds WHICH TREE VARIANTS  the ladder preset for VARIANTS ([a,b:bfloat16,...]: each in its
#                               ladder element types, or those after the colon, joined by +;
#                               tuned as in kernels/tuned.csv, EXTRA_TUNED=<csv> adds rows) with
#                               no profiling, measured with the checkout at TREE (WHICH=before) or
#                               this one (WHICH=after); OUT/<WHICH>.csv is its timings table.
#                               After both: tools/compare_times.py OUT/before.csv OUT/after.csv
#   memcheck VARIANTS           compute-sanitizer memcheck of the first and the tuned
#                               instantiation of each variant at 33 x 31 x 37 (tools/memcheck.py)
#
# OUT receives the logs and tables of the stage.  LIMIT (seconds, default 560) stops a long run
# so that its device call returns; the stage run again on the same machine resumes it.
set -uo pipefail
stage=$1
out=$2
shift 2
mkdir -p "$out"
out=$(realpath "$out")
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
stats() { sed -n '/^Job stats:/,/^total/p' "$1" | head -30; }

# a copy of the ladder preset for VARIANTS only, without profiling (a config file on stdout)
ladder_subset() {
  python3 - "$1" "$2" <<'PY'
import sys
from pathlib import Path

import yaml

variants = sys.argv[1].strip("[]").replace(" ", "").split(",")
from mmbench.core.registry import load_registry

registry = load_registry("kernels/registry.yaml")
config = yaml.safe_load(open("config/presets/ladder.yaml"))
config["variants"] = [v.split(":")[0] for v in variants]
# each in its ladder element types (registry `ladder:`), or those named: cublas:bfloat16
config["params"] = {}
for v in variants:
    name, _, types = v.partition(":")
    chosen = types.split("+") if types else list(getattr(registry[name], "ladder", ()))
    if chosen:
        config["params"][name] = {"dtype": chosen}
config["profile"] = {"enabled": False}
config["report"] = {"figures": [], "tables": ["verification"]}
if sys.argv[2]:  # rows for variants kernels/tuned.csv does not hold
    merged = Path("/tmp/mmbench-tuned.csv")
    merged.write_text(Path("kernels/tuned.csv").read_text().rstrip("\n") + "\n"
                      + Path(sys.argv[2]).read_text().strip("\n") + "\n")
    config["tuned"] = str(merged)
out = Path("/tmp/mmbench-ladder-subset.yaml")
out.write_text(yaml.safe_dump(config, sort_keys=False))
print(out)
PY
}

case "$stage" in
tests)
  python3 -m pytest -q -m gpu -p no:cacheprovider 2>&1 | tail -30
  ;;
builds)
  which=$1 tree=$2 variants=$3
  extra=${EXTRA_TUNED:+$(realpath "$EXTRA_TUNED")}
  here=$PWD
  [ "$which" = before ] && cd "$tree"
  preset=$(PYTHONPATH=$PWD/workflow/scripts:$PYTHONPATH ladder_subset "$variants" "$extra")
  start=$(date +%s)
  export PYTHONPATH=$PWD/workflow/scripts:$PYTHONPATH
  timeout "${LIMIT:-560}" \
    snakemake --cores 16 --rerun-incomplete --configfile "$preset" --config experiment="$which" \
    > "$out/$which.log" 2>&1
  echo "$which ($PWD): exit $? after $(($(date +%s) - start)) s"
  stats "$out/$which.log"
  grep -h "configurations:" "results/$which/tables/summary.txt" 2>/dev/null
  cp "results/$which/tables/timings.csv" "$out/$which.csv" 2>/dev/null
  cd "$here"
  ;;
memcheck)
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  # shellcheck disable=SC2046  # one argument per variant
  python3 tools/memcheck.py $(echo "$1" | tr -d '[]' | tr ',' ' ') --first 1 \
    --tuned kernels/tuned.csv --gpu "$gpu" 2>&1 | tail -40
  ;;
*)
  echo "unknown stage $stage; valid: tests, builds, memcheck" >&2
  exit 2
  ;;
esac

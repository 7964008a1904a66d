#!/usr/bin/env bash
# The paired comparison's checks on a GPU machine (issue "a comparison that sees a 1% change"),
# printing what each found; OUT receives logs, tables and the pairs' samples.
#   aa        the compare preset, every variant against itself side by side (baseline=itself):
#             the verdict counts (an A/A test), and the wall time of each variant's plain
#             measurement (measure_variant) and of its paired one (pair_variant)
#   calibrate the knob preset's plain run (tiled_knob at WORK 1000, 1010, 1020, 1040): each
#             WORK's slowdown from the kernel's own timings (no comparison involved)
#   knob      tiled_knob side by side: WORK 1010 against 1000 and 1040 against 1020 (about 2%
#             more work: SLOWER), 1020 against 1010 (about 1%), then each the other way (FASTER)
#   edits     each candidate edit of tiled_guarded (lab/gpu/edits.py) against its source
#             side by side (baseline={variant: tiled_guarded, source: the original})
#   sources   VARIANTS="a b" OLD_TREE=<an older checkout>: each variant's ladder instantiation
#             against its kernel file (and headers) in OLD_TREE, side by side (TUNED_GPU: the
#             GPU model whose tuned instantiation to run, default this one; SOURCES_SIZES:
#             the sizes, default [1,31,33,4096]; SOURCES_SHAPES: the m x n x k products,
#             default [[1000,1100,37]])
#   previous  the edit loop (EDIT=<edit>, EDIT_TILES=<widths, default the preset's>): the
#             compare preset's tiled_guarded measured, the chosen edit made,
#             then `compare` with baseline=previous (paired from the archived cubins) and
#             fail_on=slower
# Usage (repository root): lab/gpu.sh paired OUT aa calibrate knob edits previous
set -uo pipefail
out=$1; shift
mkdir -p "$out"
timed() {  # name, snakemake args...
  local name=$1; shift
  local start=$(date +%s)
  timeout "${LIMIT:-560}" snakemake "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc, $(($(date +%s) - start)) s"
  [ $rc -ne 0 ] && grep -h "Error\|error\|mmbench" "$out/$name.log" | head -8
  return $rc
}
walls() {  # results folder: each job's wall time (Snakemake's benchmark files)
  for f in "$1"/benchmarks/measure/*.tsv "$1"/benchmarks/pairs/*.tsv; do
    [ -f "$f" ] && printf '%-48s %s s\n' "${f#"$1"/benchmarks/}" "$(tail -1 "$f" | cut -f1)"
  done
}
keep() {  # results folder, name: its compare and pairs tables, figure and logs, OUT/<name>.tar.gz
  tar czf "$out/$2.tar.gz" -C "$1" tables/compare.csv tables/compare.json tables/compare.txt \
    figures/compare.png report/compare.html pairs logs/pairs benchmarks 2>/dev/null
  python3 - "$1/tables/compare.csv" <<'PY'
import sys
import pandas as pd
t = pd.read_csv(sys.argv[1])
cols = [c for c in ["label", "m", "verdict", "base_ms", "this_ms", "ratio_centre", "ratio_low",
                    "ratio_high", "detectable", "rounds"] if c in t]
print(t.sort_values(["label", "m"])[cols].to_string(index=False, float_format=lambda v: f"{v:.5g}"))
PY
}
# tiled_guarded alone at the compare preset's sizes (the edits' experiments)
edit_preset() {  # experiment name [tiles] -> the preset's path
  python3 - "$@" <<'PY'
import sys
import yaml
p = yaml.safe_load(open("config/presets/compare.yaml"))
p.update(experiment=sys.argv[1], variants=["tiled_guarded"], params={})
if len(sys.argv) > 2:  # the tile widths, e.g. 32
    p["tiles"] = [int(t) for t in sys.argv[2].split(",")]
path = f"/tmp/mmbench-{sys.argv[1]}.yaml"
yaml.safe_dump(p, open(path, "w"))
print(path)
PY
}
for stage in "$@"; do
  case $stage in
  aa)
    timed aa --cores 16 compare --configfile config/presets/compare.yaml --config baseline=itself
    cat results/compare/tables/compare.txt
    walls results/compare
    keep results/compare aa
    ;;
  calibrate)
    timed calibrate --cores 16 --configfile config/presets/knob.yaml
    python3 tools/knob_calibration.py results/knob/tables/timings.csv | tee "$out/calibration.txt"
    cp results/knob/tables/timings.csv "$out/calibration_timings.csv"
    ;;
  knob)
    # this WORK against the baseline's: 1010/1000 and 1040/1020 add about 2% (calibrate),
    # 1020/1010 about 1%; then each the other way round (FASTER)
    for pair in 1010/1000 1020/1010 1040/1020 1000/1010 1010/1020 1020/1040; do
      this=${pair%/*} base=${pair#*/}
      timed "knob_${this}_vs_$base" --cores 16 compare --configfile config/presets/knob.yaml \
        --config "params={tiled_knob: {WORK: [$this]}}" "baseline={variant: tiled_knob, params: {WORK: $base}}"
      grep -h "SLOWER,\|comparison:\|side by side" results/knob/tables/compare.txt
      keep results/knob "knob_${this}_vs_$base"
    done
    walls results/knob
    ;;
  edits)
    cp kernels/05_tiled_guarded.cu /tmp/tiled_original.cu
    for e in $(python3 lab/gpu/edits.py --list); do
      python3 lab/gpu/edits.py "$e" /tmp/tiled_original.cu kernels/05_tiled_guarded.cu
      timed "edit_$e" --cores 16 compare --configfile "$(edit_preset "edit_$e")" --config \
        'baseline={variant: tiled_guarded, source: /tmp/tiled_original.cu}'
      grep -h "SLOWER,\|comparison:\|side by side" "results/edit_$e/tables/compare.txt"; walls "results/edit_$e"; keep "results/edit_$e" "edit_$e"
      cp /tmp/tiled_original.cu kernels/05_tiled_guarded.cu
    done
    ;;
  previous)
    cp kernels/05_tiled_guarded.cu /tmp/tiled_original.cu
    P=(--configfile "$(edit_preset edit_loop ${EDIT_TILES:-})")
    rm -rf results/edit_loop
    timed before --cores 16 "${P[@]}"
    cp results/edit_loop/tables/timings.csv "$out/before.csv"
    python3 lab/gpu/edits.py "${EDIT:?EDIT=<the chosen edit>}" /tmp/tiled_original.cu kernels/05_tiled_guarded.cu
    timed after --cores 16 "${P[@]}"
    cp results/edit_loop/tables/timings.csv "$out/after.csv"
    echo "the edit $EDIT measured first, by the plain runs before and after it:"
    python3 tools/compare_times.py "$out/before.csv" "$out/after.csv" | tail -20
    timed gate --cores 16 compare "${P[@]}" --config baseline=previous 'compare={fail_on: slower}'
    cat results/edit_loop/tables/compare.txt; tail -n 3 "$out/gate.log"
    walls results/edit_loop; keep results/edit_loop previous
    cp /tmp/tiled_original.cu kernels/05_tiled_guarded.cu
    ;;
  sources)
    # each of VARIANTS (its ladder preset's tuned instantiation, sizes 1, 31, 33, 1000 x 1100 x 37
    # and 4096) against its kernel file in OLD_TREE/kernels (headers from there too)
    # (built with OLD_TREE's registry where it has one: its entry may pass other -D facts)
    old=$(realpath "${OLD_TREE:?}") reg=""
    [ -f "$old/kernels/registry.yaml" ] && reg=", registry: $old/kernels/registry.yaml"
    for v in ${VARIANTS:?VARIANTS=\"a b\"}; do
      src=$(python3 -c "import yaml; print(yaml.safe_load(open('kernels/registry.yaml'))['variants']['$v']['source'])")
      preset=$(python3 tools/preset_subset.py config/presets/ladder.yaml "[$v]" "/tmp/mmbench-src-$v.yaml" --no-profile)
      timed "sources_$v" --cores 16 compare --configfile "$preset" --config experiment="sources_$v" \
        "sizes=${SOURCES_SIZES:-[1,31,33,4096]}" "shapes=${SOURCES_SHAPES:-[[1000,1100,37]]}" 'load=[burst]' 'sustained_sizes=[]' "tuned_gpu=${TUNED_GPU:-auto}" \
        "baseline={variant: $v, source: $old/kernels/$src$reg}"
      grep -h "SLOWER,\|comparison:\|side by side" "results/sources_$v/tables/compare.txt"
      keep "results/sources_$v" "sources_$v"
    done
    ;;
  *)
    echo "unknown sub-stage $stage; valid: aa, calibrate, knob, edits, previous, sources" >&2
    exit 2
    ;;
  esac
done

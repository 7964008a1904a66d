#!/usr/bin/env bash
# The ladder at any shape on a GPU machine (issue "past cuBLAS at any shape", items 3 and 4).
#   lab/gpu.sh shapes OUT calibrate     the tune preset cut to the shapes preset's rungs that
#                                        kernels/calibration.csv does not hold yet (CAL_VARIANTS),
#                                        every instantiation at the tune preset's squares to 4096
#                                        and its 13 products with small sides (CAL_SIZES,
#                                        CAL_SHAPES: others; CAL_PARAMS='{v: {BN: [..]}}'
#                                        some builds alone; CAL_GRIDS='[chosen, whole]': the
#                                        stream-K rungs also with every tile whole), bursts, short
#                                        sampling; OUT/calibration.csv is its calibration table
#                                        (an H200's or an H100's: keep OUT/calibrate_timings.csv with
#                                        lab/keep_calibration.py, which refits the kept rows),
#                                        OUT/calibrate_timings.csv the timings it was fitted on;
#                                        on this machine, results/calibration-merged.csv: the
#                                        kept table with the GPU model's rows fitted again from
#                                        its recorded runs and this one (keep_calibration.py
#                                        --to), which `run` then uses; CAL_WITH=a.csv,...:
#                                        with earlier calibrate calls' timings fitted too
#                                        (two passes of other CAL_PARAMS or sizes, one merged table)
#   lab/gpu.sh shapes OUT rung VARIANT   a new rung (or VARIANT,VARIANT: several) before it
#                                        joins the preset: the GPU test of
#                                        the skeleton's same bits in two runs (every rung; or
#                                        the GPU tests RUNG_TESTS names, pytest -k),
#                                        memcheck of VARIANT's first and last instantiation
#                                        (RUNG_WHERE='expr': those it holds for) at
#                                        three odd shapes (a stream-K rung's also with every
#                                        tile whole), then `calibrate` of VARIANT alone at
#                                        the skinny rungs' ten shapes (or CAL_SIZES and
#                                        RUNG_SHAPES; RUNG_CAL='[a, b]': those variants);
#                                        exit 1 where one fails
#   lab/gpu.sh shapes OUT run SEED       the shapes preset at 64 products drawn from SEED
#                                        (DRAW_COUNT), TUNED_GPU's tuning;
#                                        CLASSES=fp32,fp64,bf16 (say) runs that part of the
#                                        preset alone, into results/shapes-SEED-fp32_fp64_bf16
#                                        (lab/shapes_parts.py puts the parts together), and
#                                        VARIANTS=a,b those of its variants alone; stopped
#                                        at LIMIT
#                                        (default 560 s) and resumed from the jobs' journals when
#                                        run again on the same machine; once whole, its shapes
#                                        and sweep tables, OUT/shapes-SEED.tar.gz (the results
#                                        without the cubins) and OUT/shapes-SEED-kept.tar.xz (its
#                                        manifests and row tables alone: keep it in
#                                        lab/data/, lab/shapes_parts.py merges such parts);
#                                        until then OUT/shapes-SEED-partial
#                                        .tar.gz, the measurement jobs' rows and journals so far;
#                                        RUN_VARIANTS=a,b runs those variants' jobs alone (the
#                                        rest of a part whose machine was released: carry the
#                                        journals, merge the partial tars with shapes_parts.py)
#   lab/gpu.sh shapes OUT misses SHAPES  the products SHAPES ([[m, n, k], ...]) where a run missed,
#                                        measured in bursts by the part CLASSES of the preset
#                                        (default fp32,fp64,bf16; VARIANTS=a,b,... those of
#                                        its variants alone) and profiled with Nsight Compute
#                                        (the ladder metric set: the warps' stall reasons) for
#                                        PROFILED (default [warptile_db, ws_f64, cublas]) in
#                                        PROFILED_DTYPES (default [float32, float64]): its
#                                        sweep, ladder_profile (the limiter) and
#                                        profiler_metrics tables; PROFILED=none measures
#                                        alone, MARGIN=null runs the rungs the calibration
#                                        margin would leave out
#   lab/gpu.sh shapes OUT every SHAPES   every instantiation of EVERY_VARIANTS (default
#                                        [warptile_db]) and cuBLAS (EVERY_REF: another
#                                        reference, cublaslt_fp8) at SHAPES in EVERY_DTYPES
#                                        (default [float32]), bursts, every row verified
#                                        (EVERY_GRIDS='[chosen, whole]': the stream-K rungs
#                                        also with every tile whole; EVERY_PARAMS='{v: {..}}'
#                                        some builds alone):
#                                        OUT/every_timings.csv (question: is the model's choice
#                                        or the rung's builds short at a product?); resumed
#                                        from its journals when run again on the same machine
#   lab/gpu.sh shapes OUT pitch SIDES    square products of SIDES (space-separated) with their
#                                        rows as the plan pads them and padded on to a 128-byte
#                                        pitch (leading_pad, strided transfer), bursts, every
#                                        build run (no calibration margin): OUT/pitch-SIDE.csv
#                                        each.  PITCH_CLASS=fp8 (default): persistent_fp8 at
#                                        128 x 128, 6 stages, CLUSTER 1 and 2, streamk_fp8's two
#                                        128 x 128 builds and cuBLASLt (since the FP8 rungs ask
#                                        for 128-byte rows, both pads give such rows); bf16:
#                                        persistent_bf16 and tmastore_bf16 at their tuned
#                                        128 x 256 builds and cuBLAS; tf32: persistent_tf32_tn
#                                        and tmastore_tf32_tn (128 x 256, 3 stages) and
#                                        cublas_tf32_tn (question: do the 16-byte rows slow the
#                                        TMA rungs of the class at such sides?)
#   lab/gpu.sh shapes OUT fixup SHAPES   two or more kernels/ folders back to back on this GPU:
#                                        the misses stage at SHAPES (bursts, no profile, every
#                                        rung: MARGIN=null; CLASSES and VARIANTS as there,
#                                        default the fp64, bf16, tf32 and fp8 parts) once with
#                                        OLD_REF's kernels/ (default main; `git archive`) and
#                                        once with this tree's (OUT/old.csv, OUT/new.csv), or
#                                        once with each of TREES="DIR ..." (OUT/<DIR's name>.csv);
#                                        then per rung and product the fastest kernel time of
#                                        each and its ratio to the first's, every row verified;
#                                        kernels/ holds the registry and the calibration too, so
#                                        each run's model chooses its own build and split (a
#                                        product where they differ is printed with both);
#                                        ANY_VERDICT=1 compares rows that did not PASS too
# OUT receives the logs and tables.
set -uo pipefail
out=$1
stage=$2
mkdir -p "$out"
echo "GPU: $(nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader | head -1)"
tuned_gpu=${TUNED_GPU:-"NVIDIA H100 80GB HBM3"}
# shellcheck source=lab/gpu/timed.bash
. "$(dirname "$0")/timed.bash"
# every build in bursts, briefly (calibrate, every)
short_sampling='sampling={warmup: 1, min_samples: 5, max_samples: 20, min_time_s: 0.02, max_time_s: 0.3, sustained_window_s: 1.5}'
# the calibration table a run uses: the kept one, or with the rows a calibrate call on this
# machine fitted (results/calibration-merged.csv)
calibration() {
  if [ -f results/calibration-merged.csv ]; then echo results/calibration-merged.csv
  else echo kernels/calibration.csv; fi
}
case "$stage" in
calibrate)
  variants=${CAL_VARIANTS:-"[warptile_db, persistent_tf32, persistent_bf16, ws_f64]"}
  timed calibrate --configfile config/presets/tune.yaml --config experiment=calibrate \
    "variants=$variants" "tuned_gpu=$tuned_gpu" \
    "sizes=${CAL_SIZES:-[1024,1536,2048,3072,4096]}" \
    "shapes=${CAL_SHAPES:-[[128,8192,8192],[256,8192,8192],[512,8192,8192],[32,4096,4096],[4096,32,4096],[64,8192,2048],[8192,64,2048],[16,2048,8192],[2048,16,8192],[256,256,8192],[2048,2048,256],[96,1536,1536],[1536,96,1536]]}" \
    'dtypes=[float32, bfloat16, float8_e4m3, float64]' 'load=[burst]' 'sustained_sizes=[]' \
    'report={figures: [], tables: [calibration, verification]}' \
    "$short_sampling" ${CAL_PARAMS:+"params=$CAL_PARAMS"} \
    ${CAL_GRIDS:+"stream_k_grids=$CAL_GRIDS"}
  grep -h "configurations:" results/calibrate/tables/summary.txt 2>/dev/null
  cp results/calibrate/tables/timings.csv "$out/calibrate_timings.csv" 2>/dev/null
  cp results/calibrate/report/calibration.csv "$out/calibration.csv" 2>/dev/null &&
    python3 -c 'import sys, pandas as pd; print(pd.read_csv(sys.argv[1])[["variant", "instance",
"fixed_us", "ktile_us", "sm_ktile_us", "unit_us", "split_us", "shapes", "worst_fit"]].head(40)
.to_csv(index=False))' "$out/calibration.csv"
  # the kept table with this GPU model's rows fitted again from its recorded runs and this one
  # (lab/keep_calibration.py --to), for the run stage on this machine (results/ stays between
  # calls; kernels/ is copied anew); none where it refuses the refit (the run then reads
  # kernels/calibration.csv)
  # (CAL_WITH=a.csv,b.csv: earlier calibrate calls' timings on this machine fitted with this
  # one's, as keeping them all would; the other rungs' rows otherwise come from the kept runs)
  rm -f results/calibration-merged.csv
  earlier=()
  for f in ${CAL_WITH:+${CAL_WITH//,/ }}; do earlier+=(--with "$f"); done
  [ -f "$out/calibrate_timings.csv" ] && python3 lab/keep_calibration.py \
    "$out/calibrate_timings.csv" "${earlier[@]}" --to results/calibration-merged.csv
  # a released machine keeps nothing: a later call on a fresh one carries this copy back into
  # results/ (run's carry: results/calibration-merged.csv), or kernels/calibration.csv takes the rows
  cp results/calibration-merged.csv "$out/" 2>/dev/null
  ;;
rung)
  variant=${3:?"usage: lab/gpu.sh shapes OUT rung VARIANT[,VARIANT...]"}
  variants=${variant//,/ }  # memcheck's arguments
  start=$(date +%s)
  # TESTS_LIMIT, MEMCHECK_LIMIT (s): a kernel that hangs stops there, not at the call's limit
  timeout "${TESTS_LIMIT:-600}" python3 -m pytest -q -m gpu -p no:cacheprovider -s \
    -k "${RUNG_TESTS:-same_bits}" > "$out/tests.log" 2>&1
  rc=$?
  echo "GPU tests (-k ${RUNG_TESTS:-same_bits}): exit $rc, $(($(date +%s) - start)) s"
  grep -h "rungs,\|passed\|failed\|FAILED\|Error" "$out/tests.log" | tail -6
  # each instantiation built once and checked at the three shapes
  shapes=(--shape 33 31 37 --shape 17 4099 129 --shape 1000 77 3001)
  if [ -n "${RUNG_WHERE:-}" ]; then  # the instantiations for which it holds
    timeout "${MEMCHECK_LIMIT:-600}" python3 tools/memcheck.py $variants "${shapes[@]}" --whole \
      --where "$RUNG_WHERE"
  else
    for which in first last; do
      timeout "${MEMCHECK_LIMIT:-600}" python3 tools/memcheck.py $variants "${shapes[@]}" \
        --whole --$which 1
    done
  fi > "$out/memcheck.log" 2>&1
  clean=$(grep -c "ERROR SUMMARY: 0 errors" "$out/memcheck.log")
  checked=$(grep -c "(exit [0-9]*)$" "$out/memcheck.log")  # a line each instantiation and shape
  echo "memcheck: $clean of $checked clean"
  [ "$checked" -gt 0 ] && [ "$clean" = "$checked" ] && [ $rc = 0 ] || exit 1
  CAL_VARIANTS=${RUNG_CAL:-"[${variant//,/, }]"} \
    CAL_SHAPES=${RUNG_SHAPES:-"[[16,8192,8192],[64,8192,8192],[128,8192,8192],[256,8192,8192],[512,8192,8192]]"} \
    "$0" "$out" calibrate
  ;;
run)
  seed=${3:?"usage: lab/gpu.sh shapes OUT run SEED"}
  cal=$(calibration)
  echo "calibration: $cal"
  preset=config/presets/shapes.yaml name=shapes-$seed
  if [ -n "${CLASSES:-}" ]; then  # a part of the preset: these classes alone
    preset=/tmp/shapes-part.yaml name=shapes-$seed-${CLASSES//,/_}
    python3 lab/shapes_parts.py preset "$preset" "$CLASSES" ${VARIANTS:+"$VARIANTS"} || exit 2
  fi
  # RUN_VARIANTS=a,b: those variants' measurement jobs alone (Snakemake targets), the plan
  # still the whole part's (its calibration margin compares every rung of the class); their rows
  # come back as the partial tar's, to merge with a part stopped on a machine since released
  targets=()
  for v in ${RUN_VARIANTS:+${RUN_VARIANTS//,/ }}; do targets+=("results/$name/runs/$v.csv"); done
  timed "$name" "${targets[@]}" --configfile "$preset" \
    --config "draw={count: ${DRAW_COUNT:-64}, seed: $seed}" "tuned_gpu=$tuned_gpu" \
    "experiment=$name" "calibration=$cal"
  rc=$?
  grep -h "configurations:" "results/$name/tables/summary.txt" 2>/dev/null
  if [ $rc -eq 0 ] && [ -z "${RUN_VARIANTS:-}" ]; then
    for t in shapes sweep; do
      [ -f "results/$name/report/$t.md" ] && cat "results/$name/report/$t.md"
    done
    tar czf "$out/$name.tar.gz" --exclude="results/$name/build" "results/$name"
    # what render_only needs of it, small enough to keep in lab/data/ between sessions (a
    # released machine, or a new checkout, keeps nothing): the manifests and the row tables
    (cd results && tar cJf - "$name"/runs/*.manifest.json \
      $(ls "$name"/tables/{timings,resources,refused}.csv 2>/dev/null)) > "$out/$name-kept.tar.xz"
    echo "kept for lab/data: $out/$name-kept.tar.xz, $(du -k "$out/$name-kept.tar.xz" | cut -f1) KiB"
  else  # what is measured so far comes back too (a released machine keeps nothing)
    echo "variants measured: $(ls "results/$name/runs" 2>/dev/null | grep -c "\.csv$")"
    tar czf "$out/$name-partial.tar.gz" "results/$name/runs" 2>/dev/null
  fi
  exit $rc  # a run stopped at LIMIT, or failed, says so to the call
  ;;
misses)
  shapes=${3:?"usage: lab/gpu.sh shapes OUT misses '[[m, n, k], ...]'"}
  python3 lab/shapes_parts.py preset /tmp/misses.yaml "${CLASSES:-fp32,fp64,bf16}" \
    ${VARIANTS:+"$VARIANTS"} || exit 2
  profile="{enabled: true, metric_set: ladder, variants: ${PROFILED:-[warptile_db, ws_f64, cublas]}, dtypes: ${PROFILED_DTYPES:-[float32, float64]}, sizes: [], shapes: $shapes}"
  [ "${PROFILED:-}" = none ] && profile='{enabled: false}'
  # MARGIN=null: no margin, so none from some milliseconds on either
  no_margin=()
  [ "${MARGIN:-}" = null ] && no_margin=('calibration_margin_from_ms=null')
  timed misses --configfile /tmp/misses.yaml --config experiment=misses \
    'draw={count: 0, seed: 1}' "shapes=$shapes" 'load=[burst]' 'sustained_from_ms=null' \
    "tuned_gpu=$tuned_gpu" 'report={figures: [], tables: [sweep, ladder_profile, profiler_metrics, verification]}' \
    "profile=$profile" ${MARGIN:+"calibration_margin=$MARGIN"} "calibration=$(calibration)" \
    "${no_margin[@]}"
  for t in sweep ladder_profile profiler_metrics; do
    [ -f "results/misses/report/$t.md" ] && cat "results/misses/report/$t.md"
    cp "results/misses/report/$t.csv" "$out/" 2>/dev/null
  done
  # the profile batch's own account (its list, what ran in which range, the report's raw
  # launches) and each profile job's log: which launch each configuration's rows came from
  (cd results/misses && tar czf "$out/misses-profile.tgz" profile/ncu_batch.json \
    profile/ncu_batch/batch.json profile/ncu_batch/batch-done.json profile/ncu_batch/ncu_raw.csv \
    logs/profile tables/metrics.csv 2>/dev/null)
  ;;
every)
  shapes=${3:?"usage: lab/gpu.sh shapes OUT every '[[m, n, k], ...]'"}
  variants=${EVERY_VARIANTS:-"[warptile_db]"}
  timed every --configfile config/presets/tune.yaml --config experiment=every \
    "variants=${variants%]}, ${EVERY_REF:-cublas}]" "tuned_gpu=$tuned_gpu" 'sizes=[]' "shapes=$shapes" \
    "dtypes=${EVERY_DTYPES:-[float32]}" 'load=[burst]' 'sustained_sizes=[]' \
    'report={figures: [], tables: [verification]}' \
    "$short_sampling" ${EVERY_GRIDS:+"stream_k_grids=$EVERY_GRIDS"} ${EVERY_PARAMS:+"params=$EVERY_PARAMS"}
  rc=$?
  grep -h "configurations:" results/every/tables/summary.txt 2>/dev/null
  if [ -f results/every/tables/timings.csv ]; then
    cp results/every/tables/timings.csv "$out/every_timings.csv"
  else  # stopped before the table: the measurement jobs' rows so far
    tar czf "$out/every-partial.tar.gz" results/every/runs 2>/dev/null
  fi
  exit $rc
  ;;
pitch)
  sides=${3:?"usage: lab/gpu.sh shapes OUT pitch 'SIDE ...'"}
  # per class: the variants and builds, and the elements of a 128-byte row
  case "${PITCH_CLASS:-fp8}" in
  fp8)
    python3 lab/shapes_parts.py preset /tmp/pitch.yaml fp8 persistent_fp8,streamk_fp8,cublaslt_fp8 \
      || exit 2
    files=(--configfile /tmp/pitch.yaml) extra=('draw={count: 0, seed: 1}') line=128
    params='{persistent_fp8: {dtype: [float8_e4m3], BM: [128], BN: [128], STAGES: [6], CLUSTER: [1, 2], GROUP: [8], CHAIN: [8]}, streamk_fp8: {dtype: [float8_e4m3], BM: [128], BN: [128], STAGES: [6], CLUSTER: [1, 2], GROUP: [8], CHAIN: [8]}, cublaslt_fp8: {dtype: [float8_e4m3]}}'
    ;;
  bf16)
    files=() extra=('variants=[persistent_bf16, tmastore_bf16, cublas]' 'sizes=[]') line=64
    params='{persistent_bf16: {dtype: [bfloat16], BM: [128], BN: [256], STAGES: [4], CLUSTER: [2], GROUP: [8]}, tmastore_bf16: {dtype: [bfloat16], BM: [128], BN: [256], STAGES: [4], CLUSTER: [2], GROUP: [8]}, cublas: {dtype: [bfloat16]}}'
    ;;
  tf32)
    files=() extra=('variants=[persistent_tf32_tn, tmastore_tf32_tn, cublas_tf32_tn]' 'sizes=[]')
    line=32
    params='{persistent_tf32_tn: {dtype: [float32], BM: [128], BN: [256], STAGES: [3], CLUSTER: [1], GROUP: [16]}, tmastore_tf32_tn: {dtype: [float32], BM: [128], BN: [256], STAGES: [3], CLUSTER: [1], GROUP: [16]}, cublas_tf32_tn: {dtype: [float32]}}'
    ;;
  *) echo "PITCH_CLASS: fp8, bf16 or tf32, not ${PITCH_CLASS}" >&2; exit 2 ;;
  esac
  for side in $sides; do
    pad=$(((line - side % line) % line))  # to the next whole 128-byte row
    timed "pitch-$side" ${files[@]+"${files[@]}"} --config "${extra[@]}" "experiment=pitch-$side" \
      "shapes=[[$side, $side, $side]]" 'load=[burst]' \
      'sustained_from_ms=null' 'calibration_margin=null' 'memory=[pinned]' \
      "leading_pad=[0, $pad]" 'transfer=[strided]' "tuned_gpu=$tuned_gpu" "params=$params" \
      'report={figures: [], tables: [verification]}'
    python3 - "results/pitch-$side/tables/timings.csv" "$out/pitch-$side.csv" <<'PY'
import sys
import pandas as pd
t = pd.read_csv(sys.argv[1])
cols = ["variant", "params", "m", "pad", "lda", "kernel_ld", "verification", "kernel_ms_median",
        "kernel_gflops", "sm_clock_mhz"]
t = t[[c for c in cols if c in t]]
t.to_csv(sys.argv[2], index=False)
print(t.to_string(index=False))
PY
  done
  ;;
fixup)
  shapes=${3:?"usage: lab/gpu.sh shapes OUT fixup '[[m, n, k], ...]'"}
  rm -rf /tmp/fixup-new && cp -r kernels /tmp/fixup-new || exit 2
  # TREES="DIR ...": kernels/ folders to run in turn (named by their folder), instead of
  # OLD_REF's (default main) against this tree's
  if [ -n "${TREES:-}" ]; then
    names=()
    for d in $TREES; do
      n=$(basename "$d"); rm -rf "/tmp/fixup-$n" && cp -r "$d" "/tmp/fixup-$n" || exit 2
      names+=("$n")
    done
  else
    ref=${OLD_REF:-main}
    rm -rf /tmp/kernels /tmp/fixup-old
    # (a device's copy of the checkout may hold its commits without the branch names: then HEAD)
    git rev-parse -q --verify "$ref^{commit}" > /dev/null || ref=HEAD
    echo "old kernels: $ref, $(git rev-parse --short "$ref")"
    git archive "$ref" kernels | tar x -C /tmp || { echo "git archive $ref kernels failed" >&2; exit 2; }
    mv /tmp/kernels /tmp/fixup-old || exit 2
    cmp -s kernels/persistent.cuh /tmp/fixup-old/persistent.cuh &&
      { echo "$ref's kernels are this tree's: nothing to compare" >&2; exit 2; }
    names=(old new)
  fi
  export CLASSES=${CLASSES:-fp64,bf16,tf32,fp8} PROFILED=none MARGIN=null
  for which in "${names[@]}"; do
    rm -rf kernels results/misses && cp -r "/tmp/fixup-$which" kernels
    # (the misses stage's own outputs stay on the machine: a device call brings back a
    # limited count of files, and the tables below are what the comparison needs)
    "$0" "/tmp/fixup-out/$which" misses "$shapes" > "$out/$which.log" 2>&1
    echo "$which kernels: $(grep -h "misses: exit" "$out/$which.log")"
    cp results/misses/tables/timings.csv "$out/$which.csv" 2>/dev/null
  done
  rm -rf kernels && cp -r /tmp/fixup-new kernels
  python3 - "$out" "${names[@]}" <<'PY'
import os
import sys
import pandas as pd
out, names = sys.argv[1], sys.argv[2:]
t = {w: pd.read_csv(f"{out}/{w}.csv") for w in names}
for w, d in t.items():
    bad = d[d.verification != "PASS"]
    print(f"{w}: {len(d)} rows, {len(bad)} not PASS")
    for _, r in bad.iterrows():
        print("  ", r.variant, r.instance, r.m, r.n, r.k, r.verification, str(r.get("error", ""))[:160])
key = ["variant", "dtype", "m", "n", "k"]
keep = [*key, "instance", "launch_facts", "kernel_ms_median"]
for d in t.values():
    d["launch_facts"] = d["launch_facts"].fillna("")
# (ANY_VERDICT=1: every row timed, for kernels/ folders built to be wrong, e.g. a part of the
# fix-up left out to time the rest)
ok = {w: d if os.environ.get("ANY_VERDICT") else d[d.verification == "PASS"] for w, d in t.items()}
best = {w: d.sort_values("kernel_ms_median").drop_duplicates(key)[keep] for w, d in ok.items()}
def side(w):  # one run's columns, named by its folder; its times in µs
    b = best[w].rename(columns={"instance": f"instance_{w}", "launch_facts": f"launch_facts_{w}",
                                "kernel_ms_median": f"{w}_us"})
    b[f"{w}_us"] *= 1e3
    return b
first = names[0]
both = side(first)
for w in names[1:]:
    both = both.merge(side(w), on=key)
    both[f"{w}/{first}"] = both[f"{w}_us"] / both[f"{first}_us"]
# (kernels/ holds the registry too: each run's model chose its own build and split)
# (where another run chose another build or split, its instance and facts are printed too)
both["same"] = [all(r[f"instance_{w}"] == r[f"instance_{first}"] and
                    r[f"launch_facts_{w}"].split(" PARTIALS")[0] ==
                    r[f"launch_facts_{first}"].split(" PARTIALS")[0] for w in names[1:])
                for _, r in both.iterrows()]
cols = [*key, f"instance_{first}", f"launch_facts_{first}", "same",
        *[f"{w}_us" for w in names], *[f"{w}/{first}" for w in names[1:]]]
pd.set_option("display.width", 250)
for _, r in both[~both.same].iterrows():
    print("other build or split:", *(r[k] for k in key),
          *(f"{w}: {r[f'instance_{w}']} {r[f'launch_facts_{w}']}" for w in names))
print(both[cols].sort_values(key).to_string(index=False, float_format=lambda v: f"{v:.3f}"))
PY
  ;;
*)
  echo "unknown shapes stage $stage; valid: calibrate, rung VARIANT, run SEED, misses SHAPES, pitch SIDES, fixup SHAPES" >&2
  exit 2
  ;;
esac

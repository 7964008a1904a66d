#!/usr/bin/env bash
# The harness-speed checks on a GPU machine (issue "the main command at the speed of the GPU"):
#   lab/gpu.sh speed OUT oldnew [SIZES]  the main command (default config, SIZES default
#       [8000]) with the code in .old/ (an earlier commit: `git archive COMMIT Snakefile workflow
#       kernels config profiles pyproject.toml | tar x -C .old`) and with this checkout, one after
#       the other on this GPU, each timed; then `compare` of the new run against the old one
#       (nvbench's criterion) and the largest kernel-median change
#   lab/gpu.sh speed OUT repro           lab/benchmarks/reproducibility.py with the default
#       stopping rule and with `sampling: {stop: noise}`
#   lab/gpu.sh speed OUT e3c             lab/benchmarks/e3c_harness.py
#   lab/gpu.sh speed OUT main            lab/benchmarks/harness_phases.py (the main command;
#       CORES=16 for --cores 16: compile and render in parallel, measurement still one job at a time)
#   lab/gpu.sh speed OUT main-old        the main command with the code in .old/ (as oldnew),
#       timed, then its phase split read by this checkout's benchmark (--from); after `main` on
#       the same machine: tools/compare_times.py OUT/timings-main-old.csv OUT/timings-main.csv
#       --within 1 (the issue's 1% per configuration); default-old: the default experiment so
#   lab/gpu.sh speed OUT default         the same for the default experiment (no --config)
#   lab/gpu.sh speed OUT ladder          the ladder preset as documented (`--cores 16`; CORES=
#       to change) in one run, detached from the device call and run from its own copy of the
#       checkout (/tmp/ladderrun/tree): each call waits on it for at most
#       LIMIT s (default 540) and the next call on the same warm machine waits on the same run;
#       once it has finished, its wall time (start to end), its phase split against its GPU time
#       by the sampling rules (passes, settling, the windows whole), its ladder tables, and the
#       run kept whole (OUT/ladder.tgz; before that, and after a failed job, the variants
#       measured so far, OUT/ladder-runs.tgz); TUNED_GPU='NVIDIA H100 80GB HBM3' runs that model's
#       tuned parameters (`--config tuned_gpu=...`) on a GPU model kernels/tuned.csv lacks
#   lab/gpu.sh speed OUT profiles        the ladder preset's profile section alone: its one
#       Nsight Compute run (profile_ncu) and its profile jobs, timed, with the first jobs' logs
#       (when the target's runs and any Nsight Compute run of their own began); the batch's
#       first FIRST (8) configurations again in the ways of lab/benchmarks/ncu_batch_split.py (WAYS:
#       their numbers, default all); then warptile's target under cProfile, bare and under
#       Nsight Compute (OUT/target-*.prof)
#   lab/gpu.sh speed OUT dag             Snakemake's own time before the first job: nvidia-smi's
#       query, then the main command's dry run under cProfile (OUT/dag.txt, by cumulative time)
#   (each run's Snakemake log goes with its tables: the split counts compile, aggregate and
#   render jobs only where no GPU job ran beside them)
#   Every stage times its runs as on a user's machine: the installed packages with their
#   bytecode (pip's default; the GPU machine's install prefix says --no-compile, which left
#   Snakemake compiling 855 modules, 3.6 s, at each start) and Python writing the checkout's
#   bytecode at its first import (the GPU machine sets PYTHONDONTWRITEBYTECODE=1, so that every
#   job's process compiled this package again).  The runs before 2026-11-27 08:00 UTC were
#   timed without both (docs/method.md).
set -uo pipefail
out=$1; shift
mkdir -p "$out"
here=$PWD
# the workflow of a tree: workflow/Snakefile, or the root Snakefile of a tree before the move
snakefile_in() { if [ -f "$1/workflow/Snakefile" ]; then echo "$1/workflow/Snakefile"; else echo "$1/Snakefile"; fi; }
export -f snakefile_in
site=$(python3 -c "import os, snakemake; print(os.path.dirname(os.path.dirname(snakemake.__file__)))")
python3 -m compileall -q -j 0 "$site" > /dev/null 2>&1
unset PYTHONDONTWRITEBYTECODE
since() {  # START [DIGITS [END]]: the seconds from START to END (date +%s.%N; END: now), rounded
  python3 -c "import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), int(sys.argv[3])))" \
    "$1" "${3:-$(date +%s.%N)}" "${2:-2}"
}
for stage in "$@"; do
  case $stage in
  oldnew)
    sizes=${SIZES:-[8000]}
    for which in old new; do
      src=$here; [ $which = old ] && src=$here/.old
      rm -rf /tmp/speed-$which && mkdir -p /tmp/speed-$which
      start=$(date +%s.%N)
      PYTHONPATH=$src/workflow/scripts:${PYTHONPATH:-} snakemake -s "$(snakefile_in "$src")" -d /tmp/speed-$which \
        --cores 1 --config "sizes=$sizes" > "$out/$which.log" 2>&1
      rc=$?
      echo "$which code: exit $rc, wall $(since "$start" 1) s, GPU busy" \
        "$(python3 -c "import pandas as p; print(round(p.read_csv('/tmp/speed-$which/results/tables/timings.csv').gpu_busy_ms.sum()/1e3, 1))") s"
    done
    snakemake -s "$(snakefile_in "$here")" -d /tmp/speed-new --cores 1 compare \
      --config "sizes=$sizes" baseline=/tmp/speed-old/results > "$out/compare.log" 2>&1
    echo "compare: exit $?"
    cat /tmp/speed-new/results/tables/compare.txt 2>/dev/null | head -5
    python3 - <<'PY'
import pandas as pd
old = pd.read_csv("/tmp/speed-old/results/tables/timings.csv")
new = pd.read_csv("/tmp/speed-new/results/tables/timings.csv")
axes = ["variant", "instance", "m", "n", "k", "memory"]
m = old.merge(new, on=axes, suffixes=("_old", "_new"))
m["change_pct"] = 100 * (m.kernel_ms_median_new / m.kernel_ms_median_old - 1)
g = 100 * (m.global_ms_median_new / m.global_ms_median_old - 1)
print(f"{len(m)} configurations: kernel median new/old - 1: median {m.change_pct.median():+.2f}%,"
      f" min {m.change_pct.min():+.2f}%, max {m.change_pct.max():+.2f}%;"
      f" {int((m.change_pct.abs() <= 2).sum())} within 2%")
print(f"  global median new/old - 1: median {g.median():+.2f}%, min {g.min():+.2f}%, max {g.max():+.2f}%")
print(m.sort_values("change_pct")[axes[:1] + ["instance", "memory", "kernel_ms_median_old",
      "kernel_ms_median_new", "change_pct"]].iloc[[0, 1, -2, -1]].to_string(index=False))
PY
    tar czf "$out/oldnew.tgz" -C /tmp speed-old/results/tables speed-new/results/tables
    ;;
  repro)
    python3 lab/benchmarks/reproducibility.py --workdir /tmp/repro-count > "$out/repro-count.txt" 2>&1
    echo "count rule: exit $?"; tail -8 "$out/repro-count.txt"
    python3 lab/benchmarks/reproducibility.py --workdir /tmp/repro-noise "sampling={stop: noise}" \
      > "$out/repro-noise.txt" 2>&1
    echo "noise rule: exit $?"; tail -8 "$out/repro-noise.txt"
    ;;
  e3c)
    python3 lab/benchmarks/e3c_harness.py 2>&1 | tail -7
    ;;
  main)
    python3 lab/benchmarks/harness_phases.py --cores "${CORES:-1}" --workdir /tmp/mainrun \
      --json "$out/phases-main.json" 2>&1 | tail -16
    cp /tmp/mainrun/results/tables/timings.csv "$out/timings-main.csv"
    tar czf "$out/main.tgz" -C /tmp mainrun/results/tables mainrun/results/benchmarks \
      mainrun/results/runs mainrun/.snakemake/log
    ;;
  main-old | default-old)
    # the code in .old/, from an empty folder as `main` and `default` run this checkout's
    which=${stage%-old}
    config=(--config 'sizes=[8000,10000,12000]')
    [ "$which" = default ] && config=()
    rm -rf "/tmp/${which}run-old" && mkdir -p "/tmp/${which}run-old"
    start=$(date +%s.%N)
    PYTHONPATH=$here/.old/workflow/scripts:${PYTHONPATH:-} snakemake -s "$(snakefile_in "$here/.old")" \
      --workflow-profile "$(dirname "$(snakefile_in "$here/.old")")/profiles/default" \
      -d "/tmp/${which}run-old" --cores "${CORES:-1}" "${config[@]}" > "$out/$stage.log" 2>&1
    rc=$?
    wall=$(since "$start" 2)
    echo "the code in .old/ ($which): exit $rc, wall $wall s"
    flag=(); [ "$which" = default ] && flag=(--default)
    python3 lab/benchmarks/harness_phases.py "${flag[@]}" --from "/tmp/${which}run-old" --wall "$wall" \
      --json "$out/phases-$stage.json" 2>&1 | tail -16
    cp "/tmp/${which}run-old/results/tables/timings.csv" "$out/timings-$stage.csv"
    tar czf "$out/$stage.tgz" -C /tmp "${which}run-old/results/tables" \
      "${which}run-old/results/benchmarks" "${which}run-old/.snakemake/log"
    ;;
  ladder)
    # one run of the preset, uninterrupted: it runs detached from the device call (setsid), and
    # each call waits on it for at most LIMIT s; a call after that (on the same warm machine)
    # waits on the same run.  (Stopping it at each call's limit and resuming it cost a run of
    # 2026-11-27 its in-flight configurations, a fresh DAG and 30 s of a Snakemake that did not
    # end after SIGTERM; its lock was left behind.)  Its wall time is its own, start to end.
    work=/tmp/ladderrun
    if [ ! -f "$work/started" ]; then
      rm -rf "$work" && mkdir -p "$work/tree"
      # the run reads its own copy of the checkout: each device call copies the working tree
      # anew, and a job that imports a module while that copy replaces it fails (a run of
      # 2026-12-06 lost triton_tf32's measurement so, at the start of the call that waited)
      tar -C "$here" --exclude=./results --exclude=./.whl --exclude=./.snakemake \
        -cf - . | tar -C "$work/tree" -xf -
      date +%s.%N > "$work/started"
      # TUNED_GPU: another model's tuned parameters (a GPU model kernels/tuned.csv lacks)
      setsid nohup bash -c 'export PYTHONPATH="$1/workflow/scripts:${PYTHONPATH:-}"
        snakemake -s "$(snakefile_in "$1")" -d "$2" --cores "$3" \
        --configfile "$1/config/presets/ladder.yaml" ${4:+--config "tuned_gpu=$4"} \
        > "$2/run.log" 2>&1
        echo $? > "$2/rc"; date +%s.%N > "$2/ended"' _ "$work/tree" "$work" "${CORES:-16}" \
        "${TUNED_GPU:-}" > /dev/null 2>&1 < /dev/null &
    fi
    deadline=$((SECONDS + ${LIMIT:-540}))
    while [ ! -f "$work/ended" ] && [ "$SECONDS" -lt "$deadline" ]; do
      sleep 2
    done
    cp "$work/run.log" "$out/ladder.log" 2>/dev/null
    # the variants measured so far, each its rows, samples and manifest: what a machine taken
    # back or a failed job would otherwise lose (OUT/ladder-runs.tgz; the whole run's below)
    keep_runs() {
      [ -d "$work/results/ladder/runs" ] &&
        tar czf "$out/ladder-runs.tgz" --exclude="*.journal*" -C /tmp ladderrun/results/ladder/runs
    }
    if [ ! -f "$work/ended" ]; then
      keep_runs
      echo "ladder preset: still running, $(since "$(cat "$work/started")" 0) s since it started;" \
        "call the stage again on this machine (within its idle time) to wait on it"
      grep -E "steps \(" "$work/run.log" | tail -1
      exit 0
    fi
    rc=$(cat "$work/rc")
    total=$(since "$(cat "$work/started")" 2 "$(cat "$work/ended")")
    if [ "$rc" -ne 0 ]; then
      echo "ladder preset: exit $rc after $total s (its log: OUT/ladder.log)"
      tail -20 "$work/run.log"
      keep_runs
    else
      echo "ladder preset: finished, $total s of wall time, one run"
      python3 lab/benchmarks/harness_phases.py --preset config/presets/ladder.yaml --cores "${CORES:-16}" \
        --from "$work" --wall "$total" --json "$out/phases-ladder.json" 2>&1 | tail -24
      cp "$work/results/ladder/tables/timings.csv" "$out/timings-ladder.csv"
      # the run whole, as `lab/gpu.sh ladder OUT ladder` keeps it (tables, per-variant tables,
      # manifests and samples, report, figures): one run of the preset serves as the recorded
      # ladder (tests/data) and as the timed one
      # with the jobs' logs and the profile batch's account of each configuration (when its
      # range and its event-timed run began and ended), for the split of the batch's time
      tar czf "$out/ladder.tgz" --ignore-failed-read --exclude="*.journal*" -C /tmp \
        ladderrun/results/ladder/tables ladderrun/results/ladder/runs \
        ladderrun/results/ladder/report ladderrun/results/ladder/figures \
        ladderrun/results/ladder/benchmarks ladderrun/results/ladder/logs \
        ladderrun/results/ladder/profile/ncu_batch/batch-done.json \
        ladderrun/.snakemake/log ladderrun/started ladderrun/ended
      for t in ladder ladder_profile; do
        echo "== $t"
        cat "$work/results/ladder/report/$t.md" 2>/dev/null
      done
    fi
    ;;
  profiles)
    # the ladder preset's profile section alone (its metrics table): the one Nsight Compute run
    # (profile_ncu) and the 21 profile jobs after it, each job's seconds from its benchmark
    p=results/ladder/profile
    rm -rf results/ladder/profile results/ladder/logs/profile results/ladder/benchmarks/profile
    start=$(date +%s.%N)
    snakemake results/ladder/tables/metrics.csv --cores 16 \
      --configfile config/presets/ladder.yaml > "$out/profiles.log" 2>&1
    echo "the ladder's profiles: exit $?, $(since "$start" 1) s (compiles included)"
    grep -E "configurations profiled|not profiled|batch failed|ranges" \
      results/ladder/logs/profile/ncu_batch.log | cut -c1-200
    python3 - <<'PY'
from pathlib import Path
import pandas as pd
b = Path("results/ladder/benchmarks/profile")
batch = pd.read_csv(b / "ncu_batch.tsv", sep="\t")["s"].iloc[0] if (b / "ncu_batch.tsv").exists() else None
jobs = [pd.read_csv(f, sep="\t")["s"].iloc[0] for f in b.glob("*/*.tsv")]
print(f"profile_ncu {batch} s; {len(jobs)} profile jobs, {sum(jobs):.1f} s in all (their waits "
      f"for the GPU included), longest {max(jobs, default=0):.1f} s")
# where the batch's time went, by the target's own account (target.batch): the configurations
# one after another, each one's range (the profiler's replays) and the rest of it (the target's
# host work under the profiler's interception)
import json
done_path = Path("results/ladder/profile/ncu_batch/batch-done.json")
done = json.loads(done_path.read_text()) if done_path.exists() else []
if done and "started" in done[0]:
    total = sum(d["ended"] - d["started"] for d in done)
    ranges = sum(d["range_s"] for d in done)
    print(f"the batch's target: {len(done)} configurations in {total:.1f} s, "
          f"{done[-1]['ended'] - done[0]['started']:.1f} s from the first's start to the last's "
          f"end; in their ranges {ranges:.1f} s, outside {total - ranges:.1f} s")
    for d in sorted(done, key=lambda d: d["started"] - d["ended"])[:5]:
        print(f"  {d['stem'][:70]:70s} {d['ended'] - d['started']:5.2f} s, range {d['range_s']:5.2f} s")
PY
    # the batch's Nsight Compute run again, its first configurations, in several ways: what the
    # MARKER's profiling, the kernels' replays and the interception cost
    python3 lab/benchmarks/ncu_batch_split.py results/ladder/profile/ncu_batch --first "${FIRST:-8}" \
      ${WAYS:+--ways "$WAYS"}
    for f in $(ls results/ladder/logs/profile/*/*.log | head -3); do
      echo "== $f"; grep -E "measuring on|\\$ |target runs|GPU released" "$f" | cut -c1-150
    done
    # where the target's time goes as a process, bare and under Nsight Compute (the same
    # profiled run: one timed launch), by cumulative time: what the profiler's interception costs
    spec=$(ls "$p"/warptile/*/spec.json | head -1)
    for how in bare ncu; do
      pre=(); [ $how = ncu ] && pre=(ncu --clock-control none --kernel-name warptile --launch-skip 3
        --launch-count 1 --metrics gpu__time_duration.sum)
      start=$(date +%s.%N)
      "${pre[@]}" python3 -m cProfile -o "$out/target-$how.prof" -m mmbench.service.programs profile.target "$spec" \
        > "$out/target-$how.log" 2>&1
      echo "== the target, $how: exit $?, $(since "$start" 2) s"
      python3 -c "import pstats, sys; pstats.Stats(sys.argv[1]).sort_stats('cumtime').print_stats(30)" \
        "$out/target-$how.prof" | grep -E "^ +[0-9]" | cut -c1-160
    done
    ;;
  dag)
    for i in 1 2; do
      /usr/bin/time -f "nvidia-smi query: %e s" nvidia-smi --query-gpu=index,name,compute_cap \
        --format=csv,noheader > /dev/null
    done
    rm -rf /tmp/dagrun && mkdir -p /tmp/dagrun
    start=$(date +%s.%N)
    python3 -m cProfile -s cumtime "$(command -v snakemake)" -s "$(snakefile_in "$here")" -d /tmp/dagrun \
      -n --cores 1 --config 'sizes=[8000,10000,12000]' > "$out/dag.txt" 2>&1
    echo "dry run of the main command: exit $?, $(since "$start" 1) s under cProfile"
    grep -A45 "Ordered by" "$out/dag.txt" | cut -c1-150
    ;;
  default)
    # the default experiment (snakemake --cores 1, no --config), timed, with its phase split
    python3 lab/benchmarks/harness_phases.py --cores "${CORES:-1}" --workdir /tmp/defaultrun \
      --json "$out/phases-default.json" --default 2>&1 | tail -16
    cp /tmp/defaultrun/results/tables/timings.csv "$out/timings-default.csv"
    tar czf "$out/default.tgz" -C /tmp defaultrun/results/tables defaultrun/results/benchmarks \
      defaultrun/.snakemake/log
    ;;
  esac
done

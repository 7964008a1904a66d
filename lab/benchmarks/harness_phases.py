"""Benchmark: where the wall time of a run goes, phase by phase (issue "the main command at the
speed of the GPU"): GPU busy, host work per configuration by kind, the rest of the time a GPU
job ran (start-up, profilers, tables), the compile, aggregate and render jobs where no GPU job
ran beside them (Snakemake's log), and Snakemake alone; then each kind of job in all and the
measurement jobs' own stamps (their manifests' job_phases_s).

    python lab/benchmarks/harness_phases.py [--preset config/presets/e3c.yaml] [--cores 1]
                                        [--workdir /tmp/mmbench-phases] [--json FILE]
                                        [NAME=VALUE ...]
    python lab/benchmarks/harness_phases.py --from WORKDIR --wall SECONDS [--preset ...] [--json FILE]

Runs the workflow in a fresh working directory (the checkout's results/ is untouched), then
reads every job's `benchmark:` file (wall seconds), the timings table's per-configuration
columns (gpu_busy_ms, verify_ms, freivalds_ms, config_wall_ms) and, from the samples files,
each configuration's host time phase by phase (inputs and reference, placement, launch set-up,
the verified pass's copy, ..., the runner's `host_phases_ms`).  Freivalds runs on a thread
beside the timed passes (runner.py), so it is printed apart; a wait for it is host time.  Without --preset it runs the
main command, `--config sizes=[8000,10000,12000]`.  Prints the breakdown and wall / GPU-busy
against the issue's targets (1.15 for the main command, 1.25 for E3c; 1.2 for the ladder
preset, whose GPU time by its sampling rules counts the sustained configurations' settling and
their windows whole, warm launches included, as its rows record them; the ratio to the passes
and settling alone is printed beside it).  A run resumed over several calls (lab/gpu/speed.sh
ladder) is read from all its Snakemake logs on one time axis.  --from reads a run
already made in WORKDIR (its wall time given with --wall); --json writes the split (wall_s,
gpu_busy_s, the phases in seconds) for tests/data and docs/method.md.
"""

from __future__ import annotations

import argparse
import functools
import gzip
import json
import lzma
import re
import sys
from datetime import datetime
from pathlib import Path

import pandas as pd
from _snakemake import ROOT, run_fresh  # noqa: E402 - the benchmarks' shared helper

sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.row import config_id  # noqa: E402
from mmbench.core.tables import read_samples  # noqa: E402

TARGETS = {"main": 1.15, "e3c": 1.25, "ladder": 1.2}


def snakemake_logs(work: Path) -> list[Path]:
    """A run's Snakemake logs in the order they were written (plain, or compressed as the lab
    notebook keeps them)."""
    folder = Path(work) / ".snakemake" / "log"
    return sorted(
        p
        for pattern in ("*.snakemake.log", "*.snakemake.log.gz", "*.snakemake.log.xz")
        for p in folder.glob(pattern)
    )


def read_log(log: Path) -> str:
    log = Path(log)
    unpack = {".gz": gzip.decompress, ".xz": lzma.decompress}.get(log.suffix)
    return unpack(log.read_bytes()).decode() if unpack else log.read_text()


def sampling_busy(df: pd.DataFrame) -> tuple[float, float]:
    """(GPU busy s, settling s) of a timings table: the rows' gpu_busy_ms (the verified pass,
    warm-up, timed passes and windows) and, for sustained configurations, the settling before
    their windows (settle_s: the GPU is kept busy heating, but no sample is kept), which a row's
    gpu_busy_ms leaves out.  Their sum is what the sampling rules keep the GPU busy (the ladder
    preset's target in the issue "the main command at the speed of the GPU")."""
    busy = float(df.gpu_busy_ms.sum()) / 1e3
    settle = float(df["settle_s"].fillna(0).sum()) if "settle_s" in df else 0.0
    return busy, settle


def window_rest(df: pd.DataFrame) -> float:
    """Seconds of the sustained windows the GPU ran untimed launches: a window holds its timed
    batches and, where the load takes several placements in turn, one warm launch before each
    batch (measure/sustained.py; a batch of one launch of 125 ms is half the window).  A row
    records the window's length (window_s) and its timed share (duty); the rest, summed.  The
    issue's ladder target counts the timed windows as the rows record them, so this is part of
    the time its sampling rules keep the GPU busy."""
    if "window_s" not in df or "duty" not in df:
        return 0.0
    w = df[df.window_s.notna() & df.duty.notna()]
    return float((w.window_s * (1 - w.duty)).clip(lower=0).sum())


def job_walls(results: Path, kind: str) -> pd.Series:
    """Wall seconds of every job of one kind (its benchmark files under results/benchmarks/)."""
    files = sorted((results / "benchmarks" / kind).rglob("*.tsv"))
    return pd.Series({str(p): pd.read_csv(p, sep="\t")["s"].iloc[0] for p in files}, dtype=float)


# the rules whose jobs hold the GPU (resources: gpu=1); every other job is compile, render or
# aggregate (tables, the summary)
GPU_RULES = {"measure_variant", "pair_variant", "profile_ncu", "profile_kernel", "device_ceilings"}
RENDER_RULES = {"figure", "figure_here", "table", "table_here", "figures_left_out", "render",
                "render_profiles", "crate"}  # fmt: skip


def kind_of(rule: str) -> str:
    if rule.startswith("compile_") or rule == "rebuild_count":
        return "compile"
    return "render" if rule in RENDER_RULES else "aggregate"


STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")
STARTED = re.compile(r"^(?:local)?(?:rule|checkpoint) (\w+):$")
FINISHED = re.compile(r"^Finished jobid: (\d+) \(Rule: (\w+)\)$")
FAILED = re.compile(r"^Error in rule (\w+):$")


def job_intervals(log: Path) -> list[tuple[str, float, float]]:
    """(rule, start, end) of every job in a Snakemake log that finished or failed there, in
    seconds since the epoch (so that the logs of a run resumed over several calls share one
    axis); Snakemake stamps to the second, so each end is known to a second.  A job still
    running when the run was stopped has no end in the log and is left out."""
    stamp = None
    begun: dict[str, tuple[str, float]] = {}
    rule = None
    failed = False
    out = []
    for line in read_log(log).splitlines():
        m = STAMP.match(line)
        if m:
            stamp = datetime.strptime(m.group(1), "%a %b %d %H:%M:%S %Y").timestamp()
            continue
        m = STARTED.match(line)
        if m and stamp is not None:
            rule = (m.group(1), stamp)
            continue
        m = FAILED.match(line.strip())
        if m:  # its jobid line follows: the job ended at this stamp
            failed = True
            continue
        if line.strip().startswith("jobid:"):
            jobid = line.split()[1]
            if failed and jobid in begun:
                name, start = begun.pop(jobid)
                out.append((name, start, stamp))
            elif rule:
                begun[jobid] = rule
            rule, failed = None, False
            continue
        m = FINISHED.match(line)
        if m and m.group(1) in begun:
            name, start = begun.pop(m.group(1))
            out.append((name, start, stamp))
    return out


def union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[list[float]] = []
    for a, b in sorted(spans):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return [(a, b) for a, b in out]


def length(spans) -> float:
    return sum(b - a for a, b in spans)


def outside(spans, cover) -> float:
    """Seconds of `spans` (disjoint) that no span of `cover` (disjoint) overlaps."""
    total = length(spans)
    for a, b in spans:
        for c, d in cover:
            total -= max(0.0, min(b, d) - max(a, c))
    return total


def beside_the_gpu(intervals: list[tuple[str, float, float]]) -> dict[str, float]:
    """Seconds during which no GPU job ran but a job of each kind did (compile, aggregate,
    render; at --cores 1 one at a time), from a Snakemake log's intervals."""
    gpu = union([(a, b) for r, a, b in intervals if r in GPU_RULES])
    out = {}
    for kind in ("compile", "aggregate", "render"):
        spans = union([(a, b) for r, a, b in intervals if r not in GPU_RULES and r != "all"
                       and kind_of(r) == kind])  # fmt: skip
        out[kind] = outside(spans, gpu)
    return out


def host_phases(results: Path) -> dict[str, float]:
    """Host seconds inside the configurations, phase by phase: each phase's wall time less the
    GPU-busy time of the passes in it, summed over the configurations of every samples file
    (runner.Phases, `host_phases_ms`; {} for a run made before they were recorded)."""
    out: dict[str, float] = {}
    for record in samples_records(results).values():
        for phase, (wall, gpu) in record.get("host_phases_ms", {}).items():
            out[phase] = out.get(phase, 0.0) + (wall - gpu) / 1e3
    return out


@functools.cache
def samples_records(results: Path) -> dict[str, dict]:
    """Every samples file of a run's results, config id -> record: read once for both splits
    (host_phases, host_by_group)."""
    records: dict[str, dict] = {}
    for path in sorted((results / "runs").glob("*.samples.json.gz")):
        records.update(read_samples(path))
    return records


def host_by_group(results: Path, df: pd.DataFrame) -> tuple[dict, list]:
    """Where the host time inside the configurations lies: by load and size, the seconds
    outside the timed passes (inputs, placements, copies, checks, waits) and inside them, less
    what the rows count as the sampling rules' GPU time there (settling, the windows' warm
    launches); and the configurations with the most host time outside their passes, most
    first, as (config id, seconds).  From the samples files' `host_phases_ms` joined to the
    timings table's rows ({} and [] for a run made before they were recorded)."""
    records = samples_records(results)
    groups: dict[str, dict[str, float]] = {}
    outside_each = []
    for row in df.to_dict("records"):
        cid = config_id(row)
        phases = records.get(cid, {}).get("host_phases_ms")
        if not phases:
            continue
        host = {phase: (wall - gpu) / 1e3 for phase, (wall, gpu) in phases.items()}
        inside = host.pop("timed passes", 0.0)
        if pd.notna(row.get("settle_s")):
            inside -= row["settle_s"]
        if pd.notna(row.get("window_s")) and pd.notna(row.get("duty")):
            inside -= max(0.0, row["window_s"] * (1 - row["duty"]))
        outside = sum(host.values())
        size = (f"{row['m']}" if row["m"] == row["n"] == row["k"]
                else f"{row['m']}x{row['n']}x{row['k']}")  # fmt: skip
        g = groups.setdefault(f"{row['load']} {size}",
                              dict(configurations=0, outside_s=0.0, inside_s=0.0))  # fmt: skip
        g["configurations"] += 1
        g["outside_s"] += outside
        g["inside_s"] += inside
        outside_each.append((cid, outside))
    return groups, sorted(outside_each, key=lambda item: -item[1])


def job_start_up(results: Path) -> dict[str, float]:
    """The measurement jobs' own split (their manifests' `job_phases_s`: the job process, the
    GPU lock, each worker's start, configurations and exit, the tables), summed over the jobs;
    {} for a run made before the jobs recorded it."""
    out: dict[str, float] = {}
    for path in sorted((results / "runs").glob("*.manifest.json")):
        for phase, seconds in json.loads(path.read_text()).get("job_phases_s", {}).items():
            out[phase] = out.get(phase, 0.0) + seconds
    return out


def provided_cores(work: Path) -> int | None:
    """The cores a run made earlier was given (Snakemake's log: "Provided cores: N"; the first
    log of a run resumed over several calls), or None without a log that says."""
    for log in snakemake_logs(work):
        found = re.search(r"^Provided cores: (\d+)$", read_log(log), re.MULTILINE)
        if found:
            return int(found.group(1))
    return None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="")
    ap.add_argument("--cores", type=int, default=None,
                    help="cores for a fresh run (default 1); with --from, its log's")  # fmt: skip
    ap.add_argument("--workdir", default="/tmp/mmbench-phases")
    ap.add_argument("--from", dest="made", default="", help="a run already made in this workdir")
    ap.add_argument("--wall", type=float, default=None, help="its wall time, s (with --from)")
    ap.add_argument("--json", default="", help="write the split here")
    ap.add_argument("--default", action="store_true",
                    help="the default experiment (no --config) instead of the main command")  # fmt: skip
    ap.add_argument("config", nargs="*", help="more --config entries, NAME=VALUE")
    args = ap.parse_args()
    if args.made and args.wall is None:
        ap.error("--from needs --wall (the run's wall time in seconds)")
    work = Path(args.made or args.workdir)
    if args.preset:
        preset, name = args.preset, Path(args.preset).stem
        config = list(args.config)
    elif args.default:  # the default experiment, `snakemake --cores 1`
        preset, name = str(ROOT / "config" / "config.yaml"), "default"
        config = list(args.config)
    else:  # the main command
        preset, name = str(ROOT / "config" / "config.yaml"), "main"
        config = ["sizes=[8000,10000,12000]", *args.config]
    if args.made:
        wall = args.wall
        args.cores = args.cores or provided_cores(work) or 1
    else:
        args.cores = args.cores or 1
        proc, wall = run_fresh(work, preset, args.cores, *config)
        if proc.returncode:
            print(proc.stderr[-4000:])
            return proc.returncode
    experiment = "" if name in ("main", "default") else name
    res = work / "results" / experiment if experiment else work / "results"
    df = pd.read_csv(res / "tables" / "timings.csv")
    busy, settle = sampling_busy(df)
    warm = window_rest(df)
    verify = df.verify_ms.sum() / 1e3
    freivalds = df.freivalds_ms.sum() / 1e3
    per_config = df.config_wall_ms.sum() / 1e3
    measure = job_walls(res, "measure")
    profile = job_walls(res, "profile")
    jobs = {
        "compile": job_walls(work / "results", "compile").sum(),
        "aggregate": job_walls(res, "aggregate").sum(),
        # the per-figure jobs' benchmarks (before issue 77), or the render jobs'
        "render": job_walls(res, "figures").sum()
        + job_walls(res, "report").sum()
        + sum(
            pd.read_csv(p, sep="\t")["s"].iloc[0]
            for p in sorted((res / "benchmarks").glob("*.tsv"))
            if p.stem.startswith("render") or p.stem == "crate"
        ),  # fmt: skip
    }
    # the time some GPU job ran (Snakemake's log, to the second; one GPU job may start while
    # another holds the GPU, workflow/rules/common.smk); without a log, the GPU jobs one after
    # another.  Beside it, the other jobs count only where no GPU job ran.
    # (every log of the workdir: a run resumed over several calls, lab/gpu/speed.sh ladder)
    logs = snakemake_logs(work)
    intervals = [span for log in logs for span in job_intervals(log)]
    if intervals:
        gpu_time = length(union([(a, b) for r, a, b in intervals if r in GPU_RULES]))
        beside = beside_the_gpu(intervals)
    else:
        gpu_time, beside = measure.sum() + profile.sum(), jobs
    phases = {
        "GPU busy (timed and verified passes)": busy,
        "GPU settling (sustained load, before its windows)": settle,
        "GPU untimed in sustained windows (a warm launch before each batch)": warm,
        "host: device verification": verify,
        "host: the rest of each configuration (inputs, placement, copies, waits)": per_config
        - busy
        - settle
        - warm
        - verify,
        "GPU jobs, the rest (start-up, profilers, tables)": gpu_time - per_config,
    }
    for kind, label in (("compile", "compile jobs"), ("aggregate", "aggregate jobs"),
                        ("render", "render jobs (figures, tables)")):  # fmt: skip
        phases[f"{label}, no GPU job beside"] = beside[kind]
    phases["Snakemake alone (no job running)"] = wall - sum(phases.values())
    totals = {
        "measurement jobs outside their configurations (their own waits included)": measure.sum()
        - per_config,
        "profile jobs (ncu, CUPTI, ceilings)": profile.sum(),
    } | {f"{kind} jobs": total for kind, total in jobs.items()}
    print(f"{name}: {len(df)} configurations, --cores {args.cores}, wall {wall:.1f} s")
    for k, v in phases.items():
        print(f"  {k:72s} {v:8.1f} s  {100 * v / wall:5.1f}%")
    # on the runner's Freivalds thread, beside the timed passes: only a wait for it shows above
    print(f"  {'(beside the passes, on a thread: Freivalds)':72s} {freivalds:8.1f} s")
    print("each kind of job in all (beside other jobs or not; summed over its jobs):")
    for kind, total in totals.items():
        print(f"  {kind:72s} {total:8.1f} s")
    inside = host_phases(res)
    if inside:
        print("host time inside the configurations, by phase (wall less the GPU's passes):")
        for k, v in sorted(inside.items(), key=lambda kv: -kv[1]):
            print(f"  {k:72s} {v:8.1f} s  {100 * v / wall:5.1f}%")
    groups, most = host_by_group(res, df)
    if groups:
        print("host time inside the configurations by load and size: outside their timed passes,")
        print("and inside them less the settling and the windows' warm launches:")
        for key, g in sorted(
            groups.items(), key=lambda kv: -kv[1]["outside_s"] - kv[1]["inside_s"]
        ):
            label = f"{key} ({g['configurations']} configurations)"
            print(f"  {label:56s} {g['outside_s']:8.1f} s outside {g['inside_s']:8.1f} s inside")
        print("the configurations with the most host time outside their timed passes:")
        for cid, seconds in most[:5]:
            print(f"  {cid[:96]:96s} {seconds:6.2f} s")
    started = job_start_up(res)
    if started:
        print("the measurement jobs, by their own stamps (summed over the jobs; the rest of each")
        print("job's wall time: Snakemake's script set-up, the manifest and the archive):")
        for k, v in started.items():
            print(f"  {k:72s} {v:8.1f} s  {100 * v / wall:5.1f}%")
        between = started.get("worker: configurations", 0.0) - per_config
        print(
            f"  {'(of the configurations: between them, outside their rows)':72s} {between:8.1f} s"
        )
    # the GPU's time by the sampling rules: its passes and, under sustained load, its settling
    # and its windows whole (their warm launches too)
    ruled = busy + settle + warm
    ratio = wall / ruled
    target = TARGETS.get(name)
    verdict = "" if target is None else (" (target met)" if ratio <= target else " (target missed)")
    what = "GPU busy" if not settle else "GPU busy, settling and the windows' untimed launches"
    if settle:  # the stricter count beside it: the timed and verified passes and the settling
        print(f"wall / (GPU busy and settling) = {wall:.1f} / {busy + settle:.1f} s = "
              f"{wall / (busy + settle):.2f}")  # fmt: skip
    print(f"wall / {what} = {wall:.1f} / {ruled:.1f} s = {ratio:.2f}" + (
        f", target <= {target}{verdict}" if target else ""))  # fmt: skip
    if args.json:
        gpu = sorted(set(df.gpu_name)) if "gpu_name" in df else []
        split = dict(
            run=name, configurations=len(df), cores=args.cores, gpu=gpu, wall_s=round(wall, 2),
            gpu_busy_s=round(busy, 2), settle_s=round(settle, 2), window_rest_s=round(warm, 2),
            ratio=round(ratio, 3),
            freivalds_beside_s=round(freivalds, 2),
            phases_s={k: round(v, 2) for k, v in phases.items()},
            jobs_s={k: round(v, 2) for k, v in totals.items()},
        )  # fmt: skip
        if started:
            split["measurement_jobs_s"] = {k: round(v, 2) for k, v in started.items()}
        if inside:
            split["host_inside_configurations_s"] = {k: round(v, 2) for k, v in inside.items()}
        if groups:
            split["host_by_load_and_size_s"] = {
                key: {k: round(v, 2) for k, v in g.items()} for key, g in groups.items()
            }
        Path(args.json).write_text(json.dumps(split, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

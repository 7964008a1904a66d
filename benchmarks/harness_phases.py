"""Benchmark: where the wall time of a run goes, phase by phase (issue "the main command at the
speed of the GPU"): GPU busy, host work per configuration by kind, measurement-job start-up,
compile, profile, aggregate and render jobs, and Snakemake itself.

    python benchmarks/harness_phases.py [--preset config/presets/e3c.yaml] [--cores 1]
                                        [--workdir /tmp/mmbench-phases] [--json FILE]
                                        [NAME=VALUE ...]
    python benchmarks/harness_phases.py --from WORKDIR --wall SECONDS [--preset ...] [--json FILE]

Runs the workflow in a fresh working directory (the checkout's results/ is untouched), then
reads every job's `benchmark:` file (wall seconds), the timings table's per-configuration
columns (gpu_busy_ms, verify_ms, freivalds_ms, config_wall_ms) and, from the samples files,
each configuration's host time phase by phase (inputs and reference, placement, launch set-up,
the verified pass's copy, ..., the runner's `host_phases_ms`).  Freivalds runs on a thread
beside the timed passes (runner.py), so it is printed apart; a wait for it is host time.  Without --preset it runs the
main command, `--config sizes=[8000,10000,12000]`.  Prints the breakdown and wall / GPU-busy
against the issue's targets (1.15 for the main command, 1.25 for E3c).  --from reads a run
already made in WORKDIR (its wall time given with --wall); --json writes the split (wall_s,
gpu_busy_s, the phases in seconds) for tests/data and docs/method.md.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
from _snakemake import ROOT, run_fresh  # noqa: E402 - the benchmarks' shared helper

sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.tables import read_samples  # noqa: E402

TARGETS = {"main": 1.15, "e3c": 1.25}


def job_walls(results: Path, kind: str) -> pd.Series:
    """Wall seconds of every job of one kind (its benchmark files under results/benchmarks/)."""
    files = sorted((results / "benchmarks" / kind).rglob("*.tsv"))
    return pd.Series({str(p): pd.read_csv(p, sep="\t")["s"].iloc[0] for p in files}, dtype=float)


def host_phases(results: Path) -> dict[str, float]:
    """Host seconds inside the configurations, phase by phase: each phase's wall time less the
    GPU-busy time of the passes in it, summed over the configurations of every samples file
    (runner.Phases, `host_phases_ms`; {} for a run made before they were recorded)."""
    out: dict[str, float] = {}
    for path in sorted((results / "runs").glob("*.samples.json.gz")):
        for record in read_samples(path).values():
            for phase, (wall, gpu) in record.get("host_phases_ms", {}).items():
                out[phase] = out.get(phase, 0.0) + (wall - gpu) / 1e3
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default="")
    ap.add_argument("--cores", type=int, default=1)
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
    else:
        proc, wall = run_fresh(work, preset, args.cores, *config)
        if proc.returncode:
            print(proc.stderr[-4000:])
            return proc.returncode
    experiment = "" if name in ("main", "default") else name
    res = work / "results" / experiment if experiment else work / "results"
    df = pd.read_csv(res / "tables" / "timings.csv")
    busy = df.gpu_busy_ms.sum() / 1e3
    verify = df.verify_ms.sum() / 1e3
    freivalds = df.freivalds_ms.sum() / 1e3
    per_config = df.config_wall_ms.sum() / 1e3
    measure = job_walls(res, "measure")
    phases = {
        "GPU busy (timed and verified passes)": busy,
        "host: device verification": verify,
        "host: the rest of each configuration (inputs, placement, copies, waits)": per_config
        - busy
        - verify,
        "measurement jobs outside their configurations (start-up, tables)": measure.sum()
        - per_config,
        "compile jobs": job_walls(work / "results", "compile").sum(),
        "profile jobs (ncu, CUPTI, ceilings)": job_walls(res, "profile").sum(),
        "aggregate jobs": job_walls(res, "aggregate").sum(),
        "render jobs (figures, tables)": job_walls(res, "figures").sum()
        + job_walls(res, "report").sum(),
    }
    phases["Snakemake itself (wall - all jobs; with --cores 1)"] = (
        wall - sum(v for k, v in phases.items() if not k.startswith(("GPU", "host"))) - per_config
    )
    print(f"{name}: {len(df)} configurations, --cores {args.cores}, wall {wall:.1f} s")
    for k, v in phases.items():
        print(f"  {k:72s} {v:8.1f} s  {100 * v / wall:5.1f}%")
    # on the runner's Freivalds thread, beside the timed passes: only a wait for it shows above
    print(f"  {'(beside the passes, on a thread: Freivalds)':72s} {freivalds:8.1f} s")
    inside = host_phases(res)
    if inside:
        print("host time inside the configurations, by phase (wall less the GPU's passes):")
        for k, v in sorted(inside.items(), key=lambda kv: -kv[1]):
            print(f"  {k:72s} {v:8.1f} s  {100 * v / wall:5.1f}%")
    ratio = wall / busy
    target = TARGETS.get(name)
    verdict = "" if target is None else (" (target met)" if ratio <= target else " (target missed)")
    print(f"wall / GPU busy = {wall:.1f} / {busy:.1f} s = {ratio:.2f}" + (
        f", target <= {target}{verdict}" if target else ""))  # fmt: skip
    if args.json:
        gpu = sorted(set(df.gpu_name)) if "gpu_name" in df else []
        split = dict(
            run=name, configurations=len(df), cores=args.cores, gpu=gpu, wall_s=round(wall, 2),
            gpu_busy_s=round(busy, 2), ratio=round(ratio, 3), freivalds_beside_s=round(freivalds, 2),
            phases_s={k: round(v, 2) for k, v in phases.items()},
        )  # fmt: skip
        if inside:
            split["host_inside_configurations_s"] = {k: round(v, 2) for k, v in inside.items()}
        Path(args.json).write_text(json.dumps(split, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

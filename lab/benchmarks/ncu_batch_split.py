"""Where the profile section's one Nsight Compute run spends its time (issue "the main command at
the speed of the GPU": the ladder preset's run of Nsight Compute held the GPU 62 s of its 801).

It runs the batch the pipeline made (`profile_ncu`'s list of specs, results/<exp>/profile/
ncu_batch/batch.json) again, its first N configurations, in four ways one after another, each
timed from the command's start to its end:

  - as the pipeline runs it: every configuration's kernel profiled with the metric set, and the
    MARKER that opens a range where the list says so (profiling.batch_plan);
  - a MARKER opening every range, profiled (as the pipeline ran it before 2026-11-27);
  - the kernels alone (no MARKER launched);
  - the MARKER alone;
  - nothing profiled (a filter no kernel matches): the target's own work under the profiler's
    interception;
  - the target alone, without Nsight Compute.

and prints, from the first run's log, how many passes each profiled kernel took.  Differences
between the lines say what the MARKER's profiling, the kernels' replays and the interception
cost.  On the GPU machine, after the profile section ran (lab/gpu.sh speed OUT profiles):

    python3 lab/benchmarks/ncu_batch_split.py results/ladder/profile/ncu_batch [--first 8]
                                          [--metric-set ladder]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow" / "scripts"))

from mmbench.core import paths  # noqa: E402
from mmbench.profile import profilers  # noqa: E402
from mmbench.profile.profiling import kernel_filter  # noqa: E402
from mmbench.profile.target import MARKER  # noqa: E402
from mmbench.service import programs  # noqa: E402

PASSES = re.compile(r'==PROF== Profiling "([^"]+)".*?(\d+) pass')


def timed(cmd: list[str], log: Path) -> float:
    start = time.monotonic()
    proc = subprocess.run(
        cmd, capture_output=True, text=True, env=paths.child_env(dict(os.environ))
    )
    log.write_text(proc.stdout + proc.stderr)
    took = time.monotonic() - start
    if proc.returncode != 0:
        print(f"  exit {proc.returncode}: {(proc.stdout + proc.stderr).strip()[-300:]}")
    return took


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "workdir", type=Path, help="profile_ncu's folder: results/<exp>/profile/ncu_batch"
    )
    ap.add_argument("--first", type=int, default=8, help="configurations of the batch to run")
    ap.add_argument("--metric-set", default="ladder")
    ap.add_argument(
        "--drop",
        action="append",
        default=[],
        help="a metric of the set (its nvprof name) left out, to count its passes",
    )
    ap.add_argument("--ways", help="the ways to run, by number from 0 (default: all)")
    ap.add_argument("--ncu", default="ncu")
    args = ap.parse_args()
    entries = json.loads((args.workdir / "batch.json").read_text())[: args.first]
    work = Path("/tmp/ncu-batch-split")
    work.mkdir(parents=True, exist_ok=True)
    names = [json.loads(Path(e["spec"]).read_text())["kernel_name"] for e in entries]
    mapping = profilers.load_mapping()
    kept = [m for m in mapping["sets"][args.metric_set] if m not in args.drop]
    metrics = profilers.ncu_metric_names(mapping | {"sets": {"kept": kept}}, "kept")
    marked = any(e.get("marker", True) for e in entries)
    every = [dict(e, marker=True) for e in entries]
    ways = {
        "as the pipeline (MARKERs where its list has them)": (entries, kernel_filter(names, marked)),
        "a MARKER opening every range": (every, kernel_filter(names)),
        "the kernels alone (no MARKER launched)": (
            [dict(e, marker=False) for e in entries], kernel_filter(names, False)),
        "the MARKER alone": (every, f"regex:^{MARKER}$"),
        "nothing profiled (interception only)": (every, "regex:^no_kernel_has_this_name$"),
    }  # fmt: skip
    print(f"{len(entries)} configurations of {args.workdir}, metric set {args.metric_set!r} "
          f"({len(metrics)} metrics), {sum(e.get('marker', True) for e in entries)} MARKERs "
          f"in its list")  # fmt: skip
    first_log = None
    chosen = {int(w) for w in args.ways.split(",")} if args.ways else set(range(len(ways)))
    for i, (how, (listed, name_filter)) in enumerate(ways.items()):
        if i not in chosen:
            continue
        (work / "batch.json").write_text(json.dumps(listed))
        target = programs.command(
            "profile.target", "--batch", str(work / "batch.json"), str(work / "done.json")
        )
        log = work / f"way{i}.log"
        cmd = [args.ncu, "--clock-control", "none", "--profile-from-start", "off",
               "--kernel-name", name_filter, "--metrics", ",".join(metrics),
               "--export", str(work / f"way{i}"), "--force-overwrite", *target]  # fmt: skip
        took = timed(cmd, log)
        done = json.loads((work / "done.json").read_text())
        in_ranges = sum(d["range_s"] for d in done)
        print(f"{how:52s} {took:6.1f} s; in the ranges {in_ranges:5.1f} s")
        first_log = first_log or log
    if args.ways:
        return report_passes(first_log)
    took = timed(target, work / "bare.log")
    done = json.loads((work / "done.json").read_text())
    print(f"{'the target alone, no Nsight Compute':52s} {took:6.1f} s; in the ranges "
          f"{sum(d['range_s'] for d in done):5.1f} s")  # fmt: skip
    return report_passes(first_log)


def report_passes(first_log: Path) -> int:
    passes = PASSES.findall(first_log.read_text())
    print(f"passes per profiled kernel (first way): {len(passes)} kernels")
    for kernel, n in passes:
        print(f"  {n:>3s}  {kernel[:90]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""compute-sanitizer's memcheck on kernels of the registry at a small odd shape (issue "the ladder
to cuBLAS"): each variant's every buildable instantiation, or the first N, compiled with the
pipeline's nvcc command and launched through the profiler target (launch.py, the runner's
calling convention), under `compute-sanitizer --tool memcheck`.  Prints one line per
instantiation and shape with the sanitizer's error summary; exits 1 if any reports an error.

    python3 tools/memcheck.py VARIANT [VARIANT ...] [--shape 33 31 37 ...] [--first N | --last N]
                              [--where EXPR] [--tuned TABLE --gpu MODEL]

--shape may be given several times: each instantiation is built once and checked at each.

--where keeps the instantiations whose parameters satisfy a registry expression (e.g.
"STAGES > 4": the instantiations a change added).

--whole checks a stream-K rung also with every tile whole (config stream_k_grids' `whole`:
as many workers as the product's tiles) at each shape where that is another grid.

With --tuned, each variant's tuned instantiation for GPU model MODEL (a tuning table, e.g.
kernels/tuned.csv) is checked too: one per row where the rows hold ranges of products.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from mmbench.core import paths
from mmbench.core.axes import Configuration
from mmbench.core.expressions import evaluate
from mmbench.core.registry import load_registry, slug
from mmbench.plan import plan
from mmbench.plan.builds import build_instantiation
from mmbench.plan.tuning import read_tuned, tuned_params, tuned_ranges
from mmbench.service import programs


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--shape", nargs=3, type=int, action="append",
                    help="m n k (again for each further shape; default 33 31 37)")  # fmt: skip
    ap.add_argument("--first", type=int, default=0, help="only the first N instantiations")
    ap.add_argument("--last", type=int, default=0, help="only the last N instantiations")
    ap.add_argument("--where", help="only the instantiations for which this expression holds")
    ap.add_argument("--show", type=int, default=0, help="print the first N lines of a failure")
    ap.add_argument(
        "--whole",
        action="store_true",
        help="a stream-K rung also with every tile whole (its `workers` grid)",
    )
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--tuned", help="a tuning table: check each variant's tuned instantiation too")
    ap.add_argument("--gpu", default="", help="the GPU model of --tuned's rows")
    args = ap.parse_args()
    registry = load_registry()
    if args.where and (args.first or args.last):
        ap.error("--where chooses the instantiations itself: give it without --first or --last")
    where = {}  # --where: each variant's instantiations that satisfy it, found before any run
    for name in args.variants if args.where else []:
        where[name] = [
            p for p in plan.buildable(registry[name], {}, args.arch)[0]
            if evaluate(args.where, **{x: v for x, v in p.items() if isinstance(v, int)})
        ]  # fmt: skip
        if not where[name]:
            ap.error(f"no instantiation of {name} satisfies --where {args.where!r}")
    shapes = args.shape or [[33, 31, 37]]
    bad = 0
    work = Path(tempfile.mkdtemp(prefix="memcheck-"))
    for name in args.variants:
        v = registry[name]
        insts = plan.buildable(v, {}, args.arch)[0]
        chosen = insts[-args.last :] if args.last else insts[: args.first or None]
        if args.where:
            chosen = where[name]
        if args.tuned:
            table = read_tuned(args.tuned)
            pinned = tuned_params(table, args.gpu, [name], registry, args.tuned)
            ranges = tuned_ranges(table, args.gpu, [name], registry, args.tuned)
            if name in ranges:  # rows tuned at several shapes: each row's instantiation
                chosen += [r["params"] for r in ranges[name] if r["params"] not in chosen]
            elif name in pinned:
                section = {"params": {name: pinned[name]}}
                chosen += [p for p in plan.buildable(v, section, args.arch)[0] if p not in chosen]
        for params in chosen:
            cubin = work / f"{name}_{slug(params)}.{v.build_ext}"
            build_instantiation(v, params, cubin, args.arch,
                                work / f"{name}_{slug(params)}.nvcc.log", f"{name} {slug(params)}")  # fmt: skip
            for m, n, k in shapes:  # one build, each shape (and grid)
                bad += check(name, v, params, cubin, (m, n, k), work, args.show)
                # a stream-K rung's grid of whole tiles, where it is another (others have none)
                whole = args.whole and v.uses_workers and plan.whole_workers(v, params, m, n, k)
                if whole:
                    bad += check(name, v, params, cubin, (m, n, k), work, args.show, whole)
    return 1 if bad else 0


def check(name, v, params, cubin, shape, work: Path, show: int, workers: int = 0) -> bool:
    """One instantiation at one shape (and stream-K grid: `workers`, 0 the rule's) under
    memcheck: its line printed; True where it failed."""
    m, n, k = shape
    conf = Configuration.of(name, params, m=m, n=n, k=k, accumulate=False, memory="pinned",
                            distribution="int09", seed=2024, workers=workers)  # fmt: skip
    spec = dict(configuration=conf.as_dict(), registry=str(paths.registry_path()),
                cubin=str(cubin), kernel_name=v.profile_kernel or v.symbol,
                warmup=0)  # fmt: skip
    grid = f"@{workers}" if workers else ""
    spec_path = work / f"{name}_{slug(params)}_{m}x{n}x{k}{grid}.json"
    spec_path.write_text(json.dumps(spec))
    # device memory errors only: NVIDIA's cuda-bindings probes every driver entry point with
    # cuGetProcAddress when it loads, and the ones this driver lacks return
    # CUDA_ERROR_INVALID_VALUE, which the sanitizer would count as API errors
    cmd = ["compute-sanitizer", "--tool", "memcheck", "--error-exitcode", "9",
           "--report-api-errors", "no",
           *programs.command("profile.target", str(spec_path))]  # fmt: skip
    out = subprocess.run(cmd, capture_output=True, text=True)
    summary = re.findall(r"ERROR SUMMARY: .*", out.stdout + out.stderr)
    if out.returncode and show:
        print("\n".join((out.stdout + out.stderr).splitlines()[:show]))
    verdict = summary[-1] if summary else f"no summary (exit {out.returncode})"
    print(f"{name} {slug(params)} {m}x{n}x{k}{grid}: {verdict} (exit {out.returncode})", flush=True)
    return out.returncode != 0


if __name__ == "__main__":
    sys.exit(main())

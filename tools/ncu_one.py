"""One instantiation of a registry kernel under Nsight Compute, for reading what limits it while
writing a kernel (the pipeline's profile rule measures the configured ones; this is the quick
look): compiled with the pipeline's nvcc command, launched through the profiler target
(launch.py, the runner's calling convention), `ncu` with the sections named.

    python3 tools/ncu_one.py VARIANT NAME=VALUE ... [--shape 4096 4096 4096]
                             [--section SpeedOfLight --section MemoryWorkloadAnalysis_Tables]

e.g. `python3 tools/ncu_one.py wgmma_tf32 dtype=float32 BM=256 WG=2 BK=16 STAGES=4`.
Prints ncu's report (stdout); exits with ncu's status.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from mmbench.core import paths
from mmbench.core.axes import Configuration
from mmbench.core.registry import load_registry, slug
from mmbench.measure.timing import Sampling, launches_before_timed
from mmbench.plan.compile import compile_cubin
from mmbench.service import programs

DEFAULT_SECTIONS = ["SpeedOfLight", "MemoryWorkloadAnalysis", "WarpStateStats", "Occupancy"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("variant")
    ap.add_argument("params", nargs="+", help="NAME=VALUE for dtype and every parameter")
    ap.add_argument("--shape", nargs=3, type=int, default=[4096, 4096, 4096])
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--section", action="append", help=f"ncu sections (default {DEFAULT_SECTIONS})")
    args = ap.parse_args()
    v = load_registry()[args.variant]
    if not v.source:  # a library backend: no kernel file, and its kernels' names are a pattern
        sys.exit(f"{args.variant} has no kernel file ({v.backend} backend): the float64 reference's "
                 "GEMM matches its kernel names too; profile it with the pipeline's profile rule")  # fmt: skip
    names = [name for name, _values in v.params]
    params = {}
    for item in args.params:
        name, _, value = item.partition("=")
        if name not in names:
            sys.exit(f"{args.variant} has no parameter {name!r}; its parameters: {names}")
        params[name] = value if name == "dtype" else int(value)
    missing = [p for p in names if p not in params]
    if missing:
        sys.exit(f"{args.variant} needs a value for {missing}")
    params = {p: params[p] for p in names}  # the registry's order names the instantiation
    work = Path(tempfile.mkdtemp(prefix="ncu-one-"))
    cubin = work / f"{slug(params)}.{v.build_ext}"
    src = paths.data_dir("kernels") / v.source
    compile_cubin(
        src,
        cubin,
        v.arch or args.arch,
        v.defines(params),
        work / "nvcc.log",
        slug(params),
        shared=v.shared,
        libraries=v.libraries,
    )
    m, n, k = args.shape
    conf = Configuration.of(args.variant, params, m=m, n=n, k=k, accumulate=False,
                            memory="pinned", distribution="int09", seed=2024, math=v.math)  # fmt: skip
    spec = dict(configuration=conf.as_dict(), registry=str(paths.registry_path()),
                cubin=str(cubin), kernel_name=v.profile_kernel or v.symbol,
                warmup=1)  # fmt: skip
    spec_path = work / "spec.json"
    spec_path.write_text(json.dumps(spec))
    sections = [a for s in (args.section or DEFAULT_SECTIONS) for a in ("--section", s)]
    # --clock-control none: the GPU's own clocks, as the pipeline's profile rule measures them
    kernel = v.profile_kernel or v.symbol  # a name, or regex: for a variant of several entries
    # the first timed launch: the launches before it skipped, as the pipeline's profile rule does
    skip = launches_before_timed(Sampling(warmup=spec["warmup"]))
    cmd = ["ncu", "--clock-control", "none", "--kernel-name", kernel,
           "--launch-skip", str(skip), "--launch-count", "1", *sections,
           *programs.command("profile.target", str(spec_path))]  # fmt: skip
    return subprocess.run(cmd).returncode


if __name__ == "__main__":
    sys.exit(main())

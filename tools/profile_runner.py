"""Where a measurement job's host time goes: one variant's configurations of a preset, measured
by the Runner in this process under cProfile (no Snakemake, no worker process).  Prints the
wall time, the GPU-busy time and the functions with the most cumulative time.

    python3 tools/profile_runner.py config/presets/e3c.yaml tiled_guarded [--arch sm_90] [--top 25]
                                    [--sort cumulative|tottime]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import tempfile
import time
from pathlib import Path

import yaml

from mmbench.core import paths
from mmbench.core.registry import load_registry, slug
from mmbench.measure.runner import Runner
from mmbench.measure.timing import Sampling
from mmbench.plan import plan as mmplan
from mmbench.plan.compile import compile_cubin
from mmbench.plan.config import merge, validate
from mmbench.plan.tuning import apply_tuned


def preset_config(preset: str, registry: dict) -> dict:
    """The preset over the defaults (config/config.yaml), validated as the workflow does: its
    variant groups expanded to the registry's names."""
    root = paths.data_dir("kernels").parent
    base = yaml.safe_load((root / "config" / "config.yaml").read_text())
    return validate(merge(base, yaml.safe_load(Path(preset).read_text())), registry)


def plan_for(
    preset: str, variant: str, arch: str, gpus: list[dict], registry: dict, tuned_gpu: str = ""
):
    """The preset's plan for `variant` alone and its config, as the workflow makes it (plan/experiment.py):
    the tuned instantiations of this GPU's model where the preset names a tuning table (of
    `tuned_gpu`'s where given: config tuned_gpu, another model's tuning).
    Without the table the ladder preset's warptile_db was 67 instantiations and 1206
    configurations, not 2 and 18 (a cut of it printed nothing in 200 s on an H100 machine,
    compiling them one after another)."""
    root = paths.data_dir("kernels").parent
    cfg = preset_config(preset, registry)
    cfg["variants"] = [variant]
    if tuned_gpu:
        cfg["tuned_gpu"] = tuned_gpu
    cfg = apply_tuned(cfg, gpus, registry, root)
    return mmplan.expand(cfg, registry, arch), cfg


def compile_plan(plan, v, arch: str) -> dict[str, str]:
    """The plan's instantiations of variant `v` built as the compile rule builds them
    (plan/compile.compile_cubin: no path of this machine reaching a shell), into a temporary
    folder: instantiation slug -> cubin path."""
    work = Path(tempfile.mkdtemp(prefix="profile-runner-"))
    src = paths.data_dir("kernels") / v.source
    cubins = {}
    for _variant, params in plan.instantiations:
        name = slug(params)
        out = work / f"{name}.cubin"
        compile_cubin(src, out, v.arch or arch, v.defines(params), work / f"{name}.log", name)
        cubins[name] = str(out)
    return cubins


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("preset")
    ap.add_argument("variant")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--tuned-gpu", default="", help="another GPU model's tuning (config tuned_gpu)")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--sort", default="cumulative", help="pstats' order: cumulative, tottime, ...")
    args = ap.parse_args()
    registry = load_registry()
    plan, cfg = plan_for(
        args.preset, args.variant, args.arch, mmplan.detect_gpus(), registry, args.tuned_gpu
    )
    confs = plan.runs[args.variant]
    v = registry[args.variant]
    print(f"{args.variant}: compiling {len(plan.instantiations)} instantiations, then "
          f"{len(confs)} configurations", flush=True)  # fmt: skip
    cubins = compile_plan(plan, v, args.arch)
    runner = Runner(v, cubins, Sampling(**cfg["sampling"]), {}, cfg["freivalds_vectors"])
    rows = []
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    runner.run(confs, on_row=lambda c, r: rows.append(r))
    prof.disable()
    wall = time.perf_counter() - t0
    busy = sum(r.get("gpu_busy_ms", 0) or 0 for r in rows) / 1e3
    print(f"{args.variant}: {len(rows)} configurations, wall {wall:.1f} s, GPU busy {busy:.1f} s")
    pstats.Stats(prof).sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())

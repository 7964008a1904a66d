"""One variant of a preset planned as the workflow plans it, and its instantiations built as the
compile rule builds them, without Snakemake: what a tool or a benchmark that measures one
variant in its own process starts from (tools/profile_runner.py, lab/benchmarks/launch_paths.py)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from mmbench.core import paths
from mmbench.core.bounded import load_yaml
from mmbench.core.registry import slug
from mmbench.plan import plan as mmplan
from mmbench.plan.compile import compile_cubin
from mmbench.plan.config import merge, validate
from mmbench.plan.tuning import apply_tuned


def preset_config(preset: str, registry: dict) -> dict:
    """The preset over the defaults (config/config.yaml), validated as the workflow does: its
    variant groups expanded to the registry's names."""
    root = paths.data_dir("kernels").parent
    base = load_yaml(root / "config" / "config.yaml")
    return validate(merge(base, load_yaml(preset)), registry)


def plan_for(
    preset: str, variant: str, arch: str, gpus: list[dict], registry: dict, tuned_gpu: str = ""
):
    """The preset's plan for `variant` alone and its config, as the workflow makes it (plan/experiment.py):
    the tuned instantiations of this GPU's model where the preset names a tuning table (of
    `tuned_gpu`'s where given: config tuned_gpu, another model's tuning).
    Without the table a tuned rung's plan is the whole grid its registry entry declares."""
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

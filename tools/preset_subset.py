"""A copy of a preset (config/presets/*.yaml) that runs some of its variants only, for the GPU
checks (lab/gpu.sh builds, lab/gpu/ladder.sh):

    python3 tools/preset_subset.py PRESET '[a,b,cublas:bfloat16]' OUT.yaml
        [--sizes '[4096]'] [--cublas '[bfloat16]'] [--no-profile] [--extra-tuned ROWS.csv]

Each variant runs in its ladder element types (registry `ladder:`, as `variants: [ladder]` runs
it), or in those after its colon (joined by +); --cublas gives the cuBLAS reference's.  The profile section keeps the same variants
and types, or is switched off (--no-profile: the report then holds the verification table
only).  --sizes keeps those square sizes and no other shapes.  --extra-tuned appends tuning rows
(for variants kernels/tuned.csv lacks) to a copy of kernels/tuned.csv beside OUT."""

from __future__ import annotations

import argparse
import copy
from pathlib import Path

import yaml

try:
    from mmbench.core.registry import load_registry
except ImportError:  # a checkout from before the registry moved to core/ (lab/gpu.sh builds)
    from mmbench.plan.registry import load_registry
try:
    from mmbench.core.bounded import load_yaml
except ImportError:  # a checkout from before core/bounded.py: its presets are its own

    def load_yaml(path):
        return yaml.safe_load(Path(path).read_text())


def names(text: str) -> list[str]:
    return [x for x in text.strip("[]").replace(" ", "").split(",") if x]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("preset")
    ap.add_argument("variants")
    ap.add_argument("out")
    ap.add_argument("--sizes", default="")
    ap.add_argument("--cublas", default="", help="the cublas variant's element types")
    ap.add_argument("--no-profile", action="store_true")
    ap.add_argument("--extra-tuned", default="")
    a = ap.parse_args()
    registry = load_registry()
    config = load_yaml(a.preset)
    chosen = [v.partition(":") for v in names(a.variants)]
    config["variants"] = [name for name, _, _ in chosen]
    config["params"] = {}
    for name, _, types in chosen:
        # (getattr: an older checkout's registry has no `ladder:` field)
        dtypes = types.split("+") if types else list(getattr(registry[name], "ladder", ()))
        if dtypes:
            config["params"][name] = {"dtype": dtypes}
    if a.cublas and "cublas" in config["variants"]:
        config["params"]["cublas"] = {"dtype": names(a.cublas)}
    if a.sizes:
        config["sizes"] = [int(x) for x in names(a.sizes)]
        config["shapes"] = []
        if "sustained_sizes" in config:  # those of the kept sizes only
            config["sustained_sizes"] = [
                x for x in config["sustained_sizes"] if x in config["sizes"]
            ]
    profile = config.get("profile") or {}
    if a.no_profile:
        config["profile"] = {"enabled": False}
        config["report"] = {"figures": [], "tables": ["verification"]}
    elif profile.get("variants"):
        profile["variants"] = list(config["variants"])
        profile["params"] = copy.deepcopy(config["params"])
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if a.extra_tuned:
        merged = out.with_suffix(".tuned.csv")
        rows = Path(a.extra_tuned).read_text().strip("\n").splitlines()
        rows = "\n".join(rows[1:] if rows and rows[0].startswith("gpu_name,") else rows)  # header
        merged.write_text(Path("kernels/tuned.csv").read_text().rstrip("\n") + "\n" + rows + "\n")
        config["tuned"] = str(merged.resolve())
    out.write_text(yaml.safe_dump(config, sort_keys=False))
    print(out)


if __name__ == "__main__":
    main()

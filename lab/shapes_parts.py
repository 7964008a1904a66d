"""The shapes preset in parts: the same drawn products, the precision classes shared out among
runs that each fit a GPU machine's time, then put back together for the report.

    python lab/shapes_parts.py preset OUT.yaml CLASSES [VARIANTS]
                                                           config/presets/shapes.yaml cut to
                                                           CLASSES (comma-separated precision
                                                           classes, core/elements.py: fp32,
                                                           fp64, tf32, bf16, fp8), and to
                                                           VARIANTS (comma-separated) of them
    python lab/shapes_parts.py merge RESULTS PART...       each PART's runs/ (a results folder
                                                           of one part) copied into RESULTS/runs,
                                                           its timings, resources and refused
                                                           tables' rows into RESULTS/tables

A variant runs in one part with all its element types (cuBLAS's FP32, bfloat16 and FP64 are
one measurement job): a cut that would split one is refused, and so is a merge where two parts
hold the same file.  Then render the whole, as from a results folder copied back:

    snakemake --cores 2 --configfile config/presets/shapes.yaml \\
      --config 'draw={count: 64, seed: SEED}' experiment=shapes-SEED render_only=true
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.elements import precision_class  # noqa: E402

CLASSES = ("fp32", "fp64", "tf32", "bf16", "fp8")


def cut(preset: dict, registry: dict, classes: set[str]) -> dict:
    """The preset with the variants and element types of `classes` alone (`registry`:
    core/registry.py's variants)."""
    unknown = sorted(classes - set(CLASSES))
    if unknown:
        raise SystemExit(f"unknown class(es) {', '.join(unknown)}; valid: {', '.join(CLASSES)}")
    params = {}
    for name, p in preset["params"].items():
        math = registry[name].math
        mine = [d for d in p["dtype"] if str(precision_class(d, math)).lower() in classes]
        if mine and len(mine) < len(p["dtype"]):
            raise SystemExit(
                f"{name} runs {', '.join(p['dtype'])} in one job: put the classes of all of "
                f"them in one part (it would be split by {','.join(sorted(classes))})"
            )
        if mine:
            params[name] = p
    out = dict(preset)
    out["params"] = params
    out["variants"] = [v for v in preset["variants"] if v in params]
    return out


# the row tables of a part (tables/<name>.csv) that the whole's are the parts' rows together
ROW_TABLES = ("timings", "resources", "refused")


def merge(results: Path, parts: list[Path]) -> int:
    """Each part's runs/ copied into RESULTS/runs, and its row tables' rows put together in
    RESULTS/tables (what render_only reads); returns the files copied."""
    import pandas as pd

    runs = results / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Path] = {p.name: results for p in runs.iterdir()}
    copied = 0
    for part in parts:
        for f in sorted((part / "runs").iterdir()):
            if f.name in seen:
                raise SystemExit(f"{f.name} is in {seen[f.name]} and {part}: one part each")
            shutil.copy2(f, runs / f.name)
            seen[f.name] = part
            copied += 1
    (results / "tables").mkdir(exist_ok=True)
    for name in ROW_TABLES:
        found = [t for p in parts if (t := p / "tables" / f"{name}.csv").exists()]
        if found:
            rows = pd.concat([pd.read_csv(t, low_memory=False) for t in found], ignore_index=True)
            rows.to_csv(results / "tables" / f"{name}.csv", index=False)
    return copied


def main(argv: list[str]) -> int:
    if len(argv) >= 3 and argv[0] == "preset":
        from mmbench.core.registry import load_registry

        preset = yaml.safe_load((ROOT / "config/presets/shapes.yaml").read_text())
        registry = load_registry(ROOT / "kernels" / "registry.yaml")
        out = cut(preset, registry, set(argv[2].split(",")))
        if len(argv) >= 4:  # VARIANTS: these of the part alone
            keep = [v for v in out["variants"] if v in argv[3].split(",")]
            out = dict(out, variants=keep, params={v: out["params"][v] for v in keep})
        Path(argv[1]).write_text(yaml.safe_dump(out, sort_keys=False))
        print(f"{argv[2]}: {' '.join(out['variants'])}")
        return 0
    if len(argv) >= 3 and argv[0] == "merge":
        n = merge(Path(argv[1]), [Path(p) for p in argv[2:]])
        print(f"{n} files into {argv[1]}/runs")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The recorded shapes runs' misses and what the profiler says of each: per seed, every product
where the class's best rung is below the least share of its cuBLAS (report/ladder.SHAPES_TARGETS),
its kernel time and the reference's, and the limiter Nsight Compute gave for that build there
and for the reference there, as the notebook's recorded profiles (every `*ladder_profile*` table
under lab/data) hold them; then the misses stage's commands that would profile the rest on a
GPU machine.

    python lab/misses.py [SEED ...]        default: the seeds of tests/data/h200-shapes-SEED

A profile counts where its table has the row of the very build the standing measured at that
product (`rung` is "VARIANT PARAMS"); another build of the rung there is named as such; a
reference's profile may be at the product padded (n and k rounded up to 16, as FP8's cuBLASLt
runs it). A
profile's GPU model is its folder's prefix (h100-, h200-). The misses stage profiles the build
its own plan chooses, which is the standing's where the calibration has not moved since.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.arith import flops, round_up  # noqa: E402
from mmbench.report import ladder as lad  # noqa: E402

STANDING = ROOT / "tests" / "data"
PROFILES = ROOT / "lab" / "data"
# the shapes preset's parts a misses call can run (a cut must not split cuBLAS's job:
# lab/shapes_parts.py) and the element type each class's rows are profiled in
PART = {"FP32": "fp32,fp64,bf16", "FP64": "fp32,fp64,bf16", "BF16": "fp32,fp64,bf16",
        "TF32": "tf32", "FP8": "fp8"}  # fmt: skip
DTYPE = {"FP32": "float32", "FP64": "float64", "BF16": "bfloat16", "TF32": "float32",
         "FP8": "float8_e4m3"}  # fmt: skip


def seeds() -> list[int]:
    return sorted(int(p.name.rsplit("-", 1)[1]) for p in STANDING.glob("h200-shapes-*")
                  if p.name.rsplit("-", 1)[1].isdigit())  # fmt: skip


def profiles() -> pd.DataFrame:
    """Every recorded ladder_profile row: rung, dtype, shape (m x n x k), limiter, GPU, file."""
    out = []
    for f in sorted(PROFILES.rglob("*ladder_profile*")):
        if f.suffix == ".tsv":  # a benchmark's resource log, not a table
            continue
        d = pd.read_csv(f)
        if not {"rung", "dtype", "shape", "limiter (Nsight Compute)"} <= set(d.columns):
            continue
        rel = f.relative_to(PROFILES)
        gpu = {"h100": "H100", "h200": "H200"}.get(rel.parts[0].split("-")[0], "?")
        out.append(d.assign(gpu=gpu, file=str(rel), shape=d["shape"].map(full_shape)))
    return pd.concat(out, ignore_index=True)


def full_shape(s) -> str:
    """'4096' (a square) as '4096x4096x4096'; m x n x k as it is."""
    s = str(s).replace(" ", "")
    return s if "x" in s else f"{s}x{s}x{s}"


def misses(seed: int) -> pd.DataFrame:
    """The standing's products below the least share, per class, as report/ladder's sweep."""
    t = pd.read_csv(STANDING / f"h200-shapes-{seed}" / "shapes-columns.csv.xz")
    s = lad.sweep_with_shares(t)
    s = s[s._fraction < lad.SHAPES_TARGETS["minimum"]]
    return s.sort_values(["precision", "_fraction"]).reset_index(drop=True)


def limiter(prof: pd.DataFrame, variant: str, params: str | None, dtype: str, shape: str) -> str:
    """The recorded limiter of that build (or, marked so, another build of the variant) there."""
    at = prof[(prof["shape"] == shape) & (prof.dtype == dtype)
              & (prof.rung.str.split().str[0] == variant)]  # fmt: skip
    if at.empty:
        return "not profiled"
    build = f"{variant} {params}" if params else variant
    same = at[at.rung.str.strip() == build] if params else at
    r = (same if len(same) else at).iloc[-1]
    other = "" if len(same) else f"another build ({r.rung}): "
    return f"{other}{r['limiter (Nsight Compute)']} ({r.gpu}, {r.file})"


def main(argv: list[str]) -> int:
    prof = profiles()
    todo: dict[str, dict] = {}
    for seed in [int(a) for a in argv] or seeds():
        m = misses(seed)
        print(f"## Seed {seed}: {len(m)} products below "
              f"{lad.SHAPES_TARGETS['minimum']:.0%} of the class's reference\n")  # fmt: skip
        print("| class | product | % of ref | best rung | its limiter | the reference's limiter "
              "| µs: rung / ref |")  # fmt: skip
        print("| --- | --- | --- | --- | --- | --- | --- |")
        profiled = 0
        for _, r in m.iterrows():
            shape = f"{r.m}x{r.n}x{r.k}"
            rung, reference = r["best rung"], r["_reference"]
            params = r.parameters if isinstance(r.parameters, str) else None
            dtype = DTYPE[r.precision]
            own = limiter(prof, rung, params, dtype, shape)
            ref = limiter(prof, reference, None, dtype, shape)
            if ref == "not profiled":  # a reference that runs the product padded (FP8's)
                padded = f"{r.m}x{round_up(r.n, 16)}x{round_up(r.k, 16)}"
                if padded != shape and (at := limiter(prof, reference, None, dtype, padded)) != ref:
                    ref = f"at {padded.replace('x', ' x ')}, padded: {at}"
            profiled += not own.startswith(("not profiled", "another build"))
            mflop = flops(r.m, r.n, r.k) / 1e3  # over GFLOP/s: µs
            times = f"{mflop / r['GFLOP/s']:.1f} / {mflop / r['reference GFLOP/s']:.1f}"
            print(f"| {r.precision} | {r.m} x {r.n} x {r.k} | {100 * r['_fraction']:.1f} | {rung} "
                  f"{params or ''} | {own} | {ref} | {times} |")  # fmt: skip
            if own.startswith(("not profiled", "another build")) or ref == "not profiled":
                part = todo.setdefault(PART[r.precision], {"shapes": set(), "variants": set(),
                                                           "dtypes": set()})  # fmt: skip
                part["shapes"].add((r.m, r.n, r.k))
                part["variants"] |= {rung, reference}
                part["dtypes"].add(dtype)
        print(f"\n{profiled} of {len(m)} with the measured build's profile at the product\n")
    for classes, part in todo.items():
        shapes = ",".join(f"[{m},{n},{k}]" for m, n, k in sorted(part["shapes"]))
        variants = ", ".join(sorted(part["variants"]))
        print(f"CLASSES={classes} VARIANTS={','.join(sorted(part['variants']))} "
              f"PROFILED='[{variants}]' PROFILED_DTYPES='[{', '.join(sorted(part['dtypes']))}]' "
              f"lab/gpu.sh shapes OUT misses '[{shapes}]'")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

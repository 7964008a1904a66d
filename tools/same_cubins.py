"""Does a change of kernel source change what runs?  Builds every valid instantiation of the
named variants twice, from another checkout's kernels/ folder (OLD) and from this one's, with
this checkout's registry and without -lineinfo (line numbers move with any edit), and compares
the two cubins byte for byte.

    python tools/same_cubins.py OLD_KERNELS_DIR VARIANT... [--arch sm_90] [--jobs 2]

OLD_KERNELS_DIR is the other tree's kernels/ folder (e.g. from `git archive REV kernels | tar -x
-C /tmp/old`).  Prints one line per variant and, for each cubin that differs, the instantiation;
exits 1 if any differs.  Needs nvcc, no GPU."""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.plan.compile import NVCC_FLAGS, arch_flags, define_flags  # noqa: E402

FLAGS = [f for f in NVCC_FLAGS if f not in ("-lineinfo", "-Xptxas", "-v")]


def build(folder: Path, source: str, arch: str, defines: dict, out: Path) -> bytes:
    cmd = ["nvcc", *FLAGS, *arch_flags(arch), "-I.", *define_flags(defines), "-o", str(out), source]
    proc = subprocess.run(cmd, cwd=folder, capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"nvcc failed in {folder} for {source} {defines}:\n{proc.stderr[-2000:]}")
    return out.read_bytes()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, help="the other checkout's kernels/ folder")
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    unknown = [v for v in args.variants if v not in registry]
    if unknown:
        sys.exit(f"no such variant: {', '.join(unknown)}; the registry has {', '.join(registry)}")
    if not args.old.is_dir():
        sys.exit(f"{args.old}: no such folder (the other checkout's kernels/)")
    tmp = Path(tempfile.mkdtemp(prefix="same-cubins-"))
    jobs = []
    for name in args.variants:
        v = registry[name]
        if not v.compiled:
            sys.exit(f"{name} is not a compiled kernel ({v.backend})")
        for params in v.instantiations():
            if not v.rejected(params):
                jobs.append((name, v, params))

    def one(job):
        name, v, params = job
        arch = v.arch or args.arch
        source = Path(v.source).name
        tag = f"{name}.{slug(params)}"
        old = build(args.old.resolve(), source, arch, v.defines(params), tmp / f"{tag}.old")
        new = build(ROOT / "kernels", source, arch, v.defines(params), tmp / f"{tag}.new")
        return name, slug(params), old == new

    with ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(one, jobs))
    differ = 0
    for name in args.variants:
        mine = [(s, same) for n, s, same in results if n == name]
        bad = [s for s, same in mine if not same]
        differ += len(bad)
        print(f"{name}: {len(mine) - len(bad)} of {len(mine)} instantiations byte-identical")
        for s in bad:
            print(f"  differs: {s}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

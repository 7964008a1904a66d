"""Does a change of kernel source change what runs?  Builds every valid instantiation of the
named variants twice, from another checkout's kernels/ folder (OLD) and from this one's, with
this checkout's registry and without -lineinfo (line numbers move with any edit), and compares
the two cubins byte for byte.

    python tools/same_cubins.py OLD_KERNELS_DIR VARIANT... [--arch sm_90] [--jobs 2]

OLD_KERNELS_DIR is the other tree's kernels/ folder (e.g. from `git archive REV kernels | tar -x
-C /tmp/old`); its own registry.yaml, where it has one, gives its -D flags (a fact the kernel
once derived itself and the registry now passes is then compared as it was built), and only
the instantiations both registries hold are compared.  Prints one line per variant and, for each cubin that differs, the instantiation;
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
    old_file = args.old / "registry.yaml"
    old_registry = load_registry(old_file) if old_file.is_file() else registry
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
        ov = old_registry.get(name)
        if ov is None:
            sys.exit(f"{name}: not in {old_file}")
        old_slugs = {slug(p) for p in ov.instantiations() if not ov.rejected(p)}
        for params in v.instantiations():
            if not v.rejected(params) and slug(params) in old_slugs:
                jobs.append((name, v, ov, params))

    def one(job):
        name, v, ov, params = job
        tag = f"{name}.{slug(params)}"
        old = build(
            args.old.resolve(), Path(ov.source).name, ov.arch or args.arch, ov.defines(params),
            tmp / f"{tag}.old",
        )  # fmt: skip
        new = build(
            ROOT / "kernels", Path(v.source).name, v.arch or args.arch, v.defines(params),
            tmp / f"{tag}.new",
        )  # fmt: skip
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

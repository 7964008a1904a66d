"""How long is a split fix-up's sum in machine code?  Builds one instantiation's split entry
point from each of several kernels/ folders (tools/same_cubins.build: the workflow's build,
without -lineinfo) and prints, per folder, the entry's instruction count, its IMAD.WIDE count
(64-bit address arithmetic) and the length of the loop that loads the partial sums (the
shortest loop whose body holds the most LDG.E*.STRONG.GPU, __ldcg's loads), with its loads.

    python lab/benchmarks/fixup_sum_loop.py VARIANT INSTANCE NAME=KERNELS_DIR...

e.g. main's kernels/ (`git archive main kernels | tar x -C /tmp/main`) against a branch's:
    python lab/benchmarks/fixup_sum_loop.py tmastore_bf16 \\
        bfloat16_BM128_BN128_STAGES4_CLUSTER1_GROUP16 main=/tmp/main/kernels new=kernels

Needs nvcc and nvdisasm (the CUDA toolkit's or the nvidia-cuda-nvdisasm wheel's), no GPU.
"""

from __future__ import annotations

import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "tools"))

from same_cubins import back_loops, build, entry_code, find_nvdisasm  # noqa: E402

from mmbench.core.registry import load_registry, slug  # noqa: E402

LOAD = re.compile(r"\bLDG\.E\S*\.STRONG\.GPU\b")  # __ldcg's load, of any width


def sum_loop(code: list[str]) -> tuple[int, int]:
    """(length, loads) of the shortest backward-branching loop among those with the most LOAD
    instructions (0, 0 if none): from its label to the branch back to it (the kernel's loop
    over its tiles holds the sum's loop, and the same loads)."""
    best = (0, 0)  # (loads, -length)
    for start, i in back_loops(code):
        body = [x for x in code[start + 1 : i + 1] if not x.endswith(":")]
        best = max(best, (sum(bool(LOAD.search(x)) for x in body), -len(body)))
    return -best[1], best[0]


def main() -> int:
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    name, instance, folders = sys.argv[1], sys.argv[2], sys.argv[3:]
    nvdisasm = find_nvdisasm() or sys.exit("no nvdisasm: pip install nvidia-cuda-nvdisasm")
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    v = registry[name]
    params = [p for p in v.instantiations() if slug(p) == instance]
    if not params:
        sys.exit(f"{name} has no instantiation {instance}")
    tmp = Path(tempfile.mkdtemp(prefix="fixup-sum-"))
    print(f"{name} {instance}, entry {v.symbol}_split")
    print(
        f"{'kernels':<10} {'instructions':>12} {'IMAD.WIDE':>10} {'sum loop':>9} {'its loads':>10}"
    )
    for spec in folders:
        tag, folder = spec.split("=", 1)
        cubin = tmp / f"{tag}.cubin"
        build(Path(folder).resolve(), Path(v.source).name, v.arch or "sm_90", v.defines(params[0]),
              cubin)  # fmt: skip
        code = entry_code(nvdisasm, cubin, f"{v.symbol}_split")
        instructions = [x for x in code if not x.endswith(":")]
        wide = sum("IMAD.WIDE" in x for x in instructions)
        length, loads = sum_loop(code)
        print(f"{tag:<10} {len(instructions):>12} {wide:>10} {length:>9} {loads:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

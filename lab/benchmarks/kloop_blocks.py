"""The basic blocks of a build's k-loop in machine code, and the length of a path through them.
Builds one instantiation from a kernels/ folder (tools/same_cubins.build: the workflow's build,
without -lineinfo), takes the loop whose body holds the most math instructions (FFMA, HMMA,
DMMA, ...: same_cubins.MATH; the shortest of those) and prints each basic block of it: its number, label, length,
commonest opcodes and how it ends.  With --path, the sum of those blocks' lengths: the
instructions a warp issues for one trip round the loop that goes that way (which branch goes
which way is read off the listing: nvdisasm -c of the cubin it leaves with --keep).

    python lab/benchmarks/kloop_blocks.py VARIANT INSTANCE [--kernels DIR] [--path 0,1,5,...]
    python lab/benchmarks/kloop_blocks.py --cubin FILE --symbol ENTRY [--path ...]

The second form reads a cubin built elsewhere, e.g. one of cuBLAS's, taken out of the
nvidia-cublas wheel's libcublasLt.so with `cuobjdump -xelf all` (the cubin whose strings hold the
kernel's name, as Nsight Compute names it).

e.g. warptile_ring's build for 5624 x 77 x 182, this tree's kernels against a patched copy:
    python lab/benchmarks/kloop_blocks.py warptile_ring \\
        float32_BM64_BN32_BK8_WM64_WN16_WNITER1_TM8_TN4_STAGES3 --kernels /tmp/new/kernels

A count from the cubin, not what a run executes.  Needs nvcc and nvdisasm (the CUDA toolkit's
or the nvidia-cuda-nvdisasm wheel's), no GPU.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))
sys.path.insert(0, str(ROOT / "tools"))

from same_cubins import LABEL, MATH, back_loops, build, entry_code, find_nvdisasm  # noqa: E402

from mmbench.core.registry import load_registry  # noqa: E402

BRANCH = re.compile(r"\bBRA\b|\bEXIT\b")


def opcode(line: str) -> str:
    """An instruction's opcode without its predicate and modifiers: `@!P2 BRA ...` -> BRA."""
    return re.sub(r"^@!?U?P\w+\s+", "", line).split()[0].split(".")[0].rstrip(";")


def loop_blocks(code: list[str]) -> list[tuple[str, list[str]]]:
    """(label or '', instructions) of each basic block of the loop with the most math
    instructions (the shortest of those, where a loop round it holds the same math): a block
    starts at a label or after a branch, and ends at a branch or before a label."""
    loops = back_loops(code)
    if not loops:
        return []
    start, end = max(
        loops,
        key=lambda se: (sum(opcode(x) in MATH for x in code[se[0] + 1 : se[1] + 1]), se[0] - se[1]),
    )
    blocks: list[tuple[str, list[str]]] = []
    label, cur = "", []
    for line in code[start : end + 1]:
        if m := LABEL.match(line):
            if cur:
                blocks.append((label, cur))
            label, cur = m.group(1), []
            continue
        cur.append(line)
        if BRANCH.search(line):
            blocks.append((label, cur))
            label, cur = "", []
    if cur:
        blocks.append((label, cur))
    return blocks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variant", nargs="?")
    ap.add_argument("instance", nargs="?")
    ap.add_argument("--cubin", type=Path, help="a cubin built elsewhere (with --symbol)")
    ap.add_argument("--symbol", help="the entry of --cubin to read")
    ap.add_argument("--kernels", type=Path, default=ROOT / "kernels")
    ap.add_argument("--path", help="block numbers, comma-separated: print the sum of their lengths")
    ap.add_argument("--keep", type=Path, help="leave the cubin here")
    args = ap.parse_args()
    if bool(args.cubin) == bool(args.variant and args.instance) or bool(args.cubin) != bool(
        args.symbol
    ):
        ap.error("give VARIANT and INSTANCE, or --cubin and --symbol")
    nvdisasm = find_nvdisasm()
    if not nvdisasm or not (args.cubin or shutil.which("nvcc")):
        print("needs nvcc and nvdisasm (pip install nvidia-cuda-nvdisasm)", file=sys.stderr)
        return 2
    if args.cubin:
        name, symbol = f"{args.cubin.name}:{args.symbol}", args.symbol
        code = entry_code(nvdisasm, args.cubin, symbol)
    else:
        v = load_registry()[args.variant]
        name, symbol = f"{args.variant} {args.instance} ({args.kernels})", v.symbol
        with tempfile.TemporaryDirectory() as tmp:
            cubin = Path(tmp) / "k.cubin"
            build(
                args.kernels,
                v.source,
                v.arch or "sm_90",
                v.defines(v.instance(args.instance)),
                cubin,
            )
            code = entry_code(nvdisasm, cubin, symbol)
            if args.keep:
                shutil.copy(cubin, args.keep)
    blocks = loop_blocks(code)
    if not blocks:
        print(f"{name}: no loop in entry {symbol}", file=sys.stderr)
        return 1
    total = sum(len(b) for _, b in blocks)
    math = sum(opcode(x) in MATH for _, b in blocks for x in b)
    print(f"{name}: k-loop {total} instructions, {math} math, {len(blocks)} blocks")
    for i, (label, body) in enumerate(blocks):
        ops = collections.Counter(opcode(x) for x in body).most_common(6)
        print(f"  {i:3d} {label:5s} {len(body):4d}  " + " ".join(f"{o} {n}" for o, n in ops)
              + f"  | {body[-1][:48]}")  # fmt: skip
    if args.path:
        chosen = [int(x) for x in args.path.split(",")]
        bad = [i for i in chosen if not 0 <= i < len(blocks)]
        if bad:
            print(f"--path: no block {bad} (0 to {len(blocks) - 1})", file=sys.stderr)
            return 2
        print(f"path {args.path}: {sum(len(blocks[i][1]) for i in chosen)} instructions")
    return 0


if __name__ == "__main__":
    sys.exit(main())

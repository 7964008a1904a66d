"""Does a change of kernel source change what runs?  Builds every valid instantiation of the
named variants twice, from another checkout's kernels/ folder (OLD) and from this one's, with
this checkout's registry and without -lineinfo (line numbers move with any edit), and compares
the two cubins byte for byte.

    python tools/same_cubins.py OLD_KERNELS_DIR VARIANT... [--arch sm_90] [--jobs 2]
                                [--instance NAME ...] [--loops]

OLD_KERNELS_DIR is the other tree's kernels/ folder (e.g. from `git archive REV kernels | tar -x
-C /tmp/old`); its own registry.yaml, where it has one, gives its -D flags (a fact the kernel
once derived itself and the registry now passes is then compared as it was built), and only
the instantiations both registries hold are compared (--instance: only those named).  Prints
one line per variant and, for each cubin that differs, the instantiation; exits 1 if any
differs.  Needs nvcc, no GPU.

--loops says, for each cubin that differs, how its hot loop changed (nvdisasm: the loop with
the most math instructions, FFMA, DFMA, HMMA, HGMMA and their kin): its length and math count in
both, whether the math runs in the same order, and how many math instructions name other
registers, and how many of those a register in another bank (the register's number mod 2,
which two operands of one instruction should not share).  warptile_db's tile taken from a
one-dimensional unit number renumbered every FFMA of its loop, most into another bank, and ran
7-9% slower on an H100; taken from the block's row as before, 34 of 2048 renumbered, 2 into
another bank (docs/ladder.md).  nvdisasm comes with the CUDA toolkit, or from the
test extra's nvidia-cuda-nvdisasm wheel.

--entry compares, for each cubin that differs, the variant's own entry point (registry `symbol`:
the kernel a launch of one split runs, where a split body is built beside it) instruction by
instruction (nvdisasm; addresses left out, branch labels numbered in their order in the
entry): "same code" means a launch of that entry runs the same machine code, whatever else in
the cubin changed.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.plan.compile import CompileError, compile_cubin  # noqa: E402


def build(folder: Path, source: str, arch: str, defines: dict, out: Path) -> bytes:
    """One instantiation of `folder`/`source` built by the workflow's shell-free build
    (plan/compile.compile_cubin), without -lineinfo: the bytes to compare."""
    try:
        compile_cubin(folder / source, out, arch, defines, out.with_name(out.name + ".log"),
                      f"{folder}/{source} {defines}", lineinfo=False)  # fmt: skip
    except CompileError as err:
        raise SystemExit(str(err)) from None
    return out.read_bytes()


# the math instructions whose loop is a kernel's hot loop
# (not HFMA2: ptxas also moves constants with HFMA2.MMA)
MATH = {"FFMA", "DFMA", "HMMA", "HGMMA", "QGMMA", "DMMA", "IMMA", "IGMMA"}
INSTRUCTION = re.compile(r"^\s+/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)([^;]*);")
# a branch label, as nvdisasm writes it (.L_x_12) or as entry_code renames it (L3)
LABEL = re.compile(r"^\s*(\.L_x_\d+|L\d+):")
BACK = re.compile(r"BRA[^`]*`\((\.L_x_\d+|L\d+)\)")


def find_nvdisasm() -> str | None:
    """nvdisasm on PATH, else the one of the nvidia-cuda-nvdisasm wheel (nvidia/cu*/bin)."""
    found = shutil.which("nvdisasm")
    if found:
        return found
    spec = importlib.util.find_spec("nvidia")
    for root in spec.submodule_search_locations if spec else []:
        for candidate in sorted(Path(root).glob("cu*/bin/nvdisasm")):
            return str(candidate)
    return None


def back_loops(lines: list[str]) -> list[tuple[int, int]]:
    """(the label's line, the branch's line) of each branch back to a label above it in a
    listing's lines: the loops, innermost or not."""
    labels, out = {}, []
    for i, line in enumerate(lines):
        if m := LABEL.match(line):
            labels[m.group(1)] = i
        elif (m := BACK.search(line)) and m.group(1) in labels:
            out.append((labels[m.group(1)], i))
    return out


def hot_loop(sass: str) -> list[tuple[str, tuple[int, ...]]]:
    """The instructions of the loop with the most math instructions in nvdisasm's listing
    (`nvdisasm -c`): from a label to the last branch back to it, each as (opcode, the numbers of
    the general registers it names, in order)."""
    lines = sass.splitlines()
    best = (0, 0, 0)
    for start, i in back_loops(lines):
        math = sum(1 for x in lines[start:i] if (o := INSTRUCTION.match(x)) and o.group(1) in MATH)
        if math > best[0]:
            best = (math, start, i + 1)
    out = []
    for line in lines[best[1] : best[2]]:
        if m := INSTRUCTION.match(line):
            out.append((m.group(1), tuple(int(r) for r in re.findall(r"\bR(\d+)\b", m.group(2)))))
    return out


def compare_loops(old: list, new: list) -> dict:
    """What changed between two hot loops (hot_loop): their lengths and math counts, whether
    the math instructions run in the same order (ptxas may pick another of two equivalent
    integer instructions around them, IADD3.X for IMAD.X, without that mattering), and of the
    math instructions, how many name other registers and how many a register in another bank
    (its number mod 2)."""
    om, nm = ([x for x in loop if x[0] in MATH] for loop in (old, new))
    same_order = [o for o, _ in om] == [o for o, _ in nm]
    pairs = list(zip(om, nm, strict=True)) if same_order else []
    return dict(
        length=(len(old), len(new)),
        math=(len(om), len(nm)),
        same_order=same_order,
        renumbered=sum(1 for (_, a), (_, b) in pairs if a != b),
        other_bank=sum(1 for (_, a), (_, b) in pairs if [r % 2 for r in a] != [r % 2 for r in b]),
    )


def loop_line(nvdisasm: str, old: Path, new: Path) -> str:
    """One line saying how the hot loop of `new` differs from that of `old` (two cubins)."""
    loops = [hot_loop(subprocess.run([nvdisasm, "-c", str(c)], capture_output=True, text=True,
                                     check=True).stdout) for c in (old, new)]  # fmt: skip
    d = compare_loops(*loops)
    head = (f"hot loop {d['length'][0]} -> {d['length'][1]} instructions, "
            f"{d['math'][0]} -> {d['math'][1]} of them math")  # fmt: skip
    if not d["same_order"]:
        return f"{head}; the math instructions differ in kind or order"
    return (f"{head}; the math in the same order, {d['renumbered']} naming other registers, "
            f"{d['other_bank']} of them in another bank")  # fmt: skip


def entry_code(nvdisasm: str, cubin: Path, symbol: str) -> list[str]:
    """The instructions of entry `symbol` in nvdisasm's listing of `cubin`, without their
    addresses, its branch labels renamed L0, L1, ... in their order there (nvdisasm numbers
    them across the whole cubin, so another entry's edit renumbers this one's); [] where the
    cubin has no such entry."""
    text = subprocess.run([nvdisasm, "-c", str(cubin)], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("//---") and ".text." in line:
            inside = line.split(".text.", 1)[1].split()[0] == symbol
            continue
        if inside and line.strip():
            out.append(re.sub(r"/\*[0-9a-f]{4,}\*/", "", line).strip())
    names: dict[str, str] = {}
    renamed = []
    for line in out:
        for label in re.findall(r"\.L_x_\d+", line):
            names.setdefault(label, f"L{len(names)}")
        renamed.append(re.sub(r"\.L_x_\d+", lambda m: names[m.group(0)], line))
    return renamed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, help="the other checkout's kernels/ folder")
    ap.add_argument("variants", nargs="+")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--instance", action="append", default=[], help="only this instantiation")
    ap.add_argument(
        "--loops", action="store_true", help="how the hot loop of each that differs changed"
    )
    ap.add_argument(
        "--entry", action="store_true", help="whether each that differs has its entry's code"
    )
    args = ap.parse_args()
    nvdisasm = find_nvdisasm() if args.loops or args.entry else None
    if (args.loops or args.entry) and nvdisasm is None:
        sys.exit("--loops and --entry need nvdisasm: the CUDA toolkit's, or pip install "
                 "nvidia-cuda-nvdisasm")  # fmt: skip
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
        if v.backend != "cubin":
            sys.exit(f"{name} is not one of our cubins ({v.backend})")
        ov = old_registry.get(name)
        if ov is None:
            sys.exit(f"{name}: not in {old_file}")
        old_slugs = {slug(p) for p in ov.instantiations() if not ov.rejected(p)}
        for params in v.instantiations():
            wanted = not args.instance or slug(params) in args.instance
            if wanted and not v.rejected(params) and slug(params) in old_slugs:
                jobs.append((name, v, ov, params))
    if not jobs:
        sys.exit(f"no instantiation of {', '.join(args.variants)} to compare"
                 + (f" named {', '.join(args.instance)}" if args.instance else ""))  # fmt: skip

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
        return name, slug(params), old == new, tmp / f"{tag}.old", tmp / f"{tag}.new"

    with ThreadPoolExecutor(args.jobs) as ex:
        results = list(ex.map(one, jobs))
    differ = 0
    for name in args.variants:
        mine = [(s, same, o, n) for v, s, same, o, n in results if v == name]
        bad = [(s, o, n) for s, same, o, n in mine if not same]
        differ += len(bad)
        print(f"{name}: {len(mine) - len(bad)} of {len(mine)} instantiations byte-identical")
        for s, o, n in bad:
            print(f"  differs: {s}")
            if args.entry:
                sym = registry[name].symbol
                old_code, new_code = entry_code(nvdisasm, o, sym), entry_code(nvdisasm, n, sym)
                same = old_code == new_code and bool(new_code)
                words = "same code" if same else "other code"
                print(f"    entry {sym}: {words} ({len(old_code)} and {len(new_code)} lines)")
            if args.loops:
                print(f"    {loop_line(nvdisasm, o, n)}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())

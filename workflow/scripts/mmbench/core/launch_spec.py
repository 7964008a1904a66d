"""The launch of one configuration, described once as data: grid, block, cluster shape, dynamic
shared memory and the kernel's arguments, each of a declared kind.

The kinds of kernel argument (a registry entry's `args:` lists them):

| kind         | registry form                                   | passed as                            |
|--------------|-------------------------------------------------|--------------------------------------|
| `pointer`    | `A`, `B`, `C` or `{pointer: A}`                 | the operand's device address (8 B)   |
| `int`        | `m`, `lda`, `accumulate`, or `{int: "expr"}`    | a 32-bit integer                     |
| `tensor_map` | `{tensor_map: A, box: [rows, cols], swizzle: 128}` | a CUtensorMap (128 B, 64-B aligned) made on the host from the operand's address, shape, leading dimension and element type, by value (`const __grid_constant__ CUtensorMap`) |
| `workspace`  | `{workspace: "bytes expr"}`                     | the address of zeroed device memory  |
| `float`      | `{float: scale}`                                | a 32-bit float: `scale`, the product of the inputs' per-tensor dequantisation scales (FP8; 1 for inputs drawn as values of their type) |

`core/registry.py` builds a LaunchSpec from the registry entry; `measure/launch.py` turns it
into a launch (CuPy where it can: pointers, integers and workspaces, no cluster; NVIDIA's
cuda-bindings where it cannot: tensor maps, clusters).  The runner, the profiler's target
program and the memcheck tool all launch from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

OPERANDS = ("A", "B", "C")
SWIZZLES = (0, 32, 64, 128)
ARG_KINDS = ("pointer", "int", "tensor_map", "workspace", "float")


@dataclass(frozen=True)
class Pointer:
    operand: str
    kind: str = "pointer"


@dataclass(frozen=True)
class Int:
    value: int
    name: str = ""
    kind: str = "int"


@dataclass(frozen=True)
class TensorMap:
    """A 2-D tiled tensor map of a row-major operand: `rows` x `cols` elements with leading
    dimension `ld`, loaded in boxes of box_rows x box_cols (cols innermost)."""

    operand: str
    rows: int
    cols: int
    ld: int
    box_rows: int
    box_cols: int
    swizzle: int
    scalar: str  # the element's scalar type name (core/elements.py)
    kind: str = "tensor_map"


@dataclass(frozen=True)
class Float:
    value: float
    name: str = ""
    kind: str = "float"


@dataclass(frozen=True)
class Workspace:
    nbytes: int
    kind: str = "workspace"


Arg = Pointer | Int | TensorMap | Workspace | Float


@dataclass(frozen=True)
class LaunchSpec:
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    cluster: tuple[int, int, int] = (1, 1, 1)
    dynamic_shared_bytes: int = 0
    args: tuple[Arg, ...] = field(default=())
    # (name, value): the registry's shape facts of this launch (k splits, output tiles)
    facts: tuple[tuple[str, int], ...] = field(default=())
    # the kernel this launch runs (registry `symbol`, or the first of `symbols` that holds)
    symbol: str | None = None

    @property
    def needs_driver(self) -> bool:
        """True where CuPy cannot launch it: a cluster, or an argument CuPy cannot pass."""
        return self.cluster != (1, 1, 1) or any(isinstance(a, TensorMap) for a in self.args)

    @property
    def empty(self) -> bool:
        """Nothing to launch (e.g. floor(size / block) = 0 blocks)."""
        return 0 in self.grid

    def describe(self) -> dict:
        """The row's launch columns."""
        out = dict(grid="x".join(map(str, self.grid)), block="x".join(map(str, self.block)))
        if self.cluster != (1, 1, 1):
            out["cluster"] = "x".join(map(str, self.cluster))
        if self.facts:
            out["launch_facts"] = " ".join(f"{name}={value}" for name, value in self.facts)
        return out


def check_box(box_rows: int, box_cols: int, swizzle: int, nbytes: int) -> list[str]:
    """Why the tensor-memory accelerator cannot load boxes of this shape (empty: it can), from
    the CUDA driver's rules for cuTensorMapEncodeTiled: box edges 1..256 elements, the box's
    inner edge a multiple of 16 bytes and within the swizzle span.  Known from the registry
    entry alone, so an instantiation is refused before it is built."""
    out = []
    for edge, name in ((box_rows, "box rows"), (box_cols, "box cols")):
        if not 1 <= edge <= 256:
            out.append(f"{name} = {edge}: must be 1..256")
    if (box_cols * nbytes) % 16:
        out.append(f"box cols x {nbytes} B = {box_cols * nbytes} B: must be a multiple of 16")
    if swizzle not in SWIZZLES:
        out.append(f"swizzle {swizzle}: valid values {SWIZZLES}")
    elif swizzle and box_cols * nbytes > swizzle:
        out.append(f"box cols x {nbytes} B exceeds the {swizzle}-byte swizzle span")
    return out


def check_tensor_map(t: TensorMap, nbytes: int, align: int = 16) -> list[str]:
    """check_box, and the operand's row pitch: a multiple of 16 bytes."""
    out = check_box(t.box_rows, t.box_cols, t.swizzle, nbytes)
    if (t.ld * nbytes) % align:
        out.insert(0, f"leading dimension {t.ld} x {nbytes} B: must be a multiple of {align} B")
    return out

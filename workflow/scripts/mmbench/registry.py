"""The kernel registry (kernels/registry.yaml): which variants exist, how to launch them.

Launch shapes and preconditions are small arithmetic expressions in the registry; they are
evaluated here by a whitelisting evaluator (names, integer arithmetic, comparisons, and/or,
``cdiv``), never by ``eval``.
"""

from __future__ import annotations

import ast
import hashlib
import operator
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import jsonschema
import yaml

SCHEMA = Path(__file__).resolve().parents[2] / "schemas" / "registry.schema.yaml"


class RegistryError(ValueError):
    """The registry file is malformed."""


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers."""
    return -(-a // b)


_BINOPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMPOPS = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
_FUNCS = {"cdiv": cdiv, "min": min, "max": max}


@cache
def _parse(expr: str) -> ast.Expression:
    try:
        return ast.parse(expr, mode="eval")
    except SyntaxError as err:
        raise RegistryError(f"cannot parse registry expression {expr!r}: {err.msg}") from None


def evaluate(expr: str, **names: int) -> int | bool:
    """Evaluates a registry expression such as ``cdiv(n, tile * coarsen)`` with the given names."""

    def ev(node: ast.AST) -> int | bool:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            return node.value
        if isinstance(node, ast.Name):
            if node.id not in names:
                raise RegistryError(f"unknown name {node.id!r} in {expr!r}; known: {sorted(names)}")
            return names[node.id]
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            return _BINOPS[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.BoolOp):
            values = [ev(v) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return not ev(node.operand)
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=False):
                right = ev(comp)
                if type(op) not in _CMPOPS or not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS
            and not node.keywords
        ):
            return _FUNCS[node.func.id](*(ev(a) for a in node.args))
        raise RegistryError(f"unsupported construct in registry expression {expr!r}")

    return ev(_parse(expr))


@dataclass(frozen=True)
class Requirement:
    expr: str
    reason: str


@dataclass(frozen=True)
class Variant:
    """One kernel variant of the registry."""

    name: str
    backend: str
    seeds: str
    dtypes: tuple[str, ...]
    tiles: tuple[int, ...]
    coarsen: tuple[int, ...] = (1,)
    source: str | None = None
    symbol: str | None = None
    block: tuple[str, ...] = ()
    grid: tuple[str, ...] = ()
    requires: tuple[Requirement, ...] = ()
    unsafe_when_unmet: bool = False
    shared_memory: str | None = None
    profile_kernel: str | None = None
    operation: str = "gemm"
    order: int = 0
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def compiled(self) -> bool:
        return self.backend == "cubin"

    def launch(self, m: int, n: int, k: int, tile: int, coarsen: int = 1):
        """(grid, block) as 3-tuples for a problem C[m x n] = A[m x k] . B[k x n]."""
        names = dict(m=m, n=n, k=k, tile=tile, coarsen=coarsen)
        grid = tuple(int(evaluate(e, **names)) for e in self.grid) + (1,) * (3 - len(self.grid))
        block = tuple(int(evaluate(e, **names)) for e in self.block) + (1,) * (3 - len(self.block))
        return grid, block

    def unmet(self, m: int, n: int, k: int, tile: int | None, coarsen: int = 1) -> list[str]:
        """Reasons (from the registry) why this shape breaks the variant's preconditions."""
        names = dict(m=m, n=n, k=k, tile=tile or 1, coarsen=coarsen)
        return [
            f"{r.expr} fails: {r.reason}" for r in self.requires if not evaluate(r.expr, **names)
        ]

    def static_shared_bytes(self, tile: int, coarsen: int, elem_bytes: int) -> int:
        if not self.shared_memory:
            return 0
        return int(evaluate(self.shared_memory, tile=tile, coarsen=coarsen, elem_bytes=elem_bytes))


@cache
def load_registry(path: str | Path) -> dict[str, Variant]:
    """Reads and validates kernels/registry.yaml; variants keep the file's order."""
    path = Path(path)
    data = yaml.safe_load(path.read_text())
    schema = yaml.safe_load(SCHEMA.read_text())
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=str)
    if errors:
        lines = [f"  {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]
        raise RegistryError(f"{path} is not a valid registry:\n" + "\n".join(lines))
    variants = {}
    for order, (name, entry) in enumerate(data["variants"].items()):
        backend = entry.get("backend", "cubin")
        if backend == "cubin":
            src = path.parent / entry["source"]
            if not src.is_file():
                raise RegistryError(f"variant {name!r}: source {src} does not exist")
        variants[name] = Variant(
            name=name,
            backend=backend,
            seeds=entry.get("seeds", ""),
            dtypes=tuple(entry["dtypes"]),
            tiles=tuple(entry.get("tiles", ())),
            coarsen=tuple(entry.get("coarsen", (1,))),
            source=entry.get("source"),
            symbol=entry.get("symbol"),
            block=tuple(entry.get("block", ())),
            grid=tuple(entry.get("grid", ())),
            requires=tuple(Requirement(**r) for r in entry.get("requires", ())),
            unsafe_when_unmet=bool(entry.get("unsafe_when_unmet", False)),
            shared_memory=entry.get("shared_memory"),
            profile_kernel=entry.get("profile_kernel"),
            operation=entry.get("operation", "gemm"),
            order=order,
        )
    return variants


_INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def kernel_dependencies(source: str | Path) -> list[Path]:
    """The kernel file and every header it includes with #include "...", recursively."""
    seen: list[Path] = []
    todo = [Path(source)]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        if not p.is_file():
            raise RegistryError(f"{p} is included but does not exist")
        seen.append(p)
        todo.extend(p.parent / inc for inc in _INCLUDE.findall(p.read_text()))
    return seen


def source_hash(paths: list[str | Path]) -> str:
    """sha256 over the kernel file and its headers (recorded on every row as provenance)."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]

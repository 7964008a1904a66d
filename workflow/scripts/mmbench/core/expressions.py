"""The registry's expression language: integer arithmetic over parameter names and m, n, k
(``cdiv(n, TILE * COARSEN)``, ``BM * BK * 2``, ``k % 8 == 0 and BN <= 256``), evaluated by a
whitelisting evaluator (names, integers, + - * // %, comparisons, and/or/not, ``cdiv``,
``min``, ``max`` and the split policies of core/schedule.py), never by ``eval``."""

from __future__ import annotations

import ast
import operator
from functools import cache

from mmbench.core import schedule


class RegistryError(ValueError):
    """The registry file is malformed."""


cdiv = schedule.cdiv  # ceiling division of non-negative integers


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


_FUNCS = {"cdiv": cdiv, "min": min, "max": max, **schedule.FUNCTIONS}


# the longest registry expression accepted (a longer one is a mistake, and a deep one would
# exhaust the recursion of the parser and evaluator)
MAX_EXPRESSION = 400


@cache
def _parse(expr: str) -> ast.Expression:
    if len(str(expr)) > MAX_EXPRESSION:
        raise RegistryError(
            f"registry expression {str(expr)[:60]!r}... is {len(str(expr))} characters long; "
            f"valid: at most {MAX_EXPRESSION}"
        )
    try:
        return ast.parse(str(expr), mode="eval")
    except (SyntaxError, RecursionError, MemoryError) as err:
        msg = getattr(err, "msg", type(err).__name__)
        raise RegistryError(f"cannot parse registry expression {expr!r}: {msg}") from None


def evaluate(expr: str, **names: int) -> int | bool:
    """Evaluates a registry expression such as ``cdiv(n, TILE * COARSEN)`` with the given names."""

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
            unsupported = [type(op).__name__ for op in node.ops if type(op) not in _CMPOPS]
            if unsupported:
                raise RegistryError(
                    f"unsupported operator {unsupported[0]} in registry expression {expr!r}; "
                    "valid comparisons: == != < <= > >="
                )
            left = ev(node.left)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = ev(comp)
                if not _CMPOPS[type(op)](left, right):
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
        raise RegistryError(
            f"unsupported construct in registry expression {expr!r} ({type(node).__name__}); "
            "valid: integers, names, + - * // %, comparisons, and/or/not, cdiv(), min(), max(), "
            + ", ".join(f"{name}()" for name in schedule.FUNCTIONS)
        )

    try:
        return ev(_parse(expr))
    except RegistryError:
        raise
    except (TypeError, ValueError, RecursionError, OverflowError) as err:
        raise RegistryError(f"cannot evaluate registry expression {expr!r}: {err}") from None

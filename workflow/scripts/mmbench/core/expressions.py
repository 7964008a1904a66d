"""The registry's expression language: integer arithmetic over parameter names and m, n, k
(``cdiv(n, TILE * COARSEN)``, ``BM * BK * 2``, ``k % 8 == 0 and BN <= 256``), evaluated by a
whitelisting evaluator (names, integers, + - * // %, comparisons, ``in`` and ``not in`` a
bracketed list of values such as ``BN in (48, 80, 96)``, and/or/not, ``cdiv``, ``min``,
``max`` and the split policies of core/schedule.py), never by ``eval``."""

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
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}
_MEMBERSHIP = (ast.In, ast.NotIn)  # their right side: a bracketed list of values


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
    try:
        return _compiled(expr)(names)
    except RegistryError:
        raise
    except (TypeError, ValueError, RecursionError, OverflowError) as err:
        raise RegistryError(f"cannot evaluate registry expression {expr!r}: {err}") from None


@cache
def _compiled(expr: str):
    """`expr` as a function of the names, built once from its parsed tree: the same whitelist
    as it is read (an unsupported construct is refused before any name is looked up), and the
    same order of evaluation (`and`/`or` evaluate every operand, a chained comparison stops at
    its first false link)."""

    def build(node: ast.AST):
        if isinstance(node, ast.Expression):
            return build(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, int):
            value = node.value
            return lambda names: value
        if isinstance(node, ast.Name):
            name = node.id

            def look_up(names):
                try:
                    return names[name]
                except KeyError:
                    raise RegistryError(
                        f"unknown name {name!r} in {expr!r}; known: {sorted(names)}"
                    ) from None

            return look_up
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            op, left, right = _BINOPS[type(node.op)], build(node.left), build(node.right)
            return lambda names: op(left(names), right(names))
        if isinstance(node, ast.BoolOp):
            parts = [build(v) for v in node.values]
            if isinstance(node.op, ast.And):
                return lambda names: all([p(names) for p in parts])
            return lambda names: any([p(names) for p in parts])
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            operand = build(node.operand)
            return lambda names: not operand(names)
        if isinstance(node, ast.Compare):
            unsupported = [type(op).__name__ for op in node.ops if type(op) not in _CMPOPS]
            if unsupported:
                raise RegistryError(
                    f"unsupported operator {unsupported[0]} in registry expression {expr!r}; "
                    "valid comparisons: == != < <= > >=, in and not in (a, b, ...)"
                )

            def side(op, node):  # a comparison's right side: a list of values after `in`
                if not isinstance(op, _MEMBERSHIP):
                    return build(node)
                if not isinstance(node, (ast.Tuple, ast.List)):
                    raise RegistryError(
                        f"'in' in registry expression {expr!r} takes a bracketed list of "
                        "values, as in BN in (48, 80, 96)"
                    )
                values = [build(v) for v in node.elts]
                return lambda names: [v(names) for v in values]

            first = build(node.left)
            links = [(_CMPOPS[type(op)], side(op, c)) for op, c in zip(node.ops, node.comparators, strict=True)]  # fmt: skip

            def compare(names):
                left = first(names)
                for op, comp in links:
                    right = comp(names)
                    if not op(left, right):
                        return False
                    left = right
                return True

            return compare
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in _FUNCS
            and not node.keywords
        ):
            func, args = _FUNCS[node.func.id], [build(a) for a in node.args]
            return lambda names: func(*[a(names) for a in args])
        raise RegistryError(
            f"unsupported construct in registry expression {expr!r} ({type(node).__name__}); "
            "valid: integers, names, + - * // %, comparisons, and/or/not, cdiv(), min(), max(), "
            + ", ".join(f"{name}()" for name in schedule.FUNCTIONS)
        )

    return build(_parse(expr))  # a RecursionError here is evaluate()'s to report

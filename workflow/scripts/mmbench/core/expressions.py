"""The registry's expression language: integer arithmetic over parameter names and m, n, k
(``cdiv(n, TILE * COARSEN)``, ``BM * BK * 2``, ``k % 8 == 0 and BN <= 256``), evaluated by a
whitelisting evaluator (names, integers, + - * // %, comparisons, and/or/not, ``cdiv``,
``min``, ``max``, ``tail_splits``), never by ``eval``."""

from __future__ import annotations

import ast
import operator
from functools import cache


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


def tail_splits(head: int, tail: int, wave: int, ktiles: int, most: int, cost: int) -> int:
    """The ways s (1 to `most`, at most 64) to split each of `tail` tiles of `ktiles` k-tiles,
    run after `head` whole tiles on `wave` blocks at a time, that end the launch soonest
    (`last_wave_end`); the fewest splits where several end as soon, 1 where there is no tail."""
    if tail <= 0 or wave <= 0 or ktiles <= 0:
        return 1
    ends = {s: last_wave_end(head, tail, wave, ktiles, s, cost)
            for s in range(1, min(64, max(1, most)) + 1)}  # fmt: skip
    return min(ends, key=lambda s: (ends[s], s))


def last_wave_end(head: int, tail: int, wave: int, ktiles: int, splits: int, cost: int) -> int:
    """When a launch of `head` whole tiles then `tail` tiles split `splits` ways along their
    `ktiles` k-tiles ends, in k-tiles' time, on `wave` blocks at a time that each take the next
    unit as they come free (the hardware's order): a whole tile takes ktiles + cost (a unit's
    fixed cost, its first loads and its stores), a split unit cdiv(ktiles, splits) + cost.  The
    head fills whole rounds and `head % wave` blocks of one more (free at t1), the other
    blocks are free at t0; the units go to the blocks as they free, so the launch ends at the
    first time by which the blocks can have run them all."""
    whole, unit, units = ktiles + cost, cdiv(ktiles, splits) + cost, tail * splits
    rounds, rest = divmod(head, wave)
    t0, t1 = rounds * whole, (rounds + 1) * whole

    def capacity(t: int) -> int:
        return (wave - rest) * ((t - t0) // unit) + rest * max(0, (t - t1) // unit)

    enough = cdiv(units, wave) + cdiv(whole, unit) + 1  # unit ends past t1 that surely suffice
    times = [t0 + j * unit for j in range(1, enough + 1)] + [t1 + j * unit for j in range(enough)]
    end = min(t for t in times if capacity(t) >= units)
    return max(end, t1 if rest else t0)


_FUNCS = {"cdiv": cdiv, "min": min, "max": max, "tail_splits": tail_splits}


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
            "tail_splits()"
        )

    try:
        return ev(_parse(expr))
    except RegistryError:
        raise
    except (TypeError, ValueError, RecursionError, OverflowError) as err:
        raise RegistryError(f"cannot evaluate registry expression {expr!r}: {err}") from None

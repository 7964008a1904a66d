"""Products drawn from a seed (config `draw`): the shapes a user's workload could have, none of
them chosen by whoever tuned the kernels.

    draw(seed, count, low, high, families) -> [(m, n, k), ...]

The count is shared out among the families in the order given (the first ones take the
remainder), each drawn from one generator seeded with `seed` (NumPy's PCG64: the same seed draws
the same shapes on every machine and NumPy version that keeps the generator's stream):

    log_uniform     m, n and k each log-uniform in [low, high]: every scale alike
    one_small_side  m (or n, a coin decides) log-uniform in [low, 320] against the other two
                    log-uniform in [4096, high]: decode-like products and their transpose
    square          m = n = k log-uniform in [1024, high]: square sizes between tuned ones
    llm_layer       a transformer layer's products (attention in and out, the MLP up and
                    down, for hidden and MLP widths of published models) with m tokens a
                    power of two from 512 to 16384; every side capped at `high`

A shape drawn twice is drawn again, so that `count` different products come back.
"""

from __future__ import annotations

import math

import numpy as np

FAMILIES = ("log_uniform", "one_small_side", "square", "llm_layer")
# (hidden, MLP) widths of published transformer models: LLaMA-7B (4096, 11008), Mistral-7B
# (4096, 14336), LLaMA-13B (5120, 13824), LLaMA-2-70B (8192, 28672)
LLM_WIDTHS = ((4096, 11008), (4096, 14336), (5120, 13824), (8192, 28672))
# the small side of a one_small_side product, and the least side of the other two
SMALL_SIDE = 320
LARGE_FROM = 4096
SQUARE_FROM = 1024
MAX_DRAWS = 1000  # per shape: a draw that keeps repeating itself stops with an error


def _log_uniform(rng: np.random.Generator, low: int, high: int) -> int:
    return int(round(math.exp(rng.uniform(math.log(low), math.log(high)))))


def _one(rng: np.random.Generator, family: str, low: int, high: int) -> tuple[int, int, int]:
    if family == "log_uniform":
        return tuple(_log_uniform(rng, low, high) for _ in range(3))
    if family == "one_small_side":
        small = _log_uniform(rng, low, min(SMALL_SIDE, high))
        big = _log_uniform(rng, min(LARGE_FROM, high), high)
        depth = _log_uniform(rng, min(LARGE_FROM, high), high)
        return (small, big, depth) if rng.integers(2) == 0 else (big, small, depth)
    if family == "square":
        side = _log_uniform(rng, min(max(SQUARE_FROM, low), high), high)
        return side, side, side
    if family == "llm_layer":
        hidden, mlp = LLM_WIDTHS[rng.integers(len(LLM_WIDTHS))]
        powers = [2**p for p in range(9, 15) if 2**p <= high] or [high]
        tokens = int(powers[rng.integers(len(powers))])
        # attention in (Q, K, V at once) and out, the MLP up and down: C = A.B, n x k = B
        n, k = [(3 * hidden, hidden), (hidden, hidden), (mlp, hidden), (hidden, mlp)][
            rng.integers(4)
        ]
        return tokens, min(n, high), min(k, high)
    raise ValueError(f"unknown family {family!r}; valid: {', '.join(FAMILIES)}")


def draw(
    seed: int,
    count: int,
    low: int = 16,
    high: int = 16384,
    families: tuple[str, ...] | list[str] = FAMILIES,
) -> list[tuple[int, int, int]]:
    """`count` different products (m, n, k), drawn from `seed` (see the module's text)."""
    if not families:
        raise ValueError("no family to draw from; valid: " + ", ".join(FAMILIES))
    for f in families:
        if f not in FAMILIES:
            raise ValueError(f"unknown family {f!r}; valid: {', '.join(FAMILIES)}")
    if not 1 <= low <= high:
        raise ValueError(f"sides from {low} to {high}: valid: 1 <= low <= high")
    rng = np.random.default_rng(seed)
    share, extra = divmod(count, len(families))
    out: list[tuple[int, int, int]] = []
    seen: set[tuple[int, int, int]] = set()
    for i, family in enumerate(families):
        for _ in range(share + (i < extra)):
            for _attempt in range(MAX_DRAWS):
                shape = _one(rng, family, low, high)
                if shape not in seen:
                    break
            else:
                raise ValueError(f"the {family} family drew no new shape in {MAX_DRAWS} "
                                 f"draws between {low} and {high}: ask for fewer")  # fmt: skip
            seen.add(shape)
            out.append(shape)
    return out


def family_of(m: int, n: int, k: int) -> str:
    """How the report groups a product: one side (m or n) at most 320, square, or other."""
    if min(m, n) <= SMALL_SIDE:
        return "one small side"
    return "square" if m == n == k else "other"

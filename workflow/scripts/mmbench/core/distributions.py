"""The input distributions, declared once: how A, B (and C0) are drawn, and what follows for the
check (are the results exact, how large can an input be, can the bound use the product itself).

Adding a distribution is one entry of DISTRIBUTIONS.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .elements import Scalar


@dataclass(frozen=True)
class Distribution:
    name: str
    description: str
    # draw(rng, shape) -> float64 or small-integer values; cast to the input type by `draw`
    sample: Callable[[np.random.Generator, tuple, np.dtype], np.ndarray]
    # every value an integer of at most `integer_max`: sums stay exact while representable
    integer_max: int | None
    nonnegative: bool
    for_integer_types: bool

    def draw(self, rng: np.random.Generator, shape: tuple, scalar: Scalar) -> np.ndarray:
        """Values of `shape` in the scalar's host type (the 16-bit float types rounded to
        nearest from float32)."""
        dt = scalar.np_dtype
        native = dt if dt in (np.dtype(np.float32), np.dtype(np.float64)) else np.dtype("float32")
        out = self.sample(rng, shape, native)
        return out if out.dtype == dt else out.astype(dt)

    @property
    def integer(self) -> bool:
        return self.integer_max is not None


def _int09(rng, shape, dt):
    return rng.integers(0, 10, size=shape, dtype=np.int8).astype(dt)


def _uniform(rng, shape, dt):
    return rng.random(size=shape, dtype=dt)


def _normal(rng, shape, dt):
    return rng.standard_normal(size=shape, dtype=dt)


DISTRIBUTIONS: dict[str, Distribution] = {
    d.name: d
    for d in (
        Distribution(
            "int09",
            "integers 0..9 (seeds 000 and 002): results are exact while the sums are representable",
            _int09,
            9,
            True,
            True,
        ),
        Distribution(
            "uniform",
            "floats in [0, 1) with the input type's full significand (seed 001's randomInit)",
            _uniform,
            None,
            True,
            False,
        ),
        Distribution(
            "normal",
            "standard normal floats with the input type's full significand (real data)",
            _normal,
            None,
            False,
            False,
        ),
    )
}


def distribution(name: str) -> Distribution:
    try:
        return DISTRIBUTIONS[name]
    except KeyError:
        raise ValueError(
            f"unknown input distribution {name!r}; valid values: {', '.join(DISTRIBUTIONS)}"
        ) from None

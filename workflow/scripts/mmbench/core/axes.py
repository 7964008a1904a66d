"""The axes of a configuration, declared once.

One configuration is one row of results/tables/timings.csv: a kernel instantiation on one
problem, layout and input set, measured on one GPU model.  Each axis is declared here with its
type, its allowed values (where they form a closed set), its default, and what it takes part in:

- identity: names a configuration within a run (tables group and join on these; the GPU model
  is one, so two GPU models are never mixed in one number);
- compare:  names a configuration across runs (compare.py joins a run with its baseline on
  these: not the GPU model, since comparing two GPUs is what a baseline from another machine is for);
- inputs:   configurations equal on these share their inputs and float64 reference;
- planned:  a field of the Configuration the plan makes (the GPU model is known only when
  measured, and joins the row then);
- label:    how the axis shows in a one-line description of a configuration.

From this list come the Configuration type, the row's axis columns (core/row.py), the
configuration id, the grouping keys, compare's join keys and the config schema's allowed values
(plan/config.py).  The compile-time parameters of a variant (TILE, BM, ...) are the `params`
axis: their names come from the registry entry, never from here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .distributions import DISTRIBUTIONS
from .elements import ELEMENT_TYPES, ElementType, element_type
from .sampling import LOADS, Load, load_of


class _Required:
    def __repr__(self):
        return "REQUIRED"


REQUIRED: Any = _Required()  # an axis every configuration must give
DTYPE_PARAM = "dtype"  # the element-type parameter of every registry entry


@dataclass(frozen=True)
class Axis:
    name: str
    type: type
    doc: str
    default: Any = REQUIRED
    values: tuple | None = None  # the allowed values, where they form a closed set
    config_key: str | None = None  # the config list that chooses this axis's values
    identity: bool = True
    compare: bool = True
    inputs: bool = False
    planned: bool = True
    label: Callable[[Any], str] | None = None


MEMORY_MODES = ("pageable", "pinned", "managed", "managed_prefetch", "mapped")
TRANSFERS = ("contiguous", "pack", "copy2d", "strided")

AXES: tuple[Axis, ...] = (
    Axis("variant", str, "the kernel variant (registry entry)"),
    Axis(
        "dtype",
        str,
        "element type (inputs/output/sums: core/elements.py)",
        values=tuple(ELEMENT_TYPES),
        config_key="dtypes",
        inputs=True,
        label=str,
    ),
    Axis("m", int, "rows of A and C", inputs=True),
    Axis("n", int, "columns of B and C", inputs=True),
    Axis("k", int, "columns of A, rows of B", inputs=True),
    Axis(
        "operation", str, "gemm: C (+)= A.B; add: C = A + B", "gemm", ("gemm", "add"), inputs=True
    ),
    Axis(
        "math",
        str,
        "precision class of the arithmetic (registry `math`)",
        "ieee",
        ("ieee", "tf32"),
        compare=False,  # the variant decides it
        inputs=True,
    ),
    Axis(
        "accumulate",
        bool,
        "C += A.B (seed 004) instead of C = A.B",
        values=(False, True),
        config_key="accumulate",
        inputs=True,
        label=lambda x: "C+=AB" if x else "",
    ),
    Axis("memory", str, "host-memory mode", values=MEMORY_MODES, config_key="memory", label=str),
    Axis(
        "pad",
        int,
        "leading-dimension padding (elements)",
        0,
        label=lambda x: f"pad{x}" if x else "",
    ),
    Axis(
        "ld_align",
        int,
        "bytes the leading dimensions are rounded up to beyond the variant's own need: a "
        "library reference given the padded rows of the kernels it is compared with (0: none)",
        0,
        label=lambda x: f"rows{x}B" if x else "",
    ),
    Axis(
        "workers",
        int,
        "the stream-K workers (the grid's blocks, or clusters) the calibrated model chose for "
        "the product (core/timemodel.py: worker_choices), for a variant whose launch reads "
        "`workers` (0: the registry entry's own rule)",
        0,
        label=lambda x: f"workers{x}" if x else "",
    ),
    Axis(
        "transfer",
        str,
        "how padded matrices reach the device",
        "contiguous",
        TRANSFERS,
        config_key="transfer",
        label=lambda x: "" if x == "contiguous" else x,
    ),
    Axis(
        "cache",
        str,
        "warm or cold L2 before each timed kernel",
        "warm",
        ("warm", "cold"),
        config_key="cache",
        label=lambda x: "cold" if x == "cold" else "",
    ),
    Axis(
        "load",
        str,
        "burst or sustained load while timed (core/sampling.py)",
        "burst",
        tuple(LOADS),
        config_key="load",
        label=lambda x: "" if x == "burst" else x,
    ),
    Axis(
        "distribution",
        str,
        "input distribution (core/distributions.py)",
        values=tuple(DISTRIBUTIONS),
        config_key="distribution",
        inputs=True,
        label=str,
    ),
    Axis("seed", int, "seed of the inputs", inputs=True),
    Axis(
        "gpu_name",
        str,
        "the GPU model the row was measured on",
        "",
        compare=False,
        planned=False,
    ),
    Axis(
        "precondition_met",
        bool,
        "the variant's `requires` hold",
        True,
        identity=False,
        compare=False,
    ),
    Axis(
        "expected",
        str,
        "PASS, or FAIL where a precondition is broken",
        "PASS",
        identity=False,
        compare=False,
    ),
    Axis("notes", str, "why a FAIL is expected", "", identity=False, compare=False),
    Axis(
        "tuned_for",
        str,
        "the tuning row, the one tuned nearest to the shape, that chose this instantiation "
        "(`tuned at 128x8192x8192`; plan/tuning.py; empty: the rung has one row per type), "
        "after the GPU model it was tuned on where that is not this run's (config tuned_gpu)",
        "",
        identity=False,
        compare=False,
    ),
)

# the instantiation's slug stands for the compile-time parameters in every key
INSTANCE = "instance"
# names one configuration across runs (compare.py, the samples file)
COMPARE_KEY = ["variant", INSTANCE] + [a.name for a in AXES[1:] if a.compare]
# names one configuration within a run: a row of a table (the GPU model included)
IDENTITY_KEY = ["variant", INSTANCE] + [a.name for a in AXES[1:] if a.identity]
# configurations equal on these share inputs and reference
INPUTS_KEY = [a.name for a in AXES if a.inputs]
# the columns that tell two GPU models apart in every table
GPU_KEY = "gpu_name"


def allowed_values(config_key: str) -> list | None:
    """The values the config may choose for a key that lists an axis's values."""
    for a in AXES:
        if a.config_key == config_key:
            return list(a.values) if a.values is not None else None
    return None


def describe(values: dict) -> str:
    """A one-line description of a configuration from its axes (progress lines)."""
    shape = f"{values['m']}x{values['n']}x{values['k']}"
    parts = [values.get("label") or values["variant"], values["dtype"], shape]
    for a in AXES:
        if a.label is not None and a.name not in ("dtype",) and a.name in values:
            text = a.label(values[a.name])
            if text:
                parts.append(text)
    return " ".join(parts)


# -- the Configuration type --------------------------------------------------------------------


class _Methods:
    """Behaviour of the Configuration type, whose fields come from AXES."""

    def __post_init__(self):
        p = self.params
        object.__setattr__(
            self, "params", tuple(p.items()) if isinstance(p, dict) else tuple(tuple(x) for x in p)
        )

    @property
    def element(self) -> ElementType:
        """The element type, resolved once from the `dtype` name: its input, output and
        accumulator scalars (C++ type, size, NumPy dtype, tensor-map type, unit roundoff) and
        its cuBLAS route."""
        return element_type(self.dtype)

    @property
    def load_kind(self) -> Load:
        """The load, resolved from its name (core/sampling.LOADS): what it times and how."""
        return load_of(self.load)

    @property
    def instance_params(self) -> dict:
        """The full parameter dict of the instantiation, the element type first."""
        return {DTYPE_PARAM: self.dtype} | dict(self.params)

    @property
    def instance(self) -> str:
        """The instantiation's slug (its cubin's name)."""
        return slug(self.instance_params)

    @property
    def label(self) -> str:
        """Readable name of the kernel instantiation, e.g. ``tiled_guarded TILE=32``."""
        return f"{self.variant} {params_label(self.instance_params)}".strip()

    def as_dict(self) -> dict:
        """JSON-able; from_dict() inverts it."""
        return dataclasses.asdict(self) | {"params": dict(self.params)}

    @classmethod
    def of(cls, variant: str, params: dict, **axes):
        """A configuration of one instantiation, from its full parameter dict (the element type
        included) and the other axes."""
        rest = {k: x for k, x in params.items() if k != DTYPE_PARAM}
        return cls(variant=variant, dtype=params[DTYPE_PARAM], params=rest, **axes)

    @classmethod
    def from_dict(cls, d: dict):
        return cls(**{k: d[k] for k in cls.__dataclass_fields__ if k in d})

    def axes(self) -> dict:
        """The configuration as columns of a row: every axis, the label, the instantiation, and
        one column per compile-time parameter."""
        out = self.as_dict()
        del out["params"]
        head = dict(
            variant=self.variant, label=self.label, params=params_label(self.instance_params)
        )
        return head | {INSTANCE: self.instance} | out | dict(self.params)


def _fields():
    planned = [a for a in AXES if a.planned]
    required = [(a.name, a.type) for a in planned if a.default is REQUIRED]
    optional = [
        (a.name, a.type, dataclasses.field(default=a.default))
        for a in planned
        if a.default is not REQUIRED
    ]
    # the compile-time parameters other than the element type, in the registry's order
    params = ("params", tuple, dataclasses.field(default=()))
    return required + [params] + optional


Configuration = dataclasses.make_dataclass(
    "Configuration", _fields(), bases=(_Methods,), frozen=True
)
Configuration.__module__ = __name__
Configuration.__doc__ = (
    "One configuration to measure: a kernel instantiation (variant, element type and the values "
    "of its other compile-time parameters) on one problem, layout and input set; its fields are "
    "the planned axes of AXES."
)


def slug(params: dict) -> str:
    """Stable name of an instantiation: its values in declaration order, the element type bare,
    every other parameter as NAME<value> (e.g. ``float32_TILE32_COARSEN4``)."""
    return "_".join(str(v) if k == DTYPE_PARAM else f"{k}{v}" for k, v in params.items())


def params_label(params: dict) -> str:
    """Readable parameters without the element type, e.g. ``TILE=32 COARSEN=4``."""
    return " ".join(f"{k}={v}" for k, v in params.items() if k != DTYPE_PARAM)

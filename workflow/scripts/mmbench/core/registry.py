"""The kernel registry (kernels/registry.yaml): which variants exist, their compile-time
parameters, and how to launch them.

A variant declares its parameters as data (``params: {dtype: [...], BM: [64, 128], ...}``), the
constraints between them, and its launch grid and block, shared memory, preconditions, reach past
the matrices and argument list as expressions over those names and m, n, k.  Nothing else in the
pipeline knows a parameter's name: an instantiation is a parameter dict, named by a stable slug,
compiled with ``-D<NAME>=<value>`` for each.  Expressions are evaluated by a whitelisting
evaluator (names, integer arithmetic, comparisons, and/or, ``cdiv``, ``min``, ``max``), never by
``eval``.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import os
import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path

import jsonschema
import yaml

from mmbench.core import arith, paths
from mmbench.core.axes import DTYPE_PARAM, params_label, slug
from mmbench.core.bounded import SAFE_LOADER, TooLarge, load_yaml
from mmbench.core.elements import ELEMENT_TYPES, element_type
from mmbench.core.expressions import MAX_EXPRESSION, RegistryError, cdiv, evaluate
from mmbench.core.launch_spec import (
    ARG_KINDS,
    OPERANDS,
    Arg,
    Float,
    Int,
    LaunchSpec,
    Pointer,
    TensorMap,
    Workspace,
    check_box,
)

# The course kernels' argument list (common.cuh's MM_PARAMS), the default of `args`; a bare name
# is a pointer to that operand or a named integer.
ARGUMENTS = ("A", "B", "C", "m", "n", "k", "lda", "ldb", "ldc", "accumulate")
# the names every expression sees besides the parameters (Variant.names and its callers)
RESERVED = ("elem_bytes", "out_bytes", "m", "n", "k", "sms", "blocks_per_sm", "cluster_slots",
            "workers", "lda", "ldb", "ldc", "accumulate")  # fmt: skip
label = params_label  # the readable parameters, e.g. "TILE=32 COARSEN=4"
__all__ = ["DTYPE_PARAM", "MAX_EXPRESSION", "RegistryError", "cdiv", "evaluate", "label", "slug"]


# who wrote a variant's kernels (Variant.family), in the order the ladder shows them: the rungs,
# the peers' reference lines beside cuBLAS, cuBLAS
RUNGS, REFERENCE = "hand-written", "cuBLAS"
FAMILIES = (RUNGS, "CUTLASS", "Triton", REFERENCE)


@dataclass(frozen=True)
class Condition:
    """An expression that must hold, with the reason shown when it does not."""

    expr: str
    reason: str


@dataclass(frozen=True)
class Variant:
    """One kernel variant of the registry."""

    name: str
    backend: str
    seeds: str
    params: tuple[tuple[str, tuple], ...]  # (name, allowed values), declaration order
    source: str | None = None
    symbol: str | None = None
    args: tuple = ARGUMENTS  # names, or (kind, settings) pairs: core/launch_spec.py
    block: tuple[str, ...] = ()
    grid: tuple[str, ...] = ()
    cluster: tuple[str, ...] = ()
    align: str | None = None  # bytes every operand's rows and start must be aligned to
    shared_memory: str | None = None
    dynamic_shared_memory: str | None = None
    constraints: tuple[Condition, ...] = ()
    requires: tuple[Condition, ...] = ()
    unsafe_when_unmet: bool = False
    # a library reference whose requires refuse a product runs it with n and k rounded up to
    # multiples of this (registry `padded_to`; None: it is refused there)
    padded_to: int | None = None
    reach: tuple[str, str] = ("0", "0")
    arch: str | None = None
    min_arch: str | None = None
    profile_kernel: str | None = None
    operation: str = "gemm"
    math: str = "ieee"  # precision class: ieee or tf32 (registry header)
    b_layout: str = "k_by_n"  # B as the kernel takes it: k x n, or n_by_k (its transpose)
    # FP8: the products after which the kernel moves the tensor cores' narrow sums to FP32
    # registers (the verification bound's runs, core/arith.py); None: never, or not said
    sums_promoted_every: int | None = None
    order: int = 0
    # (name, expression) in declaration order: what the kernel and its launch share (boxes,
    # bytes per stage, threads), computed here and passed to nvcc as -D<NAME>=<value>
    derived: tuple[tuple[str, str], ...] = ()
    # (name, expression) in declaration order: what the launch works out for each problem shape
    # (output tiles, k splits) from the parameters, the derived facts, m, n, k and sms; seen by
    # grid and args, recorded in the row (launch_facts), never passed to nvcc
    shape_facts: tuple[tuple[str, str], ...] = ()
    # (symbol, condition): other entry points of the cubin, the first whose condition holds for
    # a launch's shape names its kernel (e.g. a split-K body built as its own kernel)
    symbols: tuple[tuple[str, str], ...] = ()
    # the element types in which the variant is a rung of the ladder (a cuBLAS backend: the
    # ladder's reference); empty: not on the ladder
    ladder: tuple[str, ...] = ()
    # the installed header libraries its source includes (registry `libraries`: cutlass)
    libraries: tuple[str, ...] = ()

    @property
    def compiled(self) -> bool:
        """Built by the pipeline from its source: a cubin (nvcc's, or ptxas's of Triton's PTX),
        or a shared library."""
        return self.backend in ("cubin", "shared", "triton")

    @property
    def shared(self) -> bool:
        """Built as a shared library whose C entry points the harness calls (registry
        `backend: shared`): a library's kernels (CUTLASS) that choose their own launch."""
        return self.backend == "shared"

    @property
    def family(self) -> str:
        """Who wrote its kernels, as the ladder's tables and figures group them (FAMILIES):
        cuBLAS (the reference), CUTLASS (a shared build of its headers) and Triton (a kernel
        Triton's compiler lowers): reference lines beside cuBLAS, not rungs; or hand-written
        (our kernels: the rungs)."""
        if self.backend == "cublas":
            return REFERENCE
        if self.backend == "triton":
            return "Triton"
        if "cutlass" in self.libraries:
            return "CUTLASS"
        return RUNGS

    @property
    def rung(self) -> bool:
        """A kernel of ours (family hand-written): a rung, against which the peers and cuBLAS
        are lines to beat."""
        return self.family == RUNGS

    @property
    def library_launched(self) -> bool:
        """A library launches its kernels (cuBLAS, a shared build): the launch spec has no grid
        of ours, and an empty one is not an empty launch."""
        return self.backend in ("cublas", "shared")

    @property
    def build_ext(self) -> str:
        """The extension of its build: cubin, or so for a shared library."""
        return "so" if self.shared else "cubin"

    @cached_property
    def uses_occupancy(self) -> bool:
        """Its launch reads `blocks_per_sm` (the blocks of its kernel a multiprocessor holds at
        once, which only the compiled kernel can tell: measure/launch.py asks the occupancy
        calculator).  Found once per entry, not on every launch."""
        return self._reads("blocks_per_sm")

    @cached_property
    def uses_cluster_slots(self) -> bool:
        """Its launch reads `cluster_slots` (the clusters of its kernel the GPU holds at once,
        which depends on how the board's multiprocessors fall into GPCs: measure/launch.py asks
        the occupancy calculator).  Found once per entry, not on every launch."""
        return self._reads("cluster_slots")

    @cached_property
    def uses_workers(self) -> bool:
        """Its launch reads `workers` (the stream-K workers the calibrated model chose for a
        product, the configuration's `workers` axis; 0: the registry's own rule), so that the
        model may choose its grid (core/timemodel.py: worker_choices)."""
        return self._reads("workers")

    def _reads(self, name: str) -> bool:
        exprs = [e for _, e in self.shape_facts] + [str(g) for g in self.grid]
        exprs += [str(a) for a in self.args]
        return any(re.search(rf"\b{name}\b", e) for e in exprs)

    @property
    def b_transposed(self) -> bool:
        """The kernel takes B as its transpose, n x k (registry `b_layout: n_by_k`)."""
        return self.b_layout == "n_by_k"

    # the fields that say how the variant is launched and judged (LAUNCH_FIELDS): an edit of
    # any of them re-measures the variant (rule measure_variant's params) and names the rows
    LAUNCH_FIELDS = (
        "backend", "symbol", "args", "block", "grid", "cluster", "align", "shared_memory",
        "dynamic_shared_memory", "requires", "unsafe_when_unmet", "reach", "operation", "math",
        "derived", "shape_facts", "symbols", "b_layout", "sums_promoted_every",
    )  # fmt: skip
    # the launch fields added after the first hashes, with their defaults: one counts only where
    # a variant sets it otherwise, so the other variants' hashes (and rows' keys) stay
    LATER_LAUNCH_FIELDS = {"derived": (), "shape_facts": (), "symbols": (), "b_layout": "k_by_n",
                           "sums_promoted_every": None}  # fmt: skip

    def launch_sha(self) -> str:
        """sha256 (16 hex digits) of the variant's launch spec: grid, block, cluster, shared
        memory, arguments, alignment, preconditions and reach, as the registry declares them."""
        later = self.LATER_LAUNCH_FIELDS
        spec = {
            f: getattr(self, f)
            for f in self.LAUNCH_FIELDS
            if f not in later or getattr(self, f) != later[f]
        }
        blob = json.dumps(spec, sort_keys=True, default=repr)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @property
    def param_names(self) -> list[str]:
        return [name for name, _ in self.params]

    @property
    def dtypes(self) -> tuple[str, ...]:
        return dict(self.params)[DTYPE_PARAM]

    def values(self, name: str) -> tuple:
        return dict(self.params)[name]

    # -- instantiations ------------------------------------------------------------------------
    def names(self, params: dict, **shape: int) -> dict:
        """The names an expression of this variant sees: the parameters (the element type as
        the sizes in bytes of its inputs, elem_bytes, and of its output, out_bytes), the
        derived facts, and the problem shape where given, with the shape facts it implies (on a
        GPU of `sms` multiprocessors; 1 where not given)."""
        out = {k: v for k, v in params.items() if k != DTYPE_PARAM}
        e = element_type(params[DTYPE_PARAM])
        out["elem_bytes"], out["out_bytes"] = e.input.nbytes, e.output.nbytes
        for name, expr in self.derived:
            out[name] = int(evaluate(expr, **out))
        out |= shape
        if self.shape_facts and all(x in shape for x in ("m", "n", "k")):
            out.setdefault("sms", 1)
            out.setdefault("blocks_per_sm", 1)
            # where the GPU was not asked: as many clusters as the multiprocessors make whole
            size = math.prod(int(evaluate(e, **out)) for e in self.cluster)
            out.setdefault("cluster_slots", max(1, out["sms"] * out["blocks_per_sm"] // size))
            out.setdefault("workers", 0)  # no choice of the model's: the entry's own rule
            for name, expr in self.shape_facts:
                out[name] = int(evaluate(expr, **out))
        return out

    def shape_facts_of(self, params: dict, m: int, n: int, k: int, sms: int = 1) -> dict:
        """The shape facts of one launch (registry `shape_facts`), in declaration order."""
        names = self.names(params, m=m, n=n, k=k, sms=sms)
        return {name: names[name] for name, _ in self.shape_facts}

    def facts(self, params: dict) -> dict[str, int]:
        """The derived facts of one instantiation (registry `derived`), in declaration order."""
        names = self.names(params)
        return {name: names[name] for name, _ in self.derived}

    def defines(self, params: dict) -> dict:
        """What nvcc is given for one instantiation (-D each): its parameters, then its
        derived facts."""
        return {**params, **self.facts(params)}

    def rejected(self, params: dict, smem_optin_limit: int | None = None) -> list[str]:
        """Why this parameter dict cannot be built or launched (empty: it can): the declared
        constraints, then the hardware limits every kernel shares."""
        names = self.names(params)
        out = []
        for c in self.constraints:
            try:
                ok = evaluate(c.expr, **names)
            except ZeroDivisionError:  # e.g. a quotient of parameters that is 0 for this set
                out.append(f"{c.expr} divides by zero: {c.reason}")
                return out  # the launch shape may divide by the same zero
            if not ok:
                out.append(f"{c.expr} fails: {c.reason}")
        if self.backend != "cubin":  # the limits of a launch this harness makes itself
            return out
        threads = math.prod(int(evaluate(e, **names, m=1, n=1, k=1)) for e in self.block)
        if threads > arith.MAX_THREADS_PER_BLOCK:
            out.append(
                f"{threads} threads per block, over the limit of {arith.MAX_THREADS_PER_BLOCK}"
            )
        size = math.prod(self.cluster_of(params))
        if size > arith.MAX_PORTABLE_CLUSTER:
            out.append(
                f"a cluster of {size} blocks, over the portable limit of "
                f"{arith.MAX_PORTABLE_CLUSTER}"
            )
        for arg in self.args:
            if isinstance(arg, tuple) and arg[0] == "tensor_map":
                settings = dict(arg[1])
                op = settings["tensor_map"]
                nbytes = names["out_bytes"] if op == "C" else names["elem_bytes"]
                box = check_box(*self._box(settings, names), settings.get("swizzle", 0), nbytes)
                out += [f"tensor map of {op}: {r}" for r in box]
        static = self.static_shared_bytes(params)
        if static > arith.STATIC_SHARED_LIMIT:
            out.append(f"needs {static} B of static shared memory, over the 48 KiB limit")
        total = static + self.dynamic_shared_bytes(params)
        if smem_optin_limit is not None and total > smem_optin_limit:
            out.append(
                f"needs {total} B of shared memory per block, over this GPU's opt-in limit of "
                f"{smem_optin_limit} B"
            )
        return out

    def instantiations(self, choose: dict[str, list] | None = None) -> list[dict]:
        """Every parameter dict of the declared values (or of `choose`'s subsets of them), in
        declaration order, constraints not yet applied."""
        choose = choose or {}
        axes = [choose.get(name, values) for name, values in self.params]
        return [
            dict(zip(self.param_names, combo, strict=True)) for combo in itertools.product(*axes)
        ]

    @cached_property
    def by_slug(self) -> dict[str, dict]:
        return {slug(p): p for p in self.instantiations()}

    def instance(self, name: str) -> dict:
        """The parameter dict of an instantiation slug."""
        try:
            return self.by_slug[name]
        except KeyError:
            raise RegistryError(f"variant {self.name!r} has no instantiation {name!r}") from None

    # -- launching -----------------------------------------------------------------------------
    def launch(self, params: dict, m: int, n: int, k: int, sms: int = 1):
        """(grid, block) as 3-tuples for a problem C[m x n] = A[m x k] . B[k x n] on a GPU of
        `sms` multiprocessors (a persistent kernel's grid is sized by it; 1 where no GPU is at
        hand, in planning and validation)."""
        return self._grid_and_block(self.names(params, m=m, n=n, k=k, sms=sms))

    def _grid_and_block(self, names: dict):
        grid = tuple(int(evaluate(e, **names)) for e in self.grid) + (1,) * (3 - len(self.grid))
        block = tuple(int(evaluate(e, **names)) for e in self.block) + (1,) * (3 - len(self.block))
        return grid, block

    def cluster_of(self, params: dict) -> tuple[int, int, int]:
        names = self.names(params, m=1, n=1, k=1)
        dims = tuple(int(evaluate(e, **names)) for e in self.cluster)
        return dims + (1,) * (3 - len(dims))

    def alignment(self, params: dict) -> int:
        """Bytes each operand's leading dimension and first element must be a multiple of
        (registry `align`; the element's size where none is declared)."""
        if not self.align:
            return 1
        return int(evaluate(self.align, **self.names(params)))

    @staticmethod
    def _box(settings: dict, names: dict) -> tuple[int, int]:
        rows, cols = settings["box"]
        return int(evaluate(str(rows), **names)), int(evaluate(str(cols), **names))

    def launch_spec(
        self,
        params: dict,
        m: int,
        n: int,
        k: int,
        lds: tuple[int, int, int],
        accumulate: bool,
        sms: int = 1,
        scale: float = 1.0,
        blocks_per_sm: int = 1,
        cluster_slots: int | None = None,
        workers: int = 0,
    ) -> LaunchSpec:
        """The whole launch of one configuration, as data: grid, block, cluster, dynamic shared
        memory and every argument by kind (core/launch_spec.py), from the registry entry;
        `scale`: the inputs' per-tensor dequantisation scales multiplied (FP8); `blocks_per_sm`:
        how many blocks of the kernel a multiprocessor holds at once (the occupancy calculator on
        the loaded cubin, measure/launch.py; read only where `uses_occupancy`); `cluster_slots`:
        how many of its clusters the GPU holds at once (the occupancy calculator again, read
        only where `uses_cluster_slots`; None: the multiprocessors divided by the cluster's
        blocks); `workers`: the stream-K workers the calibrated model chose (the configuration's
        `workers`, read only where `uses_workers`; 0: the entry's own rule)."""
        lda, ldb, ldc = lds
        slots = {} if cluster_slots is None else {"cluster_slots": cluster_slots}
        names = self.names(
            params, m=m, n=n, k=k, sms=sms, blocks_per_sm=blocks_per_sm, lda=lda, ldb=ldb,
            ldc=ldc, accumulate=int(accumulate), workers=workers, **slots,
        )  # fmt: skip
        grid, block = self._grid_and_block(names)
        b = (n, k) if self.b_transposed else (k, n)
        shapes = {"A": (m, k, lda), "B": (*b, ldb), "C": (m, n, ldc)}
        e = element_type(params[DTYPE_PARAM])
        args: list[Arg] = []
        for arg in self.args:
            if isinstance(arg, str):
                args.append(Pointer(arg) if arg in OPERANDS else Int(int(names[arg]), arg))
                continue
            kind, settings = arg[0], dict(arg[1])
            if kind == "pointer":
                args.append(Pointer(settings["pointer"]))
            elif kind == "int":
                args.append(Int(int(evaluate(str(settings["int"]), **names)), settings["int"]))
            elif kind == "workspace":
                args.append(Workspace(int(evaluate(str(settings["workspace"]), **names))))
            elif kind == "float":  # a value the launch knows (the schema: `scale` only)
                args.append(Float(float(dict(scale=scale)[settings["float"]]), settings["float"]))
            else:  # tensor_map
                op = settings["tensor_map"]
                rows, cols, ld = shapes[op]
                scalar = e.output if op == "C" else e.input
                box = self._box(settings, names)
                args.append(
                    TensorMap(op, rows, cols, ld, *box, settings.get("swizzle", 0), scalar.name)
                )
        return LaunchSpec(
            grid=grid,
            block=block,
            cluster=self.cluster_of(params),
            dynamic_shared_bytes=self.dynamic_shared_bytes(params),
            args=tuple(args),
            facts=tuple((name, names[name]) for name, _ in self.shape_facts),
            symbol=self.symbol_of(names),
        )

    def symbol_of(self, names: dict) -> str | None:
        """The entry point a launch of these names (a shape's) uses: the first of `symbols`
        whose condition holds, else `symbol`."""
        for symbol, when in self.symbols:
            if evaluate(when, **names):
                return symbol
        return self.symbol

    @property
    def entry_points(self) -> tuple[str, ...]:
        """Every kernel the variant's cubin holds that a launch may use; a shared library's C
        functions: `symbol` and `symbol`_workspace (its workspace in bytes)."""
        if self.shared:
            return (self.symbol, f"{self.symbol}_workspace")
        return tuple(x for x in (self.symbol, *(s for s, _ in self.symbols)) if x)

    def padded(self, m: int, n: int, k: int) -> tuple[int, int, int]:
        """The product this reference runs in place of m x n x k (registry `padded_to`): n and
        k rounded up to multiples of padded_to; the product itself where it has none."""
        if not self.padded_to:
            return m, n, k
        return m, cdiv(n, self.padded_to) * self.padded_to, cdiv(k, self.padded_to) * self.padded_to

    def unmet(self, params: dict, m: int, n: int, k: int) -> list[str]:
        """Reasons (from the registry) why this shape breaks the variant's preconditions."""
        names = self.names(params, m=m, n=n, k=k)
        return [
            f"{r.expr} fails: {r.reason}" for r in self.requires if not evaluate(r.expr, **names)
        ]

    def static_shared_bytes(self, params: dict) -> int:
        if not self.shared_memory:
            return 0
        return int(evaluate(self.shared_memory, **self.names(params)))

    def dynamic_shared_bytes(self, params: dict) -> int:
        if not self.dynamic_shared_memory:
            return 0
        return int(evaluate(self.dynamic_shared_memory, **self.names(params)))

    def reach_of(self, params: dict, m: int, n: int, k: int) -> tuple[int, int]:
        """(rows, columns) past the end of a matrix that this kernel's accesses can reach, as
        declared in the registry (`reach`): the guard zones around every buffer cover it."""
        names = self.names(params, m=m, n=n, k=k)
        return int(evaluate(self.reach[0], **names)), int(evaluate(self.reach[1], **names))


@cache
def load_registry(path: str | Path | None = None) -> dict[str, Variant]:
    """Reads and validates a registry (kernels/registry.yaml by default); variants keep the
    file's order."""
    path = Path(path) if path else paths.registry_path()
    data = strict_yaml(path)
    schema = load_yaml(paths.schema_path("registry"))
    dtype = schema["properties"]["variants"]["additionalProperties"]["properties"]["params"]
    dtype["properties"]["dtype"]["items"] = {"enum": list(ELEMENT_TYPES)}
    entry = schema["properties"]["variants"]["additionalProperties"]["properties"]
    entry["ladder"]["items"] = {"enum": list(ELEMENT_TYPES)}
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=str)
    if errors:
        lines = [f"  {'/'.join(map(str, e.absolute_path)) or '(top)'}: {e.message}" for e in errors]
        raise RegistryError(f"{path} is not a valid registry:\n" + "\n".join(lines))
    variants = {}
    for order, (name, entry) in enumerate(data["variants"].items()):
        for param, values in entry["params"].items():
            bad = [x for x in values if param != DTYPE_PARAM and (not _is_int(x) or x <= 0)]
            if bad:
                raise RegistryError(
                    f"{path}: variant {name!r}: parameter {param} value {bad[0]!r} is not a "
                    "positive integer; valid: integers >= 1"
                )
        backend = entry.get("backend", "cubin")
        if backend in ("cubin", "shared", "triton"):
            src = path.parent / entry["source"]
            if not src.is_file():
                raise RegistryError(f"variant {name!r}: source {src} does not exist")
        params = tuple((k, tuple(v)) for k, v in entry["params"].items())
        for field_name in ("derived", "shape_facts"):
            before = [*entry["params"], *RESERVED]
            if field_name == "shape_facts":
                before += list(entry.get("derived", {}))
            taken = [d for d in entry.get(field_name, {}) if d in before]
            if taken:
                raise RegistryError(
                    f"{path}: variant {name!r}: {field_name} {taken[0]} names a parameter or a "
                    f"name every expression sees; valid: a new name (not {', '.join(before)})"
                )
        off_ladder = [t for t in entry.get("ladder", ()) if t not in entry["params"][DTYPE_PARAM]]
        if off_ladder:
            raise RegistryError(
                f"{path}: variant {name!r}: ladder type {off_ladder[0]} is not one of its dtype "
                f"values; valid: {', '.join(entry['params'][DTYPE_PARAM])}"
            )
        reach = entry.get("reach", {})
        variant = Variant(
            name=name,
            backend=backend,
            seeds=entry.get("seeds", ""),
            params=params,
            source=entry.get("source"),
            symbol=entry.get("symbol"),
            args=tuple(_argument(a) for a in entry.get("args", ARGUMENTS)),
            block=tuple(entry.get("block", ())),
            grid=tuple(entry.get("grid", ())),
            cluster=tuple(str(x) for x in entry.get("cluster", ())),
            align=str(entry["align"]) if "align" in entry else None,
            shared_memory=entry.get("shared_memory"),
            dynamic_shared_memory=entry.get("dynamic_shared_memory"),
            constraints=tuple(Condition(**c) for c in entry.get("constraints", ())),
            requires=tuple(Condition(**r) for r in entry.get("requires", ())),
            unsafe_when_unmet=bool(entry.get("unsafe_when_unmet", False)),
            padded_to=entry.get("padded_to"),
            reach=(str(reach.get("rows", 0)), str(reach.get("cols", 0))),
            arch=entry.get("arch"),
            min_arch=entry.get("min_arch"),
            profile_kernel=entry.get("profile_kernel"),
            operation=entry.get("operation", "gemm"),
            math=entry.get("math", "ieee"),
            b_layout=entry.get("b_layout", "k_by_n"),
            sums_promoted_every=entry.get("sums_promoted_every"),
            order=order,
            derived=tuple((k, str(v)) for k, v in entry.get("derived", {}).items()),
            shape_facts=tuple((k, str(v)) for k, v in entry.get("shape_facts", {}).items()),
            symbols=tuple((x["symbol"], str(x["when"])) for x in entry.get("symbols", ())),
            libraries=tuple(entry.get("libraries", ())),
            ladder=tuple(entry.get("ladder", ())),
        )
        variants[name] = variant
    _check_all_expressions(path, variants)
    return variants


def _argument(entry) -> str | tuple[str, tuple]:
    """A registry `args` item: a bare name, or (kind, its settings as pairs) for the typed
    kinds."""
    if isinstance(entry, str):
        return entry
    kind = next(k for k in ARG_KINDS if k in entry)
    frozen = tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in entry.items())
    return kind, frozen  # hashable, as a Variant is


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class _StrictLoader(SAFE_LOADER):
    """YAML that refuses a key given twice in one mapping (PyYAML keeps the last silently)."""


def _no_duplicates(loader, node, deep=False):
    seen = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise RegistryError(
                f"{node.start_mark.name}, line {key_node.start_mark.line + 1}: {key!r} is given "
                f"twice in one mapping (first on line {seen[key] + 1}); each name once"
            )
        seen[key] = key_node.start_mark.line
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def strict_yaml(path: Path):
    """A YAML file read with duplicate keys refused (RegistryError naming the key and line)."""
    try:
        return load_yaml(path, loader=_StrictLoader)
    except yaml.YAMLError as err:
        raise RegistryError(f"{path} is not valid YAML: {err}") from None
    except TooLarge as err:
        raise RegistryError(str(err)) from None


def _check_expressions(v: Variant) -> None:
    """Evaluates every expression of a variant for every instantiation it can build, so that a
    typo in a name, an unsupported operator or a division by zero is an error when the registry
    is read, not when a job runs; the message names the entry and the instantiation."""
    for params in v.instantiations():
        try:
            if v.rejected(params):
                continue  # its constraints refuse it: never launched
            if v.compiled:
                v.launch(params, 1, 1, 1)
                v.launch_spec(params, 1, 1, 1, (16, 16, 16), False)
                v.alignment(params)
            v.unmet(params, 1, 1, 1)
            v.reach_of(params, 1, 1, 1)
        except (RegistryError, ZeroDivisionError) as err:
            raise RegistryError(
                f"variant {v.name!r}, instantiation {slug(params)}: {err}"
            ) from None


def _checked_marker(registry_text: bytes) -> Path | None:
    """Where a registry whose every expression evaluated is remembered: a file named by the
    sha256 of the registry and of the code that reads and evaluates it, in this user's cache
    (the check takes about 0.5 s of every snakemake command; None where there is no private
    cache folder to keep it in)."""
    h = hashlib.sha256(registry_text)
    here = Path(__file__).parent
    for code in ("registry.py", "expressions.py", "launch_spec.py", "elements.py", "arith.py",
                 "axes.py"):  # fmt: skip
        h.update((here / code).read_bytes())
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mmbench"
    try:
        folder = paths.private_folder(base / "registry-checked", "cache folder", "")
    except OSError:
        return None
    return folder / h.hexdigest()[:32]


def _check_all_expressions(path: Path, variants: dict[str, Variant]) -> None:
    """_check_expressions for every variant, once per registry content (_checked_marker)."""
    marker = _checked_marker(path.read_bytes())
    if marker is not None and marker.exists():
        return
    for variant in variants.values():
        _check_expressions(variant)
    if marker is not None:
        try:
            marker.touch()
        except OSError:
            pass


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


def source_hash(paths_: list[str | Path]) -> str:
    """sha256 over the kernel file and its headers (recorded on every row as provenance)."""
    h = hashlib.sha256()
    for p in sorted(Path(x) for x in paths_):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]

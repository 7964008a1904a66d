"""How a split-K rung's last wave should be split (issue "past cuBLAS in every precision class"):
one instantiation of a variant that splits the tiles past its last whole wave (a TAIL shape
fact in kernels/registry.yaml: persistent_tf32, ws_f64; warptile_db's rows past HEAD_ROWS), at
each shape asked, launched as the registry says with its SPLITS forced to 1, 2, ... ways (and
its TAIL replaced, with --tail), each timed back to back with cuBLAS of its class and checked
against the first split's result.
It prints, per shape, each split's kernel median, its time against the first's and against
cuBLAS's, and what the registry's own rule picks.  On the GPU machine:

    python3 lab/benchmarks/tail_split.py ws_f64 --sizes 4096 8192 [--instance NAME]
                                     [--splits 1 2 4 8 16] [--reps 30] [--tail EXPR]

--tail EXPR tries another TAIL fact (e.g. "(TILES >= WAVE) * (TILES % WAVE)": the tiles past
the last whole wave however many waves there are).  Without --instance, the instantiation the
tuning table (kernels/tuned.csv) gives this GPU at the first size, as the workflow picks it.
Needs a GPU (CuPy), nvcc and cuda-bindings; float32 and float64 rungs (it draws its inputs in
those types).
The splits of one build are timed against each other: whether the build is as fast as the one
before it is the side-by-side check's to say (lab/gpu.sh sizes OUT sources; docs/ladder.md,
"Tried and taken back: warptile_db's last wave split", tells what that costs to forget).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.elements import element_type  # noqa: E402
from mmbench.core.registry import load_registry, slug  # noqa: E402
from mmbench.measure.launch import Modules, Operand, cublas_launcher, launcher  # noqa: E402
from mmbench.plan.compile import compile_cubin  # noqa: E402
from mmbench.plan.tuning import nearest, read_tuned, tuned_params, tuned_ranges  # noqa: E402


def forced(v, splits: int, tail: str | None = None):
    """The variant with its SPLITS fact forced to `splits` where it has tiles past its last
    whole wave (a TAIL fact, or warptile_db's rows past HEAD_ROWS), and its TAIL fact replaced by
    the expression `tail`, where given."""
    facts = dict(v.shape_facts)
    if "TAIL" in facts:
        has_tail = "TAIL > 0"
    elif "HEAD_ROWS" in facts:
        has_tail = "ROWS > HEAD_ROWS"
    else:
        sys.exit(f"{v.name}: no TAIL or HEAD_ROWS shape fact (its launch does not split a last "
                 "wave)")  # fmt: skip
    given = {"SPLITS": f"max(1, ({has_tail}) * {splits})"} | ({"TAIL": tail} if tail else {})
    return dataclasses.replace(
        v, shape_facts=tuple((name, given.get(name, expr)) for name, expr in v.shape_facts)
    )


def timed(cp, launch, reps: int) -> float:
    """The median of `reps` launches, each between two events, after 3 untimed ones (ms)."""
    for _ in range(3):
        launch()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    out = []
    for _ in range(reps):
        start.record()
        launch()
        end.record()
        end.synchronize()
        out.append(cp.cuda.get_elapsed_time(start, end))
    return statistics.median(out)


def tuned_instance(variant: str, dtype: str, gpu: str, m: int, registry: dict) -> dict:
    """The instantiation the tuning table (kernels/tuned.csv) gives GPU model `gpu` at m^3, as
    the workflow picks it (plan/tuning.py: the row tuned nearest to the shape, where a variant
    has several); ConfigError, naming the table's models, where it has none for this GPU."""
    path = str(ROOT / "kernels" / "tuned.csv")
    table = read_tuned(path)
    pinned = tuned_params(table, gpu, [variant], registry, path)[variant]
    rows = tuned_ranges(table, gpu, [variant], registry, path).get(variant)
    if rows:
        return nearest(rows, dtype, m, m, m)["params"]
    return {p: values[0] for p, values in pinned.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("variant")
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    ap.add_argument("--instance")
    ap.add_argument("--splits", type=int, nargs="+", default=[1, 2, 3, 5, 7, 9, 11, 13, 15, 16])
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--tail", help="another TAIL expression to try (e.g. without a wave limit)")
    args = ap.parse_args()

    import cupy as cp

    registry = load_registry()
    v = registry[args.variant]
    dtype = v.dtypes[0]
    e = element_type(dtype)
    if e.input.name not in ("float32", "float64"):
        sys.exit(f"{args.variant}: {e.input.name} inputs; this benchmark draws float32 and float64")
    gpu = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    params = (v.instance(args.instance) if args.instance
              else tuned_instance(args.variant, dtype, gpu, args.sizes[0], registry))  # fmt: skip
    instance = slug(params)
    tmp = tempfile.mkdtemp()
    cubin = str(Path(tmp) / "k.cubin")
    compile_cubin(ROOT / "kernels" / v.source, cubin, v.arch or "sm_90", v.defines(params),
                  Path(tmp) / "nvcc.log", instance)  # fmt: skip
    modules = Modules(cp)
    print(f"{gpu}, {sms} multiprocessors; {args.variant} {instance}")
    rng = cp.random.default_rng(1)
    for n in args.sizes:
        a = rng.standard_normal((n, n), dtype=cp.float32).astype(e.input.np_dtype)
        b = rng.standard_normal((n, n), dtype=cp.float32).astype(e.input.np_dtype)
        c = cp.zeros((n, n), dtype=e.output.np_dtype)
        ops = {x: Operand(arr.data.ptr, n) for x, arr in zip("ABC", (a, b, c), strict=True)}
        stream = cp.cuda.Stream(non_blocking=True)
        conf = SimpleNamespace(m=n, n=n, k=n, accumulate=False, element=e, dtype=dtype,
                               instance_params=params)  # fmt: skip
        pointers = (a.data.ptr, b.data.ptr, c.data.ptr)
        ref_launch = cublas_launcher(cp, conf, pointers, (n, n, n), stream, v.math,
                                     b_transposed=v.b_transposed)  # fmt: skip
        _, rule = launcher(cp, v, conf, modules, cubin, ops, stream)
        print(f"\n{n} x {n} x {n}: the rule: {' '.join(f'{k}={x}' for k, x in rule.facts)}")
        unsplit, first = None, None
        for s in args.splits:
            launch, spec = launcher(cp, forced(v, s, args.tail), conf, modules, cubin, ops, stream)
            with stream:
                ms = timed(cp, launch, args.reps)
                got = c.copy()
                ref_ms = timed(cp, ref_launch, args.reps)
            stream.synchronize()
            first = got if first is None else first
            unsplit = ms if unsplit is None else unsplit
            diff = float(cp.abs(got - first).max() / cp.abs(first).max())
            print(f"  SPLITS={dict(spec.facts)['SPLITS']:>2} grid {spec.grid[0]:>5}: "
                  f"{ms:8.4f} ms, x{ms / unsplit:.4f} of the first, "
                  f"{100 * ref_ms / ms:6.2f}% of cuBLAS ({ref_ms:.4f} ms); "
                  f"max |diff| / max |C| from the first {diff:.1e}")  # fmt: skip
            del launch
    return 0


if __name__ == "__main__":
    sys.exit(main())

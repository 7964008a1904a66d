"""Expands a validated config and the registry into the configurations to measure.

One configuration = one row of results/tables/timings.csv.  Configurations a variant cannot
run are refused here, before any GPU time is spent, each with its reason.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field

from mmbench.core import arith
from mmbench.core.axes import DTYPE_PARAM, Configuration, params_label, slug
from mmbench.core.columns import MODEL_WORDS, TUNED_ON
from mmbench.core.elements import ElementType, element_type
from mmbench.core.nvidia_smi import detect_gpus
from mmbench.core.registry import Variant
from mmbench.core.sampling import SUSTAINED, load_of
from mmbench.core.timemodel import Costs, choose, predict_ms
from mmbench.plan.config import SHORTHANDS, ConfigError, runs_at, shapes_of
from mmbench.plan.tuning import estimated_ms, nearest

label = params_label
__all__ = ["Configuration", "detect_gpus"]

# Largest GPU memory of a current single GPU (B200, 192 GB); used to refuse impossible sizes
# when planning on a machine that sees no GPU (a CI runner, a cluster's login node).
LARGEST_GPU_GIB = 192.0


@dataclass
class Plan:
    runs: dict[str, list[Configuration]] = field(default_factory=dict)
    refused: list[dict] = field(default_factory=list)
    # (variant, parameter dict) of every cubin the runs need
    instantiations: list[tuple[str, dict]] = field(default_factory=list)
    # configurations left out by config calibration_margin: {variant, m, n, k, faster}
    outpaced: list[dict] = field(default_factory=list)


COPY_MODES = ("pageable", "pinned")


def layouts(cfg: dict) -> list[tuple[str, int, str]]:
    """(memory, pad, transfer) combinations: the transfer mode only matters for padded matrices
    in pageable or pinned memory; managed and mapped matrices are used in place (strided)."""
    out = []
    for mem, pad in itertools.product(cfg["memory"], cfg.get("leading_pad", [0])):
        if pad == 0:
            out.append((mem, 0, "contiguous"))
        elif mem in COPY_MODES:
            out += [(mem, pad, t) for t in cfg.get("transfer", ["pack"])]
        else:
            out.append((mem, pad, "strided"))
    return list(dict.fromkeys(out))


def kernel_row_alignment(
    cfg: dict, registry: dict[str, Variant], kept: dict[str, list[dict]]
) -> dict[str, int]:
    """(element type, math) -> the bytes the run's compiled kernels of that type and math round
    their leading dimensions up to (the largest registry `align` among their instantiations),
    for the library references and the peers of that class (config `reference_rows:
    kernels`); {} with `packed`."""
    if cfg.get("reference_rows", "kernels") != "kernels":
        return {}
    out: dict[tuple[str, str], int] = {}
    for name, instances in kept.items():
        v = registry[name]
        if not v.compiled or v.operation != "gemm":
            continue
        for params in instances:
            key = (params[DTYPE_PARAM], v.math)
            out[key] = max(out.get(key, 1), v.alignment(params))
    return out


def reference_ld_align(align: int, dtype: str, m: int, n: int, k: int, pad: int) -> int:
    """The ld_align a library reference gets: `align` where rounding its leading dimensions
    (k + pad for A, n + pad for B and C) up to it changes one of them, else 0 (its rows are the
    kernels' already)."""
    e = element_type(dtype)
    multiple = align // min(e.input.nbytes, e.output.nbytes)
    if multiple <= 1:
        return 0
    return align if any((ld % multiple) for ld in (k + pad, n + pad)) else 0


def chosen_values(v: Variant, section: dict) -> tuple[dict[str, list], list[str]]:
    """The values of each of `v`'s parameters that a config section chooses, and the reasons
    where it chooses none.  Per-variant `params:` first, then the shorthands (dtypes, tiles,
    coarsen), else every declared value."""
    explicit = (section.get("params") or {}).get(v.name, {})
    chosen, problems = {}, []
    shorthand = {param: key for key, param in SHORTHANDS.items()}
    for name, declared in v.params:
        if name in explicit:
            want, source = explicit[name], f"params.{v.name}.{name}"
        elif name in shorthand and shorthand[name] in section:
            want, source = section[shorthand[name]], shorthand[name]
        else:
            chosen[name] = list(declared)
            continue
        chosen[name] = [x for x in want if x in declared]
        if not chosen[name]:
            problems.append(
                f"{name}: supports {', '.join(map(str, declared))}, none of {source} = {list(want)}"
            )
    return chosen, problems


def arch_refusal(v: Variant, arch: str | None) -> str | None:
    """Why `v` cannot run on a GPU of architecture `arch` (None: it can)."""
    if v.min_arch and arch is not None:
        have, need = arith.compute_capability(arch), arith.compute_capability(v.min_arch)
        if have and need and tuple(map(int, have.split("."))) < tuple(map(int, need.split("."))):
            return (
                f"needs {v.min_arch} or newer (instructions older GPUs lack), but this run "
                f"targets {arch}"
            )
    if not v.arch or arch is None:
        return None
    if arith.compute_capability(v.arch) != arith.compute_capability(arch):
        return (
            f"needs {v.arch} (architecture-specific instructions), but this run targets {arch}; "
            f"run it on a GPU of compute capability {arith.compute_capability(v.arch)}"
        )
    return None


def buildable(v: Variant, section: dict, arch: str | None) -> tuple[list[dict], list[dict]]:
    """(parameter dicts to build, refusals with their reason) of a variant under a config
    section: the chosen values, less what the constraints and the hardware rule out."""
    base = dict(variant=v.name)
    why = arch_refusal(v, arch)
    if not why and v.backend == "triton":  # Triton's compiler is optional (the triton extra)
        from mmbench.plan.triton_build import triton_missing

        why = triton_missing()
    if why:
        return [], [dict(base, reason=why)]
    chosen, problems = chosen_values(v, section)
    if problems:
        return [], [dict(base, reason=p) for p in problems]
    limit = arith.shared_optin_limit(arith.compute_capability(arch))
    keep, refused = [], []
    for params in v.instantiations(chosen):
        reasons = v.rejected(params, limit)
        if reasons:
            refused.append(
                dict(
                    base, dtype=params[DTYPE_PARAM], params=label(params), reason="; ".join(reasons)
                )
            )
        else:
            keep.append(params)
    return keep, refused


def all_instantiations(registry: dict[str, Variant], arch: str | None) -> list[tuple[str, dict]]:
    """Every (variant, parameter dict) the registry can build for `arch` (CI compiles them all):
    a Triton kernel's where Triton is installed (its import is optional: buildable)."""
    return [(v.name, p) for v in registry.values() if v.compiled for p in buildable(v, {}, arch)[0]]


def tuned_for(
    cfg: dict, v: Variant, params: dict, m: int, n: int, k: int, memo: dict | None = None
) -> str | None:
    """Where a calibration table holds this variant (cfg `calibrated`, core/timemodel.py): the
    model's words if `params` is the instantiation whose time it predicts least at m x n x k,
    None if it is not.  Else, where the tuning table holds rows tuned at several shapes for it
    (cfg `tuned_ranges`, plan/tuning.py): the chosen row's words if `params` is the
    instantiation tuned nearest to m x n x k, None if it is not; "" for a variant tuned once
    per type.  Where the run borrows another GPU model's tuning (config `tuned_gpu`;
    apply_tuned's `tuned_on`), the words begin with that model: `tuned on NVIDIA H100 80GB
    HBM3; tuned at 4096x4096x4096`.  `memo` keeps the model's choices of one expansion (each
    product's asked of every instantiation)."""
    name = v.name
    borrowed = cfg.get("tuned_on") or {}
    whose = f"{TUNED_ON}{borrowed['gpu']}" if name in borrowed.get("variants", ()) else ""
    model = (cfg.get("calibrated") or {}).get(name)
    if model:  # the calibrated model's choice (core/timemodel.py)
        key = (name, params[DTYPE_PARAM], m, n, k)
        memo = {} if memo is None else memo
        if key not in memo:
            memo[key] = choose(v, model, params[DTYPE_PARAM], m, n, k)
        row = memo[key]
        if row is None or row["params"] != params:
            return None
        # "tuned at MxNxK" where the product is one the model was fitted at (the tuning saw it)
        seen = f"tuned at {m}x{n}x{k}" if [m, n, k] in (f[:3] for f in row["fitted_at"]) else ""
        # the model's GPU where it is another than this run's
        whose = f"{TUNED_ON}{row['on']}" if row.get("on") else ""
        words = (whose, f"{MODEL_WORDS}{row['shapes']} shapes", seen)
        return "; ".join(w for w in words if w)
    ranges = (cfg.get("tuned_ranges") or {}).get(name)
    if not ranges:
        return whose
    row = nearest(ranges, params[DTYPE_PARAM], m, n, k)
    if row is None or row["params"] != params:
        return None
    return "; ".join(w for w in (whose, row["words"]) if w)


def predicted(cfg: dict, v: Variant, dtype: str, m: int, n: int, k: int, memo: dict):
    """The calibrated model's time (ms) for variant `v`'s choice at m x n x k, with the GPU
    model its rows are of ("" for the run's own), or None where the run does not calibrate
    it or the model chooses nothing there."""
    model = (cfg.get("calibrated") or {}).get(v.name)
    if not model:
        return None
    key = ("ms", v.name, dtype, m, n, k)
    if key not in memo:
        if (v.name, dtype, m, n, k) not in memo:  # tuned_for's memo of the choice
            memo[(v.name, dtype, m, n, k)] = choose(v, model, dtype, m, n, k)
        row = memo[(v.name, dtype, m, n, k)]
        if row is None:
            memo[key] = None
        else:
            costs = Costs.of(row["costs"], row["blocks_per_sm"])
            ms = predict_ms(v, row["params"], costs, m, n, k, row["sms"], row["workers"])
            memo[key] = (ms, row.get("on", ""))
    return memo[key]


def chosen_workers(v: Variant, params: dict, m: int, n: int, k: int, memo: dict) -> int:
    """The stream-K workers the calibrated model chose with `params` at m x n x k (tuned_for's
    memo of its choice; core/timemodel.py: worker_choices), the configuration's `workers`; 0
    where it chose the entry's own grid, or made no choice there."""
    row = memo.get((v.name, params[DTYPE_PARAM], m, n, k))
    return int(row["workers"]) if row is not None and row["params"] == params else 0


# a multiprocessor count no GPU reaches: a stream-K entry's rule then gives the grid its product
# alone bounds (its tiles, or its shares of LEAST_DEPTH where more), whatever the GPU
UNBOUNDED_SMS = 1 << 20


def whole_workers(v: Variant, params: dict, m: int, n: int, k: int) -> int:
    """The workers (clusters) of a stream-K entry's launch with every tile whole: as many as its
    output tiles; 0 where the entry's own rule gives as many on any GPU (its shares would be
    shallower than LEAST_DEPTH), so that grid is the rule's."""
    cluster = v.cluster_of(params)[0]  # the stream-K entries' clusters lie along x
    tiles = v.shape_facts_of(params, m, n, k, sms=UNBOUNDED_SMS)["TILES"] // cluster
    grid, _ = v.launch(params, m, n, k, sms=UNBOUNDED_SMS)
    return tiles if 0 < tiles < grid[0] // cluster else 0


def grid_runs(cfg: dict, v: Variant, conf) -> list:
    """The configuration at each grid of config `stream_k_grids` for a stream-K rung (one whose
    launch reads `workers`; any other: `conf` alone): chosen, the plan's (`conf`: the model's
    choice or the entry's rule); whole, every tile whole (whole_workers), where that is
    another grid than chosen."""
    grids = cfg.get("stream_k_grids") or ["chosen"]
    if not v.uses_workers or list(grids) == ["chosen"]:
        return [conf]
    out = [conf] if "chosen" in grids else []
    if "whole" in grids:
        whole = whole_workers(v, conf.instance_params, conf.m, conf.n, conf.k)
        if whole and whole != conf.workers:
            out.append(dataclasses.replace(conf, workers=whole))
        elif "chosen" not in grids:  # whole is the chosen grid here
            out.append(conf)
    return out


def outpaced_by(cfg: dict, registry: dict[str, Variant], v: Variant, dtype: str, m: int,
                n: int, k: int, memo: dict) -> str | None:  # fmt: skip
    """Config calibration_margin: the calibrated rung of `v`'s class (element type and math),
    calibrated on the same GPU model, whose predicted time at m x n x k is least, where `v`'s
    is more than (1 + margin) times it and that least is at least config
    calibration_margin_from_ms (where it is set); None otherwise (`v` runs)."""
    margin = cfg.get("calibration_margin")
    mine = predicted(cfg, v, dtype, m, n, k, memo) if margin is not None else None
    if mine is None:
        return None
    best, best_ms = None, mine[0]
    for name in cfg["variants"]:
        other = registry[name]
        if other.math != v.math or dtype not in other.dtypes:
            continue
        theirs = predicted(cfg, other, dtype, m, n, k, memo)
        if theirs is not None and theirs[1] == mine[1] and theirs[0] < best_ms:
            best, best_ms = name, theirs[0]
    floor = cfg.get("calibration_margin_from_ms")
    return None if best is None or margin_keeps(mine[0], best_ms, margin, floor) else best


def margin_keeps(ms: float, least_ms: float, margin: float, floor_ms: float | None) -> bool:
    """Config calibration_margin and calibration_margin_from_ms: whether a rung the model
    predicts at `ms` runs beside the least prediction of its class, `least_ms`."""
    # below the floor (a product of a few µs) the model's fixed costs decide, and are least sure
    if floor_ms is not None and least_ms < floor_ms:
        return True
    return ms <= (1 + margin) * least_ms


def expand(cfg: dict, registry: dict[str, Variant], arch: str | None = None) -> Plan:
    plan = Plan()
    shapes = shapes_of(cfg)
    choices: dict = {}  # the calibrated model's choice per product (tuned_for)
    insts: dict[tuple, tuple[str, dict]] = {}
    built = {name: buildable(registry[name], cfg, arch) for name in cfg["variants"]}
    rows_of = kernel_row_alignment(cfg, registry, {n: b[0] for n, b in built.items()})
    for name in cfg["variants"]:
        v = registry[name]
        runs: list[Configuration] = []
        padded: set[Configuration] = set()
        instances, refused = built[name]
        plan.refused += [dict(r, seed=cfg["seed"]) for r in refused]
        for params in instances:
            accumulate = cfg["accumulate"] if v.operation == "gemm" else [False]
            for (m, n, k), acc, (mem, pad, transfer), cache, load, dist in itertools.product(
                shapes,
                accumulate,
                layouts(cfg),
                cfg.get("cache", ["warm"]),
                cfg.get("load", ["burst"]),
                cfg["distribution"],
            ):
                if not runs_at(cfg, load_of(load), m, n, k):
                    continue
                if load == SUSTAINED.name and cfg.get("sustained_from_ms") is not None:
                    # sustained where the class's cuBLAS takes long enough to heat the GPU
                    ms = estimated_ms(cfg, params[DTYPE_PARAM], v.math, m, n, k)
                    if ms < cfg["sustained_from_ms"]:
                        continue
                chosen_for = tuned_for(cfg, v, params, m, n, k, choices)
                if chosen_for is None:  # another instantiation is tuned for this shape
                    continue
                faster = outpaced_by(cfg, registry, v, params[DTYPE_PARAM], m, n, k, choices)
                if faster:  # the model predicts another rung of the class well ahead here
                    plan.outpaced.append(dict(variant=name, m=m, n=n, k=k, faster=faster))
                    continue
                unmet = v.unmet(params, m, n, k)
                if unmet and v.padded_to:
                    # a reference that refuses the product runs it padded (registry padded_to)
                    shape = v.padded(m, n, k)
                    if not v.unmet(params, *shape):
                        (m, n, k), unmet = shape, []
                ld_align = 0
                align = rows_of.get((params[DTYPE_PARAM], v.math), 1)
                if not v.rung and align > 1:  # a reference or a peer: the rungs' rows
                    ld_align = reference_ld_align(align, params[DTYPE_PARAM], m, n, k, pad)
                conf = Configuration.of(
                    name,
                    params,
                    m=m,
                    n=n,
                    k=k,
                    accumulate=acc,
                    memory=mem,
                    distribution=dist,
                    seed=cfg["seed"],
                    operation=v.operation,
                    math=v.math,
                    pad=pad,
                    ld_align=ld_align,
                    transfer=transfer,
                    cache=cache,
                    load=load,
                    precondition_met=not unmet,
                    expected="FAIL" if unmet else "PASS",
                    notes="; ".join(unmet),
                    tuned_for=chosen_for,
                    workers=chosen_workers(v, params, m, n, k, choices),
                )
                if unmet and v.unsafe_when_unmet and not cfg["demonstrate_failures"]:
                    plan.refused.append(
                        dict(
                            conf.axes(),
                            reason="; ".join(unmet)
                            + " (set demonstrate_failures: true to run it in guard zones)",
                        )
                    )
                    continue
                if v.padded_to:  # two products padded to the same one: measured once
                    if conf in padded:
                        continue
                    padded.add(conf)
                runs += grid_runs(cfg, v, conf)
                if v.compiled:
                    insts[(name, slug(params))] = (name, params)
        if runs:
            plan.runs[name] = runs
    plan.instantiations = list(insts.values())
    return plan


def empty_variants(cfg: dict, plan: Plan) -> list[str]:
    """One line per variant of the config that has nothing to run, with the reasons its
    configurations were refused (a plan can lose a variant to its constraints, its element
    types, the architecture or its preconditions)."""
    lines = []
    for name in cfg["variants"]:
        if plan.runs.get(name):
            continue
        reasons = list(dict.fromkeys(r["reason"] for r in plan.refused if r["variant"] == name))
        shown = "; ".join(reasons[:3]) + (
            f"; and {len(reasons) - 3} more" if len(reasons) > 3 else ""
        )
        lines.append(f"{name}: nothing to run ({shown or 'no configuration planned'})")
    return lines


def check_something_to_measure(cfg: dict, plan: Plan) -> list[str]:
    """The variants left with nothing to run (to report); raises ConfigError when the whole
    plan measures nothing, so that such a run never exits 0."""
    empty = empty_variants(cfg, plan)
    if not any(plan.runs.values()):
        raise ConfigError(
            "this configuration measures nothing: every configuration of every variant was "
            "refused before running:\n  " + "\n  ".join(empty)
        )
    return empty


def outpaced_notes(cfg: dict, plan: Plan) -> list[str]:
    """What config calibration_margin left out, per variant, in words."""
    if not plan.outpaced:
        return []
    margin = cfg["calibration_margin"]
    per: dict[str, set] = {}
    for r in plan.outpaced:
        per.setdefault(r["variant"], set()).add((r["m"], r["n"], r["k"]))
    left = "; ".join(f"{name} at {len(products)}" for name, products in per.items())
    floor = cfg.get("calibration_margin_from_ms")
    where = f" and the least it predicts is {floor:g} ms or more" if floor is not None else ""
    return [
        f"calibration_margin {margin:g}: {len(plan.outpaced)} configuration(s) left out where "
        f"the calibrated model predicts another rung of their class more than {margin:.0%} "
        f"faster{where} (products per variant: {left}); calibration_margin=null runs them all"
    ]


def check_device_memory(plan: Plan, gib: float, where: str) -> None:
    """Refuses, before any job runs, a configuration whose matrices cannot fit in GPU memory."""
    limit = gib * 2**30
    problems = {}
    for conf in (c for runs in plan.runs.values() for c in runs):
        need = arith.device_bytes_needed(conf.m, conf.n, conf.k, conf.element, conf.pad)
        if need > limit:
            key = "sizes" if conf.m == conf.n == conf.k else "shapes"
            val = conf.m if key == "sizes" else [conf.m, conf.n, conf.k]
            problems[(key, str(val), conf.dtype)] = (
                f"config key '{key}': {val} needs {need / 2**30:.1f} GiB of GPU memory in "
                f"{conf.dtype} (A, B, C and the float64 verification), more than the "
                f"{gib:.1f} GiB {where}; largest square size that fits: "
                f"{largest_square(limit, conf.element)}"
            )
    if problems:
        raise ConfigError("invalid configuration:\n  " + summarised(list(problems.values())))


def summarised(lines: list[str], shown: int = 8) -> str:
    """Problem lines, the first `shown` of a long list and how many more."""
    more = len(lines) - shown
    return "\n  ".join(lines[:shown] + ([f"... and {more} more like these"] if more > 0 else []))


def largest_square(limit_bytes: float, e: ElementType) -> int:
    lo, hi = 1, 1_000_000
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if arith.device_bytes_needed(mid, mid, mid, e) <= limit_bytes:
            lo = mid
        else:
            hi = mid - 1
    return lo


def resolve_arch(cfg: dict, gpus: list[dict]) -> str:
    if cfg["arch"] != "auto":
        return cfg["arch"]
    if not gpus:
        raise ConfigError(
            "config key 'arch': 'auto' reads the architecture off the GPU, but nvidia-smi sees "
            "none here; name it, e.g. --config arch=sm_90 (H100/H200) or arch=sm_80 (A100)"
        )
    caps = {g["compute_cap"] for g in gpus}
    if len(caps) > 1:
        raise ConfigError(
            f"config key 'arch': GPUs of several architectures {sorted(caps)}; name one"
        )
    return "sm_" + caps.pop().replace(".", "")


def resolve_memory(cfg: dict, gpus: list[dict]) -> tuple[float, str]:
    if cfg["gpu_memory_gib"] is not None:
        return float(cfg["gpu_memory_gib"]), "set by gpu_memory_gib"
    if gpus:
        g = min(gpus, key=lambda g: g["memory_gib"])
        return g["memory_gib"], f"of the {g['name']}"
    return LARGEST_GPU_GIB, "of the largest current GPU (no GPU visible here)"


# the profile section's keys that follow the run's own values unless the user names them
FOLLOWS_THE_RUN = ("variants", "dtypes", "tiles", "coarsen")


def profile_section(cfg: dict, named: frozenset | set = frozenset()) -> dict:
    """The profile: section in force.  A key the user's config names (a preset's
    profile.variants, say) is taken as named; one left at its default profiles only what the
    run measures: the default's values that the run's own list holds too.  A variant whose
    values the run chooses (its `params:`) is profiled in them, less those a shorthand the
    profile names leaves out (profile.dtypes [float32] profiles cuBLAS in float32 alone where
    the run measures it in float32 and bfloat16)."""
    p = dict(cfg["profile"])
    for key in FOLLOWS_THE_RUN:
        if key not in named and key in p and key in cfg:
            p[key] = [x for x in p[key] if x in cfg[key]]
    if "params" not in named:
        narrowed = {}
        for variant, values in (cfg.get("params") or {}).items():
            values = dict(values)
            for key, param in SHORTHANDS.items():
                if key in named and param in values:
                    kept = [x for x in values[param] if x in p.get(key, [])]
                    if kept:
                        values[param] = kept
                    else:  # none of the run's values: the profile's own shorthand decides
                        del values[param]
            narrowed[variant] = values
        p["params"] = {**narrowed, **(p.get("params") or {})}
    return p


# the report tables drawn from CUPTI's records (report/catalogue.py's outputs marked cupti; a
# test holds the two together)
CUPTI_TABLES = ("gpu_activities", "kernel_time_sources")


def cupti_wanted(cfg: dict) -> bool:
    """Whether each profiled configuration runs once more under CUPTI: profile.cupti where the
    config says true or false; with auto, where a report table of the run shows its records
    (a process, a CUDA context and the configuration's inputs and passes each: several
    seconds a profiled configuration that no table of the ladder preset reads)."""
    wanted = cfg["profile"].get("cupti", "auto")
    if wanted == "auto":
        return any(t in cfg["report"]["tables"] for t in CUPTI_TABLES)
    return wanted in ("on", True)  # YAML reads a bare on/off in a file as true/false


def profile_plan(
    cfg: dict,
    registry: dict[str, Variant],
    arch: str | None = None,
    named: frozenset | set = frozenset(),
) -> tuple[list[Configuration], list[dict]]:
    """The configurations of the profile: section (one profiled kernel launch each), and those
    refused with their reason; `named`: the profile keys the user's config names (the others
    follow the run: profile_section)."""
    p = profile_section(cfg, named)
    runs, refused = [], []
    choices: dict = {}  # the calibrated model's choice per product (tuned_for)
    if not p["enabled"]:
        return runs, refused
    for name in p["variants"]:
        v = registry[name]
        declared = dict(v.params)
        if any(p.get(key) == [] and param in declared for key, param in SHORTHANDS.items()):
            continue  # the run measures none of the profile's values of this parameter
        instances, why = buildable(v, p, arch)
        refused += why
        products = [(s, s, s) for s in p["sizes"]] + [tuple(s) for s in p.get("shapes", [])]
        for params, (m, n, k) in itertools.product(instances, dict.fromkeys(products)):
            # tuned for another shape
            if tuned_for(cfg, v, params, m, n, k, choices) is None:
                continue
            unmet = v.unmet(params, m, n, k)
            if unmet and v.unsafe_when_unmet:
                refused.append(
                    dict(variant=name, params=label(params), m=m, n=n, k=k, reason="; ".join(unmet))
                )
                continue
            runs.append(
                Configuration.of(
                    name,
                    params,
                    m=m,
                    n=n,
                    k=k,
                    accumulate=False,
                    memory="pinned",
                    distribution="int09",
                    seed=cfg["seed"],
                )
            )
    return runs, refused

"""Configuration: coercion of command-line values, validation against the JSON schema, and the
checks the schema cannot express.  Every error names the key, the value and what is valid."""

from __future__ import annotations

import copy
import difflib
import re
from pathlib import Path

import jsonschema
import yaml

from mmbench.core import paths
from mmbench.core.axes import allowed_values
from mmbench.core.bounded import TooLarge, check_size, load_yaml
from mmbench.core.distributions import DISTRIBUTIONS, distribution
from mmbench.core.elements import element_type
from mmbench.core.registry import DTYPE_PARAM, Variant
from mmbench.core.sampling import LOADS, Load, load_of

# The config's shorthands for parameter values: key -> the parameter it chooses, for every
# variant that declares it (per-variant `params:` choose any parameter).
SHORTHANDS = {"dtypes": DTYPE_PARAM, "tiles": "TILE", "coarsen": "COARSEN"}


# names a config's `variants` (and `profile.variants`) may use for a group of registry variants
GROUPS = {"ladder": "every rung of the ladder and its cuBLAS references (registry `ladder:`)"}


class ConfigError(ValueError):
    """The configuration is invalid; the message lists every problem found."""


def load_schema(
    registry: dict[str, Variant] | None = None, outputs: dict[str, list[str]] | None = None
) -> dict:
    """The config schema, with the names that live elsewhere filled in: the registry's variants
    and the output catalogue's figure and table names (``outputs``: {"figures": [...],
    "tables": [...]}, from mmbench.report.catalogue.names(); the Snakefile passes them, so that
    loading the config does not load the plotting code)."""
    schema = load_yaml(paths.schema_path("config"))
    props = schema["properties"]
    # the vocabularies declared once (core/): element types, input distributions, axes' values,
    # loads
    for key in ("dtypes", "memory", "cache", "load", "distribution"):
        props[key]["items"] = {"enum": allowed_values(key)}
    props["profile"]["properties"]["dtypes"]["items"] = {"enum": allowed_values("dtypes")}
    if registry is not None:
        props["variants"]["items"] = {"enum": list(registry) + list(GROUPS)}
        props["profile"]["properties"]["variants"]["items"] = {
            "enum": list(registry) + list(GROUPS)
        }
        props["params"]["propertyNames"] = {"enum": list(registry)}
    report = props["report"]["properties"]
    for kind, names in (outputs or {}).items():
        report[kind]["items"] = {"enum": list(names)}
    return schema


_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")


def coerce(value, schema: dict):
    """Turns the strings that `snakemake --config` produces (``sizes=[8000,10000]`` arrives as
    ``['8000', '10000']``, ``demonstrate_failures=true`` as ``'true'``) into the types the schema
    asks for.  Values that do not convert are left alone for validation to report."""
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if "enum" in schema and isinstance(value, str):
        for option in schema["enum"]:
            if not isinstance(option, str) and str(option) == value.strip():
                return option
        if any(isinstance(o, int) for o in schema["enum"]) and _INT.match(value.strip()):
            return int(value)
        return value
    if isinstance(value, str):
        s = value.strip()
        if "array" in types or "object" in types:
            try:
                loaded = load_yaml("a --config value", text=s)
            except yaml.YAMLError:
                return value
            if isinstance(loaded, (list, dict)):
                return coerce(loaded, schema)
            if "array" in types and loaded is not None:
                return coerce([loaded], schema)
            return value
        if "integer" in types and _INT.match(s):
            return int(s)
        if "number" in types and _FLOAT.match(s):
            return float(s)
        if "boolean" in types and s.lower() in ("true", "false"):
            return s.lower() == "true"
        if "null" in types and s.lower() in ("null", "none", "~"):
            return None
        return value
    if "array" in types and not isinstance(value, (list, dict)) and value is not None:
        return coerce([value], schema)
    if isinstance(value, list) and "items" in schema:
        return [coerce(v, schema["items"]) for v in value]
    if isinstance(value, dict) and ("properties" in schema or "additionalProperties" in schema):
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties")
        return {
            k: coerce(v, props[k])
            if k in props
            else coerce(v, extra)
            if isinstance(extra, dict)
            else v
            for k, v in value.items()
        }
    return value


def _path(err: jsonschema.ValidationError) -> str:
    out = ""
    for part in err.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _describe_in(err: jsonschema.ValidationError, registry: dict[str, Variant]) -> str:
    """_describe, with what only the registry knows: a variant's parameter names."""
    path = list(err.absolute_path)
    if err.validator == "pattern" and len(path) >= 2 and path[-2] == "params":
        variant = registry.get(str(path[-1]))
        if variant is not None:
            return (
                f"{err.instance!r} is not a parameter of {variant.name}; its parameters: "
                f"{', '.join(dict(variant.params))}"
            )
    return _describe(err)


def _unbalanced(text: str) -> str:
    """Why a mapping given as text is not one, where its brackets do not pair up ('' else)."""
    for opening, closing in ("{}", "[]"):
        a, b = text.count(opening), text.count(closing)
        if a != b:
            return (
                f": its brackets do not pair up ({a} '{opening}' and {b} '{closing}'); close "
                f"every one, e.g. {{name: [values]}}"
            )
    return ""


def _valid_numbers(s: dict, want: list) -> str:
    """'; valid: an integer >= 1' for a number whose schema bounds it ('' otherwise); a type
    that also allows null (gpu_memory_gib: [number, "null"]) adds ', or null'."""
    flat = [t for w in want for t in (w if isinstance(w, list) else [w])]
    numeric = [t for t in flat if t in ("integer", "number")]
    kind = (
        {"integer": "an integer", "number": "a number"}.get(numeric[0])
        if len(numeric) == 1
        else None
    )
    if not kind:
        return ""
    bounds = " and ".join(
        f"{op} {s[k]}"
        for k, op in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="),
                      ("exclusiveMaximum", "<"))
        if k in s
    )  # fmt: skip
    return (
        f"; valid: {kind}"
        + (f" {bounds}" if bounds else "")
        + (", or null" if "null" in flat else "")
    )


# a value written the way people often shorten it, and the valid value it means
ALIASES = {"bf16": "bfloat16", "fp16": "float16", "half": "float16", "fp32": "float32",
           "float": "float32", "fp64": "float64", "double": "float64", "int": "int32"}  # fmt: skip


def _near(value, valid) -> list[str]:
    """Up to three valid values close to a string (a typo, the start or end of a longer name, a
    usual shorthand)."""
    if not isinstance(value, str):
        return []
    names = [str(v) for v in valid]
    near = [ALIASES[value.lower()]] if ALIASES.get(value.lower()) in names else []
    near = near or [n for n in names if n.startswith(value) or n.endswith("_" + value)]
    near = near or difflib.get_close_matches(value, names, n=3, cutoff=0.8)
    return near[:3]


def _did_you_mean(value, valid) -> str:
    """' (did you mean X or Y?)' for a string close to valid ones; '' where none is close."""
    near = _near(value, valid)
    return f" (did you mean {' or '.join(near)}?)" if near else ""


def _describe(err: jsonschema.ValidationError) -> str:
    s = err.schema if isinstance(err.schema, dict) else {}
    if err.validator == "enum":
        return (
            f"{err.instance!r} is not valid{_did_you_mean(err.instance, s['enum'])}; "
            f"valid values: {', '.join(map(str, s['enum']))}"
        )
    if err.validator == "type":
        want = (
            err.validator_value if isinstance(err.validator_value, list) else [err.validator_value]
        )
        if "boolean" in want:
            return f"{err.instance!r} is not valid; valid values: true, false"
        if "object" in want:
            example = "{name: [values]}" if "additionalProperties" in s else "{key: value}"
            hint = (
                _unbalanced(err.instance)
                or "; a mapping needs a space after each colon, e.g. " + example
                if isinstance(err.instance, str) and ":" in err.instance
                else f"; valid: a mapping such as {example}"
            )
            return f"{err.instance!r} is not a mapping{hint}"
        return f"{err.instance!r} is not of type {' or '.join(want)}" + _valid_numbers(s, want)
    if err.validator == "pattern":
        example = s.get("examples", [None])[0] if isinstance(s.get("examples"), list) else None
        valid = s.get("x-valid") or s.get("description") or f"text matching {err.validator_value}"
        return f"{err.instance!r} is not valid; valid: {valid}" + (
            f", e.g. {example}" if example else ""
        )
    if err.validator in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"):
        valid = _valid_numbers(s, [s.get("type")]) or "; valid: a value " + " and ".join(
            f"{op} {s[k]}" for k, op in (("minimum", ">="), ("maximum", "<=")) if k in s
        )
        return f"{err.instance!r} is out of range{valid}"
    if err.validator == "minItems" and not err.instance:
        return "the list is empty; give at least one value"
    if err.validator in ("minItems", "maxItems") and s.get("description"):
        return f"{err.instance!r} has {len(err.instance)} values: {s['description']}"
    if err.validator == "additionalProperties":
        allowed = ", ".join(sorted(s.get("properties", {})))
        slips = [k for k in err.instance if isinstance(k, str) and ":" in k]
        if slips:  # {min_samples:0} is read by YAML as the key "min_samples:0"
            name, _, value = slips[0].partition(":")
            return (
                f"{slips[0]!r} looks like a key and a value: YAML needs a space after the colon, "
                f"as in {{{name}: {value}}}; known keys: {allowed}"
            )
        known = s.get("properties", {})
        unknown = [k for k in err.instance if isinstance(k, str) and k not in known]
        near = "".join(f"; {k!r}: did you mean {' or '.join(close)}?"
                       for k in unknown if (close := _near(k, known)))  # fmt: skip
        return f"{err.message}{near}; known keys: {allowed}"
    return err.message


def validate(
    config: dict, registry: dict[str, Variant], outputs: dict[str, list[str]] | None = None
) -> dict:
    """Coerces, validates and fills in defaults; returns a new config or raises ConfigError.
    ``outputs``: the catalogue's names (load_schema), which ``report.figures`` and
    ``report.tables`` are checked against."""
    schema = load_schema(registry, outputs)
    try:  # before anything walks it: an alias bomb is walked once per place it stands
        check_size(dict(config), "the config")
        cfg = check_size(coerce(copy.deepcopy(dict(config)), schema), "the config")
    except TooLarge as err:
        raise ConfigError(str(err)) from None
    errors = sorted(jsonschema.Draft202012Validator(schema).iter_errors(cfg), key=_path)
    problems = [f"config key '{_path(e)}': {_describe_in(e, registry)}" for e in errors]
    arch = str(cfg.get("arch", "auto"))
    if arch.isdigit():  # arch=90 for sm_90
        problems = [p for p in problems if not p.startswith("config key 'arch'")]
        problems.append(
            f"config key 'arch': {arch} is a compute capability, not an architecture name; "
            f"did you mean arch=sm_{arch}?"
        )
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    _fill_defaults(cfg, schema)
    for section in (cfg, cfg["profile"]):
        expand_groups(section, registry)
    problems = _semantic_problems(cfg, registry)
    if problems:
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(problems))
    return cfg


def ladder_variants(registry: dict[str, Variant]) -> list[str]:
    """The ladder's rungs and references, in the registry's order (registry `ladder:`)."""
    return [name for name, v in registry.items() if v.ladder]


def expand_groups(section: dict, registry: dict[str, Variant]) -> None:
    """`ladder` in a section's `variants` (the config's or profile's) stands for every rung
    of the ladder and its references, each in the element types the registry gives it on the
    ladder (its `params.dtype`, unless the section chooses that variant's types itself)."""
    if "ladder" not in section.get("variants", []):
        return
    rungs = ladder_variants(registry)
    section["variants"] = list(
        dict.fromkeys(x for v in section["variants"] for x in (rungs if v == "ladder" else [v]))
    )
    params = section.setdefault("params", {})
    for name in rungs:
        chosen = params.setdefault(name, {})
        chosen.setdefault(DTYPE_PARAM, list(registry[name].ladder))


def _fill_defaults(cfg: dict, schema: dict) -> None:
    for key, sub in schema.get("properties", {}).items():
        if key not in cfg and "default" in sub:
            cfg[key] = copy.deepcopy(sub["default"])
        if isinstance(cfg.get(key), dict) and "properties" in sub:
            _fill_defaults(cfg[key], sub)


# the most problem shapes one run may plan (each is measured for every variant, tile, type and
# memory mode: more is a typo, and planning it alone would take minutes)
MAX_SHAPES = 5000


def _semantic_problems(cfg: dict, registry: dict[str, Variant]) -> list[str]:
    problems = []
    d = cfg["draw"]
    if not cfg["sizes"] and not cfg["size_ranges"] and not cfg["shapes"] and not d["count"]:
        problems.append(
            "config key 'sizes': the list is empty and neither size_ranges, shapes nor draw "
            "gives a size; give at least one, e.g. sizes=[1024]"
        )
    if d["count"] and d["seed"] is None:
        problems.append(
            f"config key 'draw.seed': null, with draw.count = {d['count']}; valid: an integer "
            "(the draw's seed, chosen when you run: --config 'draw={count: "
            f"{d['count']}, seed: 12345}}')"
        )
    if d["low"] > d["high"]:
        problems.append(
            f"config key 'draw.low': {d['low']} is above draw.high = {d['high']}; valid: "
            "low <= high"
        )
    for i, (start, stop, step) in enumerate(cfg["size_ranges"]):
        if stop < start:
            problems.append(
                f"config key 'size_ranges[{i}]': [{start}, {stop}, {step}] ends before it starts"
            )
    count = (
        len(cfg["sizes"])
        + len(cfg["shapes"])
        + d["count"]
        + sum(
            len(range(start, stop + 1, step))
            for start, stop, step in cfg["size_ranges"]
            if step > 0
        )
    )
    if count > MAX_SHAPES:
        problems.append(
            f"config key 'size_ranges': sizes, size_ranges and shapes give {count} problem "
            f"shapes; valid: at most {MAX_SHAPES} in one run (the course's widest sweep, E3c, "
            "has 97): use a larger step, or split the sweep into several runs"
        )
    s = cfg["sampling"]
    if s["max_samples"] < s["min_samples"]:
        problems.append(
            f"config key 'sampling.max_samples': {s['max_samples']} is below "
            f"sampling.min_samples = {s['min_samples']}"
        )
    if s["stop"] == "noise" and s["max_samples"] < s["noise_min_samples"]:
        problems.append(
            f"config key 'sampling.max_samples': {s['max_samples']} is below "
            f"sampling.noise_min_samples = {s['noise_min_samples']} (stop: noise)"
        )
    integer_types = [t for t in cfg["dtypes"] if element_type(t).input.integer]
    for d in map(distribution, cfg["distribution"]):
        if integer_types and not d.for_integer_types:
            fit = [x for x, y in DISTRIBUTIONS.items() if y.for_integer_types]
            problems.append(
                f"config key 'distribution': {d.name!r} ({d.description}) cannot fill "
                f"{', '.join(integer_types)} matrices; use distribution={' or '.join(fit)} or "
                f"drop {', '.join(integer_types)} from dtypes"
            )
    problems += _load_size_problems(cfg)
    for ld in map(load_of, cfg["load"]):
        if ld.back_to_back and "cold" in cfg["cache"]:
            others = [x for x in LOADS.values() if not x.back_to_back]
            problems.append(
                f"config key 'load': {ld.name} runs each kernel back to back, which a cold cache "
                f"(L2 flushed before every launch) cannot; use load=[{others[0].name}] with "
                f"cache=[cold], or cache=[warm] with load=[{ld.name}]"
            )
    if not cfg["render_only"]:
        from mmbench.plan.compile import arch_problem, supported_archs

        why = arch_problem(cfg["arch"], supported_archs())
        if why:
            problems.append(f"config key 'arch': {why}")
    problems += _param_problems(cfg, registry, "", cfg["variants"])
    if cfg.get("calibration_margin") is not None and not cfg.get("calibration"):
        problems.append(
            f"config key 'calibration_margin': {cfg['calibration_margin']} without a "
            "calibration table to predict with; valid: with calibration=kernels/calibration.csv"
            " (and tuned=...), or calibration_margin=null"
        )
    if cfg.get("calibration_margin_from_ms") is not None and cfg.get("calibration_margin") is None:
        problems.append(
            f"config key 'calibration_margin_from_ms': {cfg['calibration_margin_from_ms']} "
            "without a calibration_margin to apply from there; valid: with calibration_margin="
            "0.25 (say), or calibration_margin_from_ms=null"
        )
    if cfg["profile"]["enabled"] and not (cfg["profile"]["sizes"] or cfg["profile"]["shapes"]):
        problems.append(
            "config key 'profile.sizes': [] with profile.shapes = [] profiles nothing; valid: "
            "a size or a shape to profile (profile.sizes=[2048], profile.shapes=[[16,8192,8192]]),"
            " or profile={enabled: false}"
        )
    if cfg["profile"]["enabled"]:
        problems += _param_problems(
            cfg["profile"], registry, "profile.", cfg["profile"]["variants"]
        )
    return problems


def shapes_of(cfg: dict) -> list[tuple[int, int, int]]:
    """(m, n, k) of every product: the square sizes, the rectangular shapes, then the products
    drawn from the config's seed (plan/shapes.py)."""
    sizes = list(cfg["sizes"])
    for start, stop, step in cfg.get("size_ranges", []):
        sizes += range(start, stop + 1, step)
    out = [(s, s, s) for s in sizes] + [tuple(s) for s in cfg.get("shapes", [])]
    return list(dict.fromkeys(out + drawn(cfg)))


def drawn(cfg: dict) -> list[tuple[int, int, int]]:
    """The products the config's `draw` asks for (none without a count or a seed)."""
    d = cfg.get("draw") or {}
    if not d.get("count") or d.get("seed") is None or d.get("low", 16) > d.get("high", 16384):
        return []
    from mmbench.plan.shapes import FAMILIES, draw

    return draw(d["seed"], d["count"], d.get("low", 16), d.get("high", 16384),
                d.get("families", FAMILIES))  # fmt: skip


def runs_at(cfg: dict, load: Load, m: int, n: int, k: int) -> bool:
    """Whether the product m x n x k is measured under `load` when the config lists it: a load
    with a sizes key (sustained: sustained_sizes) runs at the square sizes it names (empty:
    every product)."""
    chosen = (cfg.get(load.sizes_key) or []) if load.sizes_key else []
    return not chosen or (m == n == k and m in chosen)


def _load_size_problems(cfg: dict) -> list[str]:
    """A load's sizes key must name square sizes of the run, and leave every product a load;
    sustained_from_ms needs both loads, a tuning table, and no sustained_sizes beside it."""
    problems: list[str] = []
    loads = [load_of(x) for x in cfg["load"]]
    from_ms = cfg.get("sustained_from_ms")
    if from_ms is not None:
        if not {"burst", "sustained"} <= set(cfg["load"]):
            problems.append(
                f"config key 'sustained_from_ms': {from_ms} chooses between sustained load and "
                f"bursts, but load = {cfg['load']}; valid: load listing burst and sustained"
            )
        if cfg.get("sustained_sizes"):
            problems.append(
                f"config key 'sustained_from_ms': {from_ms} and sustained_sizes = "
                f"{cfg['sustained_sizes']} both choose the sustained products; valid: one of "
                "them (sustained_sizes=[] or sustained_from_ms=null)"
            )
        if not cfg.get("tuned"):
            problems.append(
                f"config key 'sustained_from_ms': {from_ms} estimates each product's time from "
                "the tuning table's cuBLAS rates, but tuned is empty; valid: with tuned="
                "kernels/tuned.csv (or another tuning table)"
            )
    for ld in loads:
        chosen = cfg.get(ld.sizes_key) if ld.sizes_key else None
        if not chosen:
            continue
        shapes = shapes_of(cfg)
        squares = [m for m, n, k in shapes if m == n == k]
        problems += [
            f"config key '{ld.sizes_key}': {s} is not a square size of this run; valid values: "
            f"{', '.join(map(str, squares))}"
            for s in chosen
            if s not in squares
        ]
        left = [list(p) for p in shapes if not any(runs_at(cfg, x, *p) for x in loads)]
        if left:
            others = [x.name for x in LOADS.values() if x.sizes_key is None]
            problems.append(
                f"config key '{ld.sizes_key}': {chosen} leaves {left} with no load "
                f"(load = {cfg['load']}); add {' or '.join(others)} to load, or those sizes to "
                f"{ld.sizes_key}"
            )
    return problems


def _param_problems(
    section: dict, registry: dict[str, Variant], prefix: str, variants
) -> list[str]:
    """Parameter values the chosen variants do not declare: per-variant `params:` entries, and
    the shorthands (dtypes, tiles, coarsen) that no chosen variant with that parameter builds."""
    problems = []
    for name, chosen in (section.get("params") or {}).items():
        if name not in registry:  # profile.params: the schema does not list the variants
            problems.append(
                f"config key '{prefix}params.{name}': {name!r} is not valid; valid values: "
                f"{', '.join(registry)}"
            )
            continue
        if name not in variants:
            problems.append(
                f"config key '{prefix}params.{name}': {name} is not run "
                f"({prefix}variants = {list(variants)}), so its parameters would choose nothing; "
                f"add {name} to {prefix}variants or drop {prefix}params.{name}"
            )
            continue
        v = registry[name]
        declared = dict(v.params)
        for param, values in chosen.items():
            if param not in declared:
                problems.append(
                    f"config key '{prefix}params.{name}.{param}': {v.name} has no parameter "
                    f"{param}; its parameters: {', '.join(declared)}"
                )
                continue
            for i, x in enumerate(values):
                if x not in declared[param]:
                    problems.append(
                        f"config key '{prefix}params.{name}.{param}[{i}]': {x!r} is not valid; "
                        f"valid values: {', '.join(map(str, declared[param]))}"
                    )
    for key, param in SHORTHANDS.items():
        having = [registry[v] for v in variants if param in dict(registry[v].params)]
        if not having or key not in section:
            continue
        supported = sorted(
            {x for v in having for x in v.values(param)}, key=lambda x: (isinstance(x, str), x)
        )
        for i, x in enumerate(section[key]):
            if x not in supported and param != DTYPE_PARAM:
                problems.append(
                    f"config key '{prefix}{key}[{i}]': {x!r} is not valid for "
                    f"{', '.join(v.name for v in having)}; valid values: "
                    f"{', '.join(map(str, supported))}"
                )
    return problems


def idle_shorthands(given: dict, cfg: dict, registry: dict[str, Variant]) -> list[str]:
    """The shorthands the user's config sets (tiles, coarsen) that choose the parameter of no
    variant of this run: accepted silently they would suggest a grid that is not run; and the
    settings another one makes idle (_idle_layout_settings)."""
    problems = []
    for key, param in SHORTHANDS.items():
        if key not in given or param == DTYPE_PARAM:
            continue
        if not any(param in dict(registry[v].params) for v in cfg["variants"] if v in registry):
            having = sorted(v for v in registry if param in dict(registry[v].params))
            problems.append(
                f"config key '{key}': {cfg[key]} chooses the {param} of no variant of this run "
                f"(variants = {cfg['variants']}, none has {param}); drop {key}, or run a variant "
                f"that has one, e.g. {', '.join(having[:4])}"
            )
    return problems + _idle_layout_settings(given, cfg)


def _idle_layout_settings(given: dict, cfg: dict) -> list[str]:
    """Settings the user's config gives that another setting makes idle: `transfer`, which
    only moves padded matrices (leading_pad > 0) in pageable or pinned memory (managed and
    mapped ones are used in place, strided: plan.layouts), and a load's sizes key
    (sustained_sizes) without its load in `load`.  Accepted, they would change nothing."""
    problems = []
    copied = [m for m in cfg["memory"] if m in ("pageable", "pinned")]
    padded = [p for p in cfg.get("leading_pad", [0]) if p > 0]
    if "transfer" in given and not (copied and padded):
        why = (
            f"leading_pad = {cfg.get('leading_pad', [0])} pads no matrix"
            if not padded
            else f"memory = {cfg['memory']} holds neither pageable nor pinned (managed and "
            "mapped matrices are used in place, strided)"
        )
        problems.append(
            f"config key 'transfer': {cfg['transfer']} changes nothing in this run: it chooses "
            f"how padded pageable or pinned matrices reach the device, and {why}; drop "
            "transfer, or give leading_pad a pad > 0 and memory pageable or pinned"
        )
    used = {load_of(x).sizes_key for x in cfg["load"]}  # the sizes keys of the listed loads
    for key in dict.fromkeys(ld.sizes_key for ld in LOADS.values() if ld.sizes_key):
        users = " or ".join(ld.name for ld in LOADS.values() if ld.sizes_key == key)
        if key in given and cfg.get(key) and key not in used:
            problems.append(
                f"config key '{key}': {cfg[key]} chooses the sizes of the {users} load, which "
                f"this run does not measure (load = {cfg['load']}); add {users} to load, or "
                f"drop {key}"
            )
    return problems


def merge(defaults: dict, given: dict) -> dict:
    """`given` over `defaults`, nested sections merged key by key (as Snakemake merges a
    configfile with --config)."""
    out = copy.deepcopy(defaults)
    for key, value in given.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def check_baseline(baseline: str, results: str | Path) -> None:
    """Before any GPU time: the baseline names a run that exists (a baseline build, a mapping,
    is checked against the registry: plan/pairs.check_build)."""
    if not baseline or isinstance(baseline, dict) or baseline == "itself":
        return
    if baseline == "previous":
        if not any((Path(results) / "archive").glob("*/*/*.csv")):
            raise ConfigError(
                f"config key 'baseline': previous compares each variant with its measurement "
                f"of an earlier kernel source, but {Path(results) / 'archive'} holds none yet "
                f"(a variant is archived each time it is measured: run once, edit a kernel, "
                f"then run with baseline=previous)"
            )
        return
    folder = Path(baseline)
    tables = sorted(folder.glob("runs/*.csv")) or [
        t for t in (folder / "tables" / "timings.csv",) if t.exists()
    ]
    if not tables:
        raise ConfigError(
            f"config key 'baseline': {baseline!r} holds no measured run (no "
            f"{folder}/runs/<variant>.csv, no {folder}/tables/timings.csv); valid: the results "
            f"folder of an earlier run (e.g. a copy of results/), or previous"
        )
    if folder.resolve() == Path(results).resolve():
        raise ConfigError(
            f"config key 'baseline': {baseline!r} is this run's own results folder, so every "
            "configuration would be compared with itself; copy the earlier run elsewhere first "
            "(cp -r results/... /tmp/run1), or use baseline=itself to measure each build "
            "against itself side by side (an A/A test)"
        )
    # its tables, manifests and samples read now, so a damaged baseline is named before any job
    from mmbench.core.columns import TableError
    from mmbench.core.run_files import read_folder
    from mmbench.core.tables import DamagedFile

    try:
        read_folder(folder)
    except (TableError, DamagedFile) as err:
        raise ConfigError(f"config key 'baseline': {err}") from None

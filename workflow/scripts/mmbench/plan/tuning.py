"""The tuning table (kernels/tuned.csv, or results/tune/report/tuned.csv written by the tune
preset): each rung's best instantiation per GPU model, for every shape or (columns mn_min and
mn_max) for the range of products m x n it was tuned for, turned into the config's per-variant
`params` for the GPU this run uses before the plan is expanded, and, where rows hold ranges, into
`tuned_ranges`: the plan gives each shape the instantiation of the range that holds it."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import pandas as pd

from mmbench.core.columns import TUNED_COLUMNS
from mmbench.core.registry import DTYPE_PARAM, Variant
from mmbench.plan.config import ConfigError

# the columns a tuning table needs (the others say what the tuning measured)
REQUIRED = ("gpu_name", "variant", "dtype", "params")


def _parses(text: str) -> bool:
    try:
        parse_params(text)
    except ValueError:
        return False
    return True


def parse_params(text: str) -> dict[str, int]:
    """``BM=128 BN=64`` -> {"BM": 128, "BN": 64} (a row's `params` label)."""
    out = {}
    for part in str(text or "").split():
        name, _, value = part.partition("=")
        out[name] = int(value)
    return out


def read_tuned(path: str | Path) -> pd.DataFrame:
    p = Path(path)
    if not p.is_file():
        raise ConfigError(
            f"config key 'tuned': {str(path)!r} does not exist; valid: a tuning table written "
            "by `snakemake --cores 16 --configfile config/presets/tune.yaml` "
            "(results/tune/report/tuned.csv) or the one kept in kernels/tuned.csv"
        )
    try:
        t = pd.read_csv(p, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConfigError(
            f"config key 'tuned': {str(path)!r} is not a readable CSV table ({reason}); valid: "
            f"a tuning table with the columns {', '.join(TUNED_COLUMNS)}"
        ) from None
    missing = [c for c in REQUIRED if c not in t.columns]
    if missing:
        raise ConfigError(
            f"config key 'tuned': {str(path)!r} has no column {missing[0]!r}; valid: a table "
            f"with at least the columns {', '.join(REQUIRED)} (the tune preset also writes "
            f"{', '.join(c for c in TUNED_COLUMNS if c not in REQUIRED)})"
        )
    return t


RANGE = ("mn_min", "mn_max")


def _bound(value) -> int | None:
    """A range cell: an integer >= 0, or None where empty."""
    if (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or str(value).strip() == ""
    ):
        return None
    number = float(value)
    if number != int(number) or number < 0:
        raise ValueError(value)
    return int(number)


def row_range(row, path: str, line: int) -> tuple[int, int | None]:
    """[mn_min, mn_max) of a tuning row: 0 and None (no bound) where the cells are empty or the
    table has no such columns."""
    try:
        lo, hi = (_bound(row.get(c)) for c in RANGE)
    except ValueError:
        raise ConfigError(
            f"config key 'tuned': {path}, line {line}: mn_min {row.get('mn_min')!r} / mn_max "
            f"{row.get('mn_max')!r} is not a range of products m x n; valid: whole numbers >= "
            "0, either empty (no bound)"
        ) from None
    lo = lo or 0
    if hi is not None and hi <= lo:
        raise ConfigError(
            f"config key 'tuned': {path}, line {line}: the range mn_min {lo} to mn_max {hi} is "
            "empty; valid: mn_min < mn_max (the products m x n the row holds for)"
        )
    return lo, hi


def range_words(lo: int, hi: int | None) -> str:
    """How a row records the tuning range it was given (its `tuned_for`)."""
    if hi is None:
        return "any m*n" if lo == 0 else f"m*n >= {lo}"
    return f"m*n < {hi}" if lo == 0 else f"{lo} <= m*n < {hi}"


def _overlaps(ranges: list[tuple[int, int | None]]) -> bool:
    spans = sorted(ranges, key=lambda r: r[0])
    return any(hi is None or hi > nxt for (_, hi), (nxt, _) in itertools.pairwise(spans))


def tuned_params(
    table: pd.DataFrame, gpu: str, variants: list[str], registry: dict[str, Variant], path: str
) -> dict[str, dict[str, list]]:
    """Per-variant `params` (every parameter pinned to its tuned value) of the compiled
    variants among `variants` that have more than one instantiation, for GPU model `gpu`."""
    rows = table[table.gpu_name == gpu]
    out, untuned, stale = {}, [], []
    for name in variants:
        v = registry[name]
        if not v.compiled or len(v.instantiations()) == 1:
            continue
        mine = rows[rows.variant == name]
        if mine.empty:
            untuned.append(name)
            continue
        spans = {i: row_range(r, path, i + 2) for i, r in mine.iterrows()}
        for dtype, part in mine.groupby("dtype", sort=False):
            if len(part) > 1 and _overlaps([spans[i] for i in part.index]):
                lines = ", ".join(str(i + 2) for i in part.index)
                raise ConfigError(
                    f"config key 'tuned': {path}, lines {lines}: {len(part)} rows claim {name} "
                    f"{dtype} on {gpu!r} for overlapping products m x n; valid: one row per GPU "
                    "model, variant and element type, or rows whose ranges mn_min..mn_max do "
                    "not overlap (remove all but one, or re-tune)"
                )
        declared = [p for p in v.param_names if p != DTYPE_PARAM]
        try:
            parsed = [parse_params(text) for text in mine.params]
            if any(not p for p in parsed):  # an empty cell: no instantiation named
                raise ValueError("empty")
        except ValueError:
            bad = next(i for i, text in zip(mine.index, mine.params, strict=True)
                       if not _parses(text) or not str(text).strip())  # fmt: skip
            raise ConfigError(
                f"config key 'tuned': {path}, line {bad + 2}: {name}'s params "
                f"{mine.params[bad]!r} is not NAME=value NAME=value ...; valid: e.g. "
                f"{' '.join(f'{p}={v.values(p)[0]}' for p in declared)}"
            ) from None
        if any(sorted(p) != sorted(declared) for p in parsed):
            tuned_names = " ".join(sorted(parsed[0]))
            stale.append(f"{name} (tuned: {tuned_names}; registry: {' '.join(declared)})")
            continue
        for line, dtype, values in zip(mine.index, mine.dtype, parsed, strict=True):
            for p, x in [(DTYPE_PARAM, dtype), *values.items()]:
                if x not in v.values(p):
                    raise ConfigError(
                        f"config key 'tuned': {path}, line {line + 2}: {name} {p}={x} is not a "
                        f"value the registry declares; valid values of {p}: "
                        f"{', '.join(map(str, v.values(p)))} (re-tune, or correct the row)"
                    )
        chosen: dict[str, list] = {DTYPE_PARAM: list(dict.fromkeys(mine.dtype))}
        for p in declared:
            chosen[p] = list(dict.fromkeys(values[p] for values in parsed))
        out[name] = chosen
    if stale:
        raise ConfigError(
            f"config key 'tuned': {path} was tuned for other parameters than the registry "
            f"declares now: {'; '.join(stale)}; re-tune with `snakemake --cores 16 "
            "--configfile config/presets/tune.yaml` and set tuned=results/tune/report/tuned.csv"
        )
    if untuned:
        have = ", ".join(sorted(set(table.gpu_name))) or "none"
        raise ConfigError(
            f"config key 'tuned': {path} holds no tuned parameters of {', '.join(untuned)} for "
            f"{gpu!r} (GPU models in it: {have}); tune them on this GPU with `snakemake --cores "
            "16 --configfile config/presets/tune.yaml` and set tuned=results/tune/report/tuned.csv"
        )
    return out


def tuned_ranges(
    table: pd.DataFrame, gpu: str, variants: list[str], registry: dict[str, Variant], path: str
) -> dict[str, list[dict]]:
    """Per variant whose rows for GPU model `gpu` hold ranges of products (checked by
    tuned_params first): each row as {dtype, params (the full parameter dict), lo, hi, words}."""
    rows = table[(table.gpu_name == gpu) & table.variant.isin(variants)]
    out: dict[str, list[dict]] = {}
    for name, mine in rows.groupby("variant", sort=False):
        v = registry[name]
        if not v.compiled or len(v.instantiations()) == 1:
            continue
        spans = [row_range(r, path, i + 2) for i, r in mine.iterrows()]
        if all(s == (0, None) for s in spans):
            continue  # one row per element type for every shape: `params` says it all
        out[name] = [
            dict(dtype=dtype, params={DTYPE_PARAM: dtype} | parse_params(text), lo=lo, hi=hi,
                 words=range_words(lo, hi))
            for dtype, text, (lo, hi) in zip(mine.dtype, mine.params, spans, strict=True)
        ]  # fmt: skip
    return out


def holding(ranges: list[dict], dtype: str, m: int, n: int) -> dict | None:
    """The tuning row of element type `dtype` whose range holds the product m x n."""
    mn = m * n
    for r in ranges:
        if r["dtype"] == dtype and r["lo"] <= mn and (r["hi"] is None or mn < r["hi"]):
            return r
    return None


def apply_tuned(cfg: dict, gpus: list[dict], registry: dict[str, Variant]) -> dict:
    """The config with `params` (and `profile.params`) of the tuned variants pinned to the
    tuning table's values for this run's GPU model (`tuned_gpu`, or the first GPU's name)."""
    path = cfg.get("tuned") or ""
    if not path:
        return cfg
    table = read_tuned(path)  # a missing or unreadable table is the first thing to say
    gpu = cfg.get("tuned_gpu") or "auto"
    if gpu == "auto":
        if not gpus:
            raise ConfigError(
                "config key 'tuned_gpu': auto finds no GPU (nvidia-smi) to pick the tuned "
                "parameters for; valid: a GPU model named in the tuning table, e.g. "
                "tuned_gpu='NVIDIA H100 80GB HBM3'"
            )
        gpu = gpus[0]["name"]
    cfg = dict(cfg)
    pinned = tuned_params(table, gpu, list(cfg["variants"]), registry, path)
    cfg["params"] = {**(cfg.get("params") or {}), **pinned}
    ranges = tuned_ranges(table, gpu, list(cfg["variants"]), registry, path)
    if ranges:  # the plan picks each shape's instantiation (plan.expand)
        cfg["tuned_ranges"] = ranges
    prof = dict(cfg.get("profile") or {})
    if prof.get("enabled"):
        wanted = [v for v in prof.get("variants", []) if v in pinned]
        prof["params"] = {**(prof.get("params") or {}), **{v: pinned[v] for v in wanted}}
        cfg["profile"] = prof
    return cfg

"""The tuning table (kernels/tuned.csv, or results/tune/report/tuned.csv written by the tune
preset): each rung's best instantiation per GPU model at the tuning size, turned into the config's
per-variant `params` for the GPU this run uses, before the plan is expanded."""

from __future__ import annotations

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
        twice = mine[mine.duplicated("dtype", keep=False)]
        if len(twice):
            lines = ", ".join(str(i + 2) for i in twice.index)
            raise ConfigError(
                f"config key 'tuned': {path}, lines {lines}: {len(twice)} rows claim {name} "
                f"{twice.dtype.iloc[0]} on {gpu!r}; valid: one row per GPU model, variant and "
                "element type (remove all but one, or re-tune)"
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
    prof = dict(cfg.get("profile") or {})
    if prof.get("enabled"):
        wanted = [v for v in prof.get("variants", []) if v in pinned]
        prof["params"] = {**(prof.get("params") or {}), **{v: pinned[v] for v in wanted}}
        cfg["profile"] = prof
    return cfg

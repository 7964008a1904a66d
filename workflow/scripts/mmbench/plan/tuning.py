"""The tuning table (kernels/tuned.csv, or results/tune/report/tuned.csv written by the tune
preset): each rung's best instantiation per GPU model, for every shape or, where a rung has
several rows, at the shape each was tuned at (columns m, n, k), turned into the config's
per-variant `params` for the GPU this run uses before the plan is expanded, and, where rows are
tuned at several shapes, into `tuned_ranges`: the plan gives each shape the instantiation tuned
nearest to it (the range each row holds: the shapes nearer to its own than to any other row's).

A calibration table (config `calibration`: kernels/calibration.csv, or the tune preset's
results/tune/report/calibration.csv) overrides the nearest shape for the variants it holds
(the rows of the run's GPU model, else of the tuning's, else of another's: `calibrated`): each
product runs the instantiation whose time the model predicts least (core/timemodel.py)."""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import TYPE_CHECKING

from mmbench.core.axes import slug
from mmbench.core.columns import TUNED_COLUMNS
from mmbench.core.registry import DTYPE_PARAM, Variant
from mmbench.plan.config import ConfigError

if TYPE_CHECKING:  # pandas is imported where a tuning table is read: the plan imports this
    import pandas as pd  # module for every Snakemake invocation, most of which read none

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


def read_table(
    path: str | Path, key: str, absent: str, required, also: str = "", whole=None, noun="table"
) -> pd.DataFrame:
    """The CSV table config `key` names, or a ConfigError: `absent` says what would be valid
    where the file is not there; an unreadable one is told the `whole` list of columns (a
    `noun` with them), one that lacks a `required` column is told those (and `also`)."""
    import pandas as pd

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"config key '{key}': {str(path)!r} does not exist; valid: {absent}")
    try:
        t = pd.read_csv(p, keep_default_na=False)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as err:
        reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise ConfigError(
            f"config key '{key}': {str(path)!r} is not a readable CSV table ({reason}); valid: "
            f"a {noun} with the columns {', '.join(whole or required)}"
        ) from None
    missing = [c for c in required if c not in t.columns]
    if missing:
        raise ConfigError(
            f"config key '{key}': {str(path)!r} has no column {missing[0]!r}; valid: a table "
            f"with at least the columns {', '.join(required)}{also}"
        )
    return t


def read_tuned(path: str | Path) -> pd.DataFrame:
    return read_table(
        path,
        "tuned",
        "a tuning table written by `snakemake --cores 16 --configfile config/presets/tune.yaml` "
        "(results/tune/report/tuned.csv) or the one kept in kernels/tuned.csv",
        REQUIRED,
        f" (the tune preset also writes {', '.join(c for c in TUNED_COLUMNS if c not in REQUIRED)})",
        whole=TUNED_COLUMNS,
        noun="tuning table",
    )


SHAPE = ("m", "n", "k")


def _side(value) -> int | None:
    """A shape cell: a whole number >= 1, or None where empty."""
    if (
        value is None
        or (isinstance(value, float) and math.isnan(value))
        or str(value).strip() == ""
    ):
        return None
    number = float(value)
    if number != int(number) or number < 1:
        raise ValueError(value)
    return int(number)


def row_shape(row, path: str, line: int) -> tuple[int, int, int] | None:
    """The shape (m, n, k) a tuning row was tuned at: n and k default to m (a square, as the
    tables written before rows held n and k); None where m is empty (a row for every shape)."""
    try:
        m, n, k = (_side(row.get(c)) for c in SHAPE)
    except ValueError:
        cells = " ".join(f"{c} {str(row.get(c, ''))!r}" for c in SHAPE)
        raise ConfigError(
            f"config key 'tuned': {path}, line {line}: {cells} is not the shape the row was "
            "tuned at; valid: whole numbers >= 1 (n and k empty: a square of side m; all three "
            "empty: the row holds for every shape)"
        ) from None
    if m is None:
        if n is not None or k is not None:
            raise ConfigError(
                f"config key 'tuned': {path}, line {line}: n {n} / k {k} without m; valid: m "
                "with them (the shape the row was tuned at), or all three empty"
            )
        return None
    return m, n or m, k or m


def shape_words(shape: tuple[int, int, int] | None) -> str:
    """How a row records the tuning row chosen for its shape (its `tuned_for`)."""
    return "any shape" if shape is None else "tuned at {}x{}x{}".format(*shape)


def distance(shape: tuple[int, int, int], m: int, n: int, k: int) -> float:
    """How far the product m x n x k is from a tuning shape: the Euclidean distance of their
    base-2 logarithms (a factor of 2 in one side is 1).  Between two squares S1 < S2 a square
    product is nearer to S1 below the geometric middle sqrt(S1 S2), m x n < S1 x S2."""
    return math.dist([math.log2(x) for x in shape], [math.log2(x) for x in (m, n, k)])


def tuned_params(
    table: pd.DataFrame, gpu: str, variants: list[str], registry: dict[str, Variant], path: str
) -> dict[str, dict[str, list]]:
    """Per-variant `params` (every parameter pinned to its tuned value) of the compiled
    variants among `variants` that have more than one instantiation, for GPU model `gpu`.  A
    peer's builds (CUTLASS's: registry Variant.family) are lines beside cuBLAS, not tuned:
    each runs the builds the config gives it, pinned only where the table has its rows."""
    rows = table[table.gpu_name == gpu]
    out, untuned, stale = {}, [], []
    for name in variants:
        v = registry[name]
        if not v.compiled or len(v.instantiations()) == 1:
            continue
        mine = rows[rows.variant == name]
        if mine.empty:
            if v.rung:
                untuned.append(name)
            continue
        shapes = {i: row_shape(r, path, i + 2) for i, r in mine.iterrows()}
        for dtype, part in mine.groupby("dtype", sort=False):
            tuned_at = [shapes[i] for i in part.index]
            if len(part) > 1 and (None in tuned_at or len(set(tuned_at)) < len(tuned_at)):
                lines = ", ".join(str(i + 2) for i in part.index)
                raise ConfigError(
                    f"config key 'tuned': {path}, lines {lines}: {len(part)} rows claim {name} "
                    f"{dtype} on {gpu!r} for the same shapes (tuned at: "
                    f"{', '.join(shape_words(s) for s in tuned_at)}); valid: one row per GPU "
                    "model, variant and element type, or rows tuned at different shapes (m, n, "
                    "k), each holding for the shapes nearest to its own (remove all but one, "
                    "or re-tune)"
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
            # the row's instance, where it names one, is the instantiation its params choose
            # (the params are what runs: a row naming two would run one and say the other)
            named = mine.instance[line] if "instance" in mine else ""
            chosen_slug = slug({p: dtype if p == DTYPE_PARAM else values[p] for p in v.param_names})
            if isinstance(named, str) and named.strip() and named.strip() != chosen_slug:
                raise ConfigError(
                    f"config key 'tuned': {path}, line {line + 2}: {name}'s params "
                    f"{mine.params[line]!r} (dtype {dtype}) choose {chosen_slug}, but its "
                    f"instance says {named.strip()}; valid: a row whose params and instance "
                    "name the same instantiation (re-tune, or correct one of the two)"
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
        have, other = models_in(table)
        raise ConfigError(
            f"config key 'tuned': {path} holds no tuned parameters of {', '.join(untuned)} for "
            f"{gpu!r} (GPU models in it: {have}); tune them on this GPU with `snakemake --cores "
            "16 --configfile config/presets/tune.yaml` and set tuned=results/tune/report/tuned.csv"
            ", or run another model's tuned parameters (each row's `tuned_for` then names "
            "that model) with --config "
            f'"tuned_gpu={other}"'
        )
    return out


def models_in(table: pd.DataFrame) -> tuple[str, str]:
    """The GPU models a tuning table holds rows of, as an error lists them ("none" where it
    holds none), and the one it names as the `tuned_gpu` to run ("MODEL" where none)."""
    models = sorted(set(table.gpu_name.astype(str)))
    return ", ".join(models) or "none", models[0] if models else "MODEL"


def tuned_ranges(
    table: pd.DataFrame, gpu: str, variants: list[str], registry: dict[str, Variant], path: str
) -> dict[str, list[dict]]:
    """Per variant with several rows of one element type for GPU model `gpu` (checked by
    tuned_params first): each row as {dtype, params (the full parameter dict), shape (tuned at),
    words}; each shape then runs the row tuned nearest to it (nearest())."""
    rows = table[(table.gpu_name == gpu) & table.variant.isin(variants)]
    out: dict[str, list[dict]] = {}
    for name, mine in rows.groupby("variant", sort=False):
        v = registry[name]
        if not v.compiled or len(v.instantiations()) == 1:
            continue
        if mine.dtype.value_counts().max() == 1:
            continue  # one row per element type for every shape: `params` says it all
        shapes = [row_shape(r, path, i + 2) for i, r in mine.iterrows()]
        out[name] = [
            dict(dtype=dtype, params={DTYPE_PARAM: dtype} | parse_params(text), shape=shape,
                 words=shape_words(shape))
            for dtype, text, shape in zip(mine.dtype, mine.params, shapes, strict=True)
        ]  # fmt: skip
    return out


def nearest(rows: list[dict], dtype: str, m: int, n: int, k: int) -> dict | None:
    """The tuning row of element type `dtype` tuned nearest to the product m x n x k
    (distance()); a tie goes to the larger tuning shape, as a square on the geometric middle
    between two tuning sizes goes to the one above.  None where no row has that type."""
    mine = [r for r in rows if r["dtype"] == dtype]
    if len(mine) == 1:
        return mine[0]
    return min(mine, key=lambda r: (round(distance(r["shape"], m, n, k), 9),
                                    -math.prod(r["shape"])), default=None)  # fmt: skip


def locate(path: str, basedir: str | Path | None) -> str:
    """A relative `tuned` path names a file of the run's folder where one is there, else the
    workflow's own (the presets' `kernels/tuned.csv`, beside the Snakefile): a run made with
    `snakemake -s …/Snakefile -d elsewhere` finds the table kept with the kernels."""
    if not path or basedir is None or Path(path).is_absolute() or Path(path).exists():
        return path
    kept = Path(basedir) / path
    return str(kept) if kept.is_file() else path


def apply_tuned(
    cfg: dict, gpus: list[dict], registry: dict[str, Variant], basedir: str | Path | None = None
) -> dict:
    """The config with `params` (and `profile.params`) of the tuned variants pinned to the
    tuning table's values for this run's GPU model (`tuned_gpu`, or the first GPU's name);
    a relative table path is looked for in the run's folder, then in `basedir` (locate)."""
    path = locate(cfg.get("tuned") or "", basedir)
    if not path:
        if cfg.get("calibration"):
            raise ConfigError(
                f"config key 'calibration': {cfg['calibration']!r} without a tuning table; "
                "valid: with tuned=kernels/tuned.csv (or another tuning table), or "
                "calibration=''"
            )
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
    here = {g["name"] for g in gpus}
    calibration = locate(cfg.get("calibration") or "", basedir)
    model: dict[str, list[dict]] = {}
    if calibration:
        # each rung's rows of this machine's GPU model where the table has them, else of the
        # tuning's (`tuned_gpu`), else of another model's (its rows then say whose): a
        # calibration is of one model's times
        table_cal = read_calibration(calibration)
        models = list(dict.fromkeys([*(g["name"] for g in gpus), gpu,
                                     *sorted(set(table_cal.gpu_name.astype(str)))]))  # fmt: skip
        model = calibrated(table_cal, models, list(cfg["variants"]), registry, calibration,
                           here or {gpu})  # fmt: skip
    # a calibrated rung needs no tuned row: the model picks its instantiation per product
    tuned = [v for v in cfg["variants"] if v not in model]
    pinned = tuned_params(table, gpu, tuned, registry, path)
    cfg["params"] = {**(cfg.get("params") or {}), **pinned}
    if pinned and here and gpu not in here:  # another model's tuning: each row says whose
        cfg["tuned_on"] = dict(gpu=gpu, variants=sorted(pinned))
    ranges = tuned_ranges(table, gpu, tuned, registry, path)
    if ranges:  # the plan picks each shape's instantiation (plan.expand)
        cfg["tuned_ranges"] = ranges
    for name, rows in model.items():  # every calibrated instantiation may be chosen
        cfg["params"][name] = {
            p: list(dict.fromkeys(r["params"][p] for r in rows)) for p in registry[name].param_names
        }
    if model:
        cfg["calibrated"] = model
    if cfg.get("sustained_from_ms") is not None:  # the plan estimates each product's time
        if not (table.gpu_name == gpu).any():
            have, other = models_in(table)
            raise ConfigError(
                f"config key 'sustained_from_ms': {cfg['sustained_from_ms']} estimates each "
                f"product's time from the tuning table's cuBLAS rates for the run's GPU model, "
                f"but {path} holds no rows of {gpu!r} (GPU models in it: {have}); "
                f'valid: another model\'s rates, named, with --config "tuned_gpu={other}", '
                "this model's rows (the tune preset: snakemake --cores 16 --configfile "
                "config/presets/tune.yaml, then tuned=results/tune/report/tuned.csv), or "
                "sustained_from_ms=null"
            )
        cfg["reference_rates"] = reference_rates(table, gpu)
    prof = dict(cfg.get("profile") or {})
    if prof.get("enabled"):
        # the tuned instantiations, or every calibrated one (the model picks per size)
        wanted = [v for v in prof.get("variants", []) if v in pinned or v in model]
        prof["params"] = {**(prof.get("params") or {}), **{v: cfg["params"][v] for v in wanted}}
        cfg["profile"] = prof
    return cfg


def read_calibration(path: str | Path) -> pd.DataFrame:
    """A calibration table (core/timemodel.py's CALIBRATION_COLUMNS) with every row's
    `fitted_at` spelled out (expand_fitted), or a ConfigError saying what is missing."""
    from mmbench.core.timemodel import CALIBRATION_COLUMNS, expand_fitted

    table = read_table(
        path,
        "calibration",
        "the table the tune preset writes (results/tune/report/calibration.csv), the one kept "
        "in kernels/calibration.csv, or empty (each product runs the instantiation tuned nearest "
        "to it)",
        CALIBRATION_COLUMNS,
        " (the tune preset writes one: results/tune/report/calibration.csv)",
    )
    try:  # each row's products spelled out where the table writes them once (compact_fitted)
        return expand_fitted(table)
    except ValueError as err:
        raise ConfigError(f"config key 'calibration': {path}: {err}") from None


def calibrated(
    table: pd.DataFrame,
    models: list[str],
    variants: list[str],
    registry: dict[str, Variant],
    path: str,
    quiet: set[str] = frozenset(),
) -> dict[str, list[dict]]:
    """Per listed variant the calibration table holds rows of, those of the first GPU model of
    `models` that it holds rows of the variant for: each as {dtype, params (the full parameter
    dict), costs (core/timemodel.py's cost columns), blocks_per_sm, sms, shapes, fitted_at
    ([m, n, k] each, [m, n, k, workers] where a launch ran a grid the plan chose), on (its GPU
    model, to be named beside the choice; "" for one of `quiet`: the run's GPU models, or
    without one the tuning's)}, but those the registry's constraints now reject; a row naming
    an instantiation the registry does not declare is a ConfigError."""
    from mmbench.core.timemodel import COST_COLUMNS

    table = table[table.variant.isin(variants)]
    whose = {}  # variant -> the GPU model whose rows it takes
    for name, rows in table.groupby("variant"):
        held = set(rows.gpu_name)
        whose[name] = next((g for g in models if g in held), None)
    mine = table[[whose.get(v) == g for v, g in zip(table.variant, table.gpu_name, strict=True)]]
    out: dict[str, list[dict]] = {}
    for i, r in mine.iterrows():
        v = registry[r.variant]
        try:
            params = v.instance(str(r.instance))
        except Exception:
            raise ConfigError(
                f"config key 'calibration': {path}, line {i + 2}: {r.variant} has no "
                f"instantiation {r.instance!r} in the registry; valid: one of "
                f"{', '.join(list(v.by_slug)[:3])}, ... (re-run the tune preset)"
            ) from None
        if v.rejected(params):  # the registry no longer builds it (a constraint added since)
            continue
        out.setdefault(r.variant, []).append(dict(
            dtype=params[DTYPE_PARAM], params=params,
            costs={c: float(r[c]) for c in COST_COLUMNS}, blocks_per_sm=int(r.blocks_per_sm),
            sms=int(r.sms), shapes=int(r.shapes),
            # [m, n, k], or [m, n, k, workers] for a launch at a stream-K grid the plan chose
            fitted_at=[[int(x) for x in re.split("[x@]", s)] for s in str(r.fitted_at).split()],
            on="" if r.gpu_name in quiet else str(r.gpu_name),
        ))  # fmt: skip
    return out


def reference_rates(table, gpu: str) -> dict[str, list[list[float]]]:
    """The cuBLAS rates the tuning table implies for one GPU model, per element type and math
    ("float32/tf32"): [m, n, k, GFLOP/s] at each shape a row was tuned at, the reference's rate
    being the row's over its share of it (kernel_gflops / percent_of_reference * 100; the
    fastest where several rows give one).  A row without a share (a tune run without its
    reference writes none) gives no rate."""
    import pandas as pd

    mine = table[table.gpu_name == gpu]
    shares = pd.to_numeric(mine.percent_of_reference, errors="coerce") / 100
    out: dict[str, dict[tuple, float]] = {}
    for r, share in zip(mine.itertuples(index=False), shares, strict=True):
        if not share > 0:
            continue
        key, shape = f"{r.dtype}/{r.math}", (int(r.m), int(r.n), int(r.k))
        rates = out.setdefault(key, {})
        rates[shape] = max(float(r.kernel_gflops) / share, rates.get(shape, 0.0))
    return {key: [[*s, g] for s, g in sorted(rows.items())] for key, rows in out.items()}


def estimated_ms(cfg: dict, dtype: str, math_mode: str, m: int, n: int, k: int) -> float:
    """The time the cuBLAS of a class (element type and math) is estimated to take at m x n x k:
    2mnk over its rate at the tuning row nearest the product (config `reference_rates`,
    apply_tuned).  ConfigError where the tuning table gives no rate for the class."""
    rows = (cfg.get("reference_rates") or {}).get(f"{dtype}/{math_mode}")
    if not rows:
        have = ", ".join(sorted(cfg.get("reference_rates") or {})) or "none"
        raise ConfigError(
            f"config key 'sustained_from_ms': the tuning table holds no rate of {dtype} "
            f"({math_mode}) for this GPU model to estimate a product's time from (classes with "
            f"rates: {have}); valid: sustained_from_ms=null, or a tuning table with rows of "
            "every class the run measures"
        )
    *_, gflops = min(rows, key=lambda r: distance(tuple(r[:3]), m, n, k))
    return 2.0 * m * n * k / (gflops * 1e9) * 1e3

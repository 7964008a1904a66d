"""Every tidy table's schema, declared once, and the one way to read a table: checked where it
is read.

A results folder travels (copied back from a cluster, interrupted, edited by hand), so no stage
trusts a table it did not just write.  `read_table(path, kind)` reads a CSV and checks it
against its kind's schema (pandera: columns, types, allowed values, the key that names one
configuration, and the invariants between columns, such as a rate being the FLOP count over its
time); a violation raises TableError, whose message names the file, the CSV lines and what is
wrong, and says how to heal it.  `check_against_manifests` ties a timings table to the run
manifests beside it (rows expected per variant), so a table cut short or grown by duplicated
rows is found even where each row on its own is valid.

The schemas come from the declarations they describe: the axes and their allowed values
(core/axes.py), the row's measured columns (core/row.py) and the FLOP count (core/arith.py).
"""

from __future__ import annotations

import gzip
import io
import json
import lzma
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa

from . import arith
from .axes import AXES, IDENTITY_KEY, REQUIRED
from .columns import TableError
from .row import AXIS_DEFAULTS, Row, upgrade_id, upgraded

VERIFICATIONS = ("PASS", "FAIL", "ERROR")
# a rate agrees with its time to this relative error (both written from one float64 division)
RATE_RTOL = 1e-6


@dataclass(frozen=True)
class TableSchema:
    """One tidy table: its declared columns (a pandera schema), the columns every copy of it
    must have, the key that names one row, the invariants between columns, and how a table of
    an older version of the pipeline is brought to today's form before it is checked."""

    name: str
    doc: str
    columns: dict[str, pa.Column]
    key: tuple[str, ...] = ()
    invariants: tuple[pa.Check, ...] = ()
    upgrade: Callable[[pd.DataFrame], pd.DataFrame] = field(default=lambda df: df)
    # rules checked in one vectorised pass each before pandera's (a table is read often):
    # each returns its problems, one line each, naming the column, the CSV lines, examples
    prechecks: tuple[Callable[[pd.DataFrame], list[str]], ...] = ()

    def column_schema(self) -> pa.DataFrameSchema:
        return _PANDERA.setdefault(
            (self.name, "columns"), pa.DataFrameSchema(self.columns, strict=False)
        )

    def frame_schema(self) -> pa.DataFrameSchema:
        return _PANDERA.setdefault(
            (self.name, "frame"),
            pa.DataFrameSchema(
                checks=list(self.invariants), unique=list(self.key) or None, strict=False
            ),
        )


_PANDERA: dict[tuple[str, str], pa.DataFrameSchema] = {}  # each schema's, built once


# -- column helpers -----------------------------------------------------------------------------


def _number(*checks, required=False, nullable=True) -> pa.Column:
    """A numeric column (coerced: a value that is no number is reported with its line)."""
    return pa.Column(float, list(checks), nullable=nullable, required=required, coerce=True)


def _integer(*checks, required=True) -> pa.Column:
    return pa.Column(np.int64, list(checks), nullable=False, required=required, coerce=True)


def _text(values=None, required=False, nullable=True) -> pa.Column:
    checks = [pa.Check.isin([str(v) for v in values])] if values is not None else []
    return pa.Column(None, checks, nullable=nullable, required=required)


def _flag(required=False) -> pa.Column:
    return pa.Column(None, [pa.Check.isin([True, False, "True", "False"])], required=required)


def _positive():
    return pa.Check.gt(0, error="must be > 0")


# -- timings ------------------------------------------------------------------------------------


def _axis_column(a) -> pa.Column:
    required = a.default is REQUIRED
    if a.type is int:
        return _integer(*([_positive()] if a.name in ("m", "n", "k") else []), required=required)
    if a.type is bool:
        return _flag(required=required)
    if a.values is not None:
        return _text(a.values, required=required, nullable=False)
    return _text(required=required, nullable=a.name == "gpu_name" or not required)


def _row_columns() -> dict[str, pa.Column]:
    out: dict[str, pa.Column] = {}
    for f in fields(Row):
        if f.name == "axes":
            continue
        if f.type in ("float", "int", float, int):
            out[f.name] = _number()
        else:
            out[f.name] = _text()
    out["verification"] = _text(VERIFICATIONS, required=True, nullable=False)
    out["kernel_ms"] = _number(required=True)
    out["kernel_gflops"] = _number(required=True)
    return out


def _measure_rule(name: str) -> tuple[str, float] | None:
    """A measured column's rule: a time (*_ms, *_ms_<statistic>) finite and > 0, a spread of
    times (*_ms_iqr) and a rate (*_gflops) finite and >= 0; None for other columns."""
    if "_ms" in name and name.endswith("_iqr"):
        return "a spread must be finite and >= 0", 0.0
    if name.endswith("_ms") or "_ms_" in name:
        return "a time must be finite and > 0", math.inf
    if name.endswith("_gflops"):
        return "a rate must be finite and >= 0", 0.0
    return None


def _numbers(df: pd.DataFrame, name: str) -> pd.Series:
    return pd.to_numeric(df[name], errors="coerce")


def _measures_in_range(df: pd.DataFrame) -> list[str]:
    """Every time, spread and rate column of a timings table within its rule (_measure_rule):
    an infinite time with its rate of exactly 0 agrees with the rate check, so it is refused
    here."""
    out = []
    for name in df.columns:
        rule = _measure_rule(str(name))
        if rule is None:
            continue
        words, floor = rule
        x = _numbers(df, name).to_numpy(dtype=float)
        finite = np.isfinite(x)
        ok = np.isnan(x) | (finite & ((x > 0) if floor == math.inf else (x >= 0)))
        if not ok.all():
            bad = np.flatnonzero(~ok)
            cases = ", ".join(str(v) for v in pd.unique(x[bad])[:3])
            out.append(f"column {name!r}: {words} fails at {_lines(df.index[bad])} (e.g. {cases})")
    return out


def _min_median_max(df: pd.DataFrame) -> list[str]:
    """min <= median <= max where a row gives all three (kernel and global times)."""
    out = []
    for what in ("kernel_ms", "global_ms"):
        names = [f"{what}_min", f"{what}_median", f"{what}_max"]
        if not set(names) <= set(df.columns):
            continue
        lo, md, hi = (_numbers(df, n).to_numpy(dtype=float) for n in names)
        with np.errstate(invalid="ignore"):
            bad = ~(np.isnan(lo) | np.isnan(md) | np.isnan(hi) | ((lo <= md) & (md <= hi)))
        if bad.any():
            out.append(f"{' <= '.join(names)} does not hold: {_lines(df.index[bad])}")
    return out


def _names_agree(df: pd.DataFrame) -> list[str]:
    """The row's names of its instantiation follow from one another, as core/axes.py derives
    them: `params` is NAME=value ..., `label` the variant and `params`, `instance` the element
    type and the same values (slug), and each parameter's own column holds its value."""
    if not {"params", "instance", "dtype", "variant"} <= set(df.columns) or df.empty:
        return []
    from .row import parameter_columns

    params = df["params"].astype(object).where(df["params"].notna(), "").astype(str)
    dtype, variant = df["dtype"].astype(str), df["variant"].astype(str)
    slugged = params.str.replace("=", "", regex=False).str.replace(" ", "_", regex=False)
    instance = dtype + np.where(params == "", "", "_" + slugged)
    ok = (df["instance"].astype(str) == instance) & params.map(_well_formed)
    if "label" in df:
        label = (variant + " " + params).str.strip()
        ok &= df["label"].isna() | (df["label"].astype(str) == label)
    spaced = " " + params + " "
    for name in parameter_columns(df):
        value = _numbers(df, name)
        given = value.notna()
        if not given.any():
            continue
        text = [f" {name}={int(v) if float(v).is_integer() else v} " for v in value.fillna(0)]
        holds = [t in s for t, s in zip(text, spaced, strict=True)]
        ok &= ~given | pd.Series(holds, index=df.index)
    if ok.all():
        return []
    return [
        "label, params, instance and the parameter columns do not name one instantiation (each "
        f"follows from the instance: core/axes.py): {_lines(df.index[~ok])}"
    ]


def _well_formed(params: str) -> bool:
    """`params` as core/axes.params_label writes it: NAME=value words (or nothing)."""
    return all(w.count("=") >= 1 and w.split("=", 1)[0] for w in params.split())


def _flop_counts(df: pd.DataFrame) -> np.ndarray:
    op = df["operation"] if "operation" in df else pd.Series("gemm", index=df.index)
    acc = df["accumulate"].astype(str) == "True"
    return np.array(
        [
            float(arith.flops(int(m), int(n), int(k), bool(a), str(o)))
            for m, n, k, a, o in zip(df.m, df.n, df.k, acc, op, strict=True)
        ]
    )


def _rate_agrees(rate: str, time: str) -> Callable[[pd.DataFrame], pd.Series]:
    """rate == FLOP count / time (GFLOP/s from ms), where either is given."""

    def check(df: pd.DataFrame) -> pd.Series:
        if rate not in df or time not in df:
            return pd.Series(True, index=df.index)
        r = pd.to_numeric(df[rate], errors="coerce")
        t = pd.to_numeric(df[time], errors="coerce")
        expected = _flop_counts(df) / (t * 1e6)
        both = r.notna() & t.notna()
        agrees = (r - expected).abs() <= RATE_RTOL * expected.abs()
        # a rate without its time (or a time without its rate) is a torn or edited row
        return (both & agrees) | (r.isna() & t.isna())

    return check


def _measured_has_time(df: pd.DataFrame) -> pd.Series:
    """A PASS or FAIL row was timed: it has a kernel time (an ERROR row may not)."""
    timed = pd.to_numeric(df["kernel_ms"], errors="coerce").notna()
    return (df["verification"] == "ERROR") | timed


def _with_axis_defaults(df: pd.DataFrame) -> pd.DataFrame:
    """An older table in today's form (row.upgraded), every axis it lacks read as its default
    (a run recorded before `load` existed was a burst, before `math` ieee)."""
    df = upgraded(df)
    missing = {name: default for name, default in AXIS_DEFAULTS.items() if name not in df}
    return df.assign(**missing) if missing else df


def _with_todays_ids(df: pd.DataFrame) -> pd.DataFrame:
    """A table keyed by configuration id, its ids in today's form (row.upgrade_id: a table
    written before an axis joined the id reads with that axis's default), as samples files
    are read (core/tables.py)."""
    if "config_id" not in df or df.empty:
        return df
    return df.assign(config_id=[upgrade_id(str(c)) for c in df.config_id])


TIMINGS = TableSchema(
    "timings",
    "one row per configuration (core/row.py): its axes, verification, timings and provenance",
    {**{a.name: _axis_column(a) for a in AXES}, "instance": _text(required=True, nullable=False)}
    | _row_columns(),
    key=tuple(IDENTITY_KEY),
    invariants=(
        pa.Check(
            _rate_agrees("kernel_gflops", "kernel_ms"),
            error="kernel_gflops is not the FLOP count over kernel_ms (or one is missing)",
        ),
        pa.Check(
            _rate_agrees("global_gflops", "global_ms_median"),
            error="global_gflops is not the FLOP count over global_ms_median (or one is missing)",
        ),
        pa.Check(_measured_has_time, error="a PASS or FAIL row has no kernel_ms"),
    ),
    upgrade=_with_axis_defaults,
    prechecks=(_measures_in_range, _min_median_max, _names_agree),
)

REFUSED = TableSchema(
    "refused",
    "configurations refused before running, with the reason",
    {"variant": _text(required=True, nullable=False), "reason": _text(required=True)},
)

RESOURCES = TableSchema(
    "resources",
    "ptxas -v per cubin",
    {
        "variant": _text(required=True, nullable=False),
        "instance": _text(required=True, nullable=False),
        "function": _text(required=True),
        "registers": _number(pa.Check.ge(0), required=True),
        "shared_bytes": _number(pa.Check.ge(0), required=True),
        "spill_store_bytes": _number(pa.Check.ge(0)),
        "spill_load_bytes": _number(pa.Check.ge(0)),
    },
    key=("variant", "instance", "function"),
)

# the columns that name a profiled configuration
PROFILED = {
    "variant": _text(required=True, nullable=False),
    "instance": _text(required=True, nullable=False),
    "m": _integer(_positive()),
    "n": _integer(_positive()),
    "k": _integer(_positive()),
}

METRICS = TableSchema(
    "metrics",
    "profiler metrics under nvprof names, one row per configuration and metric",
    {
        **PROFILED,
        "metric": _text(required=True, nullable=False),
        "value": _number(),
        "status": _text(),
    },
)

CEILINGS = TableSchema(
    "ceilings",
    "the device's measured ceilings",
    {
        "gpu_name": _text(required=True, nullable=False),
        "peak_fp32_gflops": _number(_positive(), required=True),
        "dram_bandwidth_gbs": _number(_positive(), required=True),
    },
    key=("gpu_name",),
)

ROOFLINE = TableSchema(
    "roofline",
    "the roofline placement of each profiled configuration",
    {
        **PROFILED,
        "flops": _number(_positive(), required=True),
        "duration_ms": _number(_positive(), required=True),
        "achieved_gflops": _number(pa.Check.ge(0), required=True),
    },
    key=("variant", "instance", "m", "n", "k"),
    invariants=(
        pa.Check(
            lambda d: (
                (pd.to_numeric(d.achieved_gflops) - d.flops / (d.duration_ms * 1e6)).abs()
                <= RATE_RTOL * d.flops / (d.duration_ms * 1e6)
            ),
            error="achieved_gflops is not flops over duration_ms",
        ),
    ),
)

NVPROF_METRICS = TableSchema(
    "nvprof_metrics",
    "seed 002's metrics table: one row per metric, one column per profiled configuration",
    {"metric": _text(required=True, nullable=False), "unit": _text(required=True)},
    key=("metric",),
)

# a comparison's verdicts, in the order its tables list them (compare.ORDER): REGRESSED (PASS
# in the baseline, FAIL or ERROR now), the judged ones, then those in one run only
COMPARE_VERDICTS = (
    "REGRESSED",
    "SLOWER",
    "FASTER",
    "UNSURE",
    "SAME",
    "BASELINE ONLY",
    "THIS RUN ONLY",
)

COMPARE = TableSchema(
    "compare",
    "one row per configuration of either run: both kernel times, their ratio, the verdict",
    {
        "config_id": _text(required=True, nullable=False),
        "verdict": _text(COMPARE_VERDICTS, required=True, nullable=False),
        "base_ms": _number(required=True),
        "this_ms": _number(required=True),
        "ratio": _number(required=True),
        "base_verification": _text((*VERIFICATIONS, "")),
        "this_verification": _text((*VERIFICATIONS, "")),
        "judged": _flag(),
    },
    key=("config_id",),
    upgrade=_with_todays_ids,
    invariants=(
        pa.Check(
            lambda d: d.ratio.isna() | ((d.ratio - d.this_ms / d.base_ms).abs() <= 1e-9 * d.ratio),
            error="ratio is not this_ms / base_ms",
        ),
    ),
)

# two builds of a variant measured side by side (measure/paired.py, rule pair_variant)
PAIRS = TableSchema(
    "pairs",
    "one row per configuration measured in two builds side by side: each build's verification, "
    "its median time per launch over the rounds, the rounds and both cubins",
    {
        "config_id": _text(required=True, nullable=False),
        "verification": _text(VERIFICATIONS, required=True, nullable=False),
        "base_verification": _text(VERIFICATIONS, required=True, nullable=False),
        "this_verification": _text(VERIFICATIONS, required=True, nullable=False),
        "base_ms": _number(pa.Check.gt(0, error="a time must be > 0")),
        "this_ms": _number(pa.Check.gt(0, error="a time must be > 0")),
        "rounds": _integer(pa.Check.ge(0)),
        "cubin_sha256": _text(),
        "base_cubin_sha256": _text(),
    },
    key=("config_id",),
    upgrade=_with_todays_ids,
    invariants=(
        pa.Check(
            lambda d: (d.verification == "ERROR") | (d.base_ms.notna() & d.this_ms.notna()),
            error="a measured pair has both builds' times",
        ),
    ),
)

# per-configuration margins for runs made apart (compare/margins.py, written by `mmbench margins`)
MARGINS = TableSchema(
    "margins",
    "one row per configuration: the margin a comparison of runs made apart allows it, from the "
    "largest difference between repeated runs of the same code",
    {
        "config_id": _text(required=True, nullable=False),
        "margin": _number(
            pa.Check.gt(0, error="a margin must be > 0"),
            pa.Check.le(0.5),
            required=True,
            nullable=False,
        ),  # fmt: skip
        "largest_difference": _number(pa.Check.ge(0)),
        "runs": _integer(pa.Check.ge(2, error="a margin needs at least two runs")),
    },
    key=("config_id",),
    upgrade=_with_todays_ids,
)

# a table whose rows no schema describes (a profiled configuration's metrics before they are
# one table): only the file itself is checked (empty, cut short, not CSV)
ANY = TableSchema("any", "a CSV table", {})

SCHEMAS: dict[str, TableSchema] = {
    s.name: s
    for s in (
        ANY,
        TIMINGS,
        REFUSED,
        RESOURCES,
        METRICS,
        CEILINGS,
        ROOFLINE,
        NVPROF_METRICS,
        COMPARE,
        PAIRS,
        MARGINS,
    )
}


# -- reading ------------------------------------------------------------------------------------


def _lines(index) -> str:
    """CSV line numbers of row labels (line 1 is the header), summarised."""
    lines = sorted({int(i) + 2 for i in index if i is not None and not pd.isna(i)})
    shown = ", ".join(map(str, lines[:8])) + (
        f", ... ({len(lines)} rows)" if len(lines) > 8 else ""
    )
    return f"line{'s' if len(lines) > 1 else ''} {shown}" if lines else "the whole table"


def _describe(failures: pd.DataFrame, df: pd.DataFrame, schema: TableSchema) -> list[str]:
    """One line per broken rule: the column (for a column's rule), the CSV lines, examples."""
    out = []
    # a rule that could not even be evaluated follows from a value already reported
    unevaluated = failures[failures.failure_case.astype(str).str.startswith("TypeError(")]
    failures = failures[~failures.failure_case.astype(str).str.startswith("TypeError(")]
    frame = failures.schema_context == "DataFrameSchema"
    by_column = failures[~frame].groupby(["column", "check"], dropna=False, sort=False)
    for (column, check), g in by_column:
        check = str(check)
        if check.startswith("column_in_dataframe"):
            out.append(f"column {g.failure_case.iloc[0]!r} is missing")
        elif check.startswith("dtype("):
            continue  # said by the coercion that failed before it
        else:
            cases = ", ".join(str(c)[:60] for c in g.failure_case.drop_duplicates().head(3))
            out.append(f"column {column!r}: {check} fails at {_lines(g['index'])} (e.g. {cases})")
    for check, g in failures[frame].groupby("check", dropna=False, sort=False):
        idx = sorted({int(i) for i in g["index"] if i is not None and not pd.isna(i)})
        if str(check).startswith("column_in_dataframe"):
            for name in g.failure_case.drop_duplicates():
                out.append(f"column {name!r} is missing")
        elif "uniqueness" in str(check) or check == "unique":
            key = [c for c in schema.key if c in df]
            first = df.loc[idx[0], key] if idx else None
            what = ", ".join(f"{c}={first[c]}" for c in key) if first is not None else ""
            out.append(
                f"{_lines(idx)} name the same row ({what}): duplicated rows (a "
                "table concatenated twice, or a run merged into itself)"
            )
        else:
            out.append(f"{check}: {_lines(idx)}")
    if not out and len(unevaluated):  # nothing else explains it: never read as a pass
        for check, g in unevaluated.groupby("check", dropna=False, sort=False):
            out.append(f"{check}: could not be checked ({str(g.failure_case.iloc[0])[:120]})")
    return out


def _not_whole(df: pd.DataFrame, schema: TableSchema) -> list[str]:
    """Integer columns holding a number with a fraction (640.5): coercion would truncate it."""
    out = []
    for name, column in schema.columns.items():
        if name not in df or str(column.dtype) != "int64":
            continue
        if pd.api.types.is_integer_dtype(df[name].dtype):
            continue  # read as integers: whole by construction
        x = pd.to_numeric(df[name], errors="coerce")
        bad = x.notna() & np.isfinite(x) & (x % 1 != 0)
        if bad.any():
            cases = ", ".join(str(v) for v in x[bad].drop_duplicates().head(3))
            out.append(
                f"column {name!r}: not a whole number at {_lines(df.index[bad])} (e.g. {cases})"
            )
    return out


def check_frame(df: pd.DataFrame, kind: str, source: str) -> pd.DataFrame:
    """The table `df` (from `source`) in today's form, checked against its schema; TableError
    with every violation otherwise."""
    schema = SCHEMAS[kind]
    df = schema.upgrade(df)
    if df.empty:
        return df
    problems: list[str] = _not_whole(df, schema)
    for check in schema.prechecks:
        problems += check(df)
    try:
        df = schema.column_schema().validate(df, lazy=True)
    except pa.errors.SchemaErrors as err:
        problems = _describe(err.failure_cases, df, schema)
    if not problems:  # the invariants are read on well-typed columns only
        try:
            schema.frame_schema().validate(df, lazy=True)
        except pa.errors.SchemaErrors as err:
            problems = _describe(err.failure_cases, df, schema)
    if problems:
        raise TableError(
            f"{source} is not a valid {kind} table ({schema.doc}):\n  - "
            + "\n  - ".join(problems)
            + "\n  Copy it again from the run that made it, or measure again (delete the file "
            "and rerun); nothing was drawn from it."
        )
    return df


# the largest table a stage reads (bytes, uncompressed): a hundred times a large sweep's
MAX_TABLE_BYTES = 256 * 1024 * 1024
MAX_TABLE_VAR = "MMBENCH_MAX_TABLE_BYTES"  # where a user sets another bound
# tables read in this process, by file identity: each read once however many stages ask
_READ: dict[tuple, pd.DataFrame] = {}
_READ_KEPT = 16
# the compressed forms a table is read from where its plain file is absent
PACKED = {".gz": "gzip", ".xz": "xz"}


def _max_table_bytes() -> int:
    given = os.environ.get(MAX_TABLE_VAR, "")
    return int(given) if given.isdigit() else MAX_TABLE_BYTES


def read_table(path: str | Path, kind: str, *, allow_empty: bool = True) -> pd.DataFrame:
    """The table at `path`, checked against the schema of `kind` (SCHEMAS).  A file that is
    empty, cut short (its last line unterminated), not CSV, larger than MAX_TABLE_BYTES (or
    $MMBENCH_MAX_TABLE_BYTES), or that breaks its schema raises TableError naming the file and
    what is wrong.  A header with no rows is an empty table.  A table kept compressed
    (as an archived or recorded run may hold it) is read where the plain file is absent,
    gzipped (`timings.csv.gz`) or xz'd (`timings.csv.xz`).  A file read before in this process,
    unchanged since (the same inode, size and time), is not read again (a copy of what was read
    is returned)."""
    path = Path(path)
    if not path.exists():
        path = next((p for x in PACKED if (p := path.with_name(path.name + x)).exists()), path)
    if not path.exists():
        raise TableError(f"{path}: missing (a {kind} table was expected here)")
    st = path.stat()
    key = (str(path.resolve()), st.st_ino, st.st_size, st.st_mtime_ns, kind, allow_empty)
    if key in _READ:
        return _READ[key].copy()
    df = _read_table(path, kind, allow_empty, st.st_size)
    if len(_READ) >= _READ_KEPT:
        _READ.pop(next(iter(_READ)))
    _READ[key] = df
    return df.copy()


def _inflated(suffix: str, data: bytes, most: int) -> bytes:
    """A compressed table's bytes, at most `most` of them however far it inflates."""
    if suffix == ".gz":
        with gzip.GzipFile(fileobj=io.BytesIO(data)) as fh:
            return fh.read(most)
    unpack = lzma.LZMADecompressor()
    out = unpack.decompress(data, max_length=most)
    if not unpack.eof and len(out) < most:
        raise EOFError("the stream ends before its end marker")
    return out


def _too_large(path: Path, size: int, what: str) -> TableError:
    return TableError(
        f"{path}: {size:,} bytes{what}, past the {_max_table_bytes():,} a table may be (no run "
        f"of this pipeline writes one near it: not one of ours, or damaged); where it is "
        f"yours, set {MAX_TABLE_VAR} to a larger bound"
    )


def _read_table(path: Path, kind: str, allow_empty: bool, size: int) -> pd.DataFrame:
    limit = _max_table_bytes()
    if size > limit:
        raise _too_large(path, size, "")
    data = path.read_bytes()
    if path.suffix in PACKED:
        try:
            data = _inflated(path.suffix, data, limit + 1)  # never more than the bound
        except (OSError, EOFError, lzma.LZMAError) as err:
            raise TableError(f"{path}: not a readable {PACKED[path.suffix]} file ({err})") from None
        if len(data) > limit:
            raise _too_large(path, len(data), " once decompressed (at least)")
    if data and not data.strip():  # what an empty table is written as (a newline alone)
        return pd.DataFrame()
    if not data:
        raise TableError(
            f"{path}: empty file (0 bytes of a {kind} table): the job that writes it did not "
            "finish, or the copy was interrupted; copy it again or delete it and rerun"
        )
    if not data.endswith(b"\n"):
        raise TableError(
            f"{path}: its last line is not terminated, so the file was cut short (an "
            "interrupted copy or job); copy it again or delete it and rerun"
        )
    try:
        df = pd.read_csv(io.BytesIO(data))
    except (pd.errors.ParserError, UnicodeDecodeError) as err:
        raise TableError(f"{path}: not a readable CSV table ({err})") from None
    if df.empty and not allow_empty:
        raise TableError(f"{path}: holds no rows")
    return check_frame(df, kind, str(path))


def read_tables(paths, kind: str) -> pd.DataFrame:
    """Several tables of one kind (the per-variant tables of a run), each checked, then
    concatenated and checked together (a configuration in two of them is a duplicate)."""
    frames = [read_table(p, kind) for p in paths]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame()
    both = pd.concat(frames, ignore_index=True)
    key = [c for c in SCHEMAS[kind].key if c in both]
    if len(frames) == 1 or not key or not both.duplicated(key).any():
        return both  # each checked whole; together only the key can break
    return check_frame(both, kind, " + ".join(str(p) for p in paths))  # names the duplicates


# -- the manifests ------------------------------------------------------------------------------

# what rebuilds the manifests of a run kept without them (core/manifests.py)
REBUILD = "mmbench manifests {results}"


def read_manifests(manifests) -> dict[str, dict]:
    """variant -> its run manifest (runs/<variant>.manifest.json): the configurations its
    measurement job was given and the device it measured on."""
    out = {}
    for p in manifests:
        try:
            m = json.loads(Path(p).read_text())
            out[str(m["variant"])] = m | dict(configurations=int(m["configurations"]))
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise TableError(f"{p}: not a readable run manifest ({err})") from None
    return out


def manifest_counts(manifests) -> dict[str, int]:
    """variant -> configurations its measurement job was given (runs/<variant>.manifest.json)."""
    return {v: m["configurations"] for v, m in read_manifests(manifests).items()}


def check_against_manifests(
    df: pd.DataFrame, manifests, source: str, results: str | Path | None = None
) -> None:
    """Each variant of the manifests has exactly the rows its job was given (a table cut short
    by an interrupted copy, or grown by duplicated rows, fails here), on the GPU its manifest
    names, and no variant has rows without a manifest.  A table with rows and no manifest at
    all is refused too (nothing would show a table cut at a line's end): the message says how to
    rebuild them from the rows (`results`: the results folder, for that command)."""
    manifests = list(manifests)
    if not manifests:
        if df.empty:
            return
        folder = results if results is not None else Path(source).parent.parent
        raise TableError(
            f"{source}: no run manifests (runs/<variant>.manifest.json) beside it, so whether "
            "rows are missing cannot be checked; copy the results folder whole, or, trusting "
            "the table as it is, rebuild them from its rows: " + REBUILD.format(results=folder)
        )
    given = read_manifests(manifests)
    got = df["variant"].value_counts().to_dict() if not df.empty else {}
    wrong = [
        f"{v}: {got.get(v, 0)} rows, its run manifest says {m['configurations']} configurations"
        for v, m in sorted(given.items())
        if got.get(v, 0) != m["configurations"]
    ] + [f"{v}: {n} rows but no run manifest" for v, n in sorted(got.items()) if v not in given]
    if "gpu_name" in df and not df.empty:
        for v, m in sorted(given.items()):
            named = str((m.get("device") or {}).get("name") or "")
            rows = sorted({str(g) for g in df.loc[df.variant == v, "gpu_name"].dropna()})
            if named and rows and rows != [named]:
                wrong.append(f"{v}: rows measured on {', '.join(rows)}, its manifest says {named}")
    if wrong:
        raise TableError(
            f"{source} does not hold the rows its run manifests describe:\n  - "
            + "\n  - ".join(wrong)
            + "\n  The table was cut short, duplicated or mixed with another run; copy the "
            "results folder again (or rerun the variants named)."
        )

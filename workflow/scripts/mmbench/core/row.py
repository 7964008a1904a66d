"""One row of results/tables/timings.csv: the single list of its columns, in order.

A row is the configuration's axes (Configuration.axes(): variant, label, instance, element type,
shape, layout, inputs, and one column per compile-time parameter of the variant), then the launch,
the verification, the timings, the clocks and the provenance.  Every measured or error row is a
Row, so a column that is not declared here cannot be written.
"""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field, fields

import pandas as pd

from .axes import AXES as DECLARED_AXES
from .axes import COMPARE_KEY, REQUIRED

NAN = math.nan

# The configuration's columns (Configuration.axes() and the GPU model), from the declared axes
# (core/axes.py): first the identifying ones, the parameter columns (TILE, COARSEN, BM, ...)
# right after `instance`, then the backend and every other axis in declaration order.
IDENTITY = ["variant", "label", "params", "instance"]
AXES = ["backend"] + [a.name for a in DECLARED_AXES if a.name != "variant"]


@dataclass
class Row:
    axes: dict = field(repr=False)
    # launch
    lda: float = NAN
    ldb: float = NAN
    ldc: float = NAN
    kernel_ld: str = ""
    grid: str = ""
    block: str = ""
    cluster: str = ""  # blocks per cluster, where the launch has one
    # what the launch worked out for this shape (registry shape_facts), e.g. "TILES=16 SPLITS=8"
    launch_facts: str = ""
    # verification (oracle.Reference.judge)
    verification: str = "ERROR"
    mismatches: float = NAN
    nonfinite: float = NAN
    oob_writes: float = NAN
    freivalds: str = ""
    freivalds_bad_rows: float = NAN
    max_abs_error: float = NAN
    rel_l2_error: float = NAN
    tolerance: str = ""
    first_mismatches: str = ""
    error: str = ""
    # timings (measure/samples.Samples.columns)
    samples: int = 0
    # the kernel time the row's rates come from: the samples' median (burst) or mean
    # (sustained), core/sampling.Load.statistic
    kernel_ms: float = NAN
    kernel_ms_median: float = NAN
    kernel_ms_mean: float = NAN
    kernel_ms_min: float = NAN
    kernel_ms_max: float = NAN
    kernel_ms_iqr: float = NAN
    h2d_ms_median: float = NAN
    d2h_ms_median: float = NAN
    global_ms_median: float = NAN
    global_ms_min: float = NAN
    global_ms_max: float = NAN
    global_ms_iqr: float = NAN
    kernel_gflops: float = NAN
    global_gflops: float = NAN
    # batched samples and the sustained load (measure/samples.Samples.columns)
    batch_size: float = NAN
    batch_samples: int = 0
    batch_ms_median: float = NAN
    batch_ms_iqr: float = NAN
    placements: float = NAN  # places the samples ran from in turn (sampling.placements)
    settle_s: float = NAN
    settled: str = ""
    window_s: float = NAN
    duty: float = NAN
    # clocks of the timed kernels (telemetry.columns: read while a timed kernel ran)
    telemetry_reads: float = NAN
    sm_clock_mhz: float = NAN
    sm_clock_mhz_min: float = NAN
    sm_clock_probe_mhz: float = NAN  # measured right after a burst's samples (ClockProbe)
    mem_clock_mhz: float = NAN
    temperature_c: float = NAN
    below_max_clock: float = NAN
    slowdown_reasons: str = ""
    # power and energy (sustained load only: the kernel back to back through the window)
    power_w_median: float = NAN
    power_w_min: float = NAN
    energy_power_w: float = NAN
    energy_window_s: float = NAN
    energy_j_per_product: float = NAN
    gflops_per_w: float = NAN
    # the harness's own cost
    gpu_busy_ms: float = NAN
    verify_ms: float = NAN
    freivalds_ms: float = NAN
    config_wall_ms: float = NAN
    # provenance (device.device_facts, the job)
    gpu_uuid: str = ""
    gpu_index: float = NAN
    gpu_pci_bus_id: str = ""
    cuda_visible_devices: str = ""
    compute_capability: str = ""
    driver_version: str = ""
    cuda_runtime: str = ""
    cupy_version: str = ""
    source_sha256: str = ""
    cubin_sha256: str = ""  # the cubin that ran (16 hex digits of its sha256)
    launch_sha256: str = ""  # the registry's launch spec it ran with (Variant.launch_sha)
    harness_sha256: str = ""  # the harness that measured it (service/journal.harness_sha)
    hostname: str = ""
    timestamp: str = ""

    def to_dict(self) -> dict:
        out = asdict(self)
        return self.axes | {k: v for k, v in out.items() if k != "axes"}


MEASURED = [f.name for f in fields(Row) if f.name != "axes"]
COLUMNS = IDENTITY + AXES + MEASURED


# What names one configuration across runs (compare.py matches two runs on it): the variant and
# its instantiation, the problem and how it was placed and timed (the axes declared `compare`).
CONFIG_ID = COMPARE_KEY
# the key under which a measured row carries its timed samples to the job (jobs.py keeps them
# in runs/<variant>.samples.json.gz, not in the table)
SAMPLES = "_samples"


def _id_part(value) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, str) and value in ("True", "False"):
        value = value == "True"
    return str(value)


# an axis a table of an older version lacks reads as its default (a run recorded before the
# `load` axis existed was a burst run), so old results folders still compare
AXIS_DEFAULTS = {
    a.name: a.default for a in DECLARED_AXES if not isinstance(a.default, type(REQUIRED))
}


def config_id(row) -> str:
    """The configuration's name across runs, the same from a journal row (Python values) and
    from a row of timings.csv (pandas' types)."""
    return "|".join(_id_part(row[c] if c in row else AXIS_DEFAULTS[c]) for c in CONFIG_ID)


# axes added to the configuration id since samples files were first written, oldest first: an id
# of an older file lacks the last of these, which upgrade_id() puts back with their defaults
ADDED_TO_ID = ["load", "ld_align", "workers"]


def with_added_axes(df: pd.DataFrame) -> pd.DataFrame:
    """A table with the axes added since results were first recorded (ADDED_TO_ID) filled with
    their defaults where a run lacks them: a run recorded before `load` existed was a burst;
    and the columns added since (upgraded)."""
    out = upgraded(df).copy()
    for name in ADDED_TO_ID:
        default = AXIS_DEFAULTS[name]
        out[name] = out[name].fillna(default) if name in out else default
    return out


def upgrade_id(old: str) -> str:
    """A configuration id from an older samples file, in today's form."""
    parts = old.split("|")
    missing = len(CONFIG_ID) - len(parts)
    if missing <= 0 or missing > len(ADDED_TO_ID):
        return old
    # each put back at its place, leftmost first (so that each index counts those before it)
    for name in sorted(ADDED_TO_ID[-missing:], key=CONFIG_ID.index):
        parts.insert(CONFIG_ID.index(name), _id_part(AXIS_DEFAULTS[name]))
    return "|".join(parts)


def error_row(axes: dict, message: str, **more) -> dict:
    """The row of a configuration that could not be measured."""
    return Row(axes=axes, verification="ERROR", error=message, **more).to_dict()


# compile-time parameter names (workflow/schemas/registry.schema.yaml), other than dtype
PARAM_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


def parameter_columns(df: pd.DataFrame) -> list[str]:
    """The compile-time parameter columns of a table (TILE, COARSEN, BM, ...)."""
    return [c for c in df.columns if PARAM_NAME.match(str(c))]


def upgraded(df: pd.DataFrame) -> pd.DataFrame:
    """A table written before a column existed, in today's form: kernel_ms (the time its rates
    came from) is the median there, as its kernel_gflops were."""
    if "kernel_ms" not in df.columns and "kernel_ms_median" in df.columns:
        df = df.assign(kernel_ms=df.kernel_ms_median)
    return df


def ordered(df: pd.DataFrame) -> pd.DataFrame:
    """The declared columns in their order, the parameter columns right after `instance`, then
    any others."""
    params = parameter_columns(df)
    rest = [c for c in df.columns if c not in COLUMNS and c not in params]
    return df.reindex(columns=IDENTITY + params + AXES + MEASURED + rest)

"""Two runs compared, configuration by configuration: what got faster, what got slower, and
whether it is real.

The criterion is nvbench's robust comparison (``nvbench-compare-robust``, NVIDIA's
``cuda-bench`` package), called on our samples rather than written again:

* each run's timing interval is [min, q3] of its timed kernel samples, its centre the median;
* FASTER / SLOWER only when the two intervals are separated by a clear gap (default: more than
  0.5% of the faster one) *and* the gap is confirmed in cycle space (time x SM clock, from the
  SM clock NVML read after each timed pass or batch), so a clock change alone is not a kernel change;
* SAME when the samples of each run are covered by the other's within 0.5% (nearest neighbour
  in log space, 97% of samples and 80% of distinct values), in time and in cycles;
* UNSURE (nvbench's AMBG) otherwise: neither a clear gap nor clear agreement.

Then the tolerance (config ``compare.tolerance``, TOLERANCE): the smallest change the comparison
of two runs reports.  Two processes measuring the same code differ by more than one process's
samples spread: on an H100, ten processes of the compare preset put the same configuration's
median (in cycles) within 0.6% of each other for most configurations, and up to 2.6-4.4% apart
for cuBLAS at 512 and 768 and naive_guarded at 512 (docs/method.md), while one run's [min, q3]
is 0.05-0.3% wide.  So nvbench's verdict, which sees one process per run, takes the tolerance
as an equivalence margin (as criterion.rs's noise threshold or asv's factor do): SAME also where
the whole change interval (the interval edges' differences) lies within +-tolerance; FASTER or
SLOWER only where it lies wholly beyond; UNSURE otherwise.  Tolerance 0 is nvbench's verdict.

A run is a results folder: its ``runs/<variant>.csv`` tables and ``runs/<variant>.samples.json.gz``
samples (jobs.py writes both), or an archived measurement (``archive/<variant>/<source hash>/``,
measure.py keeps one per kernel source).  Configurations are matched on row.CONFIG_ID.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd

from mmbench.core.axes import COMPARE_KEY
from mmbench.core.row import config_id
from mmbench.core.schemas import COMPARE_VERDICTS, TableError, read_table, read_tables
from mmbench.core.tables import DamagedFile, read_samples

# nvbench's verdicts -> ours
VERDICTS = {"SAME": "SAME", "FAST": "FASTER", "SLOW": "SLOWER", "AMBG": "UNSURE", "????": "UNSURE"}
# every verdict, in the order tables list them (declared with the compare table's schema), and
# the four nvbench's criterion gives a configuration measured in both runs
ORDER = list(COMPARE_VERDICTS)
JUDGED = ["SLOWER", "FASTER", "UNSURE", "SAME"]
PRESETS = ("default", "strict", "permissive")
# compare.tolerance's default (module docstring): above the largest difference between two
# processes of the same code measured on an H100 (4.4%), below the edit loop's 10% slowdowns
TOLERANCE = 0.05


class NoRun(ValueError):
    """A folder that holds no measured run."""


@dataclass
class Run:
    """One run's measured rows (by config_id) and their samples, and where they came from."""

    name: str
    rows: pd.DataFrame
    samples: dict[str, dict] = field(default_factory=dict)

    def facts(self) -> dict:
        """GPU, driver, median SM clock and kernel source hashes (per variant) of the run."""
        r = self.rows

        def one(col):
            vals = sorted({str(v) for v in r[col].dropna()}) if col in r else []
            return ", ".join(vals)

        sources = (
            r.dropna(subset=["source_sha256"]).groupby("variant").source_sha256.first().to_dict()
            if "source_sha256" in r
            else {}
        )
        clock = pd.to_numeric(r.get("sm_clock_mhz"), errors="coerce")
        probe = pd.to_numeric(r.get("sm_clock_probe_mhz", pd.Series(dtype=float)), errors="coerce")
        return dict(
            run=self.name,
            gpu=one("gpu_name"),
            gpu_uuid=one("gpu_uuid"),
            driver=one("driver_version"),
            sm_clock_mhz=float(clock.median())
            if clock is not None and clock.notna().any()
            else None,
            sm_clock_probe_mhz=float(probe.median()) if probe.notna().any() else None,
            sources=sources,
        )


def _measured(frames: list[pd.DataFrame], name: str) -> pd.DataFrame:
    frames = [f for f in frames if not f.empty]
    if not frames:
        raise NoRun(f"{name}: no measured rows")
    rows = pd.concat(frames, ignore_index=True)
    rows["config_id"] = [config_id(r) for _, r in rows.iterrows()]
    return rows.drop_duplicates("config_id", keep="last").set_index("config_id", drop=False)


def load_tables(tables: list[Path], name: str) -> Run:
    """A run from per-variant tables (runs/<variant>.csv) and the samples files beside them."""
    samples = {}
    for t in tables:
        s = t.with_name(t.stem + ".samples.json.gz")
        if s.exists():
            samples |= read_samples(s)
    return Run(name, _measured([read_tables(tables, "timings")], name), samples)


def load_folder(folder: str | Path) -> Run:
    """The run in a results folder: its runs/<variant>.csv (with samples), else its
    tables/timings.csv (without: every configuration is then UNSURE, for want of samples)."""
    folder = Path(folder)
    tables = sorted(p for p in (folder / "runs").glob("*.csv"))
    if tables:
        return load_tables(tables, str(folder))
    timings = folder / "tables" / "timings.csv"
    if timings.exists():
        return Run(str(folder), _measured([read_table(timings, "timings")], str(folder)))
    raise NoRun(
        f"baseline={folder}: no measured run there (looked for {folder}/runs/<variant>.csv and "
        f"{folder}/tables/timings.csv); give the results folder of an earlier run, or "
        f"baseline=previous"
    )


def archived(results: str | Path) -> dict[str, list[Path]]:
    """variant -> its archived measurements (archive/<variant>/<source hash>/<variant>.csv),
    oldest first (by the newest timestamp in each)."""
    out = {}
    for vdir in sorted((Path(results) / "archive").glob("*")):
        stamps = {}
        for p in vdir.glob(f"*/{vdir.name}.csv"):
            try:  # a damaged entry (a torn copy) is reported and skipped, never fatal
                t = read_table(p, "timings")
                read_samples(p.with_name(p.stem + ".samples.json.gz"))
            except (TableError, DamagedFile) as err:
                print(f"mmbench: archive entry skipped: {err}", file=sys.stderr)
                continue
            if "timestamp" in t and len(t):
                stamps[p] = str(t.timestamp.max())
        out[vdir.name] = sorted(stamps, key=lambda p: stamps[p])
    return out


def previous(results: str | Path, current: Run) -> tuple[Run, dict[str, str]]:
    """The baseline of the edit loop: for each variant of ``current``, its measurement of the
    source before the current one (the newest archived one whose source hash differs).  Variants
    never measured with another source are left out (THIS RUN ONLY).  Also returns
    variant -> the baseline's source hash."""
    now = current.facts()["sources"]
    picked, hashes = [], {}
    for variant, tables in archived(results).items():
        if variant not in now:
            continue
        earlier = [t for t in tables if t.parent.name != str(now[variant])]
        if earlier:
            picked.append(earlier[-1])
            hashes[variant] = earlier[-1].parent.name
    if not picked:
        raise NoRun(
            f"baseline=previous: no variant of this run has an earlier kernel source in "
            f"{Path(results) / 'archive'} (a variant's rows are archived when it is measured; "
            f"edit a kernel and run again, or give baseline=<results folder>)"
        )
    return load_tables(picked, "previous"), hashes


# --- the criterion --------------------------------------------------------------------------


def _criterion():
    from cuda.bench.scripts import nvbench_compare_robust as robust

    robust.load_nvbench_compare_tooling(load_color=False)  # its NumPy, loaded on demand
    return robust


def _timing(robust, key: str, kernel_ms: list[float], clock_mhz: list[float]):
    """nvbench's GpuTimingData from our samples (seconds, and the SM clock in Hz per sample)."""
    t = np.asarray(kernel_ms, dtype=np.float64) * 1e-3
    q1, med, q3 = np.percentile(t, [25, 50, 75])
    bulk = {f"/mmbench/{key}/time": t}
    freq = None
    if len(clock_mhz) == len(t) and len(t):
        bulk[f"/mmbench/{key}/freq"] = np.asarray(clock_mhz, dtype=np.float64) * 1e6

    def reader(name):
        return bulk[name].astype("<f4").tobytes()

    def source(kind, what):
        return robust.Float32BinarySource(
            count=len(t), filename=f"/mmbench/{key}/{kind}", json_dir="/", description=what,
            reader=reader,
        )  # fmt: skip

    if f"/mmbench/{key}/freq" in bulk:
        freq = source("freq", "sample frequency")
    mean, std = float(t.mean()), float(t.std(ddof=1)) if len(t) > 1 else math.inf
    return robust.GpuTimingData(
        minimum=float(t.min()),
        maximum=float(t.max()),
        mean=mean,
        stdev=std,
        stdev_relative=std / mean,
        first_quartile=float(q1),
        median=float(med),
        third_quartile=float(q3),
        interquartile_range=float(q3 - q1),
        interquartile_range_relative=float(q3 - q1) / float(med),
        sm_clock_rate_mean=float(np.mean(clock_mhz)) * 1e6 if len(clock_mhz) else None,
        sample_source=source("time", "sample time"),
        frequency_source=freq,
    )


# the kinds of timed sample a samples file can hold: name -> (times, clocks) keys (timing.Samples)
SAMPLE_KINDS = {"single": ("kernel_ms", "sm_clock_mhz"), "batched": ("batch_ms", "batch_clock_mhz")}


def spread(ms: list[float]) -> float:
    """Width of nvbench's timing interval [min, q3] relative to the median."""
    if len(ms) < 2:
        return math.inf
    q3, med = np.percentile(ms, [75, 50])
    return float((q3 - min(ms)) / med) if med > 0 else math.inf


def quieter(base: dict, new: dict) -> str:
    """The kind of sample both runs hold whose wider interval of the two is the narrower (a
    short kernel's batched samples, usually: timing.py)."""
    kinds = [k for k, (t, _) in SAMPLE_KINDS.items() if base.get(t) and new.get(t)]
    if not kinds:
        return "single"
    return min(
        kinds, key=lambda k: max(spread(base[SAMPLE_KINDS[k][0]]), spread(new[SAMPLE_KINDS[k][0]]))
    )


def measured_clocks(samples: dict, clocks: str) -> list[float] | None:
    """The SM clock each sample ran at, measured: NVML's clock after each sample scaled by the
    clock probe's reading over NVML's at the probe (telemetry.ClockProbe); None for samples
    recorded without the probe."""
    probe, nvml = samples.get("sm_clock_probe_mhz"), samples.get("nvml_clock_at_probe_mhz")
    after = samples.get(clocks, [])
    ok = [x for x in (probe, nvml) if isinstance(x, int | float) and math.isfinite(x) and x > 0]
    if len(ok) < 2 or not after:
        return None
    return [c * probe / nvml for c in after]


def _verdict(robust, thresholds, base_values, new_values, base_clocks=None, new_clocks=None):
    """nvbench's verdict on two sample sets; without clocks, on the values alone (a constant
    clock, so that its cycle confirmations hold whenever the values' verdict does)."""

    def timing(key, values, clocks):
        return _timing(robust, key, values, [1.0] * len(values) if clocks is None else clocks)

    r, c = timing("base", base_values, base_clocks), timing("new", new_values, new_clocks)
    out = robust.compare_gpu_timings(r, c, thresholds)
    status = out.status.value if hasattr(out.status, "value") else str(out.status)
    return VERDICTS.get(status, "UNSURE"), status, out, r, c


def tolerated(verdict: str, change: tuple | None, tolerance: float) -> str:
    """nvbench's verdict with the tolerance (module docstring): SAME where nvbench's is SAME or
    the whole change interval lies within +-tolerance; FASTER / SLOWER where nvbench's is and the
    whole interval lies beyond it; UNSURE otherwise."""
    lo, hi = change or (math.nan, math.nan)
    if verdict == "SAME" or (-tolerance <= lo and hi <= tolerance):
        return "SAME"
    if (verdict == "FASTER" and hi < -tolerance) or (verdict == "SLOWER" and lo > tolerance):
        return verdict
    return "UNSURE"


def combined(in_time: str, in_cycles: str) -> str:
    """The verdict from the time and the cycles (time x measured clock) verdicts: SAME if either
    is (a kernel bound by memory keeps its time when the SM clock moves, one bound by the SMs
    keeps its cycles); FASTER or SLOWER only if both say so; UNSURE otherwise."""
    if "SAME" in (in_time, in_cycles):
        return "SAME"
    return in_time if in_time == in_cycles else "UNSURE"


def judge(base: dict, new: dict, preset: str = "default", tolerance: float = TOLERANCE) -> dict:
    """The verdict on one configuration from its two sample sets (timing.Samples.kept), on the
    quieter kind of sample both hold, and the numbers nvbench's criterion used.

    Where both runs measured the SM clock (the clock probe), the time and the cycles (time x
    measured clock) are judged apart and combined (`combined`): the clock a GPU runs at is not
    the code's doing, and NVML does not report all of its moves.  Otherwise nvbench judges the
    time, confirming gaps and sameness in cycles from NVML's clock.  Each of nvbench's verdicts
    then takes the tolerance (`tolerated`); `nvbench_verdict` keeps the one without it."""
    robust = _criterion()
    thresholds = robust.get_comparison_thresholds(preset)
    kind = quieter(base, new)
    times, clocks = SAMPLE_KINDS[kind]
    bc, nc = measured_clocks(base, clocks), measured_clocks(new, clocks)
    extra: dict = {}
    if (
        bc is not None
        and nc is not None
        and len(bc) == len(base[times])
        and len(nc) == len(new[times])
    ):
        t_verdict, status, out, r, c = _verdict(robust, thresholds, base[times], new[times])
        cy_verdict, cy_status, cy_out, _, _ = _verdict(
            robust, thresholds,
            [t * f for t, f in zip(base[times], bc, strict=True)],
            [t * f for t, f in zip(new[times], nc, strict=True)],
        )  # fmt: skip
        raw = combined(t_verdict, cy_verdict)
        verdict = combined(
            tolerated(t_verdict, out.frac_diff_interval, tolerance),
            tolerated(cy_verdict, cy_out.frac_diff_interval, tolerance),
        )
        reason = f"time: {out.reason.code}; cycles: {cy_out.reason.code}"
        extra = dict(
            time_verdict=t_verdict,
            cycles_verdict=cy_verdict,
            base_clock_mhz=float(np.median(bc)),
            this_clock_mhz=float(np.median(nc)),
        )
    else:
        raw, status, out, r, c = _verdict(
            robust, thresholds, base[times], new[times], base.get(clocks, []),
            new.get(clocks, []),
        )  # fmt: skip
        verdict = tolerated(raw, out.frac_diff_interval, tolerance)
        reason = out.reason.code
    lo, hi = out.frac_diff_interval or (math.nan, math.nan)
    return (
        dict(
            verdict=verdict,
            nvbench_verdict=raw,
            tolerance=tolerance,
            samples_kind=kind,
            base_samples=len(base[times]),
            this_samples=len(new[times]),
            base_ms=float(np.median(base[times])),
            this_ms=float(np.median(new[times])),
            nvbench_status=status,
            reason=reason,
            reason_text=out.reason.message,
            base_interval_ms=f"[{r.minimum * 1e3:.6g}, {r.third_quartile * 1e3:.6g}]",
            this_interval_ms=f"[{c.minimum * 1e3:.6g}, {c.third_quartile * 1e3:.6g}]",
            base_noise=out.ref_noise,
            this_noise=out.cmp_noise,
            change_low=lo,
            change_high=hi,
            clear_gap=thresholds.clear_gap_relative,
        )
        | extra
    )


# the identifying columns each compared row keeps: the label and the join's axes
KEEP = ["label", *COMPARE_KEY]


def compare(
    base: Run, new: Run, preset: str = "default", tolerance: float = TOLERANCE
) -> pd.DataFrame:
    """One row per configuration in either run: both medians, their ratio (this / baseline),
    the verdict and the numbers the criterion used; a configuration in one run only says so."""
    rows = []
    for cid in list(dict.fromkeys([*base.rows.index, *new.rows.index])):
        b = base.rows.loc[cid] if cid in base.rows.index else None
        n = new.rows.loc[cid] if cid in new.rows.index else None
        ref = n if n is not None else b
        row = {k: ref[k] for k in KEEP if k in ref.index} | dict(config_id=cid)
        row |= dict(
            base_ms=b["kernel_ms_median"] if b is not None else math.nan,
            this_ms=n["kernel_ms_median"] if n is not None else math.nan,
            base_verification=b["verification"] if b is not None else "",
            this_verification=n["verification"] if n is not None else "",
            base_samples=len(base.samples.get(cid, {}).get("kernel_ms", [])),
            this_samples=len(new.samples.get(cid, {}).get("kernel_ms", [])),
        )
        if b is None or n is None:
            row |= dict(verdict="BASELINE ONLY" if n is None else "THIS RUN ONLY", reason="")
        elif regressed(b["verification"], n["verification"]):
            row |= dict(
                verdict="REGRESSED",
                reason=f"PASS in the baseline, {n['verification']} in this run: "
                + str(n.get("first_mismatches") or n.get("error") or "")[:200],
            )
        elif cid not in base.samples or cid not in new.samples:
            missing = "the baseline" if cid not in base.samples else "this run"
            row |= dict(verdict="UNSURE", reason=f"no timed samples in {missing}")
        else:
            row |= judge(base.samples[cid], new.samples[cid], preset, tolerance)
        row["ratio"] = (
            row["this_ms"] / row["base_ms"] if b is not None and n is not None else math.nan
        )
        rows.append(row)
    table = pd.DataFrame(rows)
    table["same_in_cycles_only"] = in_cycles_only(table)
    table["within_tolerance_only"] = within_tolerance(table)
    return table


def regressed(base_verification: str, this_verification: str) -> bool:
    """A configuration that verified in the baseline and does not now."""
    return base_verification == "PASS" and this_verification in ("FAIL", "ERROR")


def gate(table: pd.DataFrame, allow_missing: bool = False) -> list[str]:
    """What makes `compare.fail_on: slower` fail, one line each (none: the gate passes):
    configurations SLOWER, REGRESSED, and (unless allow_missing) in the baseline but not in
    this run (a variant that stopped running would otherwise pass unseen)."""
    why = []
    for verdict, words in (
        ("REGRESSED", "PASSed in the baseline and FAIL or ERROR now"),
        ("SLOWER", "SLOWER than the baseline"),
    ):
        n = int((table.verdict == verdict).sum())
        if n:
            why.append(f"{n} configuration(s) {words}")
    gone = table[table.verdict == "BASELINE ONLY"]
    if len(gone) and not allow_missing:
        variants = ", ".join(sorted(set(gone.variant.astype(str))))
        why.append(
            f"{len(gone)} configuration(s) of the baseline missing from this run (variants "
            f"{variants}; allow with 'compare={{fail_on: slower, allow_missing: true}}')"
        )
    return why


def header(base: Run, new: Run) -> dict:
    """Both runs' facts, and whether they ran on different GPUs."""
    bf, nf = base.facts(), new.facts()
    return dict(baseline=bf, this_run=nf, same_gpu=bf["gpu"] == nf["gpu"])


def counts(table: pd.DataFrame) -> dict[str, int]:
    got = table.verdict.value_counts().to_dict()
    return {v: int(got.get(v, 0)) for v in ORDER}


def in_cycles_only(table: pd.DataFrame) -> pd.Series:
    """The configurations nvbench finds SAME in cycles but not in time: their time moved with
    the measured SM clock (`combined`)."""
    if "cycles_verdict" not in table:
        return pd.Series(False, index=table.index)
    return (
        table.time_verdict.notna()
        & (table.time_verdict != "SAME")
        & (table.cycles_verdict == "SAME")
    )


def within_tolerance(table: pd.DataFrame) -> pd.Series:
    """The configurations SAME by the tolerance only (nvbench's verdict, clock-measured or not,
    is not SAME)."""
    if "nvbench_verdict" not in table:
        return pd.Series(False, index=table.index)
    return (
        (table.verdict == "SAME")
        & table.nvbench_verdict.notna()
        & (table.nvbench_verdict != "SAME")
    )


def summary(table: pd.DataFrame, head: dict, limit: int = 12) -> str:
    """The console summary: both runs, the verdict counts, and the configurations that changed
    (slowest first)."""
    b, n = head["baseline"], head["this_run"]
    lines = [
        f"Comparison of runs: baseline {b['run']} vs this run {n['run']}",
        f"  baseline GPU: {b['gpu']} (driver {b['driver']}, SM clock {_clocks(b)})",
        f"  this run GPU: {n['gpu']} (driver {n['driver']}, SM clock {_clocks(n)})",
    ]
    if "cycles_verdict" in table:
        lines.append(
            f"  {int(table.cycles_verdict.notna().sum())} configurations judged in time and in "
            f"cycles (the SM clock measured in both runs); {int(in_cycles_only(table).sum())} of "
            "them SAME in cycles only"
        )
    if "nvbench_verdict" in table and table.nvbench_verdict.notna().any():
        tol = float(table.tolerance.dropna().iloc[0])
        raw = table.nvbench_verdict.value_counts()
        tally = ", ".join(f"{int(raw.get(v, 0))} {v}" for v in JUDGED)
        lines.append(
            f"  tolerance +-{tol:.1%} (compare.tolerance): {int(within_tolerance(table).sum())} "
            f"configurations SAME only within it; nvbench's criterion alone: {tally}"
        )
    if not head["same_gpu"]:
        lines.append("  The runs are on different GPUs: verdicts compare the GPUs, not code.")
    both = [v for v in n["sources"] if v in b["sources"]]
    changed = sorted(v for v in both if str(b["sources"][v]) != str(n["sources"][v]))
    if changed:
        lines.append(f"  kernel sources that differ: {', '.join(changed)}")
    c = counts(table)
    lines.append("  " + ", ".join(f"{v} {k}" for k, v in c.items() if v or k in JUDGED))
    for r in table[table.verdict == "REGRESSED"].head(limit).itertuples():
        lines.append(f"  REGRESSED {r.label} {r.dtype} {r.m}x{r.n}x{r.k} {r.memory}: {r.reason}")
    moved = table[table.verdict.isin(["SLOWER", "FASTER"])].sort_values("ratio", ascending=False)
    for r in moved.head(limit).itertuples():
        lines.append(
            f"  {r.verdict:<6} {r.label} {r.dtype} {r.m}x{r.n}x{r.k} {r.memory}: "
            f"{r.base_ms:.4g} -> {r.this_ms:.4g} ms (x{r.ratio:.3f})"
        )
    if len(moved) > limit:
        lines.append(f"  ... and {len(moved) - limit} more (tables/compare.csv)")
    return "\n".join(lines)


def edits(
    results: str | Path, tables: list[Path], preset: str = "default", tolerance: float = TOLERANCE
) -> str:
    """For the end-of-run summary: each variant whose kernel source changed since an archived
    measurement, before -> after per configuration with the verdicts ('' if none)."""
    if not tables:
        return ""
    new = load_tables(tables, "this run")
    try:
        base, hashes = previous(results, new)
    except NoRun:
        return ""
    table = compare(base, new, preset, tolerance)
    now = new.facts()["sources"]
    lines = []
    for variant, old in hashes.items():
        t = table[(table.variant == variant) & table.ratio.notna()].sort_values(["m", "n", "k"])
        c = counts(t)
        tally = ", ".join(f"{c[v]} {v}" for v in JUDGED if c[v])
        lines.append(
            f"{variant}: kernel source {old} -> {now[variant]} (baseline=previous): {tally}"
        )
        for r in t.itertuples():
            lines.append(
                f"  {r.label} {r.dtype} {r.m}x{r.n}x{r.k} {r.memory}: {r.base_ms:.4g} -> "
                f"{r.this_ms:.4g} ms (x{r.ratio:.3f}) {r.verdict}"
            )
    return "Since the previous kernel source:\n" + "\n".join(lines)


SHOWN = {
    "verdict": "verdict",
    "label": "kernel",
    "dtype": "dtype",
    "shape": "m x n x k",
    "memory": "memory",
    "base_ms": "baseline ms",
    "this_ms": "this run ms",
    "ratio": "ratio",
    "change": "change interval",
    "nvbench_verdict": "nvbench's verdict",
    "time_verdict": "in time",
    "cycles_verdict": "in cycles",
    "base_clock_mhz": "baseline SM MHz (measured)",
    "this_clock_mhz": "this run SM MHz (measured)",
    "reason": "nvbench's reason",
    "samples_kind": "samples of",
    "samples": "samples",
}


def html(table: pd.DataFrame, text: str) -> str:
    """The report's comparison table: the summary, then the configurations, changed first."""
    t = table.copy()
    t["shape"] = [f"{r.m}x{r.n}x{r.k}" for r in t.itertuples()]
    t["change"] = [
        f"{lo:+.1%} to {hi:+.1%}" if pd.notna(lo) else ""
        for lo, hi in zip(t.get("change_low", []), t.get("change_high", []), strict=True)
    ] if "change_low" in t else ""  # fmt: skip
    t["samples"] = [f"{b} / {n}" for b, n in zip(t.base_samples, t.this_samples, strict=True)]
    t["_rank"] = t.verdict.map({v: i for i, v in enumerate(ORDER)})
    t = t.sort_values(["_rank", "ratio"], ascending=[True, False])
    t = t.reindex(columns=list(SHOWN)).rename(columns=SHOWN)
    body = t.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.4g}", border=0)
    style = "<style>td, th { white-space: nowrap; padding: 1px 8px; }</style>"
    return f"{style}\n<pre>{escape(text)}</pre>\n{body}\n"


def _clocks(facts: dict) -> str:
    """NVML's median SM clock, and the clock probe's where it measured one."""
    nvml, probe = _mhz(facts["sm_clock_mhz"]), facts.get("sm_clock_probe_mhz")
    return nvml if probe is None or math.isnan(probe) else f"{nvml}, measured {probe:.1f} MHz"


def _mhz(v) -> str:
    return f"{v:.0f} MHz" if v is not None and not math.isnan(v) else "not recorded"


def write_header(head: dict, path: str | Path) -> None:
    Path(path).write_text(json.dumps(head, indent=2, default=str))

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

import math

import numpy as np

# nvbench's verdicts -> ours
VERDICTS = {"SAME": "SAME", "FAST": "FASTER", "SLOW": "SLOWER", "AMBG": "UNSURE", "????": "UNSURE"}


# compare.tolerance's default (module docstring): above the largest difference between two
# processes of the same code measured on an H100 (4.4%), below the edit loop's 10% slowdowns
TOLERANCE = 0.05


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


# the kinds of timed sample a samples file can hold: name -> (times, clocks) keys (samples.Samples)
SAMPLE_KINDS = {"single": ("kernel_ms", "sm_clock_mhz"), "batched": ("batch_ms", "batch_clock_mhz")}


def spread(ms: list[float]) -> float:
    """Width of nvbench's timing interval [min, q3] relative to the median."""
    if len(ms) < 2:
        return math.inf
    q3, med = np.percentile(ms, [75, 50])
    return float((q3 - min(ms)) / med) if med > 0 else math.inf


def quieter(base: dict, new: dict) -> str:
    """The kind of sample both runs hold whose wider interval of the two is the narrower (a
    short kernel's batched samples, usually: burst.py)."""
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
    """The verdict on one configuration from its two sample sets (samples.Samples.kept), on the
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

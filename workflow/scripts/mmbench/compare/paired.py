"""The verdict on two builds measured side by side (measure/paired.py): from the ratio of their
times in each round of pairs, an interval for the ratio, and the verdict from where it lies.

A round times both builds back to back on the same operands, in alternating order (base, this,
then this, base: A B B A ...), so what drifts in time (the SM clock, the temperature, what the
L2 holds) hits both alike and cancels between neighbouring rounds.  Each round gives one ratio
this / base; the comparison works on their logarithms, where a change and its inverse are the
same size.

* The interval (`interval`): SciPy's bootstrap (BCa, 95%) of the 10%-trimmed mean of the log
  ratios (a round hit by a hiccup of the host does not move it) where there are at least
  BOOTSTRAP_MIN rounds; with fewer (a long kernel, whose rounds are few and steady) Student's t
  interval of their mean (`scipy.stats.ttest_1samp`), which is exact for normal errors where a
  bootstrap of a handful of values is too narrow.
* The verdict (`verdict`), with a practical threshold (compare.threshold, default 0.5%):
  FASTER or SLOWER where the interval excludes no change and its centre lies beyond the
  threshold; SAME where the whole interval lies within it; UNSURE otherwise.
* What SAME means (`detectable`): the smallest change this configuration's pairs could have
  called FASTER or SLOWER: a change c is called when |c| exceeds the threshold and the interval
  around it (its half-width, from the pairs' spread) excludes no change, so
  max(threshold, half-width).
* In time and in cycles (time x the SM clock NVML read after each sample): both are judged and
  combined as the runs-apart criterion combines them (criterion.combined: SAME if either is,
  FASTER or SLOWER only if both are).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

# compare.threshold's default: the smallest change a paired comparison calls FASTER or SLOWER
THRESHOLD = 0.005
CONFIDENCE = 0.95
TRIM = 0.1  # the share trimmed from each end of the log ratios before their mean
BOOTSTRAP_MIN = 12  # rounds from which the interval is bootstrapped (below: Student's t)
RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    """The ratio this / base: its centre and its interval (ratios, 1 = no change)."""

    centre: float
    low: float
    high: float
    rounds: int
    method: str

    @property
    def half_width(self) -> float:
        """The interval's half-width as a relative change (the larger side, around the centre)."""
        if not self.centre > 0:
            return math.inf
        return max(self.high / self.centre - 1, 1 - self.low / self.centre)


def log_ratios(base_ms, this_ms) -> np.ndarray:
    """log(this / base) per round (a round's two times, or its summed times)."""
    b, t = np.asarray(base_ms, dtype=np.float64), np.asarray(this_ms, dtype=np.float64)
    if b.shape != t.shape:
        raise ValueError(f"{len(b)} base times against {len(t)} of this build: not pairs")
    if len(b) and (np.any(b <= 0) or np.any(t <= 0) or not np.all(np.isfinite(b * t))):
        raise ValueError("a paired time is not a positive number")
    return np.log(t / b)


def _trimmed(x, axis=-1):
    from scipy import stats

    return stats.trim_mean(x, TRIM, axis=axis)


def _bootstrap(stats, x, confidence: float, seed: int):
    args = dict(confidence_level=confidence, n_resamples=RESAMPLES, method="BCa")
    try:  # SciPy >= 1.15 names its generator rng, older ones random_state
        return stats.bootstrap((x,), _trimmed, rng=np.random.default_rng(seed), **args)
    except TypeError:
        return stats.bootstrap((x,), _trimmed, random_state=np.random.default_rng(seed), **args)


def interval(base_ms, this_ms, confidence: float = CONFIDENCE, seed: int = 0) -> Interval:
    """The interval of the ratio this / base from the rounds' paired times (module docstring)."""
    from scipy import stats

    x = log_ratios(base_ms, this_ms)
    n = len(x)
    if n < 2:
        centre = math.exp(float(x[0])) if n else math.nan
        return Interval(centre, 0.0 if n else math.nan, math.inf if n else math.nan, n, "none")
    if np.ptp(x) == 0:  # every round the same: no spread to draw an interval from
        c = math.exp(float(x[0]))
        return Interval(c, c, c, n, "exact")
    if n >= BOOTSTRAP_MIN:
        res = _bootstrap(stats, x, confidence, seed)
        lo, hi = res.confidence_interval
        if math.isfinite(lo) and math.isfinite(hi):
            return Interval(
                math.exp(float(_trimmed(x))), math.exp(lo), math.exp(hi), n, "bootstrap"
            )
    ci = stats.ttest_1samp(x, 0.0).confidence_interval(confidence)
    return Interval(
        math.exp(float(np.mean(x))), math.exp(ci.low), math.exp(ci.high), n, "student-t"
    )


def verdict(iv: Interval, threshold: float = THRESHOLD) -> str:
    """FASTER / SLOWER / SAME / UNSURE from where the interval lies (module docstring)."""
    if not (iv.low > 0 and math.isfinite(iv.high)):
        return "UNSURE"
    up, down = 1 + threshold, 1 / (1 + threshold)
    if down <= iv.low and iv.high <= up:
        return "SAME"
    if iv.low > 1 and iv.centre > up:
        return "SLOWER"
    if iv.high < 1 and iv.centre < down:
        return "FASTER"
    return "UNSURE"


def detectable(iv: Interval, threshold: float = THRESHOLD) -> float:
    """The smallest relative change these pairs could have called FASTER or SLOWER."""
    return max(threshold, iv.half_width)


def cycles(times, clocks) -> list[float] | None:
    """Each sample's time in cycles (ms x MHz), or None where a clock is missing."""
    if len(clocks) != len(times) or not all(c and c > 0 for c in clocks):
        return None
    return [t * c for t, c in zip(times, clocks, strict=True)]


def judge(samples: dict, threshold: float = THRESHOLD) -> dict:
    """The columns of one configuration's paired verdict from its samples (PairSamples.kept:
    base_ms, this_ms, base_clock_mhz, this_clock_mhz, one each per round)."""
    from mmbench.compare.criterion import combined

    b, t = samples["base_ms"], samples["this_ms"]
    time = interval(b, t)
    out = dict(
        verdict_in_time=verdict(time, threshold),
        ratio_centre=time.centre,
        ratio_low=time.low,
        ratio_high=time.high,
        rounds=time.rounds,
        interval_method=time.method,
        resolution=time.half_width,
        detectable=detectable(time, threshold),
        threshold=threshold,
    )
    bc, tc = (
        cycles(b, samples.get("base_clock_mhz", [])),
        cycles(t, samples.get("this_clock_mhz", [])),
    )
    if bc is not None and tc is not None:
        cyc = interval(bc, tc)
        out |= dict(
            verdict_in_cycles=verdict(cyc, threshold),
            cycles_ratio_low=cyc.low,
            cycles_ratio_high=cyc.high,
        )
        out["verdict"] = combined(out["verdict_in_time"], out["verdict_in_cycles"])
    else:
        out["verdict"] = out["verdict_in_time"]
    return out


def said(verdict_: str, detectable_: float) -> str:
    """A paired verdict in words a reader can weigh: 'SAME (would have seen +-0.4%)'."""
    if verdict_ in ("SAME", "UNSURE") and math.isfinite(detectable_):
        return f"{verdict_} (would have seen +-{detectable_:.1%})"
    return verdict_


# the compare table's columns a paired row fills beyond the runs-apart ones
PAIRED_COLUMNS = [
    "comparison", "verdict_in_time", "verdict_in_cycles", "ratio_centre", "ratio_low",
    "ratio_high", "cycles_ratio_low", "cycles_ratio_high", "rounds", "interval_method",
    "resolution", "detectable", "threshold",
]  # fmt: skip


def table(pairs, samples: dict[str, dict], threshold: float = THRESHOLD, keep=()):
    """The compare table's rows of the configurations measured side by side (a pairs table,
    rule pair_variant, and its samples): both builds' median times, their ratio, the paired
    verdict (REGRESSED where the baseline build verified and this one does not)."""
    import pandas as pd

    rows = []
    for r in pairs.to_dict("records"):
        cid = r["config_id"]
        row = {k: r[k] for k in keep if k in r} | dict(
            config_id=cid,
            comparison="paired",
            base_ms=r.get("base_ms", math.nan),
            this_ms=r.get("this_ms", math.nan),
            base_verification=r["base_verification"],
            this_verification=r["this_verification"],
        )
        s = samples.get(cid)
        if r["base_verification"] == "PASS" and r["this_verification"] in ("FAIL", "ERROR"):
            why = r.get("this_first_mismatches") or r.get("error") or ""
            row |= dict(verdict="REGRESSED", reason=f"PASS in the baseline build, "
                        f"{r['this_verification']} in this one: {str(why)[:200]}",
                        judged=True)  # fmt: skip
        elif not s or not s.get("this_ms"):
            row |= dict(
                verdict="UNSURE", reason=f"no paired samples: {r.get('error') or ''}", judged=False
            )
        else:
            got = judge(s, threshold)
            row |= got | dict(
                judged=True,
                reason=f"{got['rounds']} rounds, {got['interval_method']} interval; in time "
                f"{got['verdict_in_time']}, in cycles {got.get('verdict_in_cycles', 'not judged')}",
            )
        row["ratio"] = row["this_ms"] / row["base_ms"] if row["base_ms"] > 0 else math.nan
        rows.append(row)
    return pd.DataFrame(rows)


def merged(apart, paired):
    """The runs-apart table with its configurations measured side by side replaced by their
    paired rows (and paired ones it lacks added)."""
    import pandas as pd

    if apart is None or not len(apart):
        return paired.reset_index(drop=True)
    if not len(paired):
        return apart.assign(comparison="runs apart")
    rest = apart[~apart.config_id.isin(set(paired.config_id))].assign(comparison="runs apart")
    return pd.concat([paired, rest], ignore_index=True)

"""Two builds of one variant measured side by side, in one worker process on one GPU (the paired
comparison, compare/paired.py judges it).

For each configuration both builds' cubins are loaded in the same context and launched on the
same operands, from the same places (the runner's lanes, sampling.placements): each build's
verified pass is checked as a plain measurement's is (on the device and by Freivalds' test), then
rounds of samples alternate the order of the two (base, this; this, base; ...: A B B A), each
sample a batch of launches behind the blocking kernel (batcher.py; sized as a plain burst's
batches, so a short kernel's sample spans sampling.batch_min_ms) or, where launches cannot be
repeated back to back (a cold cache), the kernel segment of a timed pass.  NVML's SM clock is
read after every sample (cycles = time x clock).  The rounds stop (Pairing) once the ratio's
interval is narrow enough, or at the time limit.
"""

from __future__ import annotations

import logging
import math
from concurrent.futures import wait
from dataclasses import dataclass, field

import numpy as np

from mmbench.core.axes import Configuration
from mmbench.core.axes import describe as describe_axes
from mmbench.core.row import SAMPLES
from mmbench.core.sampling import Sampling, batch_size
from mmbench.measure.runner import Placed, Runner

log = logging.getLogger("mmbench.measure.paired")

BUILDS = ("base", "this")


@dataclass(frozen=True)
class Pairing:
    """When a configuration has enough rounds of pairs (config compare.pairs): at least
    min_rounds and min_time_s of timed GPU time, then as soon as the ratio's interval (Student's
    t on the rounds' log ratios) is at most `target` wide on either side, or at max_time_s or
    max_rounds.  Rounds come in twos, so each order of the builds is taken equally often."""

    min_rounds: int = 4
    min_time_s: float = 0.2
    max_time_s: float = 2.0
    max_rounds: int = 1000
    target: float = 0.002


@dataclass
class PairSamples:
    """One configuration's rounds: each build's time per launch and the SM clock after it, and
    which build ran first in the round."""

    base_ms: list[float] = field(default_factory=list)
    this_ms: list[float] = field(default_factory=list)
    base_clock_mhz: list[float] = field(default_factory=list)
    this_clock_mhz: list[float] = field(default_factory=list)
    first: list[str] = field(default_factory=list)
    batch_size: int = 1
    placements: int = 1
    gpu_s: float = 0.0

    def add(self, name: str, ms: float, clock: float | None) -> None:
        getattr(self, f"{name}_ms").append(ms)
        getattr(self, f"{name}_clock_mhz").append(clock if clock else math.nan)

    def half_width(self) -> float:
        """The t interval's half-width of the mean log ratio, as a relative change."""
        return t_half_width(self.base_ms, self.this_ms)

    def kept(self) -> dict:
        nan_free = lambda xs: [round(x, 3) if x == x else None for x in xs]  # noqa: E731
        return dict(
            base_ms=[round(x, 7) for x in self.base_ms],
            this_ms=[round(x, 7) for x in self.this_ms],
            base_clock_mhz=nan_free(self.base_clock_mhz),
            this_clock_mhz=nan_free(self.this_clock_mhz),
            first=self.first,
            batch_size=self.batch_size,
            placements=self.placements,
        )


def t_half_width(base_ms, this_ms) -> float:
    """Student's t 95% half-width of the rounds' mean log ratio, as a relative change: what the
    stopping rule watches (the verdict's own interval is compare/paired.py's)."""
    n = len(this_ms)
    if n < 2:
        return math.inf
    x = np.log(np.asarray(this_ms) / np.asarray(base_ms))
    return math.expm1(_t975(n - 1) * float(np.std(x, ddof=1)) / math.sqrt(n))


_T975: dict[int, float] = {}


def _t975(dof: int) -> float:
    if dof not in _T975:
        from scipy import stats

        _T975[dof] = float(stats.t.ppf(0.975, dof))
    return _T975[dof]


def enough(s: PairSamples, p: Pairing) -> bool:
    n = len(s.this_ms)
    if n % 2 or n < 2:
        return False
    if n >= p.max_rounds or s.gpu_s >= p.max_time_s:
        return True
    return n >= p.min_rounds and s.gpu_s >= p.min_time_s and s.half_width() <= p.target


def rounds(sites: list[dict[str, Placed]], sampling: Sampling, pairing: Pairing,
           repeatable: bool, clock) -> PairSamples:  # fmt: skip
    """The rounds of pairs over the sites (each: build -> its Placed on one placement)."""
    out = PairSamples(placements=len(sites))

    def sample(site: Placed, count: int) -> float:
        if not repeatable:
            return site.one_pass()[1]
        return site.lane.batcher().run(site.launch, count, warm=True) / count

    # one launch of each, untimed in the result: its length sizes the batches
    first = sites[0]
    longest = max(sample(first[name], 1) for name in BUILDS)
    count = batch_size(longest, sampling) if repeatable else 1
    out.batch_size = count
    while not enough(out, pairing):
        r = len(out.this_ms)
        site = sites[r % len(sites)]
        order = BUILDS if r % 2 == 0 else BUILDS[::-1]
        out.first.append(order[0])
        for name in order:
            ms = sample(site[name], count)
            out.add(name, ms, clock())
            out.gpu_s += ms * count / 1e3
    return out


class PairedRunner(Runner):
    """A Runner whose configurations are measured in two builds: `cubins` (this build) and
    `baseline` (instantiation slug -> the baseline build's cubin for the same configuration).
    `base_variant`: the registry entry the baseline build launches with where it is not this
    run's (a kernel file of an older tree with its own registry: grid, arguments and shape
    facts as that tree launched it)."""

    def __init__(self, variant, cubins: dict[str, str], baseline: dict[str, str],
                 sampling: Sampling, pairing: Pairing, provenance: dict | None = None,
                 freivalds_vectors: int = 2, base_variant=None, session=None):  # fmt: skip
        super().__init__(variant, cubins, sampling, provenance, freivalds_vectors, session)
        self.baseline = baseline
        self.pairing = pairing
        self.entry = {"base": base_variant or self.variant, "this": self.variant}

    def measure(self, conf: Configuration, state: dict) -> dict:
        ref = self.reference(conf, state)
        pl = self.placement(conf, state, ref)
        if conf.instance not in self.baseline:
            raise RuntimeError(f"no baseline build of instantiation {conf.instance}")
        # a library call's builds are the call itself ("")
        cubins = dict(base=self.baseline[conf.instance], this=self.cubins.get(conf.instance))
        first = {b: self.site(conf, pl, self.lanes[0], cubins[b], self.entry[b]) for b in BUILDS}
        nothing = first["this"].spec.empty and not self.variant.library_launched
        repeatable = conf.cache != "cold" and not nothing
        verdicts, busy = {}, 0.0
        for b in BUILDS:  # one at a time: both use the same host copy of the result
            checks = self.verified_pass(conf, pl, ref, first[b])
            try:
                checks.device(ref.check_device(self.cp, checks.host_c))
                verdicts[b] = ref.columns(
                    checks.checked, checks.verify_ms, checks.freivalds.result(), checks.outside
                )
            finally:
                wait([checks.freivalds])  # never two checks at once, whatever failed
            busy += checks.busy
        others = self.moved(pl, len(self.lanes) - 1)
        sites = [first] + [
            {b: self.site(conf, p, lane, cubins[b], self.entry[b]) for b in BUILDS}
            for p, lane in zip(others, self.lanes[1:], strict=False)
        ]
        pairs = rounds(sites, self.sampling, self.pairing, repeatable, self.nvml.sm_clock)
        return self.pair_row(conf, verdicts, pairs, busy)

    def pair_row(self, conf, verdicts: dict, pairs: PairSamples, busy: float) -> dict:
        """The pair's row (the worker adds both builds' cubin hashes, as to every row)."""
        b, t = verdicts["base"], verdicts["this"]
        worst = next((v["verification"] for v in (b, t) if v["verification"] != "PASS"), "PASS")
        return (
            self.axes(conf)
            | dict(
                verification=worst,
                base_verification=b["verification"],
                this_verification=t["verification"],
                base_first_mismatches=b.get("first_mismatches", ""),
                this_first_mismatches=t.get("first_mismatches", ""),
                base_ms=float(np.median(pairs.base_ms)),
                this_ms=float(np.median(pairs.this_ms)),
                rounds=len(pairs.this_ms),
                batch_size=pairs.batch_size,
                placements=pairs.placements,
                pairs_gpu_s=pairs.gpu_s,
                gpu_busy_ms=busy + pairs.gpu_s * 1e3,
                error="",
            )
            | self.provenance()
            | {SAMPLES: pairs.kept()}
        )

    def error_row(self, conf: Configuration, message: str) -> dict:
        return (
            self.axes(conf)
            | dict(
                verification="ERROR",
                base_verification="ERROR",
                this_verification="ERROR",
                rounds=0,
                error=message,
            )
            | self.provenance()
        )

    def describe(self, row: dict) -> str:
        head = describe_axes(row)
        if row.get("verification") == "ERROR" and not row.get("rounds"):
            return f"{head}: ERROR {row.get('error', '')}"
        s = row[SAMPLES]
        ratio = math.exp(float(np.mean(np.log(np.asarray(s["this_ms"]) / s["base_ms"]))))
        return (
            f"{head}: base {row['base_ms']:.4g} ms, this {row['this_ms']:.4g} ms, ratio "
            f"x{ratio:.4f} +-{t_half_width(s['base_ms'], s['this_ms']):.2%} over "
            f"{row['rounds']} rounds of {row['batch_size']} launch(es), "
            f"{row['base_verification']}/{row['this_verification']}"
        )

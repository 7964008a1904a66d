"""The rates derived from a row's measurements, computed where a table is made from the rows
(service/jobs.py), so that the GPU job records measurements only: GFLOP/s from the kernel time
(the load's statistic, core/sampling.Load.statistic) and from the global time, and, where the
energy rule held (a sustained window's mean power), joules per product and GFLOP/s per watt.
The timings schema checks the first two against the FLOP count where a table is read."""

from __future__ import annotations

import math
from collections.abc import Mapping

from . import arith


def rates(row: Mapping) -> dict:
    """A measured row's rate columns (NaN where the time or the power they come from is)."""
    nflop = arith.flops(row["m"], row["n"], row["k"], row["accumulate"], row["operation"])
    kernel_ms = row.get("kernel_ms", math.nan)
    gflops = arith.gflops(nflop, kernel_ms)
    out = dict(
        kernel_gflops=gflops,
        global_gflops=arith.gflops(nflop, row.get("global_ms_median", math.nan)),
        energy_j_per_product=math.nan,
        gflops_per_w=math.nan,
    )
    watts = row.get("energy_power_w", math.nan)
    if watts == watts:  # the energy rule held: the window's mean power, kernels back to back
        out |= dict(energy_j_per_product=watts * kernel_ms / 1e3, gflops_per_w=gflops / watts)
    return out


def with_rates(row: dict) -> dict:
    """The row with its rate columns computed from its measurements."""
    return row | rates(row)

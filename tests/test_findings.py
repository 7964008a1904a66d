"""report/findings.py: the sentences under the figures, computed from the tables without
matplotlib; checked on small hand-made tables whose answers are counted by hand."""

from __future__ import annotations

import subprocess
import sys

import pandas as pd

from mmbench.report import findings

from .conftest import ROOT


def test_the_findings_need_no_plotting_library():
    code = "import sys, mmbench.report.findings; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr


def test_the_copies_share_of_the_global_time_by_hand():
    """Fastest: 1 ms kernel, 1 + 2 ms copies -> 3 / 4 = 75%; slowest: 9 ms kernel, 0.5 + 0.5 ms
    copies -> 1 / 10 = 10%."""
    d = pd.DataFrame(
        dict(m=[512, 512], series=["tiled", "naive"], kernel_ms_median=[1.0, 9.0],
             h2d_ms_median=[1.0, 0.5], d2h_ms_median=[2.0, 0.5])
    )  # fmt: skip
    assert findings.transfer_share(d) == (
        "at N = 512, HtoD + DtoH take 75% of the global time for the fastest kernel (tiled, "
        "1 ms) and 10% for the slowest (naive, 9 ms)."
    )


def test_the_closest_to_cublas_is_read_at_the_largest_size_only():
    """At 1024 (the largest size) a reaches 0.9 of cuBLAS and b 0.456; at 512 b's 0.99 does not
    count."""
    d = pd.DataFrame(
        dict(m=[512, 1024, 512, 1024], series=["a", "a", "b", "b"],
             fraction=[0.5, 0.9, 0.99, 0.456])
    )  # fmt: skip
    assert findings.closest_to_cublas(d) == (
        "at N = 1024 the closest to cuBLAS is a at 90% of its rate; the furthest, b, at 45.6%."
    )


def test_sizes_one_apart_are_said_with_their_largest_step():
    """640 and 641 are drawn at one place on the size axis: the note names the largest step
    between them (by hand: b goes 1.0 -> 3.0 ms, a 1.0 -> 1.1 ms; 1024 has no neighbour)."""
    d = pd.DataFrame(
        dict(series=["a", "a", "a", "b", "b", "b"], m=[640, 641, 1024] * 2,
             kernel_ms=[1.0, 1.1, 2.0, 1.0, 3.0, 4.0])
    )  # fmt: skip
    assert findings.near_sizes(d, "kernel_ms", "ms") == (
        "N = 640 and 641 are one apart, drawn at one place: a vertical step there is what one "
        "more row and column change (the largest: b, 1 ms at 640 and 3 ms at 641)."
    )
    assert findings.near_sizes(d[d.m != 641], "kernel_ms", "ms") == ""


def test_many_roofline_kernels_are_said_by_kind_of_bound():
    """Seven CUDA-core kernels (more than six: grouped), by hand: two compute-bound (>= 50% of
    the FMA roof), four on chip, one below the ridge."""
    rows = []
    for v, frac, bound in (("a", 0.9, "compute"), ("b", 0.6, "compute"), ("c", 0.3, "compute"),
                           ("d", 0.2, "compute"), ("e", 0.25, "compute"), ("f", 0.4, "compute"),
                           ("g", 0.18, "memory")):  # fmt: skip
        rows.append(dict(variant=v, label=v, m=4096, dtype="float32", fraction_of_attainable=frac,
                         bound=bound, arithmetic_intensity=100.0, achieved_gflops=1e4,
                         peak_gflops=5e4, flop_source="ncu"))  # fmt: skip
    note = findings.roofline_note(pd.DataFrame(rows), has_l1=False)
    assert note == (
        "on the CUDA cores, placed by DRAM bytes: compute-bound (at least half the FMA roof): "
        "a float32 90%, b float32 60%; above the ridge yet under half the FMA roof (on chip: "
        "loads, latency): f float32 40%, c float32 30%, e float32 25%, d float32 20%; below the "
        "ridge yet under half the DRAM roof: g float32 18%."
    )

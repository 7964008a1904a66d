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

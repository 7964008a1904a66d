"""lab/benchmarks/sample_counts.py: what stopping at max_samples buys, from a recorded run."""

from __future__ import annotations

import csv
import importlib.util
import subprocess
import sys

from .conftest import EVIDENCE as DATA
from .conftest import LAB, open_text

SCRIPT = LAB / "benchmarks" / "sample_counts.py"
LADDER = DATA / "h200-ladder" / "results" / "ladder"


def test_where_the_noise_rule_stops_by_hand():
    """Three equal samples: the mean's noise is 0 at the rule's minimum of 3 samples.  Samples
    alternating 1 and 3 ms: s = 1.0 (n even), the mean 2, so the noise is 0.5 / sqrt(n), above
    0.5% until n = 10 000: never within 50."""
    spec = importlib.util.spec_from_file_location("sample_counts", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from mmbench.core.sampling import Sampling

    s = Sampling(stop="noise")
    assert module.where_noise_stops([2.0, 2.0, 2.0, 2.0], s) == 3
    assert module.where_noise_stops([1.0, 3.0] * 25, s) is None


def test_the_recorded_ladder_counts_its_capped_configurations():
    """The count printed is the recorded table's rows with 100 samples, counted here from the
    CSV itself; the median shift by hand from the samples files (gzip, json and statistics,
    |median(first 20) / median(all) - 1| over the 196 capped configurations): 0.36%."""
    with open_text(LADDER / "tables" / "timings.csv") as f:
        rows = list(csv.DictReader(f))
    capped = sum(float(r["samples"]) >= 100 for r in rows)
    out = subprocess.run([sys.executable, str(SCRIPT), str(LADDER)], capture_output=True,
                         text=True, check=True).stdout  # fmt: skip
    assert out.startswith(f"{capped} of {len(rows)} configurations took 100 samples")
    assert capped == 196 and len(rows) == 440
    assert "median of the first 20 samples against all: moved by a median 0.36%" in out

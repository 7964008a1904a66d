"""The ladder at any shape (report/ladder.py shapes_summary, the `shapes` table and the
`any_shape` figure), read from the ladder at every size recorded on an H100: each class's
geometric mean and least share recomputed here by hand from the recorded rows."""

from __future__ import annotations

import csv
import lzma
import math
import statistics
from collections import defaultdict

import pytest

from mmbench.core.schemas import read_table
from mmbench.report import ladder

from .conftest import DATA

SWEEP = DATA / "h100-sweep" / "results" / "sweep" / "tables" / "timings.csv.xz"


def _fp64_by_hand() -> dict[tuple[int, int, int], tuple[float, str]]:
    """Per product: ws_f64's fastest verified rate over cuBLAS's DGEMM, normal inputs, under
    sustained load where the product was measured so, else in bursts; and its tuned_for."""
    with lzma.open(SWEEP, "rt") as fh:
        rows = [r for r in csv.DictReader(fh) if r["dtype"] == "float64"
                and r["distribution"] == "normal" and r["verification"] == "PASS"]  # fmt: skip
    by = defaultdict(list)
    for r in rows:
        by[(int(r["m"]), int(r["n"]), int(r["k"]))].append(r)
    out = {}
    for shape, rs in by.items():
        load = "sustained" if any(r["load"] == "sustained" for r in rs) else "burst"
        mine = [r for r in rs if r["load"] == load]
        ref = statistics.median(float(r["kernel_gflops"]) for r in mine if r["variant"] == "cublas")
        best = max((r for r in mine if r["variant"] == "ws_f64"),
                   key=lambda r: float(r["kernel_gflops"]))  # fmt: skip
        out[shape] = (float(best["kernel_gflops"]) / ref, best["tuned_for"])
    return out


def test_a_class_s_geometric_mean_and_least_share_are_its_products_by_hand():
    hand = _fp64_by_hand()
    shares = [s for s, _ in hand.values()]
    gmean = math.exp(sum(math.log(s) for s in shares) / len(shares))
    least = min(hand, key=lambda p: hand[p][0])
    saw = sum(f"tuned at {m}x{n}x{k}" in tf for (m, n, k), (_, tf) in hand.items())
    table = ladder.shapes_summary(read_table(SWEEP, "timings")).set_index("precision")
    fp64 = table.loc["FP64"]
    assert fp64["products"] == len(hand) == 20
    assert fp64["geometric mean % of ref"] == pytest.approx(100 * gmean, abs=0.05)
    assert fp64["minimum % of ref"] == pytest.approx(100 * hand[least][0], abs=0.05)
    assert fp64["at"] == ladder.shape_words(*least) and fp64["by"] == "ws_f64"
    assert fp64["the tuning saw"] == saw and 0 < saw < 20
    assert fp64["met"] == ("yes" if gmean >= 0.95 and hand[least][0] >= 0.85 else "no")
    assert list(table.index) == ["FP32", "TF32", "BF16", "FP64"]


def test_the_figure_draws_each_product_and_its_note_gives_the_classes_means(tmp_path, monkeypatch):
    from mmbench.report import figures

    hand = _fp64_by_hand()
    gmean = math.exp(sum(math.log(s) for s, _ in hand.values()) / len(hand))
    timings = read_table(SWEEP, "timings")
    paths = figures.any_shape(timings, tmp_path / "any_shape", condition="normal inputs")
    assert (tmp_path / "any_shape.png").stat().st_size > 30_000 and len(paths) == 2
    drawn = []
    monkeypatch.setattr(figures, "save", lambda fig, stem: drawn.append(fig) or [])
    figures.any_shape(timings, tmp_path / "again", condition="normal inputs")
    (fig,) = drawn
    note = " ".join(t.get_text() for t in fig.texts).replace("\n", " ")
    assert f"FP64: geometric mean {100 * gmean:.1f}% (target 95%)" in note
    # each product a point: the FP64 panel holds the 20 products in its two marker sets
    fp64 = [ax for ax in fig.axes if ax.get_title().startswith("FP64")][0]
    assert sum(len(c.get_offsets()) for c in fp64.collections) == len(hand) == 20

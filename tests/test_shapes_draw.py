"""Products drawn from a seed (plan/shapes.py, config `draw`): what each family promises, checked
on the drawn shapes against its definition, and the config's refusals."""

from __future__ import annotations

import importlib.util
import math
from collections import Counter

import pytest
import yaml

from mmbench.core.registry import load_registry
from mmbench.plan.config import ConfigError, shapes_of, validate
from mmbench.plan.shapes import FAMILIES, LLM_WIDTHS, draw

from .conftest import ROOT, snakemake


def test_a_seed_draws_the_same_products_and_another_seed_others():
    first = draw(20261202, 64)
    assert draw(20261202, 64) == first
    assert draw(20261203, 64) != first
    assert len(first) == len(set(first)) == 64


def test_each_family_draws_its_share_within_its_definition():
    shapes = draw(7, 64)
    # 64 over 4 families: 16 each, in the order given
    logu, small, square, llm = (shapes[i * 16 : (i + 1) * 16] for i in range(4))
    assert all(16 <= side <= 16384 for s in logu for side in s)
    for m, n, k in small:  # m or n at most 320 against two sides from 4096
        lo, hi = min(m, n), max(m, n)
        assert 16 <= lo <= 320 and hi >= 4096 and k >= 4096
    assert all(m == n == k and 1024 <= m <= 16384 for m, n, k in square)
    products = {
        p for h, f in LLM_WIDTHS for p in ((3 * h, h), (h, h), (f, h), (h, f))
    }  # attention in and out, MLP up and down (n, k), before the cap at 16384
    for m, n, k in llm:
        assert m in (512, 1024, 2048, 4096, 8192, 16384)
        assert any((min(a, 16384), min(b, 16384)) == (n, k) for a, b in products), (m, n, k)


def test_a_log_uniform_side_falls_below_the_geometric_mean_half_the_time():
    """log-uniform on [16, 16384]: P(side < sqrt(16 * 16384) = 512) = 1/2."""
    sides = [s for shape in draw(3, 3000, families=["log_uniform"]) for s in shape]
    below = sum(s < 512 for s in sides) / len(sides)
    assert abs(below - 0.5) < 0.03, below
    # and 3 of the 10 octaves from 16 to 16384 lie below 128: P(side < 128) = 0.3
    assert abs(sum(s < 128 for s in sides) / len(sides) - 0.3) < 0.03


def test_the_count_is_shared_out_with_the_first_families_taking_the_remainder():
    shapes = draw(11, 7, families=["square", "one_small_side", "log_uniform"])
    kinds = ["square" if m == n == k else ("small" if min(m, n) <= 320 else "other")
             for m, n, k in shapes]  # fmt: skip
    assert kinds[:3] == ["square"] * 3  # 7 = 3 + 2 + 2
    assert Counter(kinds[3:5]) == Counter({"small": 2})


def test_an_unknown_family_or_reversed_bounds_are_refused_naming_the_value():
    with pytest.raises(ValueError, match="unknown family 'cube'.*log_uniform"):
        draw(1, 4, families=["cube"])
    with pytest.raises(ValueError, match="1 <= low <= high"):
        draw(1, 4, low=500, high=100)


def _validate(**draw_cfg):
    return validate(dict(draw=draw_cfg), load_registry())


def test_the_config_draws_into_the_plans_products():
    cfg = _validate(count=8, seed=5)
    drawn = draw(5, 8)
    assert shapes_of(cfg)[-8:] == drawn
    assert len(shapes_of(cfg)) == 4 + 8  # config.yaml's four square sizes, then the draw
    assert math.prod(drawn[0]) > 0


def test_a_count_without_a_seed_is_refused_saying_how_to_give_one():
    with pytest.raises(ConfigError) as err:
        _validate(count=64)
    text = str(err.value)
    assert "config key 'draw.seed': null, with draw.count = 64" in text
    assert "--config 'draw={count: 64, seed:" in text


def test_reversed_bounds_and_unknown_families_are_refused_by_the_config():
    with pytest.raises(ConfigError, match="'draw.low': 900 is above draw.high = 100"):
        _validate(count=4, seed=1, low=900, high=100)
    with pytest.raises(ConfigError, match="draw.families"):
        _validate(count=4, seed=1, families=["cube"])


def test_every_family_is_a_valid_config_value():
    cfg = _validate(count=4, seed=1, families=list(FAMILIES))
    assert len(shapes_of(cfg)) == 4 + 4


def test_the_shapes_preset_plans_its_drawn_products_and_asks_for_a_seed():
    """config/presets/shapes.yaml without a seed stops before any job, saying how to give one;
    with one, the dry run plans a measurement job per variant over the 64 drawn products."""
    preset = ("--configfile", "config/presets/shapes.yaml", "--config", "arch=sm_90",
              "tuned_gpu=NVIDIA H100 80GB HBM3")  # fmt: skip
    out = snakemake("-n", "--cores", "1", *preset)
    assert out.returncode == 1
    assert "config key 'draw.seed': null, with draw.count = 64" in out.stderr
    out = snakemake("-n", "--cores", "1", *preset, "draw={count: 64, seed: 20261202}")
    assert out.returncode == 0, out.stderr[-3000:]
    stats = dict(line.split()[:2] for line in out.stdout.split("Job stats:")[1].splitlines()[3:]
                 if line.strip())  # fmt: skip
    variants = yaml.safe_load((ROOT / "config" / "presets" / "shapes.yaml").read_text())
    # 31 variants; the three Triton ones are left out where Triton is not installed (its extra)
    triton = importlib.util.find_spec("triton") is not None
    assert len(variants["variants"]) == 31
    assert stats["measure_variant"] == ("31" if triton else "28")


# kernels/tuned.csv's H100 rows at 4096^3 in FP32: six course and blocking rungs imply cuBLAS at
# 51 625.6 GFLOP/s (e.g. tiled_guarded 8732.448 GFLOP/s at 16.91495% of it), warptile_db, tuned
# in a later run, 47 757.146 / 0.9243497 = 51 665.7: the fastest, 51 665.7, is kept.  A 4096^3
# product (2 * 4096^3 = 137.439 GFLOP) then takes 137.439 / 51 665.7 s = 2.660 ms.
H100 = "NVIDIA H100 80GB HBM3"


def _planned(**over):
    from mmbench.plan.experiment import start
    from mmbench.report import catalogue

    cfg = dict(variants=["warptile_db", "cublas"], dtypes=["float32"], sizes=[1024, 4096],
               load=["burst", "sustained"], sustained_from_ms=1.0, tuned="kernels/tuned.csv",
               tuned_gpu=H100, arch="sm_90", distribution=["normal"]) | over  # fmt: skip
    return start(cfg, ROOT, outputs=catalogue.names())


def test_a_products_time_is_estimated_from_the_tuning_tables_cublas_rate():
    from mmbench.plan.tuning import estimated_ms, read_tuned, reference_rates

    rates = reference_rates(read_tuned(ROOT / "kernels" / "tuned.csv"), H100)
    at_4096 = [r for r in rates["float32/ieee"] if r[:3] == [4096, 4096, 4096]]
    assert at_4096 and at_4096[0][3] == pytest.approx(51665.7, rel=1e-5)
    assert estimated_ms({"reference_rates": rates}, "float32", "ieee", 4096, 4096, 4096) == (
        pytest.approx(2.660, abs=0.001)
    )
    assert {"float32/tf32", "bfloat16/ieee", "float64/ieee", "float8_e4m3/ieee"} <= set(rates)
    # tmastore_fp8's rows hold no share (its tune ran without cuBLASLt): the FP8 rate at 4096 is
    # persistent_fp8's row's, 1 016 901.6 GFLOP/s at 92.214% of cuBLASLt
    fp8 = [r for r in rates["float8_e4m3/ieee"] if r[:3] == [4096, 4096, 4096]]
    assert len(fp8) == 1 and fp8[0][3] == pytest.approx(1102766.5, rel=1e-6)


def test_sustained_from_ms_puts_the_long_products_of_a_class_under_sustained_load():
    """At 1 ms: 4096^3 in FP32 (2.660 ms by the table's cuBLAS) sustained and in bursts, 1024^3
    (64 times less work) in bursts only; the rung and its cuBLAS alike."""
    exp = _planned()
    loads = {(v, r.m, r.load) for v, runs in exp.plan.runs.items() for r in runs}
    for v in ("warptile_db", "cublas"):
        assert (v, 4096, "sustained") in loads and (v, 4096, "burst") in loads
        assert (v, 1024, "burst") in loads and (v, 1024, "sustained") not in loads


@pytest.mark.parametrize(
    "over,words",
    [
        (dict(load=["sustained"]), "chooses between sustained load and bursts, but load"),
        (dict(sustained_sizes=[4096]), "both choose the sustained products"),
        (dict(tuned=""), "estimates each product's time from the tuning table's cuBLAS rates"),
        # an H200 with the kept table (H100 rows only), and nothing to pin (cuBLAS alone, as
        # the shapes preset's calibrated rungs): the model to name instead
        (
            dict(tuned_gpu="NVIDIA H200", variants=["cublas"]),
            "holds no rows of 'NVIDIA H200' (GPU models in it: "
            "NVIDIA H100 80GB HBM3); valid: another model's rates, "
            'named, with --config "tuned_gpu=NVIDIA H100 80GB HBM3"',
        ),
    ],
)
def test_sustained_from_ms_without_what_it_needs_is_refused(over, words, capsys):
    with pytest.raises(SystemExit):  # the run stops before any job, saying why
        _planned(**over)
    said = capsys.readouterr().err
    assert "config key 'sustained_from_ms': 1.0" in said and words in said


def test_cublaslt_runs_a_product_it_refuses_padded_to_multiples_of_16():
    """cuBLASLt's FP8 matmul takes n and k multiples of 16 only (registry `requires`, as
    PyTorch's scaled_mm checks): at 64 x 4100 x 4096 and 64 x 4105 x 4096 it runs 64 x 4112 x
    4096 (4100 and 4105 rounded up to 16: 257 x 16), once for both, while the FP8 rung runs
    each product itself; 64 x 4096 x 4096 it runs as it is.  Nothing is refused."""
    exp = _planned(variants=["persistent_fp8", "cublaslt_fp8"], dtypes=["float8_e4m3"],
                   sizes=[], shapes=[[64, 4100, 4096], [64, 4105, 4096], [64, 4096, 4096]],
                   load=["burst"], sustained_from_ms=None)  # fmt: skip
    shapes = {v: sorted({(r.m, r.n, r.k) for r in runs}) for v, runs in exp.plan.runs.items()}
    assert shapes["cublaslt_fp8"] == [(64, 4096, 4096), (64, 4112, 4096)]
    assert shapes["persistent_fp8"] == [(64, 4096, 4096), (64, 4100, 4096), (64, 4105, 4096)]
    assert [r for r in exp.plan.refused if r["variant"] == "cublaslt_fp8"] == []

"""plan/experiment.py: one invocation planned before any job, as common.smk gets it (no
Snakemake here)."""

from __future__ import annotations

import pytest

from mmbench.plan import plan
from mmbench.plan.config import ConfigError
from mmbench.plan.experiment import prepare
from mmbench.report.catalogue import names

from .conftest import DATA, ROOT


def test_the_default_experiment_plans_the_course_kernels_into_results():
    exp = prepare({"arch": "sm_90"}, ROOT, outputs=names())
    # config/config.yaml's variants, written out by hand
    assert list(exp.plan.runs) == ["naive_unguarded", "naive_guarded", "naive_xrow",
                                   "tiled_unguarded", "tiled_guarded", "coarsened", "cublas"]  # fmt: skip
    assert exp.results == "results" and exp.arch == "sm_90" and not exp.render_only
    preset = prepare({"arch": "sm_90", "experiment": "ladder", "variants": ["ladder"]}, ROOT,
                     outputs=names())  # fmt: skip
    assert preset.results == "results/ladder"
    assert {"persistent_bf16", "ws_f64", "cublas_tf32"} <= set(preset.plan.runs)


def test_without_a_gpu_a_comparison_is_told_to_say_render_only(tmp_path):
    if plan.detect_gpus():
        pytest.skip("a GPU is visible here: this test is for machines without one")
    exp = prepare({"baseline": str(DATA / "compare" / "h100-a")}, ROOT, outputs=names())
    assert exp.arch is None
    assert "add render_only=true" in exp.arch_problem


def test_a_bad_key_stops_the_planning_with_its_name():
    with pytest.raises(
        ConfigError, match=r"config key 'sizes\[0\]': 'many' is not of type integer"
    ):
        prepare({"arch": "sm_90", "sizes": "many"}, ROOT, outputs=names())

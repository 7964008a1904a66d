"""tools/: every tool and every stage of the GPU checks is in tools/README.md's tables, and
tools/gpu.sh dispatches every stage its README lists (no GPU needed: the dispatch of an unknown
stage is refused before anything runs)."""

from __future__ import annotations

import re
import subprocess
import sys

from .conftest import ROOT

TOOLS = ROOT / "tools"


def _table_names(text: str) -> set[str]:
    return {m.split()[0] for m in re.findall(r"^\| `([^`]+)`", text, re.MULTILINE)}


def test_the_readme_lists_every_tool_and_every_stage():
    listed = _table_names((TOOLS / "README.md").read_text())
    gpu = (TOOLS / "gpu.sh").read_text()
    stages = set(re.findall(r"^([a-z-]+)\)$", gpu, re.MULTILINE))  # written in gpu.sh
    assert {"tests", "main", "rebuild-check", "builds", "memcheck"} <= stages
    scripts = {p.stem for p in (TOOLS / "gpu").glob("*.sh")}  # tools/gpu/<stage>.sh
    for stage in scripts:
        assert re.search(rf"\b{stage}\b[^\n]*\) exec", gpu), f"gpu.sh does not run {stage}"
    files = {p.name for p in TOOLS.glob("*.py")}
    missing = (stages | scripts | files) - listed
    assert not missing, sorted(missing)
    assert not listed - stages - scripts - files, sorted(listed - stages - scripts - files)


def test_an_unknown_stage_is_refused_with_the_valid_ones(tmp_path):
    out = subprocess.run(
        ["bash", str(TOOLS / "gpu.sh"), "no-such-stage", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=ROOT, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 2
    assert "unknown stage no-such-stage; valid: tests, main, rebuild-check, builds" in out.stderr


def test_a_preset_subset_runs_the_variants_named_in_their_ladder_types(tmp_path):
    """ws_bf16 is a rung in bfloat16 (registry `ladder:`); cuBLAS in the types given; with
    --no-profile nothing is profiled and the report is the verification table."""
    import yaml

    out = tmp_path / "sub.yaml"
    subprocess.run(
        [sys.executable, str(TOOLS / "preset_subset.py"), "config/presets/ladder.yaml",
         "[ws_bf16,cublas:bfloat16+float64]", str(out), "--no-profile", "--sizes", "[4096]"],
        check=True, cwd=ROOT, capture_output=True,
    )  # fmt: skip
    config = yaml.safe_load(out.read_text())
    assert config["variants"] == ["ws_bf16", "cublas"]
    assert config["params"] == {"ws_bf16": {"dtype": ["bfloat16"]},
                                "cublas": {"dtype": ["bfloat16", "float64"]}}  # fmt: skip
    assert config["sizes"] == [4096] and config["shapes"] == []
    assert config["profile"] == {"enabled": False}
    assert config["report"] == {"figures": [], "tables": ["verification"]}


def test_the_profile_runner_plans_the_tuned_instantiations_as_the_workflow_does():
    """tools/profile_runner.py measures one variant of a preset as its measurement job would:
    the recorded H100 ladder run (tests/data/h100-ladder) measured warptile_db in 18
    configurations of its tuned instantiations (counted from its timings table), not the whole
    grid the registry declares."""
    import importlib.util

    import pandas as pd

    from mmbench.core.registry import load_registry

    spec = importlib.util.spec_from_file_location("profile_runner", TOOLS / "profile_runner.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    recorded = pd.read_csv(ROOT / "tests/data/h100-ladder/results/ladder/tables/timings.csv")
    rows = recorded[recorded.variant == "warptile_db"]
    plan, cfg = runner.plan_for(
        str(ROOT / "config/presets/ladder.yaml"), "warptile_db", "sm_90",
        [{"name": rows.gpu_name.iloc[0]}], load_registry(),
    )  # fmt: skip
    assert len(plan.runs["warptile_db"]) == len(rows) == 18
    assert {c.instance for c in plan.runs["warptile_db"]} == set(rows.instance)
    assert cfg["variants"] == ["warptile_db"]

"""tools/: every tool and every stage of the GPU checks is in tools/README.md's tables, and
tools/gpu.sh dispatches every stage its README lists (no GPU needed: the dispatch of an unknown
stage is refused before anything runs)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

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
    the recorded ladder run (tests/data/h200-ladder, an H200 with the H100's tuning: its rows'
    tuned_for) measured warptile_db in 18 configurations of its tuned instantiations (counted
    from its timings table), not the whole grid the registry declares; without the H100's
    tuning named, an H200 has no tuned parameters and the plan is refused."""
    import importlib.util

    import pandas as pd

    from mmbench.core.registry import load_registry

    spec = importlib.util.spec_from_file_location("profile_runner", TOOLS / "profile_runner.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    recorded = pd.read_csv(ROOT / "tests/data/h200-ladder/results/ladder/tables/timings.csv")
    rows = recorded[recorded.variant == "warptile_db"]
    assert rows.tuned_for.str.startswith("tuned on NVIDIA H100 80GB HBM3;").all()
    args = (str(ROOT / "config/presets/ladder.yaml"), "warptile_db", "sm_90",
            [{"name": rows.gpu_name.iloc[0]}], load_registry())  # fmt: skip
    plan, cfg = runner.plan_for(*args, tuned_gpu="NVIDIA H100 80GB HBM3")
    assert len(plan.runs["warptile_db"]) == len(rows) == 18
    assert {c.instance for c in plan.runs["warptile_db"]} == set(rows.instance)
    assert cfg["variants"] == ["warptile_db"]
    from mmbench.plan.config import ConfigError

    with pytest.raises(ConfigError, match="no tuned parameters of warptile_db for 'NVIDIA H200'"):
        runner.plan_for(*args)


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_same_cubins_counts_the_hot_loops_math_through_nvdisasm(tmp_path):
    """tools/same_cubins.py --loops on tiled_guarded TILE=32 against a copy slowed by
    tools/slowdown.py (a second pass over each shared-memory tile): by hand, the k-loop over the
    tiles holds TILE = 32 FFMAs of the product, and the slowed copy 32 more, so its hot loop's
    math goes from 32 to 64 and the order cannot be the same.  The unchanged source's cubin is
    byte-identical (nothing to say about its loop).  Needs nvcc and nvdisasm (the test extra's
    nvidia-cuda-nvdisasm)."""
    sys.path.insert(0, str(TOOLS))
    import same_cubins

    if same_cubins.find_nvdisasm() is None:
        pytest.fail("no nvdisasm: the test extra installs nvidia-cuda-nvdisasm")
    old = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", old)
    subprocess.run([sys.executable, str(TOOLS / "slowdown.py"), str(old / "05_tiled_guarded.cu")],
                   check=True, capture_output=True)  # fmt: skip
    run = [sys.executable, str(TOOLS / "same_cubins.py"), str(old), "tiled_guarded",
           "--instance", "float32_TILE32", "--loops"]  # fmt: skip
    out = subprocess.run(run, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert "hot loop" in out.stdout and "64 -> 32 of them math" in out.stdout, out.stdout
    assert "the math instructions differ in kind or order" in out.stdout
    same = subprocess.run([*run[:2], str(ROOT / "kernels"), *run[3:]], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip
    assert same.returncode == 0 and "1 of 1 instantiations byte-identical" in same.stdout


def test_compare_times_compares_the_batched_medians_with_their_median_ratio():
    """Two recorded ladder runs at size 1, compared on their batched samples' medians: the
    configurations in both, and the median ratio over all and over cuBLAS's and the pipeline's
    own kernels, each counted here from the two tables with the statistics module."""
    import csv
    import os
    import statistics

    runs = [ROOT / "tests" / "data" / x / "results" / "ladder" / "tables" / "timings.csv"
            for x in ("h200-ladder", "h100-ladder-resumed")]  # fmt: skip
    key = ("variant", "params", "dtype", "distribution")
    tables = []
    for path in runs:
        with open(path) as fh:
            tables.append({tuple(r[c] for c in key): float(r["batch_ms_median"])
                           for r in csv.DictReader(fh)
                           if r["m"] == "1" and r["batch_ms_median"] not in ("", "nan")})  # fmt: skip
    both = sorted(set(tables[0]) & set(tables[1]))
    ratio = {c: tables[1][c] / tables[0][c] for c in both}
    mine = [ratio[c] for c in both if c[0].startswith("cublas")]
    own = [ratio[c] for c in both if not c[0].startswith("cublas")]
    env = os.environ | {"PYTHONPATH": str(ROOT / "workflow" / "scripts")}
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "compare_times.py"), *map(str, runs),
         "--column", "batch_ms_median", "--where", "m=1"],
        capture_output=True, text=True, env=env,
    ).stdout  # fmt: skip
    assert f"{len(both)} configurations in both" in out
    assert (
        f"batch_ms_median median ratio after / before: all x{statistics.median(ratio.values()):.4f}"
        f", cuBLAS x{statistics.median(mine):.4f} ({len(mine)}), own kernels "
        f"x{statistics.median(own):.4f} ({len(own)})"
    ) in out


def test_the_launch_paths_benchmark_takes_the_presets_cupy_launched_rungs():
    """benchmarks/launch_paths.py compares the batches' two launch paths where there are two:
    the ladder's rungs that CuPy launches, the ten from tiled_guarded to wgmma_tf32 in the
    registry's order (counted by hand in kernels/registry.yaml: the rungs after them take
    tensor maps or clusters and launch through the driver everywhere; the cuBLAS and cuBLASLt
    references call their libraries)."""
    import importlib.util

    from mmbench.core.registry import load_registry

    spec = importlib.util.spec_from_file_location(
        "launch_paths", ROOT / "benchmarks" / "launch_paths.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.cupy_launched(str(ROOT / "config/presets/ladder.yaml"), load_registry()) == [
        "tiled_guarded", "coarsened", "blocktile_1d", "blocktile_2d", "blocktile_vec", "warptile",
        "warptile_db", "mma_tf32", "mma_f64", "wgmma_tf32"]  # fmt: skip

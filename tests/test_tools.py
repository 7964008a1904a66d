"""tools/: every tool is in tools/README.md's table, and the tools that need no GPU do what it
says."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys

import pytest

from .conftest import DATA, ROOT, recorded, recorded_bytes

TOOLS = ROOT / "tools"


def _table_names(text: str) -> set[str]:
    return {m.split()[0] for m in re.findall(r"^\| `([^`]+)`", text, re.MULTILINE)}


def test_the_readme_lists_every_tool():
    listed = _table_names((TOOLS / "README.md").read_text())
    files = {p.name for p in TOOLS.glob("*.py")}
    assert files == listed, sorted(files ^ listed)


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
           "--instance", "float32_TILE32", "--loops", "--entry"]  # fmt: skip
    out = subprocess.run(run, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert "hot loop" in out.stdout and "64 -> 32 of them math" in out.stdout, out.stdout
    assert "the math instructions differ in kind or order" in out.stdout
    assert "entry tiled_guarded: other code" in out.stdout
    same = subprocess.run([*run[:2], str(ROOT / "kernels"), *run[3:]], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip
    assert same.returncode == 0 and "1 of 1 instantiations byte-identical" in same.stdout


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_same_cubins_tells_an_entry_whose_code_is_the_same_in_a_changed_cubin(tmp_path):
    """ws_f64's cubin holds two entries, ws_f64 and ws_f64_split (its split-K body).  A copy of
    kernels/ whose split fix-up sleeps a nanosecond (a NANOSLEEP in kernels/split_k.cuh's
    finish_tile, which only the split body runs) builds another cubin, whose entry ws_f64 is
    the same code: `--entry` says so.  Needs nvcc and nvdisasm."""
    sys.path.insert(0, str(TOOLS))
    import same_cubins

    if same_cubins.find_nvdisasm() is None:
        pytest.fail("no nvdisasm: the test extra installs nvidia-cuda-nvdisasm")
    old = tmp_path / "kernels"
    shutil.copytree(ROOT / "kernels", old)
    split_k = old / "split_k.cuh"
    text = split_k.read_text()
    fence = "    __threadfence();  // this thread's partial sums before the count, to every block\n"
    assert fence in text
    split_k.write_text(text.replace(fence, fence + "    __nanosleep(1);\n"))
    run = [sys.executable, str(TOOLS / "same_cubins.py"), str(old), "ws_f64",
           "--instance", "float64_BM256_BN64_WM64_WN32_STAGES3_BLOCKS1", "--entry"]  # fmt: skip
    out = subprocess.run(run, capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1, out.stderr
    assert "0 of 1 instantiations byte-identical" in out.stdout, out.stdout
    assert "entry ws_f64: same code" in out.stdout, out.stdout


def test_compare_times_compares_the_batched_medians_with_their_median_ratio():
    """Two recorded ladder runs at size 1, compared on their batched samples' medians: the
    configurations in both, and the median ratio over all and over cuBLAS's and the pipeline's
    own kernels, each counted here from the two tables with the statistics module."""
    import csv
    import io
    import os
    import statistics

    runs = [recorded(DATA / x / "results" / "ladder" / "tables" / "timings.csv")
            for x in ("h200-ladder", "h100-ladder-resumed")]  # fmt: skip
    key = ("variant", "params", "dtype", "distribution")
    tables = []
    for path in runs:
        with io.StringIO(recorded_bytes(path).decode()) as fh:
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

"""What the README and the docs claim, checked against the code: the example commands, the
presets and rule environments listed, the counts quoted."""

from __future__ import annotations

from mmbench.core.registry import load_registry
from mmbench.plan import plan

from .conftest import ROOT, pristine_workflow


def test_the_readme_example_compiles_and_profiles_only_what_it_runs():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--config", "arch=sm_90",
           "variants=[tiled_guarded,cublas]", "tiles=[32]", "dtypes=[float64]"]  # fmt: skip
    # in a copy of the workflow: never the user's own results/ or .snakemake/
    out = subprocess.run(cmd, cwd=pristine_workflow(), capture_output=True, text=True,
                         timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "profile_kernel" not in text
    assert "naive_unguarded" not in text and "tiled_unguarded" not in text
    assert "float64_TILE32" in text and "float32_TILE32" not in text


def test_the_readme_lists_every_preset_and_every_rule_environment():
    readme = (ROOT / "README.md").read_text()
    presets = sorted(p.stem for p in (ROOT / "config" / "presets").glob("*.yaml"))
    table = readme[readme.index("## Experiments") : readme.index("Each figure and table")]
    for name in presets:
        assert f"`{name}`" in table, f"preset {name} is not in the README's experiments table"
    for env in sorted((ROOT / "workflow" / "envs").glob("*.yaml")):
        named = f"`{env.name}`" in readme or f"`workflow/envs/{env.name}`" in readme
        assert named, f"workflow/envs/{env.name} is not named in the README"


def test_the_cluster_doc_counts_what_the_registry_compiles():
    import re

    text = (ROOT / "docs" / "cluster.md").read_text()
    counted = int(re.search(r"(\d+) for `compile_all` at sm_90", text).group(1))
    assert counted == len(plan.all_instantiations(load_registry(), "sm_90"))


def test_the_readme_names_every_rule_file_and_the_method_every_metric_set():
    import yaml

    readme = (ROOT / "README.md").read_text()
    for smk in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        assert f"workflow/rules/{smk.name}" in readme, smk.name
    sets = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    names = sets["properties"]["profile"]["properties"]["metric_set"]["enum"]
    method = (ROOT / "docs" / "method.md").read_text()
    for name in names:
        assert f"`{name}`" in method, name


def test_the_readme_kernel_table_names_every_registry_variant():
    """Every variant of kernels/registry.yaml has a row (or a share of one) in the README's
    kernel table, named in backquotes: a new rung or reference is told to the reader where the
    others are (three were missing: deep_bf16, persistent_fp8, cublaslt_fp8)."""
    from mmbench.core.registry import load_registry

    readme = (ROOT / "README.md").read_text()
    start = readme.index("| variant | file | from the reports | notes |")
    table = readme[start : readme.index("\n\n", start)]
    missing = [name for name in load_registry() if f"`{name}`" not in table]
    assert not missing, missing

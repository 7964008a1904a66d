"""What a new user hit (issue "what a new user hit, second round"), each point as a test."""

from __future__ import annotations

import time

import pytest

from mmbench.core.registry import load_registry
from mmbench.measure import gpus
from mmbench.plan import plan
from mmbench.plan.config import ConfigError, validate
from mmbench.plan.tuning import apply_tuned

from .conftest import ROOT

# -- 2. a job given no GPU fails at once ---------------------------------------------------------


def test_an_empty_cuda_visible_devices_fails_at_once_with_the_cause(tmp_path, monkeypatch):
    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path)
    start = time.monotonic()
    with pytest.raises(gpus.NoGpuVisible, match="CUDA_VISIBLE_DEVICES is set to '': this job"):
        with gpus.acquire(env={"CUDA_VISIBLE_DEVICES": ""}, gpus=[]):
            pass
    assert time.monotonic() - start < 1


def test_a_job_with_no_visible_gpu_fails_naming_the_cause(tmp_path, monkeypatch):
    from mmbench.measure.jobs import JobFailed, run_job

    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    conf = plan.Configuration.of(
        "naive_guarded", {"dtype": "float32", "TILE": 16}, m=8, n=8, k=8,
        accumulate=False, memory="pinned", distribution="int09", seed=1,
    )  # fmt: skip
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b"not run")
    with pytest.raises(JobFailed, match="sees no GPU"):
        run_job(
            "naive_guarded",
            str(ROOT / "kernels" / "registry.yaml"),
            [conf.as_dict()],
            {conf.instance: str(cubin)},
            [],
            "src",
            dict(sampling={}, freivalds_vectors=2),
            str(tmp_path / "runs" / "naive_guarded.csv"),
            str(tmp_path / "log.txt"),
        )


# -- 4. tuned= errors name the key, the file (and line) and what is valid -------------------


def _cfg(tuned, **more):
    return dict(dict(variants=["warptile_db", "cublas"], tuned=str(tuned), profile={}), **more)


def test_a_malformed_tuning_table_names_the_key_and_the_file(tmp_path):
    bad = tmp_path / "tuned.csv"
    bad.write_text("gpu_name,variant,dtype,params\nA,warptile_db,float32,BM=64\nA,b,c,d,e,f\n")
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(bad, tuned_gpu="X"), [], load_registry())
    assert f"config key 'tuned': '{bad}' is not a readable CSV table" in str(err.value)
    assert "line 3" in str(err.value)  # pandas' own words: Expected 4 fields in line 3, saw 6


def test_a_missing_table_is_reported_before_the_gpu_is_looked_for(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(ConfigError, match=rf"config key 'tuned': '{missing}' does not exist"):
        apply_tuned(_cfg(missing), [], load_registry())


def test_an_undeclared_tuned_value_names_the_file_line_and_valid_values(tmp_path):
    table = tmp_path / "tuned.csv"
    table.write_text(
        "gpu_name,variant,dtype,params\n"
        "GPU X,warptile_db,float32,BM=96 BN=128 BK=16 WM=64 WN=64 WNITER=1 TM=8 TN=4\n"
    )
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(table, tuned_gpu="GPU X"), [], load_registry())
    text = str(err.value)
    assert f"{table}, line 2: warptile_db BM=96 is not a value the registry declares" in text
    assert "valid values of BM: 64, 128, 256" in text


# -- 5. plans that measure nothing ---------------------------------------------------------------


def test_params_for_a_variant_not_run_is_an_error():
    with pytest.raises(ConfigError, match=r"'params.warptile_db': warptile_db is not run"):
        validate(
            dict(variants=["warptile"], params={"warptile_db": {"BM": [128]}}, arch="sm_90"),
            load_registry(),
        )


def test_a_plan_that_measures_nothing_is_refused_with_every_reason():
    reg = load_registry()
    cfg = validate(dict(variants=["warptile"], dtypes=["float64"], arch="sm_90"), reg)
    p = plan.expand(cfg, reg, "sm_90")
    with pytest.raises(
        ConfigError, match=r"(?s)measures nothing.*warptile: nothing to run \(dtype"
    ):
        plan.check_something_to_measure(cfg, p)


def test_a_variant_whose_every_instantiation_is_refused_is_reported():
    reg = load_registry()
    cfg = validate(
        dict(
            variants=["warptile_db", "cublas"],
            params={"warptile_db": {"BM": [256], "BN": [256], "BK": [16], "WM": [32], "WN": [32]}},
            arch="sm_90",
        ),
        reg,
    )
    p = plan.expand(cfg, reg, "sm_90")
    lines = plan.check_something_to_measure(cfg, p)  # cublas still runs: no error
    assert len(lines) == 1 and lines[0].startswith("warptile_db: nothing to run (")
    assert "fails" in lines[0]


# -- 1. the cluster profile's limits are the ones in force ---------------------------------------


def _parsed(argv: list[str], cwd) -> dict:
    import os

    from snakemake.cli import parse_args

    here = os.getcwd()
    os.chdir(cwd)
    try:
        _, args = parse_args(argv)
    finally:
        os.chdir(here)
    return {k: v.value for k, v in (args.resources or {}).items()}


def test_the_slurm_profile_queues_sixteen_gpu_jobs_and_a_local_run_one(tmp_path):
    import shutil
    import subprocess
    import sys

    # Snakemake's own parser: the workflow profile (profiles/default) is layered over the
    # cluster profile, so it must not set a gpu limit of its own
    assert _parsed(["--profile", "profiles/slurm", "-n"], ROOT) == {"gpu": 16}
    assert "gpu" not in _parsed(["--cores", "1", "-n"], ROOT)
    assert _parsed(["--cores", "1", "--resources", "gpu=2", "-n"], ROOT) == {"gpu": 2}
    # a local run with no limit given: the workflow caps the GPU at one measurement at a time
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout
    for rel in files.split():
        if (ROOT / rel).is_file():
            (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / rel, tmp_path / rel)
    cmd = [sys.executable, "-m", "snakemake", "--cores", "2", "results/tables/refused.csv",
           "--config", "arch=sm_90"]  # fmt: skip
    out = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert 'Provided resources: gpu=Resource("gpu", 1)' in out.stdout + out.stderr


# -- 8. profiling and the report follow the run ---------------------------------------------


def test_the_profile_follows_the_runs_variants_unless_the_user_names_its_own():
    reg = load_registry()
    readme = dict(variants=["tiled_guarded", "cublas"], tiles=[32], dtypes=["float64"])
    cfg = validate(dict(readme, arch="sm_90"), reg)
    assert plan.profile_plan(cfg, reg, "sm_90") == ([], [])  # nothing the run measures
    # the main experiment profiles seed 002's pair, which it measures
    main = validate(dict(arch="sm_90", variants=["naive_unguarded", "tiled_unguarded"]), reg)
    runs, _ = plan.profile_plan(main, reg, "sm_90")
    assert {(c.variant, c.dtype, dict(c.params)["TILE"]) for c in runs} == {
        ("naive_unguarded", "float32", 32),
        ("tiled_unguarded", "float32", 32),
    }
    # a preset that names its profile variants (E3f) profiles them, measured or not
    e3f = validate(dict(main, profile={"variants": ["naive_guarded"]}), reg)
    runs, _ = plan.profile_plan(e3f, reg, "sm_90", named={"variants"})
    assert {c.variant for c in runs} == {"naive_guarded"}


def test_the_readme_example_compiles_and_profiles_only_what_it_runs():
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--config", "arch=sm_90",
           "variants=[tiled_guarded,cublas]", "tiles=[32]", "dtypes=[float64]"]  # fmt: skip
    out = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout + out.stderr
    assert "profile_kernel" not in text
    assert "naive_unguarded" not in text and "tiled_unguarded" not in text
    assert "float64_TILE32" in text and "float32_TILE32" not in text


def test_a_report_table_without_rows_in_this_run_is_left_out_with_the_reason():
    import pandas as pd

    from mmbench.report.catalogue import TABLES, missing

    ladder = pd.read_csv(
        ROOT / "tests" / "data" / "h100-ladder" / "results" / "ladder" / "tables" / "timings.csv"
    )
    why = missing(
        TABLES["unguarded_vs_guarded"], {"timings": ladder[ladder.variant != "tiled_guarded"]}
    )
    assert why and "none of seed 002's unguarded and guarded kernels" in why
    main = pd.read_csv(ROOT / "tests" / "data" / "h100-main" / "results" / "tables" / "timings.csv")
    assert missing(TABLES["unguarded_vs_guarded"], {"timings": main}) is None
    table = TABLES["unguarded_vs_guarded"].make({"timings": main})
    assert set(table.kernel.str.split().str[0]) <= {
        "naive_unguarded", "naive_guarded", "tiled_unguarded", "tiled_guarded"
    }  # fmt: skip


# -- the docs' claims that a test can hold ---------------------------------------------------


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

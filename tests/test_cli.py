"""`mmbench`, Snakemake with its command line checked first (mmbench/plan/cli.py): what Snakemake
would say in its own words (or with a traceback) about a config file or a --config entry is
named with the file, the line and the right form, before Snakemake starts; a good command line
runs Snakemake unchanged."""

import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import pristine_workflow

MMBENCH = Path(sys.executable).parent / "mmbench"


def run(*args, cwd=None):
    if not MMBENCH.exists():
        pytest.skip(
            f"the console script is not installed beside {sys.executable} (pip install -e .)"
        )
    return subprocess.run([str(MMBENCH), *args], cwd=cwd or pristine_workflow(),
                          capture_output=True, text=True)  # fmt: skip


def test_a_config_file_that_is_not_yaml_is_named_with_its_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("sizes: [1, 2\nvariants: x\n")
    out = run("-n", "--configfile", str(bad))
    assert out.returncode == 2
    assert (
        f"--configfile {bad}:2:9: not valid YAML: expected ',' or ']', but got ':' (while "
        "parsing a flow sequence that starts at line 1)" in out.stderr
    )
    assert "Traceback" not in out.stderr


def test_a_preset_name_with_a_typo_suggests_the_preset():
    out = run("-n", "--configfile", "config/presets/ladderr.yaml")
    assert out.returncode == 2
    assert (
        "--configfile config/presets/ladderr.yaml: no such file; did you mean "
        "config/presets/ladder.yaml?" in out.stderr
    )
    assert "Traceback" not in out.stderr


def test_a_value_the_shell_split_is_given_back_whole_with_both_right_forms():
    out = run("-n", "--config", "sizes=[8000,", "10000]")
    assert out.returncode == 2
    assert ("--config sizes=[8000, 10000]: the shell split this value at its spaces; quote the "
            "entry, 'sizes=[8000, 10000]', or write it without spaces, sizes=[8000,10000]"
            ) in out.stderr  # fmt: skip


def test_a_dotted_key_gets_the_mapping_form():
    out = run("-n", "--config", "sampling.min_samples=10")
    assert out.returncode == 2
    assert ("--config sampling.min_samples=10: a key inside a section is written as a mapping: "
            "'sampling={min_samples: 10}'") in out.stderr  # fmt: skip


def test_a_target_after_config_is_explained():
    out = run("-n", "--config", "arch=sm_90", "compare")
    assert out.returncode == 2
    assert "--config compare: not NAME=value" in out.stderr
    assert "name targets before --config" in out.stderr


def test_a_good_command_line_runs_snakemake_unchanged():
    out = run("-n", "--config", "arch=sm_90", "sizes=[512]")
    assert out.returncode == 0, out.stderr[-2000:]
    assert "This was a dry-run" in out.stdout
    # and the workflow's own validator still answers for the values
    bad = run("-n", "--config", "arch=sm_90", "tiles=[0]")
    assert bad.returncode != 0
    assert "config key 'tiles[0]': 0 is out of range; valid: an integer >= 1" in bad.stderr


def test_which_command_lines_submit_to_slurm(tmp_path):
    """The executor from --executor / -e, from the profile's config.yaml (--profile, or
    $SNAKEMAKE_PROFILE), none without; dry runs, lints and reports submit nothing."""
    from mmbench.plan.slurm import executor, submits

    slurm = str(pristine_workflow() / "profiles" / "slurm")
    local = str(pristine_workflow() / "workflow" / "profiles" / "default")
    assert executor(["--profile", slurm], {}) == "slurm"
    assert executor([f"--profile={slurm}"], {}) == "slurm"
    assert executor(["--cores", "1"], {"SNAKEMAKE_PROFILE": slurm}) == "slurm"
    assert executor(["--executor", "slurm"], {}) == "slurm"
    assert executor(["-e", "local"], {}) == "local"
    assert executor(["--profile", local], {}) is None
    assert executor(["--cores", "1"], {}) is None
    assert executor(["--profile", str(tmp_path / "none")], {}) is None
    assert submits(["--profile", slurm, "--config", "arch=sm_90"], {})
    for dry in ("-n", "--dry-run", "-np", "--lint", "--report=r.html"):
        assert not submits(["--profile", slurm, dry], {}), dry
    assert not submits(["--cores", "1"], {})


def test_mmbench_names_a_slurm_that_does_not_answer_before_snakemake_starts(tmp_path):
    """With no SLURM tools on the PATH, `mmbench --profile profiles/slurm` stops with the one
    line at once (Snakemake itself would load the SLURM plugin and plan first)."""
    import os
    import time

    env = {**os.environ, "PATH": str(Path(sys.executable).parent)}
    if not MMBENCH.exists():
        pytest.skip(f"the console script is not installed beside {sys.executable}")
    start = time.monotonic()
    out = subprocess.run(
        [str(MMBENCH), "--profile", "profiles/slurm", "--config", "arch=sm_90"],
        cwd=pristine_workflow(), capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert out.returncode == 1
    assert out.stderr.strip().splitlines() == [
        "mmbench: the run is submitted to SLURM (--executor slurm), but SLURM's tools (sinfo) "
        "are not on this machine's PATH: run it from the cluster's login node, or drop "
        "--profile profiles/slurm to run here"
    ]
    assert time.monotonic() - start < 5


def test_a_preset_name_like_several_lists_them_and_one_like_none_lists_every_preset():
    """e3 is as near to e3a, e3c, e3d, e3f and e3g: all five (by hand, the e3 presets); 'nothing'
    is near none: the presets' names (the stems compared, not the common .yaml that makes any
    two look alike)."""
    out = run("-n", "--configfile", "config/presets/e3.yaml")
    assert out.returncode == 2
    assert "did you mean config/presets/e3a.yaml, config/presets/e3c.yaml, " in out.stderr
    assert "config/presets/e3f.yaml or config/presets/e3g.yaml?" in out.stderr
    out = run("-n", "--configfile", "config/presets/nothing.yaml")
    assert "no such file (presets: compare, e1, e2, e3a," in out.stderr
    assert "did you mean" not in out.stderr


def test_a_number_of_the_wrong_type_says_the_valid_range():
    out = run("-n", "--config", "arch=sm_90", "sampling={min_samples: ten}")
    assert out.returncode == 1
    assert (
        "config key 'sampling.min_samples': 'ten' is not of type integer; valid: an integer >= 1"
        in out.stderr
    )


def test_a_split_value_is_offered_without_spaces_only_where_yaml_reads_it_the_same():
    """{min_samples:10} is one key to YAML ('min_samples:10'), so only quoting is offered; [8000,
    10000] reads the same without its space; a split value whose brackets still do not pair up
    says both, with the counts."""
    from mmbench.plan.cli import config_problems

    assert config_problems(["sampling={min_samples:", "10}"]) == [
        "--config sampling={min_samples: 10}: the shell split this value at its spaces; quote the "
        "entry, 'sampling={min_samples: 10}'"
    ]
    assert config_problems(["sizes=[8000,", "10000]"])[0].endswith(
        "or write it without spaces, sizes=[8000,10000]"
    )
    assert config_problems(["params={tiled_guarded:", "{TILE:", "[16]}"]) == [
        "--config params={tiled_guarded: {TILE: [16]}: the shell split this value at its "
        "spaces, and its brackets do not pair up (2 '{' and 1 '}'); close every one and quote "
        "the entry, 'params=...'"
    ]


def test_outside_a_checkout_mmbench_names_the_checkout_and_its_snakefile(tmp_path):
    """In a folder with no Snakefile, Snakemake would say only "No Snakefile found"; mmbench says
    where the workflow of its checkout is (this checkout: the package is installed from it) and
    how to run it from here; named with --snakefile it runs (a dry run, results here)."""
    from mmbench.core.paths import PACKAGE

    checkout = PACKAGE.parents[2]
    out = run("--cores", "1", cwd=tmp_path)
    assert out.returncode == 2
    assert f"mmbench: no workflow in {tmp_path} (no Snakefile)" in out.stderr
    assert f"--snakefile {checkout / 'workflow' / 'Snakefile'}" in out.stderr
    ran = run("--snakefile", str(checkout / "workflow" / "Snakefile"), "-n", "--config", "arch=sm_90",
              cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert "This was a dry-run" in ran.stdout
    assert not (tmp_path / "results").exists()  # a dry run writes nothing


def test_an_empty_config_file_is_named(tmp_path):
    """Snakemake takes an empty --configfile as no config at all and runs the defaults; the
    user meant something else (issue "what a new user hit", item 6)."""
    from mmbench.plan.cli import problems

    empty = tmp_path / "mine.yaml"
    empty.write_text("# sizes: [1024]\n")
    assert problems(["-n", "--configfile", str(empty)]) == [
        f"--configfile {empty}: the file is empty; a config file holds key: value lines "
        "(e.g. sizes: [1024, 2048]; config/config.yaml lists every key)"
    ]


def test_config_with_an_equals_sign_and_more_entries_says_they_are_targets():
    """argparse gives `--config=arch=sm_90` only that value: `sizes=[64]` after it is a target
    to Snakemake ("no rule to produce sizes=[64]")."""
    from mmbench.plan.cli import problems

    assert problems(["-n", "--config=arch=sm_90", "sizes=[64]"]) == [
        "--config=arch=sm_90 sizes=[64]: with '=' the flag takes only 'arch=sm_90', and "
        "Snakemake reads sizes=[64] as target(s); write --config arch=sm_90 sizes=[64] (a space "
        "after the flag, not '=')"
    ]
    assert problems(["-n", "--config=arch=sm_90", "--cores", "1"]) == []


def test_a_profile_whose_executor_plugin_is_missing_names_the_extra():
    """profiles/slurm without the SLURM executor plugin: Snakemake's own parser ends in
    "invalid choice: 'slurm'"; mmbench names the extra to install.  With the plugin installed
    (.ci/run's second environment), nothing is said."""
    import importlib.util

    from mmbench.plan.cli import missing_executor

    root = Path(__file__).parents[1]
    said = missing_executor(["--profile", str(root / "profiles" / "slurm"), "-n"])
    if importlib.util.find_spec("snakemake_executor_plugin_slurm") is None:
        assert said == (
            "the executor 'slurm' (from --executor or the profile's config.yaml) needs "
            "Snakemake's executor plugin snakemake_executor_plugin_slurm, which is not installed "
            "here: pip install -e '.[slurm]' (the slurm extra; docs/cluster.md)"
        )
        out = run("--profile", "profiles/slurm", "-n", cwd=root)
        assert out.returncode == 2 and said in out.stderr, out.stderr
    else:
        assert said is None
    assert missing_executor(["--cores", "1"]) is None

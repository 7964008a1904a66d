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

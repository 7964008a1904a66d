"""The Snakemake workflow catalog's checks (snakemake-workflow-catalog, scripts/generate-catalog.py),
those that run without a GPU, on a copy of the checkout's tracked files as the catalog clones it:
the workflow at workflow/Snakefile with its rule modules named *.smk, the catalog's settings file
and config/README.md for the standardized usage, a plain `snakemake --lint` in the repository
root, and `snakefmt --check` over the Snakefile and the rule modules."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """The checkout's tracked files (as they are now), nothing it has run or built."""
    to = tmp_path_factory.mktemp("catalog-clone")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    for name in files.stdout.decode().split("\0"):
        src = ROOT / name
        if name and src.is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, to / name)
    return to


def test_the_catalog_finds_the_workflow_and_its_rule_modules(clone):
    assert (clone / "workflow" / "Snakefile").is_file()  # else "Skipped … missing Snakefile"
    assert not (clone / "Snakefile").exists()  # one entry point
    rules = [p for p in (clone / "workflow" / "rules").iterdir() if p.is_file()]
    assert rules and all(p.suffix == ".smk" for p in rules)


def test_the_standardized_usage_settings_and_config_readme(clone):
    """As the catalog reads them: the settings file with YAML's safe loader, the keys its page
    shows (mandatory flags, the software-stack deployment methods, the report), and
    config/README.md, which it renders as the configuration instructions."""
    settings = yaml.load((clone / ".snakemake-workflow-catalog.yml").read_text(), yaml.SafeLoader)
    usage = settings["usage"]
    assert set(usage) == {"mandatory-flags", "software-stack-deployment", "report"}
    assert usage["mandatory-flags"]["desc"].strip() and "flags" in usage["mandatory-flags"]
    deploy = usage["software-stack-deployment"]
    assert deploy["conda"] is True and all(isinstance(v, bool) for v in deploy.values())
    assert usage["report"] is True
    assert (clone / "config" / "README.md").read_text().startswith("# Configuration")


def test_a_plain_lint_in_the_repository_root_is_in_good_condition(clone):
    """`snakemake --lint` with no other argument, where the catalog runs it: no GPU is needed
    and no architecture named (the plan is made for none; only a job would need one)."""
    out = subprocess.run([sys.executable, "-m", "snakemake", "--lint"], cwd=clone,
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Congratulations, your workflow is in a good condition!" in out.stdout + out.stderr
    assert not (clone / "results").exists()


def test_snakefmt_as_the_catalog_runs_it(clone):
    files = [
        clone / "workflow" / "Snakefile",
        *sorted((clone / "workflow" / "rules").glob("*.smk")),
    ]
    out = subprocess.run([sys.executable, "-m", "snakefmt", "--check", "-v", *map(str, files)],
                         cwd=clone, capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr

"""What the README and the docs claim, checked against the code: the example commands, the
presets and rule environments listed, the counts quoted."""

from __future__ import annotations

from pathlib import Path

import pytest

from mmbench.core.registry import load_registry

from .conftest import DATA, ROOT, copy_recorded, copy_workflow, pristine_workflow


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


def test_the_readme_kernel_table_names_only_registry_variants():
    """Every variant the README's kernel table names in backquotes is in kernels/registry.yaml
    (a renamed or removed kernel is not left in the table).  The other direction is not pinned:
    adding a kernel is one .cu and one registry entry (docs/kernels.md), and a fresh clone's
    new kernel must not fail the tests (issue "what a new user hit", item 4)."""
    import re

    readme = (ROOT / "README.md").read_text()
    start = readme.index("| variant | file | from the reports | notes |")
    table = readme[start : readme.index("\n\n", start)]
    first = [row.split("|")[1] for row in table.splitlines()[2:]]
    named = {n for cell in first for n in re.findall(r"`([a-z0-9_]+)`", cell)}
    assert len(named) > 20, named  # the table was read
    unknown = sorted(named - set(load_registry()))
    assert not unknown, unknown


def _readme_commands() -> list[str]:
    """Every `snakemake …` / `mmbench …` command the README writes in backquotes."""
    import re

    readme = (ROOT / "README.md").read_text()
    return sorted(set(re.findall(r"`((?:snakemake|mmbench) [^`]*)`", readme)))


# placeholders the README writes, and what stands for them here (a recorded run for a baseline
# folder, one preset for <name>); commands that are not a command line to run, and why
NOT_COMMANDS = {
    "snakemake …": "an ellipsis for any command",
    "snakemake --sdm conda …": "an ellipsis for any command, with conda environments",
    "mmbench --profile …": "the SLURM command's mmbench form, run below as snakemake --profile",
    "mmbench margins": "a subcommand's name (its arguments: docs/method.md)",
    "mmbench --cores 1 …": "an ellipsis: any command, run as mmbench",
}


@pytest.mark.slow
def test_every_readme_command_runs_as_written(tmp_path):
    """Each command of the README on a copy of the workflow, as written but for a dry run
    (-n) and an architecture named (no GPU here): exit 0 (issue "what a new user hit", item 3:
    its baseline example stopped with "… is itself").  A baseline folder is a recorded run;
    `--report` commands run as the dry run of what the report reads."""
    import shlex
    import subprocess
    import sys

    (tmp_path / "work").mkdir()
    work = copy_workflow(tmp_path / "work")
    recorded = copy_recorded(DATA / "compare" / "h100-a", tmp_path / "old" / "results")
    # runs of this machine, as the README's render_only=true and manifests commands expect
    copy_recorded(DATA / "h100-main" / "results", work / "results")
    copy_recorded(DATA / "compare" / "h100-b", work / "results" / "compare")
    # an earlier source of tiled_guarded archived, as a run before an edit leaves it
    # (baseline=previous)
    import csv
    import shutil

    runs = DATA / "compare" / "h100-a" / "runs"
    with open(runs / "tiled_guarded.csv") as fh:
        sha = next(csv.DictReader(fh))["source_sha256"]
    entry = work / "results" / "archive" / "tiled_guarded" / sha
    entry.mkdir(parents=True)
    for f in runs.glob("tiled_guarded.*"):
        shutil.copy(f, entry / f.name)
    import importlib.util

    plugin = importlib.util.find_spec("snakemake_executor_plugin_slurm") is not None
    ran = []
    for text in _readme_commands():
        if text in NOT_COMMANDS:
            continue
        if "profiles/slurm" in text and not plugin:
            continue  # needs the slurm extra, as the README says (.ci/run installs it first)
        text = text.replace("/path/to/old/results", str(recorded)).replace(
            "baseline=…", f"baseline={recorded}"
        )
        text = text.replace("config/presets/<name>.yaml", "config/presets/e3c.yaml")
        args = shlex.split(text)
        if args[:2] == ["mmbench", "manifests"]:
            args = ["mmbench", "manifests", str(work / "results" / "compare")]
        else:
            if "--report" in args:  # the report of a run: the dry run of the run it reads
                i = args.index("--report")
                del args[i : i + 2]
            args += ["-n"]
            if "--config" not in args:
                args += ["--config"]
            args.insert(args.index("--config") + 1, "arch=sm_90")
        exe = (
            [sys.executable, "-m", "snakemake"]
            if args[0] == "snakemake"
            else [str(Path(sys.executable).parent / "mmbench")]
        )
        out = subprocess.run([*exe, *args[1:]], cwd=work, capture_output=True, text=True,
                             timeout=600)  # fmt: skip
        assert out.returncode == 0, (text, out.stderr[-3000:])
        ran.append(text)
    assert len(ran) >= 20, ran

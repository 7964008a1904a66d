"""The package's folders are the stages of the data flow, and a lower stage never imports a
higher one (core < plan < measure < profile < report < compare)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "workflow" / "scripts" / "mmbench"
STAGES = ["core", "plan", "measure", "profile", "report", "compare"]


def _imports(path: Path) -> set[str]:
    """The mmbench stages a module imports, at any level (a function's import counts)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:  # relative: its own stage
            out.add(path.parent.name)
        elif isinstance(node, ast.ImportFrom) and node.module:
            parts = node.module.split(".")
            if parts[0] == "mmbench":
                out |= {parts[1]} if len(parts) > 1 else {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "mmbench" and len(parts) > 1:
                    out.add(parts[1])
    return out & set(STAGES)


def test_the_package_is_one_folder_per_stage():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(STAGES)
    loose = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert loose == ["__init__.py", "paths.py"]


def test_no_stage_imports_a_later_one():
    wrong = []
    for stage in STAGES:
        for module in sorted((PACKAGE / stage).glob("*.py")):
            for imported in _imports(module):
                if STAGES.index(imported) > STAGES.index(stage):
                    wrong.append(f"{stage}/{module.name} imports mmbench.{imported}")
    assert not wrong, wrong


def test_the_measurement_worker_does_not_load_the_config_or_the_compiler():
    """The GPU worker imports what measuring needs: not config validation, not nvcc's command."""
    seen, todo = set(), [PACKAGE / "measure" / "worker.py"]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("mmbench."):
                target = PACKAGE.joinpath(*node.module.split(".")[1:]).with_suffix(".py")
                if target.is_file():
                    todo.append(target)
    names = {p.relative_to(PACKAGE).as_posix() for p in seen}
    assert "plan/config.py" not in names and "plan/compile.py" not in names, sorted(names)


def test_the_readme_lists_every_module_and_folder_of_the_package_and_no_other():
    import re

    readme = (Path(__file__).parents[1] / "README.md").read_text()
    section = readme[readme.index("The package `mmbench`") : readme.index("## Read more")]
    listed = set()
    for line in section.splitlines():
        if line.startswith("| `") or line.startswith("| **`"):
            first = line.split("|")[1]
            listed |= set(re.findall(r"`([a-z_/]+(?:\.py)?/?)`", first))
    modules = {
        p.relative_to(PACKAGE).as_posix()
        for p in PACKAGE.rglob("*.py")
        if p.name != "__init__.py" and "__pycache__" not in p.parts
    }
    folders = {f"{s}/" for s in STAGES}
    assert listed == modules | folders, (
        sorted(listed - modules - folders),
        sorted((modules | folders) - listed),
    )

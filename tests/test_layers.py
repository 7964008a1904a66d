"""The package's folders are the stages of the data flow, a tree rather than a line:

    core <- plan <- measure <- profile      (what to run, timing and verifying it, profiling it)
    measure, profile <- service             (the jobs' processes: the served worker and the
                                             programs it runs, GPU locks, journal, inputs cache)
    core <- report                          (figures and tables, from the tidy tables alone)
    core, report <- compare                 (two runs side by side, drawn as the report draws)

A stage imports only the stages below it in its branch; the rule files and the job scripts
belong to a stage each and obey the same tree; common.smk, which plans the invocation and
holds the input functions, is the workflow's root and may use every stage.  A module that runs
another as a process (`paths.child_command("stage.module")`) or imports it by a name
(`importlib.import_module`) depends on it as an import does: the check counts both, and a name
it cannot read is refused."""

from __future__ import annotations

import ast
import re
import textwrap
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "workflow" / "scripts" / "mmbench"
RULES = ROOT / "workflow" / "rules"
SCRIPTS = ROOT / "workflow" / "scripts"
# stage -> the stages it may import (itself included)
ALLOWED = {
    "core": {"core"},
    "plan": {"core", "plan"},
    "measure": {"core", "plan", "measure"},
    "profile": {"core", "plan", "measure", "profile"},
    "service": {"core", "plan", "measure", "profile", "service"},
    "report": {"core", "report"},
    "compare": {"core", "report", "compare"},
}
STAGES = list(ALLOWED)
# each rule file's stage (aggregate: concatenating tables is core/tables.py's)
RULE_STAGES = {
    "compile.smk": "plan",
    "run.smk": "service",
    "profile.smk": "service",
    "aggregate.smk": "core",
    "report.smk": "report",
    "compare.smk": "compare",
}


def _module_imports(tree: ast.AST, stage_of_relative: str | None = None,
                    processes: bool = True) -> set[str]:  # fmt: skip
    """The mmbench modules (dotted, without the package) imported anywhere in a tree (a
    function's import counts), and, with `processes`, those it runs as a process."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            out.add(f"{stage_of_relative}.{node.module}" if node.module else stage_of_relative)
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mmbench":
            parts = node.module.split(".")[1:]
            if len(parts) == 1:  # from mmbench.core import paths: the module core.paths
                out |= {f"{parts[0]}.{a.name}" for a in node.names}
            elif parts:
                out.add(".".join(parts))
            else:
                out |= {a.name for a in node.names}
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == "mmbench" and len(parts) > 1:
                    out.add(".".join(parts[1:]))
        elif isinstance(node, ast.Call) and _called(node) in BY_NAME - (
            set() if processes else {"child_command"}
        ):
            name = _named_module(node)
            out.add(name if name is not None else "<a module named at run time>")
    return out


# calls that depend on a module by its name: a process of it, or an import
BY_NAME = {"child_command", "import_module", "__import__"}


def _called(node: ast.Call) -> str:
    f = node.func
    return f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")


def _named_module(node: ast.Call) -> str | None:
    """The mmbench module (dotted, without the package) a BY_NAME call names, or None where
    its name is not written there (a variable)."""
    if not node.args or not isinstance(node.args[0], ast.Constant):
        return None
    name = str(node.args[0].value)
    # child_command names the module without the package, import_module with it
    return name.removeprefix("mmbench.")


def _stages(modules: set[str]) -> set[str]:
    return {m.split(".")[0] for m in modules} & set(STAGES)


def _smk_imports(text: str) -> set[str]:
    """The mmbench modules a rule file imports (its Python lines)."""
    return set(re.findall(r"^\s*from mmbench\.([a-z_.]+) import", text, re.MULTILINE)) | set(
        re.findall(r"^\s*import mmbench\.([a-z_.]+)", text, re.MULTILINE)
    )


def _common_names() -> dict[str, str]:
    """Name bound in the Snakefile or common.smk (the workflow's root) by an import from the
    package -> the stage it comes from."""
    out = {}
    text = (RULES.parent / "Snakefile").read_text() + (RULES / "common.smk").read_text()
    for m in re.finditer(
        r"^\s*from mmbench\.([a-z_]+)[a-z_.]* import (\w+(?:, \w+)*)(?: as (\w+))?$", text,
        re.MULTILINE,
    ):  # fmt: skip
        for name in m.group(2).split(", "):
            out[m.group(3) or name] = m.group(1)
    for m in re.finditer(r"^\s*from mmbench\.([a-z_]+) import (\w+) as (\w+)", text, re.MULTILINE):
        out[m.group(3)] = m.group(1)
    return out


def test_the_package_is_one_folder_per_stage():
    folders = sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert folders == sorted(STAGES)
    assert sorted(p.name for p in PACKAGE.glob("*.py")) == ["__init__.py"]


def test_no_stage_imports_outside_its_branch():
    wrong = []
    for stage in STAGES:
        for module in sorted((PACKAGE / stage).glob("*.py")):
            imports = _module_imports(ast.parse(module.read_text()), stage)
            wrong += [f"{stage}/{module.name}: {m}" for m in imports if m.startswith("<")]
            for imported in _stages(imports):
                if imported not in ALLOWED[stage]:
                    wrong.append(f"{stage}/{module.name} imports mmbench.{imported}")
    assert not wrong, wrong


def test_the_check_sees_a_module_run_or_imported_by_its_name():
    """The served worker runs the profilers' target (service/programs.py lists it, imported);
    a module run as a process by its name, or imported by a name it reads, is seen too."""
    worker = _module_imports(ast.parse((PACKAGE / "service" / "worker.py").read_text()), "service")
    assert "service.programs" in worker
    progs = _module_imports(ast.parse((PACKAGE / "service" / "programs.py").read_text()), "service")
    assert "profile.target" in progs
    for line, seen in (('paths.child_command("service.worker", "--serve")', "service.worker"),
                       ('importlib.import_module("mmbench.profile.target")', "profile.target"),
                       ("importlib.import_module(module)", "<a module named at run time>")):  # fmt: skip
        assert seen in _module_imports(ast.parse(f"def f(module):\n    {line}\n"), "measure")
    planted = _module_imports(ast.parse('paths.child_command("service.worker")'), "measure")
    assert _stages(planted) - ALLOWED["measure"] == {"service"}


def test_the_check_sees_a_wrong_way_import(tmp_path):
    """The check itself: a report module importing plan, a plan module importing measure."""
    for stage, line in (("report", "from mmbench.plan.config import ConfigError"),
                        ("plan", "from mmbench.measure import runner"),
                        ("compare", "import mmbench.measure.timing")):  # fmt: skip
        imported = _stages(_module_imports(ast.parse(f"def f():\n    {line}\n"), stage))
        assert imported and not imported <= ALLOWED[stage], (stage, line)


def test_there_is_no_import_cycle_between_modules():
    graph = {}
    for module in PACKAGE.rglob("*.py"):
        if "__pycache__" in module.parts:
            continue
        rel = module.relative_to(PACKAGE).with_suffix("")
        name = ".".join(p for p in rel.parts if p != "__init__")
        stage = rel.parts[0] if len(rel.parts) > 1 else ""
        # a process a module starts (the worker its job's) is no import of it
        imports = _module_imports(ast.parse(module.read_text()), stage, processes=False)
        graph[name] = {m for m in imports if m != name}
    state: dict[str, int] = {}
    cycles = []

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph:
                continue
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt) :] + [nxt] if nxt in path else [node, nxt])
            elif not state.get(nxt):
                visit(nxt, [*path, nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])
    assert not cycles, cycles


def test_rule_files_use_only_their_stage_and_below():
    names = _common_names()
    assert {"mmplan", "catalogue", "start", "run_ended"} <= set(names)  # the check reads them
    wrong = []
    files = sorted(p.name for p in RULES.glob("*.smk"))
    assert sorted(set(files) - {"common.smk"}) == sorted(RULE_STAGES), files
    for name, stage in RULE_STAGES.items():
        text = (RULES / name).read_text()
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        used = _stages(_smk_imports(text)) | {
            names[w] for w in set(re.findall(r"\b\w+\b", code)) if w in names
        }
        wrong += [f"{name} ({stage}) uses mmbench.{s}" for s in used - ALLOWED[stage]]
    assert not wrong, wrong


def _script_stages() -> dict[str, str]:
    """Job script -> the stage of the rule file that runs it."""
    out = {}
    for name, stage in RULE_STAGES.items():
        for script in re.findall(r'"\.\./scripts/(\w+\.py)"', (RULES / name).read_text()):
            out[script] = stage
    return out


def test_every_job_script_is_run_by_a_rule_and_imports_only_its_stage_and_below():
    stages = _script_stages()
    scripts = sorted(p.name for p in SCRIPTS.glob("*.py"))
    assert sorted(stages) == scripts, sorted(set(scripts) ^ set(stages))
    wrong = []
    for script, stage in stages.items():
        tree = ast.parse((SCRIPTS / script).read_text())
        wrong += [
            f"{script} ({stage}) imports mmbench.{s}"
            for s in _stages(_module_imports(tree)) - ALLOWED[stage]
        ]
    assert not wrong, wrong


def test_common_smk_holds_the_input_functions_and_no_planning():
    """The planning is mmbench/plan/experiment.py's: the Snakefile calls it once (start), and
    common.smk holds the input functions, at most 200 lines of them: imports, functions and the
    set of cubins found changed, nothing else (it is plain Python, no Snakemake directive)."""
    snakefile = (RULES.parent / "Snakefile").read_text()
    common = (RULES / "common.smk").read_text()
    assert snakefile.count("start(") == 1 and "start(" not in common
    assert len(common.splitlines()) <= 200
    for statement in ast.parse(common).body:
        if isinstance(statement, ast.Assign):
            assert [t.id for t in statement.targets] == ["REBUILT"], ast.unparse(statement)
        else:
            assert isinstance(statement, (ast.Import, ast.ImportFrom, ast.FunctionDef)), (
                ast.unparse(statement)[:200]
            )
    for planning in ("validate(", "expand(", "apply_tuned(", "resolve_arch(", "sys.argv",
                     "prepare("):  # fmt: skip
        assert planning not in common + snakefile, planning


def _rule_bodies() -> dict[str, list[str]]:
    """Each rule's (or checkpoint's) body in the Snakefile and the rule files, its directives
    dedented, under the rule's name (a name defined twice keeps both bodies)."""
    out: dict[str, list[str]] = {}
    for smk in [RULES.parent / "Snakefile", *sorted(RULES.glob("*.smk"))]:
        lines = smk.read_text().splitlines()
        for i, line in enumerate(lines):
            m = re.match(r"^(\s*)(?:rule|checkpoint) (\w+):", line)
            if not m:
                continue
            indent, body = len(m.group(1)), []
            for nxt in lines[i + 1 :]:
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                body.append(nxt[indent:].rstrip())
            out.setdefault(m.group(2), []).append(textwrap.dedent("\n".join(body)).strip())
    return out


def test_every_rule_is_written_once():
    """No rule is defined twice (a `run:` twin beside a `script:` one), and no two rules share
    a body (the same inputs, outputs and action under two names)."""
    bodies = _rule_bodies()
    assert {"render", "timings_table", "since_previous", "measure_variant"} <= set(bodies)
    twice = [name for name, b in bodies.items() if len(b) > 1]
    assert not twice, twice
    seen: dict[str, str] = {}
    for name, (body,) in bodies.items():
        assert body not in seen, (name, seen.get(body))
        seen[body] = name


def test_the_rule_check_sees_a_twin(tmp_path):
    """The check itself: a rule file with a rule written twice is found."""
    rules = tmp_path / "rules"
    rules.mkdir()
    (tmp_path / "Snakefile").write_text("rule a:\n    output: 'x'\n    shell: 'touch {output}'\n")
    (rules / "r.smk").write_text("if X:\n\n    rule b:\n        output: 'y'\n\nelse:\n\n"
                                 "    rule b:\n        output: 'y'\n        run: pass\n")  # fmt: skip
    global RULES
    saved, RULES = RULES, rules
    try:
        assert _rule_bodies() == {"a": ["output: 'x'\nshell: 'touch {output}'"],
                                  "b": ["output: 'y'", "output: 'y'\nrun: pass"]}  # fmt: skip
    finally:
        RULES = saved


def test_the_measurement_worker_does_not_load_the_config_or_the_compiler():
    """The GPU worker imports what measuring needs: not config validation, not nvcc's command."""
    seen, todo = set(), [PACKAGE / "service" / "worker.py"]
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
    readme = (ROOT / "README.md").read_text()
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

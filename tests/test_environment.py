"""environment.yml (conda) and pyproject.toml (pip) install the same packages."""

import ast
import re
import shutil
import subprocess
import sys
import textwrap
import tomllib

import yaml

from .conftest import ROOT

# conda-forge name -> PyPI name where they differ
CONDA_TO_PIP = {"snakemake-minimal": "snakemake", "cupy": "cupy-cuda13x", "ml_dtypes": "ml-dtypes",
                "cuda-nvdisasm": "nvidia-cuda-nvdisasm"}  # fmt: skip


def _split(req: str) -> tuple[str, str]:
    m = re.match(r"^\s*([A-Za-z0-9_.\-]+)\s*(.*)$", req)
    return m.group(1).lower(), m.group(2).replace(" ", "")


def test_conda_and_pip_agree():
    py = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip = dict(_split(r) for r in py["dependencies"])
    for extra in ("gpu", "test"):
        pip |= dict(_split(r) for r in py["optional-dependencies"][extra])
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = {}
    pip_section = []
    for dep in env["dependencies"]:
        if isinstance(dep, dict):
            pip_section += dep["pip"]
            continue
        name, spec = _split(dep.replace("=", "==", 1) if re.match(r"^[\w\-]+=[^=]", dep) else dep)
        conda[CONDA_TO_PIP.get(name, name)] = spec
    # packages published on PyPI only come through environment.yml's pip section
    for dep in pip_section:
        if dep != "-e .":
            name, spec = _split(dep)
            conda[name] = spec
    for name, spec in pip.items():
        assert name in conda, f"{name} is a pip dependency but not in environment.yml"
        assert conda[name] == spec, f"{name}: pip {spec!r} vs conda {conda[name]!r}"
    # the pipeline's own package is installed the same way as with pip (README set-up)
    assert pip_section[-1] == "-e .", "environment.yml must install the mmbench package itself"
    # the CUDA toolkit is pinned to the GPU machines' driver (CUDA 13.0), and the pip CuPy wheel
    # is the build for that major version
    assert conda["cuda-version"] == "==13.0"
    assert conda["cuda-nvcc"] == "==13.0"
    major = conda["cuda-version"].removeprefix("==").split(".")[0]
    cupy_wheels = [n for n in pip if n.startswith("cupy-cuda")]
    assert cupy_wheels == [f"cupy-cuda{major}x"], cupy_wheels
    req_py = py["requires-python"]
    assert conda["python"] == req_py


def test_config_readme_describes_every_key():
    """config/README.md (the workflow catalog's page) lists every key of the schema."""

    def keys(props, prefix=""):
        for k, sub in props.items():
            yield prefix + k
            if "properties" in sub:
                yield from keys(sub["properties"], prefix + k + ".")

    schema = yaml.safe_load((ROOT / "workflow" / "schemas" / "config.schema.yaml").read_text())
    readme = (ROOT / "config" / "README.md").read_text()
    missing = [k for k in keys(schema["properties"]) if f"`{k}`" not in readme]
    assert not missing, missing
    catalog = yaml.safe_load((ROOT / ".snakemake-workflow-catalog.yml").read_text())
    assert catalog["usage"]["report"] is True


# --- per-rule conda environments (workflow/envs/) ---------------------------------------------

ENVS = ROOT / "workflow" / "envs"
SCRIPTS = ROOT / "workflow" / "scripts"
PACKAGE = SCRIPTS / "mmbench"
# import name -> the conda-forge package that provides it
IMPORT_TO_CONDA = {
    "yaml": "pyyaml",
    "cupy": "cupy",
    "cupyx": "cupy",
    "cupy_backends": "cupy",
    "cuda.bindings": "cuda-bindings",
    "cuda.bench": "cuda-bench",
    "pynvml": "nvidia-ml-py",
    "cupti": "cupti-python",
    "ml_dtypes": "ml_dtypes",
    "nvmath": "nvmath-python",
    "matplotlib": "seaborn",  # seaborn depends on matplotlib
}
# rules whose job starts `python -m mmbench.<module>` children in the same environment
CHILDREN = {
    "measure_variant": ["service/worker"],
    "profile_ncu": ["profile/target"],
    "profile_kernel": ["profile/target"],
}
# nvidia-cuda-cupti: the pip wheel cupti-python (pip) resolves against, pinned beside it
# triton: PyPI's wheel, the build our GPU machines have (the optional triton extra)
PIP_ONLY = {"cuda-bench", "cupti-python", "nvidia-cuda-cupti", "rocrate", "roc-validator", "triton"}
TEST_TOOLS = {"pytest", "hypothesis", "ruff", "snakefmt", "playwright"}


def _rules() -> dict[str, dict]:
    """rule name -> its conda: file and script: (None for a shell: rule), from the rule files."""
    rules = {}
    for smk in [
        ROOT / "workflow" / "Snakefile",
        *sorted((ROOT / "workflow" / "rules").glob("*.smk")),
    ]:
        for block in re.split(r"^(?=(?:rule|checkpoint) )", smk.read_text(), flags=re.M)[1:]:
            name = re.match(r"(?:rule|checkpoint) (\w+):", block).group(1)
            # (a comment may stand between the directive and its value)
            conda = re.search(r"^    conda:\n(?:\s*#.*\n)*\s+\"([^\"]+)\"", block, re.M)
            script = re.search(r"^    script:\n(?:\s*#.*\n)*\s+\"([^\"]+)\"", block, re.M)
            runs = script or re.search(r"^    (shell|run):", block, re.M)
            rules[name] = dict(
                runs=bool(runs),
                conda=(smk.parent / conda.group(1)).resolve() if conda else None,
                script=(smk.parent / script.group(1)).resolve() if script else None,
            )
    return rules


def _packages(env_file) -> dict[str, str]:
    env = yaml.safe_load(env_file.read_text())
    assert "name" not in env, f"{env_file.name}: Snakemake names per-rule environments itself"
    assert env["channels"] == ["conda-forge", "nodefaults"], env_file.name
    out = {}
    for dep in env["dependencies"]:
        if isinstance(dep, dict):  # from PyPI: only what conda-forge does not carry
            for req in dep["pip"]:
                name, spec = _split(req)
                assert name in PIP_ONLY, f"{env_file.name}: {name} from pip, not conda-forge"
                out[name] = spec
            continue
        name, spec = _split(dep)
        out[name] = spec
    return out


def _module_file(parts: list[str]):
    """The file of mmbench.<parts> (a module, or a package's __init__), None if not ours."""
    for n in range(len(parts), 0, -1):
        base = PACKAGE.joinpath(*parts[:n])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def _imports(path, seen=None) -> set[str]:
    """The third-party modules a script or mmbench module imports, at any level (a function's
    import runs when it is called), following the mmbench modules it imports."""
    seen = set() if seen is None else seen
    if path in seen:
        return set()
    seen.add(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level:  # from .x import (core's own)
            here = ".".join(path.relative_to(PACKAGE.parent).parent.parts)
            names = [f"{here}.{node.module}" if node.module else here]
            names += [f"{here}.{a.name}" for a in node.names if not node.module]
        elif isinstance(node, ast.ImportFrom):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        for name in names:
            top, *rest = name.split(".")
            if top == "mmbench":
                module = _module_file(rest)
                if module:
                    found |= _imports(module, seen)
            elif top == "cuda":  # a namespace: cuda.bindings, cuda.bench
                found.add(".".join(name.split(".")[:2]))
            elif top not in sys.stdlib_module_names and top != "__future__":
                found.add(top)
    return found


def test_every_rule_that_runs_names_its_own_environment():
    rules = _rules()
    assert len(rules) > 10, rules
    for name, rule in rules.items():
        if not rule["runs"]:
            continue
        assert rule["conda"] is not None, f"rule {name} has no conda: environment"
        assert rule["conda"].parent == ENVS, f"rule {name}: {rule['conda']} is not in workflow/envs"
        assert rule["conda"].is_file(), f"rule {name}: {rule['conda']} does not exist"


def test_each_rule_environment_holds_what_its_code_imports_and_no_test_tools():
    used = set()
    for name, rule in _rules().items():
        if not rule["runs"]:
            continue
        env = _packages(rule["conda"])
        used.add(rule["conda"].name)
        assert not TEST_TOOLS & set(env), f"{rule['conda'].name} holds test tools"
        code = [rule["script"]] if rule["script"] else []
        code += [PACKAGE / f"{child}.py" for child in CHILDREN.get(name, [])]
        needed = set()
        for path in code:
            needed |= {IMPORT_TO_CONDA.get(m, m) for m in _imports(path)}
        if needed:
            assert "python" in env, f"rule {name} runs Python; {rule['conda'].name} has none"
        missing = needed - set(env)
        assert not missing, f"rule {name} imports {sorted(missing)}: not in {rule['conda'].name}"
    assert used == {p.name for p in ENVS.glob("*.yaml")}, "an environment no rule uses"


def test_rule_environments_pin_what_environment_yml_pins():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    dev = dict(_split(d) for d in env["dependencies"] if isinstance(d, str))
    for d in env["dependencies"]:
        if isinstance(d, dict):
            dev |= dict(_split(r) for r in d["pip"] if r != "-e .")
    measure = _packages(ENVS / "gpu.yaml")
    plots = _packages(ENVS / "plots.yaml")
    assert "cupy" in measure and "seaborn" not in measure  # measuring needs no plotting
    assert "seaborn" in plots and "cupy" not in plots  # rendering needs no GPU
    for f in ENVS.glob("*.yaml"):
        for name, spec in _packages(f).items():
            assert name in dev, f"{f.name}: {name} is not in environment.yml"
            assert spec == dev[name], f"{f.name}: {name}{spec} vs environment.yml {dev[name]}"


def test_a_child_process_imports_the_same_mmbench_as_its_parent(tmp_path):
    """In a rule's conda environment mmbench is not installed: the worker and the profiling
    target must import the package their parent job imported (paths.child_env)."""
    shutil.copytree(PACKAGE, tmp_path / "elsewhere" / "mmbench")
    parent = textwrap.dedent(
        """
        import os, subprocess, sys
        sys.path.insert(0, sys.argv[1])  # as Snakemake's script preamble puts a script's folder
        from mmbench.core import paths
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        cmd = [sys.executable, "-c", "import mmbench; print(mmbench.__file__)"]
        print(subprocess.run(cmd, env=paths.child_env(env), capture_output=True,
                             text=True, check=True).stdout.strip())
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", parent, str(tmp_path / "elsewhere")],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert out.stdout.strip() == str(tmp_path / "elsewhere" / "mmbench" / "__init__.py")

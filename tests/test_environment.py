"""environment.yml (conda) and pyproject.toml (pip) install the same packages."""

import re
import tomllib

import yaml

from .conftest import ROOT

# conda-forge name -> PyPI name where they differ
CONDA_TO_PIP = {"snakemake-minimal": "snakemake", "cupy": "cupy-cuda13x"}


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
    for name, spec in pip.items():
        assert name in conda, f"{name} is a pip dependency but not in environment.yml"
        assert conda[name] == spec, f"{name}: pip {spec!r} vs conda {conda[name]!r}"
    assert not pip_section, "conda users need no pip step: the workflow finds its own package"
    # the CUDA toolkit is pinned to the GPU machines' driver (CUDA 13.0), as is CuPy's build
    assert conda["cuda-version"] == "==13.0"
    assert conda["cuda-nvcc"] == "==13.0"
    assert "cuda13x" in "cupy-cuda13x"
    req_py = py["requires-python"]
    assert conda["python"] == req_py

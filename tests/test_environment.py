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
    # the pipeline's own package is installed the same way as with pip (README set-up)
    assert pip_section == ["-e ."], "environment.yml must install the mmbench package itself"
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

"""Where the pipeline's data files are: the one place that knows.

The kernels (``kernels/``: sources and ``registry.yaml``), the schemas (``workflow/schemas/``) and
the profiler metric mapping (``workflow/resources/``) live in the repository.  A wheel built from
it (``pip install .``) carries them as package data under ``mmbench/kernels``, ``mmbench/schemas``
and ``mmbench/resources`` (pyproject.toml maps the same folders); a checkout or an editable
install reads them where they are.  Nothing here touches ``sys.path``.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
# data folder -> its place in the repository (pyproject.toml's [tool.setuptools.package-dir])
FOLDERS = {"kernels": "kernels", "schemas": "workflow/schemas", "resources": "workflow/resources"}


def data_dir(name: str) -> Path:
    """The folder ``name`` (kernels, schemas or resources): inside an installed package if it was
    built as a wheel, otherwise in the repository this package sits in."""
    installed = PACKAGE / name
    if installed.is_dir():
        return installed
    checkout = PACKAGE.parents[2] / FOLDERS[name]
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"mmbench data folder {name!r} not found: neither {installed} (an installed wheel) nor "
        f"{checkout} (a checkout); reinstall with `pip install .` or run from the repository"
    )


def registry_path() -> Path:
    return data_dir("kernels") / "registry.yaml"


def schema_path(name: str) -> Path:
    return data_dir("schemas") / f"{name}.schema.yaml"


def resource_path(name: str) -> Path:
    return data_dir("resources") / name

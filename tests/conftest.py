import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_PATH = ROOT / "kernels" / "registry.yaml"
DATA = Path(__file__).resolve().parent / "data"


def _gpu_reason() -> str | None:
    """Why GPU tests cannot run here, or None when a CUDA GPU is usable."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA GPU visible"
    except Exception as err:  # noqa: BLE001 - any import or driver failure means no GPU here
        return f"no usable CUDA GPU ({type(err).__name__}: {str(err)[:80]})"
    if not shutil.which("nvcc"):
        return "nvcc not on PATH"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}; run `pytest -m gpu` on the GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def registry():
    from mmbench.core.registry import load_registry

    return load_registry(REGISTRY_PATH)

import shutil
import subprocess

import pytest

from mmbench.compile import nvcc_command
from mmbench.ptxas import parse_ptxas

from .conftest import DATA, ROOT

pytestmark = pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")


@pytest.mark.parametrize(
    "variant,src,dtype,tile,coarsen,smem",
    [
        ("naive_guarded", "02_naive_guarded.cu", "float32", 16, 1, 0),
        ("tiled_guarded", "05_tiled_guarded.cu", "float64", 32, 1, 2 * 32 * 32 * 8),
        ("coarsened", "06_coarsened.cu", "int32", 16, 4, 5 * 16 * 16 * 4),
    ],
)
def test_parse_real_nvcc_report(tmp_path, variant, src, dtype, tile, coarsen, smem):
    cmd = nvcc_command(ROOT / "kernels" / src, tmp_path / "k.cubin", "sm_90", dtype, tile, coarsen)
    out = subprocess.run(cmd, capture_output=True, text=True, check=True)
    (rec,) = parse_ptxas(out.stderr)
    assert rec["function"] == variant and rec["arch"] == "sm_90"
    assert 8 <= rec["registers"] <= 255
    assert rec["shared_bytes"] == smem
    assert rec["spill_store_bytes"] == 0 and rec["stack_bytes"] == 0


def test_recorded_resources_table_matches_registry():
    import pandas as pd

    df = pd.read_csv(DATA / "h200-default" / "resources.csv")
    tiled = df[df.variant == "tiled_guarded"]
    assert set(tiled.shared_bytes) == {2 * 16 * 16 * 4, 2 * 32 * 32 * 4}
    assert (df[df.variant.str.startswith("naive")].shared_bytes == 0).all()

import shutil
import subprocess

import pytest

from mmbench.core.registry import load_registry
from mmbench.plan.compile import nvcc_command
from mmbench.plan.ptxas import parse_ptxas

from .conftest import DATA, ROOT, read_csv

needs_nvcc = pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")


def _compiled(registry):
    """One instantiation of every kernel of ours (a cubin; a shared build's library kernels are
    tests/test_compile.py's): its last (largest) parameter values."""
    return [(v, v.instantiations()[-1]) for v in registry.values() if v.backend == "cubin"]


@pytest.mark.slow  # nvcc for each of the 26 variants: 25 s on a 2-core machine
@needs_nvcc
def test_parse_real_nvcc_report_of_every_variant(tmp_path, registry):
    """ptxas's report of a real nvcc build of each variant parses, and its static shared memory
    is what the registry declares."""
    for v, params in _compiled(registry):
        if v.rejected(params, 227 * 1024):
            params = next(p for p in v.instantiations() if not v.rejected(p, 227 * 1024))
        arch = v.arch or "sm_90"  # wgmma_tf32: sm_90a
        cmd = nvcc_command(
            ROOT / "kernels" / v.source, tmp_path / "k.cubin", arch, v.defines(params)
        )
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        recs = parse_ptxas(out.stderr)
        # one record per entry point: `symbol` and the registry's other `symbols`
        assert sorted(r["function"] for r in recs) == sorted(v.entry_points), v.name
        assert all(r["arch"] == arch and 8 <= r["registers"] <= 255 for r in recs), v.name
        # the registry declares the largest entry's static shared memory (what a launch needs)
        assert max(r["shared_bytes"] for r in recs) == v.static_shared_bytes(params), v.name
        assert all(r["spill_store_bytes"] == 0 and r["stack_bytes"] == 0 for r in recs)


def test_recorded_resources_table_matches_registry(registry):

    df = read_csv(DATA / "h100-main" / "results" / "tables" / "resources.csv")
    for _, r in df.iterrows():
        v = registry[r["variant"]]
        params = v.instance(r["instance"])
        assert r["shared_bytes"] == v.static_shared_bytes(params), r["instance"]


# the Hopper rungs whose shared facts the registry computes (registry `derived:`), sm_90a
HOPPER_RUNGS = [n for n, v in load_registry().items()
                if v.arch == "sm_90a" and v.derived and v.backend == "cubin"]  # fmt: skip


@needs_nvcc
@pytest.mark.slow  # every instantiation built: .ci/run runs it after the README's command
@pytest.mark.parametrize("variant", HOPPER_RUNGS)
def test_every_instantiation_of_the_hopper_rungs_builds_without_spills(tmp_path, registry, variant):
    """Each buildable instantiation (what the tune preset runs) compiles for sm_90a with its
    declared static shared memory and no spills: the registers setmaxnreg hands each warpgroup
    hold its accumulators and copies (the constraints keep out what would not)."""
    from concurrent.futures import ThreadPoolExecutor

    v = registry[variant]
    todo = [p for p in v.instantiations() if not v.rejected(p, 227 * 1024)]
    assert todo

    def build(i_params):
        i, params = i_params
        cmd = nvcc_command(
            ROOT / "kernels" / v.source, tmp_path / f"{i}.cubin", v.arch, v.defines(params)
        )
        out = subprocess.run(cmd, capture_output=True, text=True, check=True)
        return params, parse_ptxas(out.stderr)

    with ThreadPoolExecutor(2) as pool:
        for params, recs in pool.map(build, enumerate(todo)):
            assert sorted(r["function"] for r in recs) == sorted(v.entry_points), params
            assert all(r["arch"] == "sm_90a" for r in recs)
            assert max(r["shared_bytes"] for r in recs) == v.static_shared_bytes(params), params
            for rec in recs:
                assert (rec["spill_store_bytes"], rec["stack_bytes"]) == (0, 0), (params, rec)

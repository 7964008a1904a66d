import shutil

import pytest

from mmbench.core.axes import slug
from mmbench.core.registry import load_registry
from mmbench.plan.ptxas import parse_ptxas

from .conftest import DATA, read_csv

needs_nvcc = pytest.mark.skipif(not shutil.which("nvcc"), reason="nvcc not installed")


def _compiled(registry):
    """One instantiation of every kernel of ours (a cubin; a shared build's library kernels are
    tests/test_compile.py's): its last (largest) parameter values."""
    return [(v, v.instantiations()[-1]) for v in registry.values() if v.backend == "cubin"]


@pytest.mark.slow  # the session's sm_90 compile_all (conftest)
@needs_nvcc
def test_parse_real_nvcc_report_of_every_variant(sm90_build, registry):
    """ptxas's report of a real nvcc build of each variant (the one the compile rule kept beside
    its cubin) parses, and its static shared memory is what the registry declares."""
    workdir, out = sm90_build
    assert out.returncode == 0, out.stderr[-3000:]
    for v, params in _compiled(registry):
        if v.rejected(params, 227 * 1024):
            params = next(p for p in v.instantiations() if not v.rejected(p, 227 * 1024))
        arch = v.arch or "sm_90"  # wgmma_tf32: sm_90a
        report = workdir / "results" / "build" / "sm_90" / v.name / f"{slug(params)}.ptxas.txt"
        recs = parse_ptxas(report.read_text())
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
@pytest.mark.slow  # every instantiation built (the session's sm_90 compile_all, conftest)
@pytest.mark.parametrize("variant", HOPPER_RUNGS)
def test_every_instantiation_of_the_hopper_rungs_builds_without_spills(
    sm90_build, registry, variant
):
    """Each buildable instantiation (what the tune preset runs) compiles for sm_90a with its
    declared static shared memory and no spills: the registers setmaxnreg hands each warpgroup
    hold its accumulators and copies (the constraints keep out what would not).  Read from the
    ptxas report the pipeline's compile rule kept beside each cubin."""
    workdir, out = sm90_build
    assert out.returncode == 0, out.stderr[-3000:]
    v = registry[variant]
    todo = [p for p in v.instantiations() if not v.rejected(p, 227 * 1024)]
    assert todo
    build = workdir / "results" / "build" / "sm_90" / variant
    for params in todo:
        recs = parse_ptxas((build / f"{slug(params)}.ptxas.txt").read_text())
        assert sorted(r["function"] for r in recs) == sorted(v.entry_points), params
        assert all(r["arch"] == "sm_90a" for r in recs)
        assert max(r["shared_bytes"] for r in recs) == v.static_shared_bytes(params), params
        for rec in recs:
            assert (rec["spill_store_bytes"], rec["stack_bytes"]) == (0, 0), (params, rec)

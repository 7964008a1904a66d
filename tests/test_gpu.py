"""On the GPU: the runner with real cubins.  Skipped with a reason where there is no GPU; run
on the GPU machine with `pytest -m gpu`."""

import itertools
import subprocess

import pytest

from mmbench import plan
from mmbench.compile import nvcc_command
from mmbench.plan import Configuration
from mmbench.runner import Runner, Sampling

from .conftest import ROOT

pytestmark = pytest.mark.gpu

FAST = Sampling(warmup=1, min_samples=2, max_samples=3, min_time_s=0.0, max_time_s=1.0)


@pytest.fixture(scope="module")
def arch():
    gpus = plan.detect_gpus()
    return "sm_" + gpus[0]["compute_cap"].replace(".", "")


def run(registry, arch, tmp_path, name, confs):
    v = registry[name]
    cubins = {}
    for c in confs:
        key = (c.dtype, c.tile, c.coarsen)
        if v.compiled and key not in cubins:
            out = tmp_path / f"{name}_{c.dtype}_{c.tile}_{c.coarsen}.cubin"
            cmd = nvcc_command(ROOT / "kernels" / v.source, out, arch, *key)
            subprocess.run(cmd, check=True, capture_output=True)
            cubins[key] = str(out)
    rows = []
    Runner(v, cubins, FAST).run(confs, rows.append)
    return rows


def conf(variant, m, n=None, k=None, **kw):
    base = dict(
        variant=variant,
        tile=32,
        coarsen=1,
        dtype="float32",
        m=m,
        n=n or m,
        k=k or m,
        accumulate=False,
        memory="pinned",
        distribution="int09",
        seed=7,
    )
    return Configuration(**(base | kw))


def test_kernel00_fails_at_641_with_its_first_mismatches_and_never_crashes(
    registry, arch, tmp_path
):
    rows = run(
        registry,
        arch,
        tmp_path,
        "naive_unguarded",
        [conf("naive_unguarded", 641, expected="FAIL"), conf("naive_unguarded", 640)],
    )
    bad, good = rows
    assert bad["verification"] == "FAIL" and good["verification"] == "PASS"
    assert bad["grid"] == "20x20x1"  # seed 002: nBlocks 20x20 at 641
    assert bad["mismatches"] == 641 * 641 - 640 * 640  # the unwritten border
    assert bad["first_mismatches"].startswith("0:640: ")
    assert len(bad["first_mismatches"].split(" | ")) == 10
    assert bad["oob_writes"] == 0
    assert bad["kernel_ms_median"] > 0 and good["kernel_gflops"] > 0


def test_kernel10_outside_its_precondition_runs_in_guard_zones(registry, arch, tmp_path):
    rows = run(
        registry,
        arch,
        tmp_path,
        "tiled_unguarded",
        [
            conf("tiled_unguarded", 641, expected="FAIL"),
            conf("tiled_unguarded", 640),
            conf("tiled_unguarded", 96, 64, 32, tile=16, dtype="float64", accumulate=True),
        ],
    )
    assert rows[0]["verification"] == "FAIL"
    assert rows[0]["oob_writes"] > 0  # its writes past C landed in the guard zone
    assert rows[1]["verification"] == "PASS" and rows[1]["oob_writes"] == 0
    assert rows[2]["verification"] == "PASS"


@pytest.mark.parametrize("variant", ["naive_guarded", "naive_xrow", "tiled_guarded", "coarsened"])
def test_guarded_variants_pass_every_shape_type_and_mode(registry, arch, tmp_path, variant):
    confs = []
    for (m, n, k), dtype, acc, mem, tile in itertools.product(
        [(100, 70, 37), (33, 129, 65), (64, 64, 64)],
        ["float32", "float64", "int32"],
        [False, True],
        ["pinned", "pageable"],
        [8, 32],
    ):
        dist = "int09" if dtype == "int32" or (m, n, k) == (64, 64, 64) else "uniform"
        confs.append(
            conf(
                variant,
                m,
                n,
                k,
                dtype=dtype,
                accumulate=acc,
                memory=mem,
                tile=tile,
                distribution=dist,
                coarsen=4 if variant == "coarsened" else 1,
            )
        )
    rows = run(registry, arch, tmp_path, variant, confs)
    failed = [
        (r["dtype"], r["m"], r["n"], r["k"], r["accumulate"], r["first_mismatches"], r.get("error"))
        for r in rows
        if r["verification"] != "PASS"
    ]
    assert not failed
    assert all(r["samples"] >= 2 and r["global_ms_median"] >= r["kernel_ms_median"] for r in rows)
    assert {r["tolerance"] for r in rows} >= {"exact"}


def test_cublas_reference_line(registry, arch, tmp_path):
    confs = [
        conf("cublas", 300, 200, 100, tile=0, dtype=d, accumulate=a, distribution="uniform")
        for d in ("float32", "float64")
        for a in (False, True)
    ]
    rows = run(registry, arch, tmp_path, "cublas", confs)
    assert [r["verification"] for r in rows] == ["PASS"] * 4
    assert all(r["gpu_uuid"].startswith("GPU-") and r["driver_version"] for r in rows)

from mmbench import plan
from mmbench.config import validate


def _plan(registry, **over):
    return plan.expand(validate(over, registry), registry)


def test_main_command_grid(registry):
    p = _plan(registry, sizes=[8000, 10000, 12000])
    counts = {v: len(c) for v, c in p.runs.items()}
    # 3 sizes x 2 memory modes x 2 tiles (x 2 coarsening factors); cuBLAS has no tile
    assert counts == {
        "naive_unguarded": 12,
        "naive_guarded": 12,
        "naive_xrow": 12,
        "tiled_unguarded": 10,
        "tiled_guarded": 12,
        "coarsened": 24,
        "cublas": 6,
    }
    # seed 003's "--": the tiled kernel at 10000 with 32 x 32 tiles is refused, with its reason
    refused = [r for r in p.refused if r["variant"] == "tiled_unguarded"]
    assert {(r["m"], r["tile"]) for r in refused} == {(10000, 32)}
    assert "demonstrate_failures" in refused[0]["reason"]
    # naive_unguarded at 10000 / 32 runs (it is memory-safe) and is expected to FAIL
    nu = [c for c in p.runs["naive_unguarded"] if c.m == 10000 and c.tile == 32]
    assert {c.expected for c in nu} == {"FAIL"}
    assert ("coarsened", "float32", 32, 4) in p.instantiations


def test_demonstrate_failures_runs_the_unsafe_configurations(registry):
    p = _plan(registry, sizes=[641], variants=["tiled_unguarded"], demonstrate_failures=True)
    assert not p.refused
    assert {c.expected for c in p.runs["tiled_unguarded"]} == {"FAIL"}


def test_unsupported_combinations_are_refused_not_fatal(registry):
    p = _plan(registry, sizes=[64], dtypes=["int32"], variants=["cublas", "naive_guarded"])
    assert "cublas" not in p.runs
    assert any("supports dtypes float32, float64 only" in r["reason"] for r in p.refused)
    p = _plan(
        registry, sizes=[64], dtypes=["float64"], coarsen=[8], tiles=[32], variants=["coarsened"]
    )
    assert not p.runs and "48 KiB" in p.refused[0]["reason"]


def test_all_instantiations_skip_impossible_ones(registry):
    insts = plan.all_instantiations(registry)
    assert ("coarsened", "float64", 32, 8) not in insts
    assert ("coarsened", "float32", 32, 8) in insts  # 9 x 4 KiB = 36 KiB fits
    # 5 plain variants x 3 dtypes x 3 tiles, and coarsened 3 x 3 x 3 but float64 32x32 x8 (72 KiB)
    # and the three matrix-sum variants x 3 dtypes x 2 tiles
    assert len(insts) == 5 * 3 * 3 + 27 - 1 + 3 * 3 * 2


def test_rectangular_shapes(registry):
    p = _plan(registry, sizes=[64], shapes=[[100, 70, 30]], variants=["tiled_guarded"])
    assert {(c.m, c.n, c.k) for c in p.runs["tiled_guarded"]} == {(64, 64, 64), (100, 70, 30)}

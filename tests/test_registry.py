import pytest

from mmbench.registry import (
    RegistryError,
    cdiv,
    evaluate,
    kernel_dependencies,
    load_registry,
    source_hash,
)

from .conftest import REGISTRY_PATH, ROOT


def test_every_variant_of_the_reports_is_registered(registry):
    assert list(registry) == [
        "naive_unguarded",
        "naive_guarded",
        "naive_xrow",
        "tiled_unguarded",
        "tiled_guarded",
        "coarsened",
        "cublas",
        "matadd_element",
        "matadd_row",
        "matadd_column",
    ]
    assert registry["matadd_row"].operation == "add"
    assert registry["tiled_guarded"].operation == "gemm"
    assert registry["coarsened"].coarsen == (2, 4, 8)
    assert not registry["cublas"].compiled


def test_kernel00_launch_is_floor_and_kernel01_is_ceil_as_in_seed_002(registry):
    # seed 002: kernel00 at 641 with 32x32 threads launches 20x20 blocks, kernel01 21x21
    assert registry["naive_unguarded"].launch(641, 641, 641, 32) == ((20, 20, 1), (32, 32, 1))
    assert registry["naive_guarded"].launch(641, 641, 641, 32) == ((21, 21, 1), (32, 32, 1))
    # x->row mapping swaps the grid: rows along x
    assert registry["naive_xrow"].launch(100, 40, 7, 16) == ((7, 3, 1), (16, 16, 1))
    assert registry["coarsened"].launch(64, 100, 64, 16, 4) == ((2, 4, 1), (16, 16, 1))


def test_preconditions(registry):
    assert registry["tiled_unguarded"].unmet(640, 640, 640, 32) == []
    reasons = registry["tiled_unguarded"].unmet(640, 640, 641, 32)
    assert len(reasons) == 1 and "k % tile == 0" in reasons[0]
    assert registry["tiled_unguarded"].unsafe_when_unmet
    assert registry["naive_unguarded"].unmet(641, 641, 641, 32)
    assert not registry["naive_unguarded"].unsafe_when_unmet
    assert registry["tiled_guarded"].unmet(641, 3, 5, 32) == []


def test_static_shared_memory(registry):
    assert registry["tiled_guarded"].static_shared_bytes(32, 1, 8) == 16384
    assert registry["coarsened"].static_shared_bytes(32, 8, 8) == 9 * 32 * 32 * 8


def test_evaluator_is_arithmetic_only():
    assert evaluate("cdiv(n, tile * coarsen)", n=641, tile=32, coarsen=2) == 11
    assert evaluate("m % tile == 0 and not k < 3", m=64, tile=32, k=5) is True
    assert cdiv(0, 8) == 0
    for bad in ("__import__('os').system('true')", "m.__class__", "open('x')", "[1][0]"):
        with pytest.raises(RegistryError):
            evaluate(bad, m=1)
    with pytest.raises(RegistryError, match="unknown name 'q'"):
        evaluate("q + 1", m=1)


def test_headers_are_dependencies():
    deps = kernel_dependencies(ROOT / "kernels" / "04_tiled_unguarded.cu")
    assert [p.name for p in deps] == ["04_tiled_unguarded.cu", "common.cuh"]


def test_source_hash_changes_with_the_source(tmp_path):
    a = tmp_path / "k.cu"
    a.write_text("// one")
    h1 = source_hash([a])
    a.write_text("// two")
    assert source_hash([a]) != h1


def test_malformed_registry_is_refused(tmp_path):
    bad = tmp_path / "registry.yaml"
    bad.write_text(REGISTRY_PATH.read_text().replace("tiles: [8, 16, 32]", "tiles: [8, 64]", 1))
    with pytest.raises(RegistryError, match="64 is not one of"):
        load_registry(bad)
    missing = tmp_path / "r2.yaml"
    missing.write_text(
        "variants:\n  x:\n    source: nope.cu\n    symbol: x\n    seeds: s\n"
        "    dtypes: [float32]\n    tiles: [8]\n    block: [tile]\n    grid: [n]\n"
    )
    with pytest.raises(RegistryError, match="does not exist"):
        load_registry(missing)

import shutil
from pathlib import Path

import pytest

from mmbench.core import arith
from mmbench.core.registry import (
    RegistryError,
    cdiv,
    evaluate,
    kernel_dependencies,
    load_registry,
    slug,
    source_hash,
)

from .conftest import REGISTRY_PATH, ROOT

COURSE = [
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


def test_every_variant_of_the_reports_is_registered(registry):
    assert [v for v in registry if v in COURSE] == COURSE  # more may follow on the ladder
    assert registry["matadd_row"].operation == "add"
    assert registry["tiled_guarded"].operation == "gemm"
    assert registry["coarsened"].values("COARSEN") == (2, 4, 8)
    assert not registry["cublas"].compiled


def test_every_entry_declares_its_parameters_and_they_name_its_cubins(registry):
    for v in registry.values():
        assert v.param_names[0] == "dtype", v.name
        for params in v.instantiations():
            assert v.instance(slug(params)) == params
    assert slug({"dtype": "float32", "TILE": 32, "COARSEN": 4}) == "float32_TILE32_COARSEN4"


def test_kernel00_launch_is_floor_and_kernel01_is_ceil_as_in_seed_002(registry):
    t32 = {"dtype": "float32", "TILE": 32}
    # seed 002: kernel00 at 641 with 32x32 threads launches 20x20 blocks, kernel01 21x21
    assert registry["naive_unguarded"].launch(t32, 641, 641, 641) == ((20, 20, 1), (32, 32, 1))
    assert registry["naive_guarded"].launch(t32, 641, 641, 641) == ((21, 21, 1), (32, 32, 1))
    # x->row mapping swaps the grid: rows along x
    t16 = {"dtype": "float32", "TILE": 16}
    assert registry["naive_xrow"].launch(t16, 100, 40, 7) == ((7, 3, 1), (16, 16, 1))
    assert registry["coarsened"].launch(t16 | {"COARSEN": 4}, 64, 100, 64) == (
        (2, 4, 1),
        (16, 16, 1),
    )


def test_a_persistent_grid_is_one_block_per_multiprocessor_in_whole_clusters(registry):
    """The persistent rungs' grid is sized by the GPU's multiprocessor count (`sms`), never more
    blocks than there are tiles, and whole clusters."""
    v = registry["persistent_tf32"]
    p = {"dtype": "float32", "BM": 256, "STAGES": 4, "CLUSTER": 2, "GROUP": 8}
    assert v.launch(p, 8192, 8192, 8192, sms=132) == ((132, 1, 1), (384, 1, 1))
    assert v.launch(p, 8192, 8192, 8192, sms=133) == ((132, 1, 1), (384, 1, 1))
    # 2 x 3 tiles of 256 x 128, clusters of 2 along n: 2 x 2 cluster tiles
    assert v.launch(p, 500, 300, 64, sms=132)[0] == (8, 1, 1)
    assert v.launch(p, 1, 1, 1, sms=132)[0] == (2, 1, 1)
    assert v.cluster_of(p) == (2, 1, 1)
    one = registry["persistent_bf16"]
    q = {"dtype": "bfloat16", "BM": 128, "BN": 256, "STAGES": 4, "CLUSTER": 1, "GROUP": 8}
    assert one.launch(q, 4096, 4096, 4096, sms=114)[0] == (114, 1, 1)


def test_preconditions(registry):
    t32 = {"dtype": "float32", "TILE": 32}
    assert registry["tiled_unguarded"].unmet(t32, 640, 640, 640) == []
    reasons = registry["tiled_unguarded"].unmet(t32, 640, 640, 641)
    assert len(reasons) == 1 and "k % TILE == 0" in reasons[0]
    assert registry["tiled_unguarded"].unsafe_when_unmet
    assert registry["naive_unguarded"].unmet(t32, 641, 641, 641)
    assert not registry["naive_unguarded"].unsafe_when_unmet
    assert registry["tiled_guarded"].unmet(t32, 641, 3, 5) == []


def test_static_shared_memory(registry):
    d32 = {"dtype": "float64", "TILE": 32}
    assert registry["tiled_guarded"].static_shared_bytes(d32) == 16384
    assert registry["coarsened"].static_shared_bytes(d32 | {"COARSEN": 8}) == 9 * 32 * 32 * 8


def test_guard_zones_come_from_the_declared_reach_not_a_constant(registry):
    """The unsafe variants declare how far past a matrix they reach; the guard zone covers it,
    also for a footprint larger than the old fixed zone (33 rows + 256 elements)."""
    old_rows = 32 + 1
    for v in registry.values():
        if not v.unsafe_when_unmet:
            continue
        for params in v.instantiations():
            rows, cols = v.reach_of(params, 641, 641, 640)
            ld = 700
            guard = arith.guard_elements(rows, cols, ld, ld, ld)
            assert guard >= rows * ld + cols + 1, v.name
    # a kernel that reaches 64 rows and 64 columns past (a 64 x 64 block tile) gets 65 rows of
    # the widest leading dimension plus 64 elements; the old constant zone (33 rows) was smaller
    assert arith.guard_elements(64, 64, 1000, 900, 800) == 65 * 1000 + 64
    assert arith.guard_elements(64, 64, 1000, 900, 800) > old_rows * 1000
    # rounded up to an alignment where a kernel declares one (16 B of float32: 4 elements)
    assert arith.guard_elements(0, 3, 37, 37, 37, multiple=4) == 40


def test_evaluator_is_arithmetic_only():
    assert evaluate("cdiv(n, TILE * COARSEN)", n=641, TILE=32, COARSEN=2) == 11
    assert evaluate("m % TILE == 0 and not k < 3", m=64, TILE=32, k=5) is True
    assert cdiv(0, 8) == 0
    for bad in ("__import__('os').system('true')", "m.__class__", "open('x')", "[1][0]"):
        with pytest.raises(RegistryError):
            evaluate(bad, m=1)
    with pytest.raises(RegistryError, match="unknown name 'q'"):
        evaluate("q + 1", m=1)
    # one expression, built once, read with other names each time: 641/64 and 1000/64 by hand
    assert [evaluate("cdiv(n, TILE)", n=n, TILE=64) for n in (641, 1000)] == [11, 16]


def test_the_evaluator_keeps_pythons_order_of_evaluation():
    """`and`/`or` evaluate every operand (a quotient by zero anywhere in a constraint is seen:
    Variant.rejected names it), a chained comparison stops at its first false link."""
    with pytest.raises(ZeroDivisionError):
        evaluate("m == 2 and 1 // (m - 1) > 0", m=1)
    assert evaluate("m > 2 > 1 // (m - 1)", m=1) is False


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
    (tmp_path / "01_naive_unguarded.cu").write_text("")
    bad = tmp_path / "registry.yaml"
    bad.write_text(REGISTRY_PATH.read_text().replace("dtype: [float32,", "dtype: [float8,", 1))
    with pytest.raises(RegistryError, match="float8"):
        load_registry(bad)
    typo = tmp_path / "r3.yaml"
    typo.write_text(
        "variants:\n  x:\n    source: 01_naive_unguarded.cu\n    symbol: x\n    seeds: s\n"
        "    params: {dtype: [float32], TILE: [8]}\n    block: [TILLE]\n    grid: [n]\n"
    )
    with pytest.raises(RegistryError, match="unknown name 'TILLE'"):
        load_registry(typo)
    missing = tmp_path / "r2.yaml"
    missing.write_text(
        "variants:\n  x:\n    source: nope.cu\n    symbol: x\n    seeds: s\n"
        "    params: {dtype: [float32], TILE: [8]}\n    block: [TILE]\n    grid: [n]\n"
    )
    with pytest.raises(RegistryError, match="does not exist"):
        load_registry(missing)


def test_a_constraint_that_divides_by_zero_rejects_the_parameters_with_its_reason():
    from dataclasses import replace

    from mmbench.core.registry import Condition

    v = load_registry()["warptile"]
    bad = replace(v, constraints=(Condition("WM // (WN - WN) > 0", "a quotient"),))
    params = dict(dtype="float32", BM=64, BN=64, BK=8, WM=32, WN=32, WNITER=1, TM=8, TN=4)
    assert bad.rejected(params) == ["WM // (WN - WN) > 0 divides by zero: a quotient"]
    assert v.rejected(params) == []


@pytest.fixture
def registry_copy(tmp_path):
    for p in (ROOT / "kernels").glob("*"):
        if p.is_file():
            shutil.copy(p, tmp_path / p.name)
    return tmp_path / "registry.yaml"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_variant_named_twice_is_refused(registry_copy):
    text = registry_copy.read_text()
    start = text.index("  naive_guarded:")
    end = text.index("\n\n", start)
    registry_copy.write_text(text + "\n" + text[start:end] + "\n")
    with pytest.raises(RegistryError, match="'naive_guarded' is given twice"):
        load_registry(registry_copy)


def test_unsupported_operators_and_runaway_expressions_are_refused():
    for expr, words in [
        ("2 in 3", "takes a bracketed list of values"),
        ("m in n", "takes a bracketed list of values"),
        ("m is n", "unsupported operator Is"),
        ("min()", "min expected at least 1 argument"),
        ("+".join(["1"] * 3000), "at most 400"),
    ]:
        with pytest.raises(RegistryError, match=words):
            evaluate(expr, m=1, n=1)


def test_in_and_not_in_take_a_list_of_values():
    """`in` and `not in` against a bracketed list (tools/memcheck.py --where, constraints): each
    value and the list's expressions checked by hand."""
    for expr, names, want in [
        ("BN in (48, 80, 96)", {"BN": 80}, True),
        ("BN in (48, 80, 96)", {"BN": 64}, False),
        ("BN not in [64, 128]", {"BN": 64}, False),
        ("BN not in [64, 128]", {"BN": 16}, True),
        ("BM * 2 in (BN, BN + 128)", {"BM": 64, "BN": 0}, True),
        ("BM in () or BM == 64", {"BM": 64}, True),
        ("16 <= BN in (16, 32)", {"BN": 32}, True),
    ]:
        assert evaluate(expr, **names) is want, expr


def test_a_negative_parameter_value_is_refused(registry_copy):
    _edit(registry_copy, "TILE: [8, 16, 32]", "TILE: [-8, 16, 32]")
    with pytest.raises(RegistryError, match="TILE value -8 is not a positive integer"):
        load_registry(registry_copy)


def test_an_expression_failing_for_a_later_instantiation_is_refused(registry_copy):
    # naive_guarded's TILE values are 8, 16, 32: the grid divides by zero at TILE=16 only
    _edit(
        registry_copy,
        'grid: ["cdiv(n, TILE)", "cdiv(m, TILE)"]',
        'grid: ["cdiv(n, TILE - 16)", "cdiv(m, TILE)"]',
    )
    with pytest.raises(RegistryError, match="instantiation float32_TILE16"):
        load_registry(registry_copy)


def test_a_source_that_a_shell_would_expand_is_refused(registry_copy):
    _edit(registry_copy, "source: 02_naive_guarded.cu", 'source: "$(touch M) x.cu"')
    with pytest.raises(RegistryError, match="source"):
        load_registry(registry_copy)


def test_a_registry_launch_edit_changes_what_names_the_rows(registry_copy):
    """The measurement job's params carry the launch spec's hash (rule measure_variant), so an
    edited grid re-measures the variant; the other variants' hashes stay."""
    before = {k: v.launch_sha() for k, v in load_registry(registry_copy).items()}
    load_registry.cache_clear()
    _edit(
        registry_copy,
        'grid: ["cdiv(n, TILE)", "cdiv(m, TILE)"]',
        'grid: ["cdiv(n, TILE) + 0", "cdiv(m, TILE)"]',
    )
    after = {k: v.launch_sha() for k, v in load_registry(registry_copy).items()}
    changed = sorted(k for k in before if before[k] != after[k])
    assert changed == ["naive_guarded"]
    rule = (ROOT / "workflow" / "rules" / "run.smk").read_text()
    assert "launch=lambda w: REGISTRY[w.variant].launch_sha()" in rule


def test_a_derived_fact_named_like_a_parameter_or_a_ladder_type_not_declared_is_refused(
    registry_copy,
):
    """ws_bf16's derived BK renamed STAGES (a parameter it declares) would silently replace the
    parameter in every expression; a ladder type the variant does not build could not run."""
    _edit(registry_copy, '      BK: "128 // elem_bytes"  # k per stage: one 128-byte swizzle row\n'
          '      THREADS: "128 * (CONSUMERS + 1)"',
          '      STAGES: "128 // elem_bytes"\n      THREADS: "128 * (CONSUMERS + 1)"')  # fmt: skip
    with pytest.raises(RegistryError, match="'ws_bf16': derived STAGES names a parameter"):
        load_registry(registry_copy)


def test_a_ladder_type_the_variant_does_not_build_is_refused(registry_copy):
    """ws_bf16 builds bfloat16 only: on the ladder in float64 it could never run."""
    text = registry_copy.read_text()
    start = text.index("  ws_bf16:")
    at = text.index("    ladder: [bfloat16]\n", start)
    registry_copy.write_text(text[:at] + "    ladder: [float64]\n" + text[at + 23 :])
    with pytest.raises(
        RegistryError, match="'ws_bf16': ladder type float64 is not one of its dtype"
    ):
        load_registry(registry_copy)


def test_a_launch_that_splits_k_runs_the_split_entry_point(registry):
    """persistent_tf32, 256-row tiles of 128 columns on 132 multiprocessors: 128 x 4096 x 4096
    is cdiv(128, 256) x cdiv(4096, 128) = 32 tiles, fewer than a wave: all 32 split,
    132 // 32 = 4 ways (4096 // 256 = 16 allows them): the `_split` kernel, 128 blocks;
    3072^3 is 12 x 24 = 288 tiles, two whole waves (264 tiles run whole) and 24 left, split
    132 // 24 = 5 ways: 264 + 24 x 5 = 384 units on 132 blocks; 4096^3 is 16 x 32 = 512 tiles,
    3 waves and 116 (132 // 116 = 1: not split), `persistent_tf32`, whose machine code is the
    kernel's before split-K; 6144^3 is 1152 tiles, 8 waves and more: not split."""
    v = registry["persistent_tf32"]
    params = {"dtype": "float32", "BM": 256, "STAGES": 4, "CLUSTER": 1, "GROUP": 8}
    small = v.launch_spec(params, 128, 4096, 4096, (4096, 4096, 4096), False, sms=132)
    assert dict(small.facts) == {"TILES": 32, "WAVE": 132, "TAIL": 32, "SPLITS": 4, "HEAD": 0}
    assert small.symbol == "persistent_tf32_split" and small.grid == (128, 1, 1)
    mid = v.launch_spec(params, 3072, 3072, 3072, (3072, 3072, 3072), False, sms=132)
    assert dict(mid.facts) == {"TILES": 288, "WAVE": 132, "TAIL": 24, "SPLITS": 5, "HEAD": 264}
    assert mid.symbol == "persistent_tf32_split" and mid.grid == (132, 1, 1)
    big = v.launch_spec(params, 4096, 4096, 4096, (4096, 4096, 4096), False, sms=132)
    assert dict(big.facts)["SPLITS"] == 1 and big.symbol == "persistent_tf32"
    huge = v.launch_spec(params, 6144, 6144, 6144, (6144, 6144, 6144), False, sms=132)
    assert dict(huge.facts)["TAIL"] == 0 and huge.symbol == "persistent_tf32"
    assert v.entry_points == ("persistent_tf32", "persistent_tf32_split")
    # warptile_db declares one entry point: its split rows run in the same kernel
    w = registry["warptile_db"]
    p = w.instantiations()[-1]
    assert w.launch_spec(p, 128, 4096, 4096, (4096, 4096, 4096), False, sms=132).symbol == w.symbol


def test_the_last_wave_is_split_as_a_hand_count_finds_quickest(registry):
    """warptile_db's tuned 128 x 256 tiles, one block a multiprocessor, 132 at a time, a unit's
    own cost 4 k-tiles.  8192^2: 64 rows of 32 tiles, 2048 in all; 15 whole waves are 1980
    tiles, 61 whole rows (1952); the 3 rows past them (96 tiles) are the tail; a tile is 512
    k-tiles.  By hand: the head keeps 104 blocks busy until 15 x 516 = 7740 and 28 until
    14 x 516 = 7224.  Whole, the tail's 96 tiles: 28 end at 7740, the other 68 at 8256.  Split 9
    ways, 864 units of cdiv(512, 9) + 4 = 61, the 104 blocks having run j each by 7740 + 61 j and
    the 28 floor((t - 7224) / 61) by t: by 7984 (j = 4), 416 + 28 x 12 = 752; by 8017 (the 28's
    13th), 416 + 364 = 780; by 8045 (j = 5), 520 + 364 = 884 >= 864: it ends at 8045.
    4096^2 (512 tiles, 24 whole rows, 8 past them, 256 k-tiles): whole, 4 x 260 = 1040; split 9
    ways (units of 33) the 12 early blocks and the 120 late ones have run 192 + 960 = 1152 only
    by 520 + 16 x 33 = 1048: not split (a side-by-side run measured 9 ways 1% slower there)."""
    from mmbench.core.schedule import last_wave_end

    assert last_wave_end(1952, 96, 132, 512, 1, 4) == 8256
    assert last_wave_end(1952, 96, 132, 512, 9, 4) == 8045
    assert last_wave_end(384, 128, 132, 256, 1, 4) == 1040
    assert last_wave_end(384, 128, 132, 256, 9, 4) == 1048
    assert evaluate("tail_splits(384, 128, 132, 256, 16, 4)") == 1
    assert evaluate("tail_splits(1952, 96, 132, 512, 16, 4)") == 9
    assert evaluate("tail_splits(384, 0, 132, 256, 16, 4)") == 1  # no tail
    assert evaluate("tail_splits(1952, 96, 132, 512, 0, 4)") == 1  # k too short to split
    w = registry["warptile_db"]
    p = w.instance("float32_BM128_BN256_BK16_WM64_WN64_WNITER2_TM8_TN4")
    shape = (8192, 8192, 8192, (8192, 8192, 8192), False)
    spec = w.launch_spec(p, *shape, sms=132, blocks_per_sm=1)
    facts = dict(spec.facts)
    assert (facts["SPLIT_ROWS"], facts["SPLITS"]) == (61, 9)
    assert spec.grid == (32, 61 + 3 * 9, 1)
    assert [a.value for a in spec.args[-2:]] == [61, 9]
    at4096 = dict(w.launch_spec(p, 4096, 4096, 4096, (4096,) * 3, False, sms=132).facts)
    assert (at4096["SPLITS"], at4096["SPLIT_ROWS"]) == (1, 32)
    # fewer tiles than multiprocessors: every row split, as before (16 tiles, 132 // 16 = 8 ways)
    small = w.launch_spec(p, 128, 4096, 4096, (4096, 4096, 4096), False, sms=132)
    assert (dict(small.facts)["SPLIT_ROWS"], dict(small.facts)["SPLITS"]) == (0, 8)
    assert small.grid == (16, 8, 1)
    assert w.uses_occupancy and not registry["persistent_tf32"].uses_occupancy


def test_cutlass_is_a_shared_build_of_five_instantiations(registry):
    """cutlass_bf16 (backend shared): built as a .so whose two C functions the harness calls,
    launched by the library (no grid of ours).  Its constraints, counted by hand: 128 x 128
    tiles without clusters (cooperative and data-parallel, cooperative and stream-K,
    ping-pong and data-parallel) and 128 x 256 tiles in pairs (cooperative, either
    scheduler): 5 of the 16 parameter sets."""
    from mmbench.plan.plan import buildable

    v = registry["cutlass_bf16"]
    assert v.compiled and v.shared and v.library_launched and v.build_ext == "so"
    assert v.entry_points == ("cutlass_gemm", "cutlass_gemm_workspace")
    assert v.libraries == ("cutlass",)
    built = {(p["BN"], p["CLUSTER"], p["SCHEDULE"], p["SCHEDULER"])
             for p in buildable(v, {}, "sm_90a")[0]}  # fmt: skip
    assert built == {(128, 1, 1, 1), (128, 1, 1, 2), (128, 1, 2, 1), (256, 2, 1, 1), (256, 2, 1, 2)}
    # FP8: the cooperative 128 x 128 builds alone, either scheduler (ptxas spills the others)
    fp8 = {(p["BN"], p["CLUSTER"], p["SCHEDULE"], p["SCHEDULER"])
           for p in buildable(registry["cutlass_fp8"], {}, "sm_90a")[0]}  # fmt: skip
    assert fp8 == {(128, 1, 1, 1), (128, 1, 1, 2)}
    assert v.rejected(dict(v.instance("bfloat16_BM128_BN128_CLUSTER1_SCHEDULE1_SCHEDULER1"))) == []


def test_cutlass_f64_builds_cutlass_own_four_sm90_fp64_configurations(registry):
    """cutlass_f64 (kernels/cutlass_gemm_f64.cu, CUTLASS's 2.x device GEMM for arch::Sm90): the
    block and warp tiles and stages of CUTLASS's own SM90 FP64 tests
    (test/unit/gemm/device/gemm_f64*_tensor_op_f64_sm90.cu, v4.2.0), copied here by hand:
    64 x 64 / 32 x 32, 4 stages; 128 x 64 / 64 x 32, 4; 64 x 128 / 32 x 64, 3;
    128 x 128 / 32 x 64, 3; k 16 a stage.  Doubles need no 16-byte rows: nothing is padded."""
    from mmbench.plan.plan import buildable

    v = registry["cutlass_f64"]
    assert v.shared and v.entry_points == ("cutlass_gemm", "cutlass_gemm_workspace")
    built = {tuple(v.defines(p)[n] for n in ("BM", "BN", "WM", "WN", "STAGES", "BK"))
             for p in buildable(v, {}, "sm_90a")[0]}  # fmt: skip
    assert built == {(64, 64, 32, 32, 4, 16), (128, 64, 64, 32, 4, 16),
                     (64, 128, 32, 64, 3, 16), (128, 128, 32, 64, 3, 16)}  # fmt: skip
    assert v.padded(1000, 1100, 37) == (1000, 1100, 37)


@pytest.mark.parametrize(
    "variant, odd, padded",
    [  # hand counts: n and k rounded up to multiples of 8 bfloat16, 4 floats, 16 e4m3
        ("cutlass_bf16", (1000, 1100, 37), (1000, 1104, 40)),
        ("cutlass_bf16", (33, 4099, 129), (33, 4104, 136)),
        ("cutlass_tf32", (1000, 1100, 37), (1000, 1100, 40)),
        ("cutlass_tf32", (33, 4099, 129), (33, 4100, 132)),
        ("cutlass_fp8", (1000, 1100, 37), (1000, 1104, 48)),
        ("cutlass_fp8", (33, 4099, 129), (33, 4112, 144)),
    ],
)
def test_cutlass_runs_a_product_its_tma_refuses_padded(registry, variant, odd, padded):
    """CUTLASS's can_implement refuses an operand whose contiguous side is not a whole number
    of 16 bytes (k of A, n or k of B, n of C): such a product is unmet and runs padded; a
    product of whole 16-byte rows runs as it is."""
    from mmbench.plan.plan import buildable

    v = registry[variant]
    params = buildable(v, {}, "sm_90a")[0][0]
    assert v.unmet(params, *odd)
    assert v.padded(*odd) == padded
    assert v.unmet(params, *padded) == []
    assert v.padded(1024, 4096, 8192) == (1024, 4096, 8192)
    assert v.unmet(params, 1024, 4096, 8192) == []


def test_skinny_simt_builds_its_accumulators_within_64_registers(registry):
    """skinny_simt: MT x TN accumulators of 4 or 8 bytes at most 256 bytes a thread, PIPE = 2
    (a second slab in registers) with TN = 2 alone, and PIPE = 3 (a ring of three stages of
    16 x (MT + 4) + 16 x 128 x TN elements) within 110 KiB.  Counted by hand: float32 keeps
    MT x TN <= 64 of (8, 16, 32) x (2, 4): all but 32 x 4, 5; float64 MT x TN <= 32: 8 x 2,
    8 x 4, 16 x 2, 3; each for both small sides: 16 with PIPE = 1; of them TN = 2 (float32 3,
    float64 2, each for both sides) also with PIPE = 2: 10 more; with PIPE = 3 every float32
    one (the largest, 16 x 4: 3 x 34,048 = 102,144 bytes) and float64's but 8 x 4 (3 x 67,072
    = 201,216 bytes; 16 x 2: 3 x 35,328 = 105,984), 14 more, 40."""
    from mmbench.plan.plan import buildable

    built = {(p["dtype"], p["MT"], p["TN"], p["SIDE"], p["PIPE"])
             for p in buildable(registry["skinny_simt"], {}, "sm_90")[0]}  # fmt: skip
    f32 = {(8, 2), (8, 4), (16, 2), (16, 4), (32, 2)}
    f64 = {(8, 2), (8, 4), (16, 2)}
    once = ({("float32", *t, s) for t in f32 for s in (1, 2)}
            | {("float64", *t, s) for t in f64 for s in (1, 2)})  # fmt: skip
    ring = {b for b in once if b[0] == "float32" or b[1:3] != (8, 4)}
    assert built == ({(*b, 1) for b in once} | {(*b, 2) for b in once if b[2] == 2}
                     | {(*b, 3) for b in ring})  # fmt: skip
    assert len(built) == 40


def test_skinny_dot_builds_whole_sums_for_every_lane_within_64_registers(registry):
    """skinny_dot: R x NT partial sums a lane, a multiple of 32 (each lane keeps R x NT / 32
    whole sums), of 4 or 8 bytes at most 256 bytes.  Counted by hand from R in (2, 4, 8) and NT
    in (8, 16, 32): float32 keeps R x NT in (32, 64): 2 x 16, 2 x 32, 4 x 8, 4 x 16, 8 x 8, 5;
    float64 R x NT = 32: 2 x 16, 4 x 8, 2; each with THREADS, STEPS and PIPE of two values
    each: 7 x 8 = 56 builds."""
    from mmbench.plan.plan import buildable

    built = buildable(registry["skinny_dot"], {}, "sm_90")[0]
    assert len(built) == 56
    f32 = {(2, 16), (2, 32), (4, 8), (4, 16), (8, 8)}
    f64 = {(2, 16), (4, 8)}
    assert {(p["dtype"], p["R"], p["NT"]) for p in built} == (
        {("float32", *t) for t in f32} | {("float64", *t) for t in f64}
    )


def test_warptile_ring_builds_small_tiles_of_whole_copies(registry):
    """warptile_ring's builds, counted by hand: the warp tiles (WM x WN) of 32 lanes with TM x
    TN = 8 x 4 and WNITER 1 are 32 x 32, 32 x 64, 64 x 16, 64 x 32 and 64 x 64; at most four
    warps a block give 19 block and warp tiles: 32 x 32 (one), 32 x 64 (two), 64 x 32 (three),
    64 x 64 (five), 128 x 32 (three), 128 x 64 (three: 32 x 64, 64 x 32, 64 x 64), 256 x 32 (64 x
    32), 256 x 64 (64 x 64); each with BK 8 and 16 and STAGES 3 and 4: 76; less the three
    four-warp tiles 32 wide with BK 8 (a k-tile of B is 64 16-byte copies for 128 threads), six,
    and the one build ptxas spills: 69."""
    from mmbench.plan.plan import buildable

    built = buildable(registry["warptile_ring"], {}, "sm_90")[0]
    assert len(built) == 69
    tiles = {(p["BM"], p["BN"], p["WM"], p["WN"]) for p in built}
    assert len(tiles) == 19
    assert {t for t in tiles if t[:2] == (128, 64)} == {(128, 64, 32, 64), (128, 64, 64, 32),
                                                        (128, 64, 64, 64)}  # fmt: skip
    assert not [p for p in built if p["BN"] == 32 and p["BK"] == 8
                and (p["BM"] // p["WM"]) * (p["BN"] // p["WN"]) == 4]  # fmt: skip


def test_skinny_fp8_builds_clusters_of_two_and_four_that_share_a_tile(registry):
    """skinny_fp8's clustered builds, counted by hand: 128-row tiles of Bt, four stages, A's
    64 to 192 rows dividing among the cluster in 8-row groups (144 / 4 = 36 does not), chains of
    8 only up to 128 rows: 64, 96, 128 with CHAIN 1 and 8 and clusters of 2 and 4 (12), 144 with
    CHAIN 1 in clusters of 2 (1), 160 and 192 with CHAIN 1 in both (4): 17, beside the 28
    unclustered builds of 128 and 256 rows; and the 64-row tiles (one consumer warpgroup) for
    the smallest sides alone: A's 16 or 32 rows, 8 or 11 stages, CHAIN 1 or 8, unclustered (8)."""
    from mmbench.plan.plan import buildable

    built = buildable(registry["skinny_fp8"], {}, "sm_90a")[0]
    clustered = {(p["BN"], p["CHAIN"], p["CLUSTER"]) for p in built if p["CLUSTER"] > 1}
    assert {p["BM"] for p in built if p["CLUSTER"] > 1} == {128}
    assert {p["STAGES"] for p in built if p["CLUSTER"] > 1} == {4}
    by_hand = {(bn, chain, c) for bn in (64, 96, 128) for chain in (1, 8) for c in (2, 4)}
    by_hand |= {(144, 1, 2), (160, 1, 2), (160, 1, 4), (192, 1, 2), (192, 1, 4)}
    assert clustered == by_hand
    narrow = {(p["BN"], p["STAGES"], p["CHAIN"], p["CLUSTER"]) for p in built if p["BM"] == 64}
    assert narrow == {(bn, s, chain, 1) for bn in (16, 32) for s in (8, 11) for chain in (1, 8)}
    assert len(built) == 28 + 17 + 8


def test_streamk_fp8_builds_one_tile_for_a_small_side_n(registry):
    """streamk_fp8's builds, counted by hand: 128-row tiles in 6 stages (256 rows overfill its
    200 KiB ring), 64 or 128 columns alone or in clusters of 2, and 16, 32, 48, 80 and 96
    columns (for a small side n) unclustered; 64-row tiles of 16 or 32 columns in 8 stages,
    unclustered; each with CHAIN 1 and 8: 2 x 2 x 2 + 5 x 2 + 2 x 2."""
    from mmbench.plan.plan import buildable

    built = buildable(registry["streamk_fp8"], {}, "sm_90a")[0]
    got = {(p["BM"], p["BN"], p["STAGES"], p["CLUSTER"], p["CHAIN"]) for p in built}
    by_hand = {(128, bn, 6, c, chain) for bn in (64, 128) for c in (1, 2) for chain in (1, 8)}
    by_hand |= {(128, bn, 6, 1, chain) for bn in (16, 32, 48, 80, 96) for chain in (1, 8)}
    by_hand |= {(64, bn, 8, 1, chain) for bn in (16, 32) for chain in (1, 8)}
    assert got == by_hand and len(built) == 22


def test_a_stream_k_grid_of_clusters_is_the_clusters_the_gpu_holds(registry):
    """skinny_fp8 in clusters of four at 129 x 14712 x 5968: A's 129 rows in one 160-row tile,
    the kernel's m (14712) in 115 tiles of 128, 116 in whole clusters, 29 a cluster.  Without the
    occupancy calculator's word the GPU's 132 multiprocessors make 33 clusters; told that it
    holds 32 at once (a GPC whose multiprocessors are not a multiple of four leaves some idle),
    the grid is 32 clusters, 128 blocks, and every cluster shares the tiles' k-loops.  A block
    loads 40 of A's rows and multicasts them."""
    v = registry["skinny_fp8"]
    p = v.instance("float8_e4m3_BM128_BN160_STAGES4_CLUSTER4_GROUP8_CHAIN1")
    shape = (129, 14712, 5968, (5968, 5968, 14712), False)
    assert v.uses_cluster_slots and not registry["persistent_fp8"].uses_cluster_slots
    told = v.launch_spec(p, *shape, sms=132)
    assert told.grid == (132, 1, 1) and dict(told.facts)["CLUSTERS"] == 33
    held = v.launch_spec(p, *shape, sms=132, cluster_slots=32)
    facts = dict(held.facts)
    assert held.grid == (128, 1, 1) and held.cluster == (4, 1, 1)
    assert (facts["TILES"], facts["CLUSTERS"], facts["HEAD"], facts["WORKERS"]) == (116, 32, 0, 32)
    a = next(x for x in held.args if getattr(x, "operand", "") == "A" and x.kind == "tensor_map")
    assert (a.box_rows, a.box_cols) == (40, 128)


def test_skinny_bf16_takes_the_small_side_in_one_tile_up_to_192_rows(registry):
    """skinny_bf16's builds, counted by hand.  128-row tiles of B with A's rows in rings that fit
    200 KiB ((128 + BN) x 128 bytes a stage): 16 rows in 4, 8 and 11 stages, 32 and 64 in 4 and
    8, 96 to 192 in 4 (12); in four stages, clusters of 2 for 64 to 192 rows (6) and of 4 where
    the rows divide into 8-row groups, all but 144 (5); 256-row tiles in 4 stages with at most
    128 accumulators a consumer thread, 16 to 128 rows (5): 28."""
    from mmbench.plan.plan import buildable

    built = {(p["BM"], p["BN"], p["STAGES"], p["CLUSTER"])
             for p in buildable(registry["skinny_bf16"], {}, "sm_90a")[0]}  # fmt: skip
    by_hand = {(128, 16, s, 1) for s in (4, 8, 11)}
    by_hand |= {(128, bn, s, 1) for bn in (32, 64) for s in (4, 8)}
    by_hand |= {(128, bn, 4, 1) for bn in (96, 128, 144, 160, 192)}
    by_hand |= {(128, bn, 4, 2) for bn in (64, 96, 128, 144, 160, 192)}
    by_hand |= {(128, bn, 4, 4) for bn in (64, 96, 128, 160, 192)}
    by_hand |= {(256, bn, 4, 1) for bn in (16, 32, 64, 96, 128)}
    assert built == by_hand and len(built) == 28

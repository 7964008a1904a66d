"""The plan: configurations, refusals and instantiations from the config and the registry.
Expected counts come from the registry, so adding a kernel changes none of them."""

from dataclasses import replace

import pytest

from mmbench.core.registry import Condition, load_registry
from mmbench.core.schemas import read_table
from mmbench.plan import plan
from mmbench.plan.config import ConfigError, validate

from .conftest import DATA, ROOT, covering


def _plan(registry, arch="sm_90", **over):
    return plan.expand(validate(over, registry), registry, arch)


def _values(v, name, wanted):
    declared = dict(v.params).get(name)
    return [x for x in wanted if x in declared] if declared else [None]


def test_main_command_grid(registry):
    """seed 003's table: 3 sizes x 2 memory modes per instantiation; float32 only; tiles 16 and
    32, coarsening 2 and 4 (config/config.yaml), counted here by hand."""
    cfg = validate({"sizes": [8000, 10000, 12000]}, registry)
    p = plan.expand(cfg, registry, "sm_90")
    per_instance = 3 * 2
    expected = {
        "naive_unguarded": 2 * per_instance,  # TILE 16, 32
        "naive_guarded": 2 * per_instance,
        "naive_xrow": 2 * per_instance,
        # 10000 is no multiple of 32: those two (pageable, pinned) are refused (unsafe)
        "tiled_unguarded": 2 * per_instance - 2,
        "tiled_guarded": 2 * per_instance,
        "coarsened": 2 * 2 * per_instance,  # TILE x COARSEN
        "cublas": per_instance,
    }
    assert {name: len(runs) for name, runs in p.runs.items()} == expected
    # seed 003's "--": the tiled kernel at 10000 with 32 x 32 tiles is refused, with its reason
    refused = [r for r in p.refused if r["variant"] == "tiled_unguarded"]
    assert {(r["m"], r["TILE"], r["memory"]) for r in refused} == {
        (10000, 32, "pageable"),
        (10000, 32, "pinned"),
    }
    assert "demonstrate_failures" in refused[0]["reason"]
    # naive_unguarded at 10000 / 32 runs (it is memory-safe) and is expected to FAIL
    nu = [c for c in p.runs["naive_unguarded"] if c.m == 10000 and dict(c.params)["TILE"] == 32]
    assert {c.expected for c in nu} == {"FAIL"}
    assert ("coarsened", {"dtype": "float32", "TILE": 32, "COARSEN": 4}) in p.instantiations
    labels = {c.label for c in p.runs["coarsened"]}
    assert "coarsened TILE=32 COARSEN=4" in labels


def test_per_variant_params_override_the_shorthands(registry):
    p = _plan(registry, sizes=[64], variants=["coarsened"], params={"coarsened": {"COARSEN": [8]}})
    assert {dict(c.params)["COARSEN"] for c in p.runs["coarsened"]} == {8}
    assert {dict(c.params)["TILE"] for c in p.runs["coarsened"]} == {16, 32}


def test_demonstrate_failures_runs_the_unsafe_configurations(registry):
    p = _plan(registry, sizes=[641], variants=["tiled_unguarded"], demonstrate_failures=True)
    assert not p.refused
    assert {c.expected for c in p.runs["tiled_unguarded"]} == {"FAIL"}


def test_unsupported_combinations_are_refused_not_fatal(registry):
    p = _plan(registry, sizes=[64], dtypes=["int32"], variants=["cublas", "naive_guarded"])
    assert "cublas" not in p.runs
    assert any("dtype: supports float32, float64" in r["reason"] for r in p.refused)
    p = _plan(
        registry, sizes=[64], dtypes=["float64"], coarsen=[8], tiles=[32], variants=["coarsened"]
    )
    assert not p.runs and "48 KiB" in p.refused[0]["reason"]


def test_all_instantiations_are_those_the_constraints_allow(registry):
    insts = plan.all_instantiations(registry, "sm_90")
    by_variant = {}
    for name, params in insts:
        by_variant.setdefault(name, []).append(params)
    # the course kernels: 3 element types x 3 tiles, all buildable
    assert len(by_variant["naive_guarded"]) == 9
    assert "cublas" not in by_variant  # a library: nothing to compile
    # coarsened keeps TILE x TILE x (1 + COARSEN) elements in static shared memory: float64 at
    # TILE 32 and COARSEN 8 needs 32 * 32 * 9 * 8 B = 72 KiB > 48 KiB, float32 36 KiB fits
    assert ("coarsened", {"dtype": "float64", "TILE": 32, "COARSEN": 8}) not in insts
    assert ("coarsened", {"dtype": "float32", "TILE": 32, "COARSEN": 8}) in insts
    # an architecture-specific kernel is built only for its architecture
    assert "wgmma_tf32" in by_variant
    assert "wgmma_tf32" not in dict(plan.all_instantiations(registry, "sm_80"))
    # nothing twice, and in the registry's order
    assert len(insts) == len({(n, tuple(p.items())) for n, p in insts})
    order = list(registry)
    assert [order.index(n) for n, _ in insts] == sorted(order.index(n) for n, _ in insts)


def test_constraints_and_hardware_limits_prune_with_a_reason(registry):
    v = registry["coarsened"]
    strict = replace(v, constraints=(Condition("TILE * COARSEN <= 64", "x"),))
    keep, refused = plan.buildable(strict, {}, "sm_90")
    assert all(p["TILE"] * p["COARSEN"] <= 64 for p in keep)
    assert refused and all("TILE * COARSEN <= 64 fails" in r["reason"] for r in refused)
    too_big = replace(v, block=("TILE * 64", "TILE"))
    assert "threads per block" in " ".join(
        too_big.rejected({"dtype": "float32", "TILE": 32, "COARSEN": 2})
    )


def test_a_variant_needing_another_architecture_is_refused_before_running(registry):
    v = registry["tiled_guarded"]
    hopper_only = replace(v, arch="sm_90a")
    keep, refused = plan.buildable(hopper_only, {}, "sm_80")
    assert not keep and "needs sm_90a" in refused[0]["reason"]
    assert "compute capability 9.0" in refused[0]["reason"]
    keep, refused = plan.buildable(hopper_only, {}, "sm_90")
    assert keep and not refused


def test_a_variant_needing_a_newer_architecture_is_refused_on_older_ones(registry):
    """mma_f64 uses Hopper's f64 mma shapes: refused (not a compile error) for sm_80, built
    for sm_90 and for newer architectures."""
    keep, refused = plan.buildable(registry["mma_f64"], {}, "sm_80")
    assert not keep and "needs sm_90 or newer" in refused[0]["reason"]
    assert plan.buildable(registry["mma_f64"], {}, "sm_90")[0]
    assert plan.buildable(registry["mma_f64"], {}, "sm_100")[0]
    assert not any(v == "mma_f64" for v, _ in plan.all_instantiations(registry, "sm_80"))


def test_rectangular_shapes(registry):
    p = _plan(registry, sizes=[64], shapes=[[100, 70, 30]], variants=["tiled_guarded"])
    assert {(c.m, c.n, c.k) for c in p.runs["tiled_guarded"]} == {(64, 64, 64), (100, 70, 30)}


def test_a_plan_that_measures_nothing_is_refused_with_every_reason():
    reg = load_registry()
    cfg = validate(dict(variants=["warptile"], dtypes=["float64"], arch="sm_90"), reg)
    p = plan.expand(cfg, reg, "sm_90")
    with pytest.raises(
        ConfigError, match=r"(?s)measures nothing.*warptile: nothing to run \(dtype"
    ):
        plan.check_something_to_measure(cfg, p)


def test_a_variant_whose_every_instantiation_is_refused_is_reported():
    reg = load_registry()
    cfg = validate(
        dict(
            variants=["warptile_db", "cublas"],
            params={"warptile_db": {"BM": [256], "BN": [256], "BK": [16], "WM": [32], "WN": [32]}},
            arch="sm_90",
        ),
        reg,
    )
    p = plan.expand(cfg, reg, "sm_90")
    lines = plan.check_something_to_measure(cfg, p)  # cublas still runs: no error
    assert len(lines) == 1 and lines[0].startswith("warptile_db: nothing to run (")
    assert "fails" in lines[0]


def test_the_profile_follows_the_runs_variants_unless_the_user_names_its_own():
    reg = load_registry()
    readme = dict(variants=["tiled_guarded", "cublas"], tiles=[32], dtypes=["float64"])
    cfg = validate(dict(readme, arch="sm_90"), reg)
    assert plan.profile_plan(cfg, reg, "sm_90") == ([], [])  # nothing the run measures
    # the main experiment profiles seed 002's pair, which it measures
    main = validate(dict(arch="sm_90", variants=["naive_unguarded", "tiled_unguarded"]), reg)
    runs, _ = plan.profile_plan(main, reg, "sm_90")
    assert {(c.variant, c.dtype, dict(c.params)["TILE"]) for c in runs} == {
        ("naive_unguarded", "float32", 32),
        ("tiled_unguarded", "float32", 32),
    }
    # a preset that names its profile variants (E3f) profiles them, measured or not
    e3f = validate(dict(main, profile={"variants": ["naive_guarded"]}), reg)
    runs, _ = plan.profile_plan(e3f, reg, "sm_90", named={"variants"})
    assert {c.variant for c in runs} == {"naive_guarded"}


def test_the_profile_keeps_to_the_instantiations_the_run_chooses():
    """A run that picks 2 of persistent_fp8's 40 instantiations (params) profiles those 2 at
    each profiled size, not all 40 (the profile once did: 80 Nsight Compute runs for a run of
    4 configurations); its own profile.params still win where it names the variant."""
    reg = load_registry()
    chosen = {"BM": [128], "BN": [128], "STAGES": [6], "GROUP": [8], "CHAIN": [8]}
    cfg = validate(
        dict(arch="sm_90", variants=["persistent_fp8"], dtypes=["float8_e4m3"], sizes=[4096],
             shapes=[], params={"persistent_fp8": chosen},
             profile={"variants": ["persistent_fp8"], "sizes": [4096, 8192],
                      "dtypes": ["float8_e4m3"]}),
        reg,
    )  # fmt: skip
    runs, _ = plan.profile_plan(cfg, reg, "sm_90", named={"variants", "sizes", "dtypes"})
    assert sorted((dict(c.params)["CLUSTER"], c.m) for c in runs) == [
        (1, 4096), (1, 8192), (2, 4096), (2, 8192)
    ]  # fmt: skip
    own = dict(
        cfg, profile=dict(cfg["profile"], params={"persistent_fp8": dict(chosen, CLUSTER=[2])})
    )
    runs, _ = plan.profile_plan(own, reg, "sm_90", named={"variants", "sizes", "dtypes", "params"})
    assert sorted((dict(c.params)["CLUSTER"], c.m) for c in runs) == [(2, 4096), (2, 8192)]


def test_the_profiles_named_dtypes_narrow_the_runs_own_values_of_a_variant():
    """The shapes preset measures cuBLAS in float32, float64 and bfloat16 (its params); a
    misses profile naming dtypes [float32, float64] profiled cuBLAS in bfloat16 too (an H200
    call, lab entry "The batch's rows found and fixed": 27 configurations, 3 of them bfloat16
    cuBLAS).  The named dtypes now keep to those two."""
    reg = load_registry()
    cfg = validate(
        dict(arch="sm_90", variants=["cublas"], sizes=[], shapes=[[18, 152, 2881]],
             params={"cublas": {"dtype": ["float32", "float64", "bfloat16"]}},
             profile={"variants": ["cublas"], "sizes": [], "shapes": [[18, 152, 2881]],
                      "dtypes": ["float32", "float64"]}),
        reg,
    )  # fmt: skip
    runs, _ = plan.profile_plan(cfg, reg, "sm_90", named={"variants", "sizes", "dtypes", "shapes"})
    assert sorted(c.dtype for c in runs) == ["float32", "float64"]
    # a named dtype the run does not measure in: the profile's own list decides
    cfg["profile"]["dtypes"] = ["float16"]
    runs, _ = plan.profile_plan(cfg, reg, "sm_90", named={"variants", "sizes", "dtypes", "shapes"})
    assert [c.dtype for c in runs] == ["float16"]


# -- the reference's rows (config reference_rows) ------------------------------------------------


def _refs(p, variant):
    return {(c.dtype, c.m, c.n, c.k): c.ld_align for c in p.runs[variant]}


def test_a_reference_reads_the_padded_rows_of_the_kernels_it_is_compared_with(registry):
    """persistent_bf16 rounds its rows up to 16 bytes (registry align: 16), 8 bfloat16 elements:
    at 3001 (not a multiple of 8) cuBLAS in bfloat16 gets those rows (ld_align 16); at 3072 and
    at 128 x 4096 x 4096 its rows are already so (0); cuBLAS in float64, with no float64 kernel
    in the run, keeps its own rows; tiled_guarded (no align) gives its float32 reference none."""
    p = _plan(
        registry, sizes=[3001, 3072], shapes=[[128, 4096, 4096]],
        variants=["persistent_bf16", "tiled_guarded", "cublas"],
        params={"persistent_bf16": {"dtype": ["bfloat16"], "BM": [128], "BN": [256],
                                    "STAGES": [4], "CLUSTER": [2], "GROUP": [8]},
                "tiled_guarded": {"dtype": ["float32"], "TILE": [32]},
                "cublas": {"dtype": ["bfloat16", "float64", "float32"]}},
    )  # fmt: skip
    refs = _refs(p, "cublas")
    assert refs[("bfloat16", 3001, 3001, 3001)] == 16
    assert refs[("bfloat16", 3072, 3072, 3072)] == 0
    assert refs[("bfloat16", 128, 4096, 4096)] == 0
    assert refs[("float64", 3001, 3001, 3001)] == 0
    assert refs[("float32", 3001, 3001, 3001)] == 0
    assert set(_refs(p, "persistent_bf16").values()) == {0}  # a kernel keeps its own
    packed = _plan(
        registry, sizes=[3001], variants=["persistent_bf16", "cublas"], reference_rows="packed",
        params={"cublas": {"dtype": ["bfloat16"]}},
    )  # fmt: skip
    assert set(_refs(packed, "cublas").values()) == {0}


def test_a_tf32_kernels_rows_go_to_the_tf32_reference_only(registry):
    """persistent_tf32 (float32, math tf32, align 16: 4 floats): at 3001 cublas_tf32 gets 16-byte
    rows, the IEEE float32 cublas beside it keeps its own (its class has no aligned kernel)."""
    p = _plan(
        registry, sizes=[3001], variants=["persistent_tf32", "cublas", "cublas_tf32"],
        params={"cublas": {"dtype": ["float32"]}, "cublas_tf32": {"dtype": ["float32"]}},
    )  # fmt: skip
    assert set(_refs(p, "cublas_tf32").values()) == {16}
    assert set(_refs(p, "cublas").values()) == {0}


def test_covering_runs_every_value_of_every_parameter():
    """By hand: of the four instantiations below, the first and last leave STAGES=6 and
    GROUP=16 out; the second brings STAGES=6, the third GROUP=16."""
    grid = [dict(BN=64, STAGES=4, GROUP=8), dict(BN=64, STAGES=6, GROUP=8),
            dict(BN=128, STAGES=4, GROUP=16), dict(BN=128, STAGES=4, GROUP=8)]  # fmt: skip
    assert covering(grid) == [grid[0], grid[3], grid[1], grid[2]]


def test_one_variant_of_a_preset_is_planned_with_its_tuned_instantiations():
    """plan/preset.plan_for plans one variant of a preset as its measurement job would:
    the recorded ladder run (tests/data/h200-ladder, an H200 with the H100's tuning: its rows'
    tuned_for) measured warptile_db in 18 configurations of its tuned instantiations (counted
    from its timings table), not the whole grid the registry declares; without the H100's
    tuning named, an H200 has no tuned parameters and the plan is refused."""
    from mmbench.plan import preset as runner

    recorded = read_table(DATA / "h200-ladder/results/ladder/tables/timings.csv", "timings")
    rows = recorded[recorded.variant == "warptile_db"]
    assert rows.tuned_for.str.startswith("tuned on NVIDIA H100 80GB HBM3;").all()
    args = (str(ROOT / "config/presets/ladder.yaml"), "warptile_db", "sm_90",
            [{"name": rows.gpu_name.iloc[0]}], load_registry())  # fmt: skip
    plan, cfg = runner.plan_for(*args, tuned_gpu="NVIDIA H100 80GB HBM3")
    assert len(plan.runs["warptile_db"]) == len(rows) == 18
    assert {c.instance for c in plan.runs["warptile_db"]} == set(rows.instance)
    assert cfg["variants"] == ["warptile_db"]
    from mmbench.plan.config import ConfigError

    with pytest.raises(ConfigError, match="no tuned parameters of warptile_db for 'NVIDIA H200'"):
        runner.plan_for(*args)


def test_a_triton_entry_is_refused_where_triton_is_not_installed(registry, monkeypatch):
    """Triton's compiler is optional (the triton extra): without it a Triton entry plans no
    build, and its refusal says what to install; the other entries are untouched."""
    from mmbench.plan import triton_build

    monkeypatch.setattr(triton_build.importlib.util, "find_spec", lambda name: None)
    keep, refused = plan.buildable(registry["triton_bf16"], {}, "sm_90")
    assert keep == [] and "pip install -e '.[triton]'" in refused[0]["reason"]
    assert plan.buildable(registry["persistent_bf16"], {}, "sm_90")[0]
    assert not any(v.startswith("triton_") for v, _ in plan.all_instantiations(registry, "sm_90"))


def test_the_fp8_class_reads_the_fp8_rungs_128_byte_rows(registry):
    """persistent_fp8 asks for 128-byte rows (registry align: 128, 128 e4m3 elements): at 2437
    (2437 = 19 x 128 + 5) cuBLASLt and the CUTLASS peer are given those rows (ld_align 128;
    both run 2437 padded to 2448 = 19 x 128 + 16, still off a line); at 4096 (32 x 128) every
    row is whole already (0); the rung keeps its own."""
    p = _plan(
        registry, sizes=[2437, 4096], variants=["persistent_fp8", "cutlass_fp8", "cublaslt_fp8"],
        dtypes=["float8_e4m3"],
        params={"persistent_fp8": {"BM": [128], "BN": [128], "STAGES": [6], "CLUSTER": [1],
                                   "GROUP": [8], "CHAIN": [8]},
                "cutlass_fp8": {"BN": [128], "SCHEDULE": [1], "SCHEDULER": [1]}},
    )  # fmt: skip
    for peer in ("cublaslt_fp8", "cutlass_fp8"):
        refs = _refs(p, peer)
        assert refs[("float8_e4m3", 2437, 2448, 2448)] == 128, (peer, refs)
        assert refs[("float8_e4m3", 4096, 4096, 4096)] == 0, (peer, refs)
    assert set(_refs(p, "persistent_fp8").values()) == {0}

"""The vocabularies declared once (mmbench/core): axes, element types, input distributions, the
launch description; and the GPU model as an axis that keeps two models apart."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mmbench.core import arith
from mmbench.core.axes import (
    AXES,
    COMPARE_KEY,
    GPU_KEY,
    IDENTITY_KEY,
    INPUTS_KEY,
    Configuration,
)
from mmbench.core.distributions import DISTRIBUTIONS
from mmbench.core.elements import ELEMENT_TYPES, SCALARS, element_type
from mmbench.core.launch_spec import TensorMap, check_tensor_map
from mmbench.core.registry import RegistryError, load_registry
from mmbench.core.row import AXES as ROW_AXES
from mmbench.core.row import COLUMNS, CONFIG_ID, config_id
from mmbench.core.sampling import LOADS
from mmbench.plan.compile import define_flags
from mmbench.plan.config import load_schema
from mmbench.report import ladder, summary
from mmbench.report.catalogue import MixedGpuModels, load_inputs

from .conftest import read_csv

DATA = Path(__file__).parent / "data"


# -- axes ------------------------------------------------------------------------------------


def test_the_configuration_type_has_a_field_per_planned_axis_and_nothing_else():
    """Hand-written from docs/method.md's list of what a configuration is: the variant and its
    parameters, the operation and its math, the shape, the host-memory mode and its layout (a
    reference's rows padded as its kernels'), the sums, the cache, the load and the inputs, and
    what the plan says of it (precondition met, expected verdict, notes, the tuning range that
    chose the instantiation, the stream-K workers the model chose with it); the GPU is known
    only when measured."""
    fields = {f.name for f in dataclasses.fields(Configuration)}
    assert fields == {
        "variant", "params", "operation", "math", "dtype", "m", "n", "k", "memory", "pad",
        "ld_align", "transfer", "accumulate", "cache", "load", "distribution", "seed", "precondition_met",
        "expected", "notes", "tuned_for", "workers",
    }  # fmt: skip
    assert GPU_KEY not in fields


def test_every_axis_is_a_column_of_the_row():
    for name in ("variant", "dtype", "m", "n", "k", "memory", "load", "distribution"):
        assert name in COLUMNS
    assert ROW_AXES[0] == "backend"


def test_the_keys_are_the_documented_ones():
    """Two runs are compared on what they measured, not on which GPU; the inputs of a
    configuration do not depend on where its matrices live (hand-written lists)."""
    assert CONFIG_ID == COMPARE_KEY
    assert GPU_KEY in IDENTITY_KEY and GPU_KEY not in COMPARE_KEY
    # what draws the matrices and fixes the reference and its tolerance
    assert INPUTS_KEY == ["dtype", "m", "n", "k", "operation", "math", "accumulate", "distribution",
                          "seed"]  # fmt: skip
    assert "memory" not in INPUTS_KEY


def test_the_config_schema_takes_its_allowed_values_from_the_declarations():
    props = load_schema()["properties"]
    assert props["dtypes"]["items"]["enum"] == list(ELEMENT_TYPES)
    assert props["distribution"]["items"]["enum"] == list(DISTRIBUTIONS)
    assert props["load"]["items"]["enum"] == list(LOADS)
    memory = next(a for a in AXES if a.name == "memory")
    assert props["memory"]["items"]["enum"] == list(memory.values)


def test_a_configuration_id_is_the_same_from_a_journal_row_and_a_table_row():
    table = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    row = table.iloc[0]
    conf = Configuration.of(
        row.variant,
        {"dtype": row["dtype"], "TILE": int(row.TILE)},
        m=int(row.m),
        n=int(row.n),
        k=int(row.k),
        accumulate=bool(row.accumulate),
        memory=row.memory,
        distribution=row.distribution,
        seed=int(row.seed),
    )
    assert config_id(conf.axes()) == config_id(row)


# -- element types ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SCALARS))
def test_each_guard_sentinel_is_a_nan_of_its_float_type(name):
    s = SCALARS[name]
    bits = np.array([s.sentinel], dtype=s.bits)
    if s.integer:
        assert bits.view(s.np_dtype)[0] != 0
    else:
        with np.errstate(invalid="ignore"):
            assert np.isnan(bits.view(s.np_dtype).astype(np.float64))[0]


def test_sixteen_bit_inputs_compile_with_their_output_and_sum_types():
    assert define_flags({"dtype": "float32", "TILE": 32}) == ["-DELEM_T=float", "-DTILE=32"]
    flags = define_flags({"dtype": "bfloat16", "BM": 64})
    assert flags[:2] == ["-DELEM_T=__nv_bfloat16", "-DOUT_T=float"] and "-DBM=64" in flags
    assert "-DOUT_T=float" in define_flags({"dtype": "float16"})


def test_bfloat16_tolerance_is_the_float32_sum_bound_doubled_and_int09_stays_exact():
    k = 1000
    f32 = arith.tolerance_scale(element_type("float32"), "normal", k, False)
    bf16 = arith.tolerance_scale(element_type("bfloat16"), "normal", k, False)
    assert bf16 == pytest.approx(2 * f32, rel=1e-3)
    # integers 0..9 are exact in bfloat16 and their sums in float32
    assert arith.exact_expected(element_type("bfloat16"), "int09", 4096, False)
    assert not arith.exact_expected(element_type("bfloat16"), "int09", 2**24 // 81 + 1, False)
    assert not arith.exact_expected(element_type("float16"), "uniform", 8, False)


def test_fp8_sums_are_exact_while_the_tensor_cores_runs_fit_their_14_bits():
    """By hand, int09 inputs (products up to 81) in e4m3 (integers to 16 exact): with the
    tensor cores' sums kept to 14 bits, a kernel that never moves them to FP32 registers is
    exact while k * 81 < 2^14 = 16384: k = 202 (16362) yes, 203 (16443) no; one that moves
    them every 128 products sums runs of at most 128 * 81 = 10368 there, and the runs in FP32
    (8192 * 81 = 663552 < 2^24): exact at 8192."""
    e = element_type("float8_e4m3")
    assert e.input.np_dtype.itemsize == 1 and e.input.unit_roundoff == 2.0**-4
    assert arith.exact_expected(e, "int09", 202, False)
    assert not arith.exact_expected(e, "int09", 203, False)
    assert arith.exact_expected(e, "int09", 8192, False, promoted_every=128)
    assert not arith.exact_expected(e, "int09", 300_000, False, promoted_every=128)  # > 2^24
    # the integers the inputs hold, as drawn
    x = DISTRIBUTIONS["int09"].draw(np.random.default_rng(3), (4, 4), e.input)
    assert x.dtype == e.input.np_dtype and set(x.astype(np.float32).ravel()) <= set(range(10))


def test_fp8_tolerance_counts_one_narrow_add_per_instruction_of_32_products():
    """By hand (the instructions of whole 128-value k-tiles), normal inputs at k = 4096: never moved to FP32, 4096 / 32 = 128 instructions
    each within 2^(1 - 14) = 2^-13 of what they add: 128 * 2^-13 = 0.015625, and one FP32
    run (3 adds of doubled float32 roundoff 2^-23); moved every 128 products: 4 * 2^-13 =
    4.8828e-4 per run and 4096 / 128 + 2 = 34 FP32 adds (34 * 2^-23 = 4.053e-6)."""
    e = element_type("float8_e4m3")
    never = arith.tolerance_scale(e, "normal", 4096, False)
    assert never == pytest.approx(0.015625 + 3 * 2.0**-23, rel=1e-4)
    every = arith.tolerance_scale(e, "normal", 4096, False, promoted_every=128)
    assert every == pytest.approx(4 * 2.0**-13 + 34 * 2.0**-23, rel=1e-3)
    # k = 48 (the ladder's 1000 x 1100 x 37 as cuBLASLt runs it, padded): one 128-value
    # k-tile, 128 / 32 = 4 instructions (not 48 / 32 rounded up, 2), 4 * 2^-13, and one FP32
    # run (48 / 48 + 2 = 3 adds); the same with the sums moved every 128 products
    short = 4 * 2.0**-13 + 3 * 2.0**-23
    assert arith.tolerance_scale(e, "normal", 48, False) == pytest.approx(short, rel=1e-3)
    moved = arith.tolerance_scale(e, "normal", 48, False, promoted_every=128)
    assert moved == pytest.approx(short, rel=1e-3)
    # k = 4097: 33 k-tiles, 33 * 4 = 132 instructions (not 129)
    assert arith.tolerance_scale(e, "normal", 4097, False) == pytest.approx(
        132 * 2.0**-13 + 3 * 2.0**-23, rel=1e-3
    )
    # bfloat16's bound is unchanged by the new parameter (no narrower tensor-core sums)
    bf16 = element_type("bfloat16")
    assert arith.tolerance_scale(bf16, "normal", 4096, False, promoted_every=128) == (
        arith.tolerance_scale(bf16, "normal", 4096, False)
    )


def test_device_memory_counts_sixteen_bit_inputs_and_float_output():
    m = n = k = 1000
    need = arith.device_bytes_needed(m, n, k, element_type("bfloat16"))
    assert need == 2 * (m * k + k * n) + 4 * m * n + 8 * (m * k + k * n + 4 * m * n)


def test_cublas_has_a_route_for_every_type_but_int32():
    assert {e.name for e in ELEMENT_TYPES.values() if e.cublas} == {
        "float32",
        "float64",
        "bfloat16",
        "float16",
        "float8_e4m3",
    }
    assert element_type("bfloat16").cublas == "gemm_ex"
    assert element_type("float8_e4m3").cublas == "lt"  # cuBLASLt, through nvmath-python
    assert load_registry()["cublaslt_fp8"].dtypes == ("float8_e4m3",)
    assert load_registry()["cublas"].dtypes == ("float32", "float64", "bfloat16", "float16")


# -- distributions ---------------------------------------------------------------------------


@pytest.mark.parametrize("dist", list(DISTRIBUTIONS))
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16", "float8_e4m3"])
def test_each_distribution_draws_values_of_the_input_type(dist, dtype):
    e = element_type(dtype)
    x = DISTRIBUTIONS[dist].draw(np.random.default_rng(1), (64, 32), e.input)
    assert x.dtype == e.input.np_dtype and x.shape == (64, 32)
    wide = x.astype(np.float64)
    assert np.isfinite(wide).all() and np.unique(wide).size > 5
    if DISTRIBUTIONS[dist].nonnegative:
        assert wide.min() >= 0
    else:
        assert wide.min() < 0 < wide.max()


def test_int09_draws_are_unchanged_for_the_course_types():
    # the reports' inputs: the same integers as before the vocabulary was declared
    rng = np.random.default_rng([2024, 3, 3, 3])
    got = DISTRIBUTIONS["int09"].draw(rng, (3, 3), SCALARS["float32"])
    want = np.random.default_rng([2024, 3, 3, 3]).integers(0, 10, (3, 3), dtype=np.int8)
    assert (got == want.astype(np.float32)).all()


def test_a_distribution_that_cannot_fill_integers_is_refused_for_int32(tmp_path):
    from mmbench.plan.config import ConfigError, validate

    cfg = dict(distribution="normal", dtypes=["int32"], variants=["naive_guarded"], arch="sm_90")
    with pytest.raises(ConfigError, match="'normal'.*cannot fill int32.*distribution=int09"):
        validate(cfg, load_registry())


# -- the launch description ------------------------------------------------------------------


def _registry_with(tmp_path, entry: str) -> dict:
    src = Path(__file__).parents[1] / "kernels"
    (tmp_path / "k.cu").write_text("// test\n")
    text = (src / "registry.yaml").read_text().replace("variants:\n", "variants:\n" + entry, 1)
    (tmp_path / "registry.yaml").write_text(text)
    for f in [*src.glob("*.cu*"), *src.glob("*.py")]:  # the kernels (Triton's too)
        (tmp_path / f.name).write_text(f.read_text()) if f.name != "k.cu" else None
    load_registry.cache_clear()
    return load_registry(tmp_path / "registry.yaml")


TMA_ENTRY = """  tma_test:
    source: k.cu
    symbol: tma_test
    seeds: "test"
    params:
      dtype: [float32]
      BM: [64, 512]
      BK: [32]
      CLUSTER: [2]
    block: ["128"]
    grid: ["CLUSTER * cdiv(cdiv(n, BM), CLUSTER)", "cdiv(m, BM)"]
    cluster: ["CLUSTER", 1, 1]
    align: 16
    dynamic_shared_memory: "2 * BM * BK * elem_bytes"
    args:
      - {tensor_map: A, box: [BM, BK], swizzle: 128}
      - {tensor_map: B, box: [BK, BM]}
      - C
      - {int: "m * 2"}
      - {workspace: "m * 4"}
      - accumulate

"""


def test_a_registry_entry_declares_tensor_maps_a_cluster_and_a_workspace(tmp_path):
    v = _registry_with(tmp_path, TMA_ENTRY)["tma_test"]
    params = {"dtype": "float32", "BM": 64, "BK": 32, "CLUSTER": 2}
    spec = v.launch_spec(params, 100, 90, 37, (40, 92, 90), True)
    assert spec.grid == (2, 2, 1) and spec.cluster == (2, 1, 1) and spec.needs_driver
    a, b, c, twice_m, ws, acc = spec.args
    assert a == TensorMap("A", 100, 37, 40, 64, 32, 128, "float32")
    assert b == TensorMap("B", 37, 90, 92, 32, 64, 0, "float32")
    assert c.operand == "C" and twice_m.value == 200 and ws.nbytes == 400 and acc.value == 1
    assert v.alignment(params) == 16
    assert spec.describe()["cluster"] == "2x1x1"
    # 512-element boxes are past the tensor-memory accelerator's 256: refused before building
    reasons = v.rejected(dict(params, BM=512))
    assert any("box rows = 512: must be 1..256" in r for r in reasons), reasons
    load_registry.cache_clear()


def test_a_course_kernel_launches_through_cupy():
    v = load_registry()["tiled_guarded"]
    spec = v.launch_spec({"dtype": "float32", "TILE": 16}, 33, 31, 37, (37, 31, 31), False)
    assert not spec.needs_driver and spec.cluster == (1, 1, 1)
    assert [a.kind for a in spec.args] == ["pointer"] * 3 + ["int"] * 7


def test_tensor_map_rules():
    ok = TensorMap("A", 10, 10, 12, 64, 32, 128, "float32")
    assert check_tensor_map(ok, 4) == []
    odd_pitch = TensorMap("A", 10, 10, 13, 64, 32, 128, "float32")
    assert any("multiple of 16" in r for r in check_tensor_map(odd_pitch, 4))
    too_wide = TensorMap("A", 1, 1, 64, 8, 64, 128, "float32")  # 256 B rows, 128 B swizzle
    assert any("swizzle span" in r for r in check_tensor_map(too_wide, 4))


def test_a_malformed_argument_kind_is_a_registry_error(tmp_path):
    bad = TMA_ENTRY.replace('{int: "m * 2"}', "{float: 2}")
    with pytest.raises(RegistryError, match="not a valid registry"):
        _registry_with(tmp_path, bad)
    load_registry.cache_clear()


# -- two GPU models in one run ---------------------------------------------------------------


def _two_models(table: pd.DataFrame, factor: float) -> pd.DataFrame:
    """The recorded rows, and the same rows as if measured on a second model (an H200, or an H100
    where the rows are an H200's), faster by factor for the kernels and not at all for cuBLAS."""
    other = table.copy()
    h200 = (table[GPU_KEY] == "NVIDIA H200").all()
    other[GPU_KEY] = "NVIDIA H100 80GB HBM3" if h200 else "NVIDIA H200"
    fast = other.variant.str.startswith("cublas") == False  # noqa: E712
    other.loc[fast, "kernel_gflops"] *= factor
    for column in ("kernel_ms_median", "kernel_ms_min", "kernel_ms_max", "kernel_ms_iqr"):
        if column in other:  # the whole row faster, as a second GPU's would be
            other.loc[fast, column] /= factor
    if "kernel_ms" in other:  # a sustained row's time is its window's mean
        other.loc[fast, "kernel_ms"] /= factor
    return pd.concat([table, other], ignore_index=True)


def test_the_ladder_compares_each_kernel_with_cublas_on_its_own_gpu_model():
    t = read_csv(DATA / "h200-ladder" / "results" / "ladder" / "tables" / "timings.csv")
    both = _two_models(t, 1.5)
    k = ladder.with_reference(both)
    recorded = k[k[GPU_KEY] == "NVIDIA H200"]  # the run's own model
    second = k[k[GPU_KEY] != "NVIDIA H200"]
    assert len(recorded) == len(second) > 0
    # same cuBLAS on both, kernels 1.5x faster on the second: its fractions are 1.5x, not mixed
    key = ["variant", "instance", "m", "n", "k", "distribution", "load"]
    merged = recorded.merge(second, on=key, suffixes=("", "_b"))
    # cuBLASLt's FP8 matmul refuses sizes that are not multiples of 16: no reference, no fraction
    none = merged.fraction.isna()
    assert set(merged[none].variant) == {"persistent_fp8"} and not (merged[none].m % 16 == 0).any()
    assert np.allclose(merged.fraction_b[~none], 1.5 * merged.fraction[~none])
    assert (merged.reference_gflops == merged.reference_gflops_b)[~none].all()


def test_the_summary_has_a_section_per_gpu_model():
    t = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    txt, md = summary.render(_two_models(t, 2.0))
    model = t[GPU_KEY].iloc[0]
    assert f"== {model}: {len(t)} configurations ==" in txt
    assert f"== NVIDIA H200: {len(t)} configurations ==" in txt
    one, _ = summary.render(t)
    assert "==" not in one.split("\n")[0]


def test_figures_and_tables_refuse_mixed_models_unless_one_is_named(tmp_path):
    t = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    path = tmp_path / "timings.csv"
    _two_models(t, 2.0).to_csv(path, index=False)
    with pytest.raises(MixedGpuModels, match="2 GPU models.*gpu_model="):
        load_inputs({"timings": path})
    got = load_inputs({"timings": path}, "NVIDIA H200")["timings"]
    assert len(got) == len(t) and set(got[GPU_KEY]) == {"NVIDIA H200"}
    with pytest.raises(MixedGpuModels, match="'NVIDIA A100' measured no row"):
        load_inputs({"timings": path}, "NVIDIA A100")


def test_the_matrix_sum_is_exact_on_integers_and_one_rounding_otherwise():
    assert arith.exact_expected(element_type("float32"), "int09", 9, False, "add")
    assert arith.tolerance_scale(element_type("float32"), "int09", 9, False, "add") == 0.0
    assert not arith.exact_expected(element_type("float32"), "uniform", 9, False, "add")
    assert arith.tolerance_scale(element_type("float32"), "uniform", 9, False, "add") == 2.0**-24
    assert arith.tolerance_scale(element_type("int32"), "int09", 9, False, "add") == 0.0


def test_an_older_samples_id_gets_each_added_axis_back_in_its_place():
    """Hand-written ids: one from before `load` (and `ld_align` and `workers`) existed, one from
    before `ld_align`, one from before `workers`; each axis comes back with its default (burst,
    0, 0) where today's id has it."""
    from mmbench.core.row import upgrade_id

    today = "cublas|float32|float32|768|768|768|gemm|False|pinned|0|0|0|contiguous|warm|burst|int09|2024"
    before_workers = (
        "cublas|float32|float32|768|768|768|gemm|False|pinned|0|0|contiguous|warm|burst|int09|2024"
    )
    before_load = (
        "cublas|float32|float32|768|768|768|gemm|False|pinned|0|contiguous|warm|int09|2024"
    )
    before_align = (
        "cublas|float32|float32|768|768|768|gemm|False|pinned|0|contiguous|warm|burst|int09|2024"
    )
    assert upgrade_id(before_load) == today
    assert upgrade_id(before_align) == today
    assert upgrade_id(before_workers) == today
    assert upgrade_id(today) == today

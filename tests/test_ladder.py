"""The ladder to cuBLAS without a GPU: precision classes and references, the TF32 tolerance, the
tuning table and how a run uses it, and the ladder's tables and limiter from the recorded ladder
run (tests/data/h200-ladder, an H200 with the H100's tuning)."""

from pathlib import Path

import pandas as pd
import pytest

from mmbench.core import arith
from mmbench.core.elements import element_type
from mmbench.core.registry import load_registry
from mmbench.report import ladder

from .conftest import DATA, ROOT, read_csv

RUN = DATA / "h200-ladder" / "results" / "ladder" / "tables"
PAIR = DATA / "h100-sustained-pair"


@pytest.fixture(scope="module")
def timings():
    return read_csv(RUN / "timings.csv")


def test_each_rung_is_compared_with_the_cublas_of_its_precision_class(timings):
    k = ladder.with_reference(timings)
    refs = k.drop_duplicates("variant").set_index("variant").reference
    assert refs["mma_tf32"] == "cublas_tf32"
    assert refs["mma_f64"] == "cublas" and refs["warptile_db"] == "cublas"
    # the reference is the same GPU model, shape, inputs and load
    for dist, load in [("normal", "sustained"), ("int09", "burst"), ("normal", "burst")]:
        f64 = k[(k.variant == "mma_f64") & (k.m == 4096) & (k.distribution == dist)
                & (k.load == load)].iloc[0]  # fmt: skip
        dgemm = timings[
            (timings.variant == "cublas") & (timings.dtype == "float64") & (timings.m == 4096)
            & (timings.distribution == dist) & (timings.load == load)
        ]  # fmt: skip
        assert len(dgemm) == 1
        assert f64.reference_gflops == pytest.approx(dgemm.kernel_gflops.iloc[0])


def test_the_ladder_headlines_normal_inputs_sustained_with_integer_bursts_beside(timings):
    """The recorded ladder measured every rung under int09/normal x burst/sustained: the
    table's headline columns are normal inputs, sustained (with GFLOP/s per watt), the integer
    burst figures beside them, each percentage against cuBLAS under the same condition."""
    t = ladder.table(timings).set_index("rung")
    assert set(t["measured on"]) == {"normal inputs, sustained"}
    # each percentage by hand from the recorded rows: mma_f64's GFLOP/s over cuBLAS DGEMM's at
    # 8192, under the same inputs and load
    for rung, (dist, load), col in [("mma_f64", ("normal", "sustained"), "8192: % of ref"),
                                    ("mma_f64", ("int09", "burst"), "8192: int09 burst % of ref")]:  # fmt: skip
        same = timings[(timings.m == 8192) & (timings.distribution == dist)
                       & (timings.load == load) & (timings.dtype == "float64")]  # fmt: skip
        rate = same[same.variant == rung].kernel_gflops.max()  # the rung's fastest
        dgemm = same[same.variant == "cublas"].kernel_gflops.median()
        assert t.loc[rung, col] == pytest.approx(100 * rate / dgemm, abs=0.06)
    watts = timings[(timings.variant == "cublas") & (timings.dtype == "float64")
                    & (timings.m == 8192) & (timings.load == "sustained")
                    & (timings.distribution == "normal")].iloc[0]  # fmt: skip
    fp64 = t[t.precision == "FP64"]
    assert fp64.loc["cublas", "8192: GFLOP/s per W"] == pytest.approx(watts.gflops_per_w, abs=0.06)
    # what the data and the power limit do: DGEMM on normal inputs, sustained, is well below
    # integers in bursts (the issue's 63.6 -> 51.2 TFLOP/s), SGEMM on the CUDA cores is not
    assert (
        fp64.loc["cublas", "8192: GFLOP/s"] < 0.9 * fp64.loc["cublas", "8192: int09 burst GFLOP/s"]
    )
    fp32 = t[t.precision == "FP32"]
    assert fp32.loc["cublas", "8192: GFLOP/s"] == pytest.approx(
        fp32.loc["cublas", "8192: int09 burst GFLOP/s"], rel=0.02
    )


def test_tf32_tolerance_covers_truncated_inputs_and_int09_stays_exact():
    f32 = arith.tolerance_scale(element_type("float32"), "uniform", 4096, False)
    tf32 = arith.tolerance_scale(element_type("float32"), "uniform", 4096, False, math="tf32")
    assert tf32 > 2 * 2.0**-10 > f32
    assert arith.tolerance_scale(element_type("float32"), "int09", 4096, False, math="tf32") == 0.0


def test_the_ladder_table_gives_each_rung_its_gain_and_share_of_its_reference(timings):
    t = ladder.table(timings)
    assert list(t.precision.unique()) == ["FP32", "TF32", "BF16", "FP8", "FP64"]
    assert "4097: GFLOP/s" not in t.columns  # odd sizes verify; they are not rungs' sizes
    row = t.set_index("rung").loc["warptile_db"]
    # by hand from the recorded rows (normal inputs, sustained, 4096, float32): warptile_db's
    # fastest GFLOP/s over cuBLAS SGEMM's, and over warptile's (the rung before it)
    at = timings[(timings.m == 4096) & (timings.distribution == "normal")
                 & (timings.load == "sustained") & (timings.dtype == "float32")]  # fmt: skip
    rate = {v: at[at.variant == v].kernel_gflops.max() for v in ("warptile_db", "warptile")}
    sgemm = at[(at.variant == "cublas")].kernel_gflops.median()
    assert row["4096: % of ref"] == pytest.approx(100 * rate["warptile_db"] / sgemm, abs=0.06)
    assert 90 < row["4096: % of ref"] < 100  # the recorded run: 99.4% of SGEMM
    assert row["8192: gain"].startswith("x")
    assert row["4096: gain"] == f"x{rate['warptile_db'] / rate['warptile']:.2f}"
    # each rung's idea is the opening of its own kernel file's comment, not a text of the code
    registry = load_registry()
    kernels = Path(__file__).parents[1] / "kernels"
    for rung, idea in t.set_index("rung").idea.items():
        v = registry.get(str(rung).split()[0])
        if v is None or not v.compiled:
            continue
        opening = " ".join(
            line.removeprefix("//").strip()
            for line in (kernels / v.source).read_text().splitlines()[:12]
            if line.startswith("//")
        )
        assert idea and idea.split(".")[0][:40] in opening, (rung, idea)


def test_the_profile_table_names_a_limiter_for_every_profiled_rung():
    t = ladder.profile_table(read_csv(RUN / "metrics.csv"))
    # 19 rungs; cuBLAS SGEMM, DGEMM, bfloat16, TF32 and TF32 with B transposed; cuBLASLt FP8
    assert len(t) == 25
    assert t["limiter (Nsight Compute)"].str.contains("stall cycles/issue").all()
    mma = t[t.rung.str.startswith("mma_tf32")].iloc[0]
    assert mma["shared memory (B)"] > 48 * 1024  # dynamic shared memory counted
    assert 0 < mma["achieved occupancy (%)"] <= 100


def test_tuning_picks_the_fastest_verified_instantiation_at_each_ladder_size(timings):
    """The ladder run's square sizes from 1024 up are 4096 and 8192 (1, 31, 33 and 4097 verify):
    a row per rung at each, recording its square shape (each product then runs the nearer)."""
    t = ladder.tuned(timings)
    assert set(t.m) == {4096, 8192}
    assert (t.n == t.m).all() and (t.k == t.m).all()
    assert set(t.variant) == {"tiled_guarded", "coarsened", "blocktile_1d", "blocktile_2d",
                              "blocktile_vec", "warptile", "warptile_db", "mma_tf32", "wgmma_tf32",
                              "persistent_tf32", "persistent_tf32_tn", "tmastore_tf32_tn",
                              "ws_bf16", "persistent_bf16", "deep_bf16", "tmastore_bf16",
                              "persistent_fp8", "mma_f64", "ws_f64"}  # fmt: skip
    assert (t.instantiations == 1).all()  # the ladder run measured only the tuned ones
    assert len(t) == 2 * 19


def test_the_ladder_doc_table_quotes_the_tuned_parameters():
    """docs/ladder.md's table (generated from the recorded ladder run, an H200 with the H100's
    tuning) names each rung's tuned instantiation at 4096 (the ladder's size) as
    kernels/tuned.csv does for the H100: the rung's only row, or the one tuned at
    4096 x 4096 x 4096.  A tuned rung the table lacks is one the recorded run predates, and its
    entry in the rung list says so (tmastore_fp8, tuned and measured on an H100 after it)."""
    doc = (ROOT / "docs" / "ladder.md").read_text()
    table = [x for x in doc.splitlines() if x.startswith("| ")]
    header = [c.strip() for c in table[0].strip("|").split("|")]
    tuned = read_csv(ROOT / "kernels" / "tuned.csv", keep_default_na=False)
    tuned = tuned[tuned.gpu_name == "NVIDIA H100 80GB HBM3"]
    at_4096 = (tuned.m == 4096) & (tuned.n == 4096) & (tuned.k == 4096)
    tuned = tuned[at_4096 | ~tuned.variant.duplicated(keep=False)]
    assert not tuned.variant.duplicated().any() and len(tuned) >= 15
    absent = {v for v in tuned.variant if not any(f"| {v} |" in x for x in table)}
    assert absent == {"tmastore_fp8"}
    for v in absent:
        entry = doc.split(f"- `{v}` (")[1].split("\n- ")[0]
        assert "the recorded ladder run predates it" in " ".join(entry.split()), v
    for r in tuned[~tuned.variant.isin(absent)].itertuples():
        line = next(x for x in table if f"| {r.variant} |" in x)
        cells = dict(zip(header, [c.strip() for c in line.strip("|").split("|")], strict=True))
        assert cells["parameters"].startswith(r.params), (r.variant, r.params, cells)


def test_a_figure_shows_one_condition_and_its_note_names_it(timings):
    """A figure made from the timings (all but ladder_load, which compares conditions) gets the
    rows of one inputs-and-load condition, the headline where measured, and its note says
    which; a run recorded before the load axis reads as burst."""
    from mmbench.report import catalogue

    seen = {}

    def make(d, stem):
        seen.update(t=d["timings"], cond=d.get("condition", ""))

    catalogue.one_condition(make)({"timings": timings}, None)
    assert set(zip(seen["t"].distribution, seen["t"].load, strict=True)) == {
        ("normal", "sustained")
    }
    assert seen["cond"] == "normal inputs, sustained load; 3 other conditions not shown"
    main = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    catalogue.one_condition(make)({"timings": main.drop(columns="load", errors="ignore")}, None)
    assert seen["cond"] == "int09 inputs, burst load" and len(seen["t"]) == len(main)


def test_a_rate_table_shows_one_condition_and_says_which(timings):
    from mmbench.report.catalogue import TABLES, title_of

    t = TABLES["kernel_times"].make({"timings": timings})
    assert set(t["measured on"]) == {"normal inputs, sustained load"}
    main = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    one = TABLES["kernel_times"].make({"timings": main})
    assert "measured on" not in one.columns  # one condition: the title names it
    assert title_of(TABLES["kernel_times"], one).endswith("(int09 inputs, burst load)")


def test_the_summary_says_which_statistic_its_kernel_times_are():
    from mmbench.report import summary

    new, _ = summary.render(read_csv(PAIR / "a" / "timings.csv"))
    assert "Kernel time, ms (GFLOPS), mean over the timed window: C = A.B, float32, normal" in new
    # a run recorded before the mean was kept: its sustained rows' times are medians
    old = read_csv(DATA / "h100-ladder-again" / "first" / "timings.csv")  # 2026-11-23
    text, _ = summary.render(old)
    assert (
        "mean over" not in text
        and "median of the timed runs: C = A.B, float32, normal inputs, sustained" in text
    )


# -- the ladder at every size (config/presets/sweep.yaml, recorded on an H100) -------------------

SWEEP = DATA / "h100-sweep" / "results" / "sweep" / "tables" / "timings.csv"


@pytest.mark.parametrize(
    "shape, kind, goal",
    [((2048, 2048, 2048), "square from 2048", 0.90), ((3001, 3001, 3001), "square from 2048", 0.90),
     ((1536, 1536, 1536), "square below 2048", 0.75), ((1024, 1024, 1024), "square below 2048", 0.75),
     ((128, 4096, 4096), "one small side", 0.80), ((512, 16384, 16384), "one small side", 0.80)],
)  # fmt: skip
def test_each_kind_of_shape_has_the_issues_target(shape, kind, goal):
    """Issue 39: 90% of cuBLAS from 2048 up and at the odd sizes, 75% at 1024 and 1536, 80% on
    the products with one small side."""
    assert ladder.sweep_target(*shape) == (kind, goal)


def test_the_sweep_takes_each_shapes_best_rung_under_its_own_load():
    """Recorded rows (read off timings.csv): BF16 at 8192 sustained, persistent_bf16 654371.2
    GFLOP/s (deep_bf16 635268.4) against cuBLAS 661866.0: 98.9%; FP32 at 1024, measured in
    bursts only, warptile_db (64 x 256 tiles, tuned at 1024^3) 31169.9 against cuBLAS 31447.5:
    99.1%; FP64 at 128 x 4096 x 4096, ws_f64 (tuned there) 41393.3 against 44274.4: 93.5%, in 4
    k splits; TF32 at 3072, persistent_tf32 303482.0 against 288066.7: 105.4%, its last wave's
    24 tiles split 5 ways."""
    table = ladder.sweep(read_csv(SWEEP)).set_index(["precision", "shape"])
    bf16 = table.loc[("BF16", "8192")]
    assert bf16["best rung"] == "persistent_bf16" and bf16["measured on"].endswith("sustained")
    assert bf16["% of ref"] == round(100 * 654371.171772 / 661866.022217, 1) == 98.9
    assert bf16["k splits"] == 1 and bf16["tiles split"] == 0
    fp32 = table.loc[("FP32", "1024")]
    assert fp32["measured on"] == "normal inputs, burst" and fp32["met"] == "yes"
    assert fp32["% of ref"] == round(100 * 31169.930800 / 31447.453390, 1) == 99.1
    assert fp32["target %"] == 75
    # warptile_db's 64 x 256 block tiles: 1024 / 256 x 1024 / 64 = 4 x 16 tiles; 132 // 64 = 2
    # splits along k (the registry's SPLITS), as the row recorded, every tile split
    assert fp32["output tiles"] == 64 and fp32["k splits"] == 2 and fp32["tiles split"] == 64
    fp64 = table.loc[("FP64", "128 x 4096 x 4096")]
    assert fp64["% of ref"] == round(100 * 41393.285301 / 44274.361384, 1) == 93.5
    # 128 x 128 tiles: 1 x 32; 132 // 32 = 4 splits, each 1024 deep
    assert fp64["output tiles"] == 32 and fp64["k splits"] == 4
    # 256 x 128 tiles: 12 x 24 = 288 = 2 x 132 + 24; the 24 split 132 // 24 = 5 ways
    tf32 = table.loc[("TF32", "3072")]
    assert tf32["% of ref"] == round(100 * 303482.010721 / 288066.668931, 1) == 105.4
    assert (tf32["output tiles"], tf32["k splits"], tf32["tiles split"]) == (288, 5, 24)
    assert len(table) == 4 * 20  # four classes, 11 square sizes and 9 with one small side


def test_the_sweep_says_where_the_reference_read_the_kernels_padded_rows():
    """At 3001 the recorded cuBLAS rows have ld_align 16 in every class (every sweep rung pads
    its rows to 16 bytes: warptile_db since it declared align: 16); at 3072 no row needs
    padding."""
    table = ladder.sweep(read_csv(SWEEP)).set_index(["precision", "shape"])
    for cls in ("BF16", "FP64", "TF32", "FP32"):
        assert table.loc[(cls, "3001"), "reference rows"] == "padded to 16 B, as the kernels'"
        assert table.loc[(cls, "3072"), "reference rows"] == "its own"


def test_tuning_at_several_shapes_gives_a_row_per_shape():
    """The recorded h100-sizes run (every instantiation at 1024^3, 2048^3, 128 x 4096^2 and
    256 x 8192^2, bursts): warptile_db's fastest, read off the run, is BM=64 BN=64 ... WN=64 at
    1024 (95.1% of cuBLAS there), the 128 x 256 tiles at 2048, 64 x 64 tiles with 32 x 32 warp
    tiles at 128 x 4096^2 (24.2 TFLOP/s) and 64 x 256 at 256 x 8192^2 (44.1); each row records
    its shape, in order of work m x n x k."""
    t = read_csv(DATA / "h100-sizes" / "results" / "sizes" / "tables" / "timings.csv")
    table = ladder.tuned(t)
    rows = table[table.variant == "warptile_db"].set_index("m")
    assert list(rows.index) == [1024, 128, 2048, 256]
    assert list(rows.n) == [1024, 4096, 2048, 8192] and list(rows.k) == list(rows.n)
    assert rows.loc[1024, "params"] == "BM=64 BN=64 BK=16 WM=32 WN=64 WNITER=2 TM=8 TN=4"
    assert rows.loc[2048, "params"] == "BM=128 BN=256 BK=16 WM=64 WN=64 WNITER=2 TM=8 TN=4"
    assert rows.loc[128, "params"] == "BM=64 BN=64 BK=16 WM=32 WN=32 WNITER=1 TM=8 TN=4"
    assert rows.loc[256, "params"] == "BM=64 BN=256 BK=16 WM=32 WN=64 WNITER=2 TM=8 TN=4"
    assert rows.loc[1024, "instantiations"] == 67


@pytest.mark.parametrize(
    "facts, split",
    [("TILES=288 WAVE=132 TAIL=24 SPLITS=5 HEAD=264", 24),
     # clusters of 2: 2048 tiles are 1024 cluster tiles, 990 run whole, the 34 left are 68 tiles
     ("TILES=2048 WAVE=66 TAIL=34 SPLITS=3 HEAD=990", 68),
     ("TILES=32 SPLITS=4", 32), ("TILES=512 WAVE=132 TAIL=0 SPLITS=1 HEAD=512", 0),
     ("", None)],
)  # fmt: skip
def test_the_tiles_a_row_split_are_counted_in_tiles(facts, split):
    """By hand: the tail past the last whole wave (in clusters of tiles where HEAD + TAIL is
    fewer than TILES), every tile where the kernel splits them all, none unsplit."""
    assert ladder.split_tiles(facts) == split


def test_the_fp8_rung_is_measured_against_cublaslt_and_meets_its_target():
    """The recorded FP8 tune (tests/data/h100-tune-fp8: all 40 persistent_fp8 instantiations and
    cublaslt_fp8 at 4096 and 8192, normal inputs, sustained, an H100): the FP8 rung's
    reference is cuBLASLt's FP8 matmul, its best instantiation is the one kernels/tuned.csv
    holds, and its share of the reference is the recorded rows' ratio (by hand from the CSV:
    1016.9 / 1102.8 TFLOP/s = 92.2% at 4096, 1112.2 / 1211.2 = 91.8% at 8192), above the
    issue's 90%; the ladder figure's note says the FP8 target is met."""
    from mmbench.report import findings

    t = read_csv(DATA / "h100-tune-fp8" / "timings.csv")
    best = ladder.under(ladder.best_per_rung(t), ladder.HEADLINE)
    fp8 = best[best.precision == "FP8"].set_index("m")
    assert set(fp8.reference) == {"cublaslt_fp8"} and set(fp8.variant) == {"persistent_fp8"}
    assert fp8.fraction[4096] == pytest.approx(0.922, abs=5e-4)
    assert fp8.fraction[8192] == pytest.approx(0.918, abs=5e-4)
    tuned = read_csv(ROOT / "kernels" / "tuned.csv")
    chosen = set(tuned[tuned.variant == "persistent_fp8"].instance)
    assert chosen == set(fp8.instance) == {"float8_e4m3_BM128_BN128_STAGES6_CLUSTER1_GROUP8_CHAIN8"}
    from mmbench.report import standing

    note = findings.ladder_targets(fp8.reset_index(), ladder.TARGETS,
                                   *standing.recorded_ladder()[:1], "normal inputs, sustained",
                                   "normal inputs, sustained", standing.recorded_ladder()[1])  # fmt: skip
    assert "FP8 (>= 90% of cublaslt_fp8) met" in note and "(2 of 2 class-size pairs met)" in note


def test_the_tma_store_rung_passes_persistent_bf16_in_the_same_recorded_run():
    """The ladder preset for tmastore_bf16, persistent_bf16 and cuBLAS bfloat16 only, at 4096 and
    8192, each in its tuned instantiation (tests/data/h100-tmastore, an H100, 2026-11-27).  By
    hand from its normal, sustained rows (GFLOP/s): tmastore_bf16 631 860 and 666 383,
    persistent_bf16 604 923 and 651 768, cuBLAS 639 312 and 658 013: 98.84% and 101.27% of
    cuBLAS against 94.62% and 99.05%, a gain of x1.04 and x1.02."""
    t = read_csv(DATA / "h100-tmastore" / "ladder_timings.csv.xz")
    assert (t.verification == "PASS").all() and len(t) == 24
    tab = ladder.table(t).set_index("rung")
    assert tab.loc["tmastore_bf16", "4096: % of ref"] == pytest.approx(98.8, abs=0.05)
    assert tab.loc["tmastore_bf16", "8192: % of ref"] == pytest.approx(101.3, abs=0.05)
    assert tab.loc["persistent_bf16", "4096: % of ref"] == pytest.approx(94.6, abs=0.05)
    assert tab.loc["persistent_bf16", "8192: % of ref"] == pytest.approx(99.1, abs=0.05)
    # the new rung follows the one it builds on: its gain is over persistent_bf16
    assert list(tab.index) == ["persistent_bf16", "tmastore_bf16", "cublas"]
    assert tab.loc["tmastore_bf16", "4096: gain"] == "x1.04"
    assert tab.loc["tmastore_bf16", "8192: gain"] == "x1.02"
    tuned = read_csv(ROOT / "kernels" / "tuned.csv")
    assert set(tuned[tuned.variant == "tmastore_bf16"].params) == {
        "BM=128 BN=256 STAGES=4 CLUSTER=2 GROUP=8"
    }


def test_the_tf32_tma_store_rung_passes_persistent_tf32_tn_in_the_same_recorded_run():
    """The ladder preset for tmastore_tf32_tn, persistent_tf32_tn, cuBLAS TF32 and cuBLAS TF32
    TN only, at 4096 and 8192, each in its tuned instantiation (tests/data/h100-tmastore-tf32,
    an H100, 2026-11-27).  By hand from its normal, sustained rows (kernel_ms, 2 n^3 / t):
    tmastore_tf32_tn 340 311 and 350 547 GFLOP/s, persistent_tf32_tn 331 164 and 347 642,
    cublas_tf32_tn 350 801 and 356 005, cublas_tf32 330 906 and 356 561: 97.0% and 98.5% of the
    TN reference against 94.4% and 97.7%, and 102.8% and 98.3% of cuBLAS TF32."""
    t = read_csv(DATA / "h100-tmastore-tf32" / "ladder_timings.csv")
    assert (t.verification == "PASS").all() and len(t) == 32
    tab = ladder.table(t).set_index("rung")
    assert tab.loc["tmastore_tf32_tn", "reference"] == "cublas_tf32_tn"
    assert tab.loc["tmastore_tf32_tn", "4096: % of ref"] == pytest.approx(97.0, abs=0.05)
    assert tab.loc["tmastore_tf32_tn", "8192: % of ref"] == pytest.approx(98.5, abs=0.05)
    assert tab.loc["persistent_tf32_tn", "4096: % of ref"] == pytest.approx(94.4, abs=0.05)
    assert tab.loc["persistent_tf32_tn", "8192: % of ref"] == pytest.approx(97.7, abs=0.05)
    assert tab.loc["tmastore_tf32_tn", "4096: gain"] == "x1.03"
    s = t[(t.load == "sustained") & (t.distribution == "normal")].set_index(["variant", "m"])
    against = s.kernel_ms[("cublas_tf32", 4096)] / s.kernel_ms[("tmastore_tf32_tn", 4096)]
    assert against == pytest.approx(1.028, abs=5e-4)
    tuned = read_csv(ROOT / "kernels" / "tuned.csv")
    assert set(tuned[tuned.variant == "tmastore_tf32_tn"].params) == {
        "BM=128 BN=256 STAGES=3 CLUSTER=1 GROUP=16"
    }


def test_the_fp8_tma_store_rung_passes_persistent_fp8_in_the_same_recorded_run():
    """The ladder preset for tmastore_fp8, persistent_fp8 and cuBLASLt FP8 only, at 4096 and
    8192, normal inputs, each in its tuned instantiation (tests/data/h100-tmastore-fp8, one H100,
    GPU-2720dbc9; the columns the ladder table reads, and the clock and power).  By hand from its sustained rows (2 n^3 / kernel_ms): tmastore_fp8 1 075 172
    and 1 161 834 GFLOP/s, persistent_fp8 1 021 279 and 1 073 865, cuBLASLt 1 095 360 and
    1 191 844: 98.2% and 97.5% of cuBLASLt against 93.2% and 90.1%, a gain of x1.05 and x1.08."""
    t = read_csv(DATA / "h100-tmastore-fp8" / "ladder_timings.csv.xz")
    assert (t.verification == "PASS").all() and len(t) == 12
    assert set(t.gpu_uuid) == {"GPU-2720dbc9-f93a-8885-85a5-ad6a2b17d9c5"}
    tab = ladder.table(t).set_index("rung")
    assert list(tab.index) == ["persistent_fp8", "tmastore_fp8", "cublaslt_fp8"]
    assert tab.loc["tmastore_fp8", "4096: % of ref"] == pytest.approx(98.2, abs=0.05)
    assert tab.loc["tmastore_fp8", "8192: % of ref"] == pytest.approx(97.5, abs=0.05)
    assert tab.loc["persistent_fp8", "4096: % of ref"] == pytest.approx(93.2, abs=0.05)
    assert tab.loc["persistent_fp8", "8192: % of ref"] == pytest.approx(90.1, abs=0.05)
    assert (tab.loc["tmastore_fp8", "4096: gain"], tab.loc["tmastore_fp8", "8192: gain"]) == (
        "x1.05", "x1.08")  # fmt: skip
    # the run measured the tuned rows kernels/tuned.csv holds for the H100
    tuned = read_csv(ROOT / "kernels" / "tuned.csv")
    mine = tuned[(tuned.variant == "tmastore_fp8") & (tuned.gpu_name == "NVIDIA H100 80GB HBM3")]
    ran = t[t.variant == "tmastore_fp8"].groupby("m").instance.first()
    assert (
        dict(zip(mine.m, mine.instance, strict=True))
        == ran.to_dict()
        == {
            4096: "float8_e4m3_BM128_BN128_STAGES6_CLUSTER1_GROUP8_CHAIN8",
            8192: "float8_e4m3_BM128_BN192_STAGES4_CLUSTER1_GROUP8_CHAIN1",
        }
    )


def test_tuning_at_8192_takes_the_fastest_sustained_instantiation_of_the_recorded_tune():
    """ws_f64's 16 instantiations and DGEMM at 8192, bursts and sustained, normal inputs
    (tests/data/h100-tune-f64-8192, an H100, 2026-11-27).  Read by hand from its sustained rows:
    STAGES=5 51 725 GFLOP/s, STAGES=3 (the 4096 row) 51 537, DGEMM 52 105: 99.27% of it."""
    t = read_csv(DATA / "h100-tune-f64-8192" / "timings.csv")
    assert (t.verification == "PASS").all() and len(t) == 34
    row = ladder.tuned(t).set_index("variant").loc["ws_f64"]
    assert row.params == "BM=256 BN=64 WM=64 WN=32 STAGES=5 BLOCKS=1"
    assert (row.m, row.n, row.k) == (8192, 8192, 8192) and row.instantiations == 16
    assert row.percent_of_reference == pytest.approx(99.27, abs=0.01)


def test_a_rung_run_with_another_models_tuning_says_so_in_the_ladder_table(timings):
    """The H200 ladder (tests/data/phases/h200-ladder-timings.csv) ran the H100's tuned
    parameters (config tuned_gpu): each tuned rung's parameters say so; deep_bf16 (one
    instantiation, no tuning) and the references say nothing, nor does any rung of an H100's
    own ladder run (tests/data/h100-ladder-0617).  The recorded ladder, an H200's with the
    H100's tuning too, says so for the same 18 rungs."""
    h200 = ladder.table(read_csv(DATA / "phases" / "h200-ladder-timings.csv"))
    h200 = h200.set_index(["precision", "rung"]).parameters
    said = h200.str.endswith(" (tuned on NVIDIA H100 80GB HBM3)")
    assert said[("FP32", "warptile_db")] and said[("TF32", "tmastore_tf32_tn")]
    assert h200[("FP32", "warptile_db")].startswith("BM=128 BN=256 BK=16")
    assert not said[("BF16", "deep_bf16")] and not said[("FP64", "cublas")]
    assert said.sum() == 18  # the 19 rungs less deep_bf16
    h100 = read_csv(DATA / "h100-ladder-0617" / "timings.csv")
    assert not ladder.table(h100).parameters.str.contains("tuned on").any()
    recorded = ladder.table(timings).set_index(["precision", "rung"]).parameters
    assert recorded.str.endswith(" (tuned on NVIDIA H100 80GB HBM3)").sum() == 18


def test_an_fp8_product_cublaslt_refuses_is_set_against_it_padded():
    """The recorded FP8 ladder (an H100) with its persistent_fp8 rows at 4096^3 moved to n = 4090,
    a product cuBLASLt's FP8 matmul refuses (n not a multiple of 16): each is set against
    cuBLASLt's row at 4096^3, 4090 rounded up to 16 (what the plan runs there), whose rate
    counts the product's own work, 4090 / 4096 of its own (the same time for less work)."""
    t = read_csv(DATA / "h100-ladder-fp8" / "results" / "ladder" / "tables" / "timings.csv")
    fp8 = (t.variant == "persistent_fp8") & (t.m == 4096)
    moved = t.copy()
    moved.loc[fp8, "n"] = 4090
    k = ladder.with_reference(moved)
    rows = k[(k.variant == "persistent_fp8") & (k.n == 4090)]
    assert len(rows) == fp8.sum() == 4  # normal and int09 inputs, bursts and sustained
    ref = t[(t.variant == "cublaslt_fp8") & (t.m == 4096) & (t.verification == "PASS")]
    for _, r in rows.iterrows():
        same = ref[(ref.distribution == r.distribution) & (ref.load == r.load)]
        assert r.reference == "cublaslt_fp8" and r.reference_shape == "4096 x 4096 x 4096"
        assert r.reference_gflops == pytest.approx(same.kernel_gflops.median() * 4090 / 4096)
        assert r.fraction == pytest.approx(r.kernel_gflops / r.reference_gflops)
    # at its own product nothing is padded
    assert (k[(k.variant == "persistent_fp8") & (k.n == 8192)].reference_shape == "").all()


def _with_a_peer(timings, factor=1.05):
    """The recorded sweep with a CUTLASS line made of persistent_bf16's rows at `factor` times
    their rate: a peer faster than every BF16 rung, whose share of cuBLAS is that rung's times
    `factor` by construction."""
    rows = timings[timings.variant == "persistent_bf16"].copy()
    rows["variant"], rows["label"] = "cutlass_bf16", "cutlass_bf16"
    rows["kernel_gflops"] = rows.kernel_gflops * factor
    return pd.concat([timings, rows], ignore_index=True), rows


def test_a_peer_is_a_line_beside_cublas_never_the_best_rung():
    timings = read_csv(SWEEP)
    both, _ = _with_a_peer(timings)
    alone = ladder.sweep(timings).set_index(["precision", "shape"])
    table = ladder.sweep(both).set_index(["precision", "shape"])
    bf16 = table.loc[("BF16", "8192")]
    # the best rung and its share are the recorded run's (98.9%, as above), the peer beside it
    assert bf16["best rung"] == "persistent_bf16" and bf16["% of ref"] == 98.9
    assert bf16["CUTLASS % of ref"] == round(100 * 1.05 * 654371.171772 / 661866.022217, 1)
    assert bf16["rungs"] == alone.loc[("BF16", "8192"), "rungs"]
    # a class the peer did not run has no share of it
    assert pd.isna(table.loc[("FP64", "3072"), "CUTLASS % of ref"])
    assert "CUTLASS % of ref" not in alone
    summary = ladder.shapes_summary(both).set_index("precision")
    assert (summary.loc["BF16", "geometric mean % of ref"]
            == ladder.shapes_summary(timings).set_index("precision").loc["BF16",
                                                                          "geometric mean % of ref"])  # fmt: skip
    assert summary.loc["BF16", "CUTLASS products"] == 20
    assert pd.isna(summary.loc["FP64", "CUTLASS products"])


def test_the_ladder_table_gives_a_peer_a_row_with_no_gain(timings):
    both, _ = _with_a_peer(timings)
    table = ladder.table(both).set_index(["precision", "rung"])
    peer = table.loc[("BF16", "cutlass_bf16")]
    assert peer["idea"].startswith("reference line: CUTLASS")
    rung = table.loc[("BF16", "persistent_bf16"), "4096: % of ref"]
    assert pd.isna(peer["4096: gain"]) and peer["4096: % of ref"] == pytest.approx(
        1.05 * rung, abs=0.1
    )
    # the rungs' gains are the recorded run's: a peer is not the rung before the next
    alone = ladder.table(timings).set_index(["precision", "rung"])
    rungs = [r for (p, r) in alone.index if p == "BF16"]
    for r in rungs:
        assert str(table.loc[("BF16", r), "4096: gain"]) == str(
            alone.loc[("BF16", r), "4096: gain"]
        )
    # its line sits after the rungs, before cuBLAS's
    order = [r for (p, r) in table.index if p == "BF16"]
    assert order.index("cutlass_bf16") == len(order) - 2


def test_a_peer_run_padded_counts_for_the_product_it_was_padded_from():
    """Recorded rows of the seed-726870 shapes run on an H200 (tests/data/h200-shapes-peer):
    CUTLASS's TMA refuses n and k that are not multiples of 8 bfloat16, so the plan ran
    308 x 179 x 2620 as 308 x 184 x 2624 and 1327 x 69 x 31 as 1327 x 72 x 32.  Its share at
    the product the user asked for is the product's own flop count over the padded run's
    recorded median time, against cuBLAS's rate at the product itself."""
    t = read_csv(DATA / "h200-shapes-peer" / "timings.csv.xz")
    table = ladder.sweep(t).set_index(["precision", "shape"])
    # hand count: 2mnk of the asked product over the faster build's median kernel time
    dp_308 = 2 * 308 * 179 * 2620 / 0.019456e-3 / 1e9  # data-parallel build, 0.019456 ms
    assert table.loc[("BF16", "308 x 179 x 2620"), "CUTLASS % of ref"] == round(
        100 * dp_308 / 17033.706925, 1
    )
    dp_1327 = 2 * 1327 * 69 * 31 / 0.006752e-3 / 1e9
    assert table.loc[("BF16", "1327 x 69 x 31"), "CUTLASS % of ref"] == round(
        100 * dp_1327 / 1055.972107, 1
    )
    # at an aligned product the peer ran the product itself
    assert table.loc[("BF16", "4096"), "CUTLASS % of ref"] == round(
        100 * 664135.954722 / 741470.402541, 1
    )
    # the padded products are not products of the run: no row of their own
    assert ("BF16", "308 x 184 x 2624") not in table.index
    k = ladder.with_reference(t)
    ran = k[(k.variant == "cutlass_bf16") & (k.m == 308) & (k.n == 179)]
    assert set(ran.ran_shape) == {"308 x 184 x 2624"} and len(ran) == 2
    assert ladder.shapes_summary(t).set_index("precision").loc["BF16", "CUTLASS products"] == 3


def test_a_peer_run_padded_counts_where_the_reference_ran_padded_too():
    """Recorded FP8 rows of the same run (tests/data/h200-shapes-peer): cuBLASLt's FP8 matmul
    and CUTLASS's FP8 builds both need n and k in multiples of 16, so both ran 2437^3 as
    2437 x 2448 x 2448 and 172 x 1843 x 7126 as 172 x 1856 x 7136, and the rungs ran the
    products themselves.  The peer's padded run counts for the product asked for, against the
    reference's padded run, each at the product's own 2mnk."""
    t = read_csv(DATA / "h200-shapes-peer" / "timings.csv.xz")
    table = ladder.sweep(t).set_index(["precision", "shape"])
    # hand count: the faster CUTLASS build (stream-K) from its median kernel time, cuBLASLt's
    # recorded rate at the padded product scaled to the product's flops
    peer = 2 * 2437**3 / 0.052080e-3 / 1e9
    ref = 882750.257090 * 2437**3 / (2437 * 2448 * 2448)
    assert table.loc[("FP8", "2437"), "CUTLASS % of ref"] == round(100 * peer / ref, 1)
    peer = 2 * 172 * 1843 * 7126 / 0.026176e-3 / 1e9
    ref = 364602.996734 * (172 * 1843 * 7126) / (172 * 1856 * 7136)
    assert table.loc[("FP8", "172 x 1843 x 7126"), "CUTLASS % of ref"] == round(100 * peer / ref, 1)
    assert ("FP8", "2437 x 2448 x 2448") not in table.index
    summary = ladder.shapes_summary(t).set_index("precision")
    assert summary.loc["FP8", "CUTLASS products"] == 2


def test_a_peers_idea_is_the_first_sentence_of_its_source_cu_or_py():
    """The ladder's idea column: kernels/triton_matmul.py opens with the docstring "A persistent
    Triton matmul: a reference line ...", kernels/cutlass_gemm.cu with the comment "CUTLASS
    3.x's Hopper GEMM as a reference line beside cuBLAS: ...", each read by hand; the name part
    before the colon is the idea."""
    from mmbench.report.ladder import idea

    assert idea("triton_bf16") == "A persistent Triton matmul"
    assert idea("cutlass_fp8") == "CUTLASS 3.x's Hopper GEMM as a reference line beside cuBLAS"

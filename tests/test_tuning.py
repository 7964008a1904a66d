"""plan/tuning.py: the tuning table read and checked, and turned into the parameters of the
rungs for this run's GPU model; every bad table named with its file, line and what is valid."""

from __future__ import annotations

import pytest

from mmbench.core.registry import load_registry
from mmbench.plan import plan, tuning
from mmbench.plan.config import ConfigError
from mmbench.plan.tuning import apply_tuned

from .conftest import ROOT, read_csv


def _cfg(tuned, **more):
    return dict(dict(variants=["warptile_db", "cublas"], tuned=str(tuned), profile={}), **more)


def test_a_malformed_tuning_table_names_the_key_and_the_file(tmp_path):
    bad = tmp_path / "tuned.csv"
    bad.write_text("gpu_name,variant,dtype,params\nA,warptile_db,float32,BM=64\nA,b,c,d,e,f\n")
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(bad, tuned_gpu="X"), [], load_registry())
    assert f"config key 'tuned': '{bad}' is not a readable CSV table" in str(err.value)
    assert "line 3" in str(err.value)  # pandas' own words: Expected 4 fields in line 3, saw 6


def test_a_missing_table_is_reported_before_the_gpu_is_looked_for(tmp_path):
    missing = tmp_path / "nope.csv"
    with pytest.raises(ConfigError, match=rf"config key 'tuned': '{missing}' does not exist"):
        apply_tuned(_cfg(missing), [], load_registry())


def test_a_run_in_another_folder_finds_the_table_kept_with_the_kernels(tmp_path, monkeypatch):
    """`snakemake -s …/Snakefile -d elsewhere --configfile config/presets/ladder.yaml`: the
    preset's `tuned: kernels/tuned.csv` is not in the run's folder; it stopped such a run on an
    H100 (2026-11-27) with "'kernels/tuned.csv' does not exist". The workflow's own is read."""
    monkeypatch.chdir(tmp_path)
    gpu = "NVIDIA H100 80GB HBM3"
    cfg = dict(variants=["mma_f64"], tuned="kernels/tuned.csv", tuned_gpu=gpu, profile={})
    with pytest.raises(ConfigError, match="'kernels/tuned.csv' does not exist"):
        apply_tuned(cfg, [], load_registry())  # no folder to look in but the run's
    out = apply_tuned(cfg, [], load_registry(), basedir=ROOT)
    # kernels/tuned.csv's mma_f64 row for the H100, read by hand
    assert out["params"]["mma_f64"]["BM"] == [64] and out["params"]["mma_f64"]["STAGES"] == [4]
    # a table of that name in the run's folder is the user's, and comes first
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "tuned.csv").write_text("gpu_name,variant,dtype,params\n")
    assert tuning.locate("kernels/tuned.csv", ROOT) == "kernels/tuned.csv"


def test_an_undeclared_tuned_value_names_the_file_line_and_valid_values(tmp_path):
    table = tmp_path / "tuned.csv"
    table.write_text(
        "gpu_name,variant,dtype,params\n"
        "GPU X,warptile_db,float32,BM=96 BN=128 BK=16 WM=64 WN=64 WNITER=1 TM=8 TN=4\n"
    )
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(table, tuned_gpu="GPU X"), [], load_registry())
    text = str(err.value)
    assert f"{table}, line 2: warptile_db BM=96 is not a value the registry declares" in text
    assert "valid values of BM: 32, 64, 128, 256" in text


def test_the_tuned_table_pins_each_rung_to_its_tuned_instantiation():
    registry = load_registry()
    table = tuning.read_tuned(ROOT / "kernels" / "tuned.csv")
    gpu = "NVIDIA H100 80GB HBM3"
    cfg = dict(variants=["warptile_db", "mma_f64", "cublas"], tuned=str(ROOT / "kernels" / "tuned.csv"),
               tuned_gpu=gpu, profile=dict(enabled=True, variants=["mma_f64"]))  # fmt: skip
    out = tuning.apply_tuned(cfg, [], registry)
    best = table[(table.gpu_name == gpu) & (table.variant == "mma_f64")].iloc[0]
    # kernels/tuned.csv's row, read by hand: BM=64 BN=64 BK=16 WM=32 WN=32 STAGES=4 MMAK=8
    assert best.params == "BM=64 BN=64 BK=16 WM=32 WN=32 STAGES=4 MMAK=8"
    assert out["params"]["mma_f64"] == {
        "dtype": ["float64"], "BM": [64], "BN": [64], "BK": [16], "WM": [32], "WN": [32],
        "STAGES": [4], "MMAK": [8],
    }  # fmt: skip
    assert "cublas" not in out["params"]  # one instantiation per type: nothing to tune
    assert out["profile"]["params"]["mma_f64"] == out["params"]["mma_f64"]
    [params] = plan.buildable(registry["mma_f64"], out, "sm_90")[0]
    assert plan.Configuration.of("mma_f64", params, m=1, n=1, k=1, accumulate=False,
                                 memory="pinned", distribution="int09", seed=1).instance == best.instance  # fmt: skip


def test_a_gpu_model_without_tuned_parameters_is_refused_with_the_command_to_tune():
    with pytest.raises(
        ConfigError, match=r"holds no tuned parameters of mma_tf32 for 'NVIDIA B200'.*tune.yaml"
    ):
        tuning.apply_tuned(dict(variants=["mma_tf32"], tuned=str(ROOT / "kernels" / "tuned.csv"),
                                tuned_gpu="NVIDIA B200"), [], load_registry())  # fmt: skip
    with pytest.raises(ConfigError, match="'tuned_gpu': auto finds no GPU"):
        tuning.apply_tuned(
            dict(variants=["mma_tf32"], tuned="kernels/tuned.csv"), [], load_registry()
        )
    with pytest.raises(ConfigError, match="'no/such.csv' does not exist"):
        tuning.apply_tuned(
            dict(variants=["mma_tf32"], tuned="no/such.csv", tuned_gpu="x"), [], load_registry()
        )


def test_a_tuning_table_older_than_the_registry_is_refused(tmp_path):
    """A rung that gained a parameter since it was tuned (mma_f64's MMAK) is not run with the
    new parameter unpinned: the table is refused with the difference and the command."""
    table = read_csv(ROOT / "kernels" / "tuned.csv")
    table.loc[table.variant == "mma_f64", "params"] = "BM=64 BN=128 BK=8 WM=32 WN=32 STAGES=4"
    old = tmp_path / "tuned.csv"
    table.to_csv(old, index=False)
    with pytest.raises(
        ConfigError, match=r"mma_f64 \(tuned: BK BM BN STAGES WM WN; registry: .*MMAK\)"
    ):
        tuning.apply_tuned(dict(variants=["mma_f64"], tuned=str(old), tuned_gpu="NVIDIA H100 80GB HBM3"),
                           [], load_registry())  # fmt: skip


def test_two_tuning_rows_for_one_variant_are_refused(tmp_path):
    from mmbench.plan.tuning import apply_tuned

    rows = (ROOT / "kernels" / "tuned.csv").read_text().splitlines()
    bt = next(r for r in rows if ",blocktile_1d,float32," in r)
    other = bt.replace("BM=64 BN=64 BK=8 TM=8", "BM=128 BN=64 BK=8 TM=8")
    tuned = tmp_path / "tuned.csv"
    tuned.write_text("\n".join([*rows, other]) + "\n")
    registry = load_registry()
    cfg = {"tuned": str(tuned), "tuned_gpu": "NVIDIA H100 80GB HBM3", "variants": ["blocktile_1d"]}
    with pytest.raises(ConfigError, match="2 rows claim blocktile_1d float32"):
        apply_tuned(cfg | {"params": {}, "profile": {"params": {}}}, [], registry)


def test_a_row_with_empty_parameters_is_named_with_its_line(tmp_path):
    table = tmp_path / "tuned.csv"
    table.write_text("gpu_name,variant,dtype,params\nGPU X,warptile_db,float32,\n")
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(table, tuned_gpu="GPU X"), [], load_registry())
    text = str(err.value)
    assert f"config key 'tuned': {table}, line 2: warptile_db's params '' is not NAME=value" in text
    assert "registry declares now" not in text  # not blamed on a registry change


def test_the_shipped_tuning_table_has_the_columns_the_tune_preset_writes():
    """kernels/tuned.csv is read by every ladder run: its header is the writer's
    (report/ladder.tuned, core/columns.TUNED_COLUMNS), so its errors name its own columns."""
    from mmbench.core.columns import TUNED_COLUMNS

    header = (ROOT / "kernels" / "tuned.csv").read_text().splitlines()[0].split(",")
    assert header == TUNED_COLUMNS


def test_a_table_without_a_needed_column_names_only_the_needed_ones(tmp_path):
    table = tmp_path / "tuned.csv"
    table.write_text("gpu_name,variant,dtype\nGPU X,warptile_db,float32\n")
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(table, tuned_gpu="GPU X"), [], load_registry())
    assert (
        "has no column 'params'; valid: a table with at least the columns gpu_name, "
        "variant, dtype, params (the tune preset also writes math, instance" in str(err.value)
    )


# -- tuning at several shapes: each product runs the row tuned nearest to it (m, n, k) ------------

GPU = "NVIDIA H100 80GB HBM3"
HEADER = "gpu_name,variant,dtype,params,m,n,k"
SMALL = "BM=64 BN=64 BK=16 WM=32 WN=64 WNITER=2 TM=8 TN=4"  # the h100-sizes run's best at 1024
LARGE = "BM=128 BN=256 BK=16 WM=64 WN=64 WNITER=2 TM=8 TN=4"  # kernels/tuned.csv's, at 4096
THIN = "BM=64 BN=64 BK=8 WM=32 WN=32 WNITER=1 TM=8 TN=4"  # kernels/tuned.csv's at 1536


def _ranged(tmp_path, *rows) -> str:
    table = tmp_path / "tuned.csv"
    table.write_text("\n".join([HEADER, *rows]) + "\n")
    return str(table)


def test_each_shape_gets_the_instantiation_tuned_nearest_to_it(tmp_path):
    """Rows tuned at 1024^3 (SMALL), 4096^3 (LARGE) and 128 x 8192 x 8192 (THIN); distances in
    log2 units, by hand: 1536^3 is 0.58 x sqrt(3) from 1024^3 and 1.42 x sqrt(3) from 4096^3;
    2048^3 is sqrt(3) from both (a tie: the larger tuning shape); 128 x 4096 x 4096 is
    sqrt(0 + 1 + 1) = 1.41 from THIN's, sqrt(9 + 4 + 4) = 4.12 from 1024^3, 5 from 4096^3;
    4096 x 128 x 4096 (the small side is n) is sqrt(4 + 9 + 4) = 4.12 from 1024^3, 5 from
    4096^3 and sqrt(25 + 36 + 1) = 7.87 from THIN's."""
    from mmbench.plan.config import validate

    path = _ranged(tmp_path, f"{GPU},warptile_db,float32,{SMALL},1024,1024,1024",
                   f"{GPU},warptile_db,float32,{LARGE},4096,,",
                   f"{GPU},warptile_db,float32,{THIN},128,8192,8192")  # fmt: skip
    registry = load_registry()
    cfg = validate({"variants": ["warptile_db"], "sizes": [1024, 1536, 2048, 4096],
                    "shapes": [[128, 4096, 4096], [4096, 128, 4096]], "tuned": path,
                    "tuned_gpu": GPU}, registry)  # fmt: skip
    p = plan.expand(apply_tuned(cfg, [], registry), registry, "sm_90")
    got = {(c.m, c.n, dict(c.params)["BN"], dict(c.params)["BK"], c.tuned_for)
           for c in p.runs["warptile_db"]}  # fmt: skip
    assert got == {
        (1024, 1024, 64, 16, "tuned at 1024x1024x1024"),
        (1536, 1536, 64, 16, "tuned at 1024x1024x1024"),
        (2048, 2048, 256, 16, "tuned at 4096x4096x4096"),
        (4096, 4096, 256, 16, "tuned at 4096x4096x4096"),
        (128, 4096, 64, 8, "tuned at 128x8192x8192"),
        (4096, 128, 64, 16, "tuned at 1024x1024x1024"),
    }
    # the three instantiations are built, and no mixture of the rows' values
    assert sorted((dict(q)["BN"], dict(q)["BK"]) for _, q in p.instantiations) == [
        (64, 8), (64, 16), (256, 16)]  # fmt: skip


@pytest.mark.parametrize(
    "rows, message",
    [
        ((f"{GPU},warptile_db,float32,{SMALL},1024,,", f"{GPU},warptile_db,float32,{LARGE},1024,1024,1024"),
         "lines 2, 3: 2 rows claim warptile_db float32 on 'NVIDIA H100 80GB HBM3' for the same "
         "shapes (tuned at: tuned at 1024x1024x1024, tuned at 1024x1024x1024)"),
        ((f"{GPU},warptile_db,float32,{SMALL},,,", f"{GPU},warptile_db,float32,{LARGE},4096,,"),
         "(tuned at: any shape, tuned at 4096x4096x4096)"),
        ((f"{GPU},warptile_db,float32,{SMALL},0,,",), "line 2: m '0' n '' k '' is not the shape"),
        ((f"{GPU},warptile_db,float32,{SMALL},1.5,,",), "line 2: m '1.5' n '' k '' is not the shape"),
        ((f"{GPU},warptile_db,float32,{SMALL},,128,128",), "line 2: n 128 / k 128 without m"),
    ],
)  # fmt: skip
def test_a_bad_tuning_shape_is_named_with_its_lines(tmp_path, rows, message):
    path = _ranged(tmp_path, *rows)
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(path, tuned_gpu=GPU), [], load_registry())
    assert message in str(err.value)


def test_a_recorded_run_tuned_by_range_agrees_with_the_nearest_rule_on_its_squares():
    """tests/data/h100-tuned-by-range (an H100 run whose table held ranges of m x n, the rule
    before rows held their tuning shape): on every square the nearest row (its tuning size, the
    columns m) is the one that run's range chose, so the square products run what they ran;
    its products with one small side ran a tuned row's instantiation too."""
    folder = ROOT / "tests" / "data" / "h100-tuned-by-range"
    table = tuning.read_tuned(folder / "tuned.csv")
    ranges = tuning.tuned_ranges(table, GPU, list(table.variant.unique()), load_registry(),
                                 str(folder / "tuned.csv"))  # fmt: skip
    timings = read_csv(folder / "timings.csv")
    tuned = timings[timings.variant.isin(list(ranges))]
    assert len(tuned) == 4 * 14  # four rungs x 14 shapes (deep_bf16, one instantiation: untuned)

    def instance(row):
        return "_".join([row["dtype"], *(f"{k}{v}" for k, v in row["params"].items()
                                         if k != "dtype")])  # fmt: skip

    for r in tuned.itertuples():
        assert r.verification == "PASS"
        assert r.instance in {instance(row) for row in ranges[r.variant]}, r
        if r.m == r.n == r.k:
            assert r.instance == instance(tuning.nearest(ranges[r.variant], r.dtype, r.m, r.n, r.k))
    w = tuned[tuned.variant == "warptile_db"].set_index("m")
    # 1024 x 1024 (m*n 1048576) and 2048 x 2048 (4194304) fell in different ranges of m x n
    assert w.loc[1024, "tuned_for"] == "m*n < 2097152"
    assert w.loc[2048, "tuned_for"] == "2097152 <= m*n < 8388608"
    assert (
        tuning.nearest(ranges["warptile_db"], "float32", 1024, 1024, 1024)["shape"] == (1024,) * 3
    )
    assert (
        tuning.nearest(ranges["warptile_db"], "float32", 2048, 2048, 2048)["shape"] == (2048,) * 3
    )


def test_another_models_tuning_is_named_in_every_row_it_chose(tmp_path):
    """On an H200 with a table tuned on an H100 only: refused with the tuned_gpu that borrows
    the H100's; borrowed, every tuned rung's rows say whose tuning chose their instantiation,
    the ranged rung's after its shape (LARGE at 4096, SMALL at 1024), the rung tuned once per
    type with the model alone; the untuned cuBLAS rows nothing."""
    from mmbench.plan.config import validate

    path = _ranged(tmp_path, f"{GPU},warptile_db,float32,{SMALL},1024,1024,1024",
                   f"{GPU},warptile_db,float32,{LARGE},4096,,",
                   f"{GPU},coarsened,float32,TILE=32 COARSEN=4,,,")  # fmt: skip
    registry = load_registry()
    here = [dict(name="NVIDIA H200")]
    raw = {"variants": ["warptile_db", "coarsened", "cublas"], "sizes": [1024, 4096],
           "tuned": path}  # fmt: skip
    with pytest.raises(ConfigError) as err:
        apply_tuned(validate(raw, registry), here, registry)
    assert "for 'NVIDIA H200'" in str(err.value)
    assert f'--config "tuned_gpu={GPU}"' in str(err.value)
    cfg = validate(raw | {"tuned_gpu": GPU}, registry)
    p = plan.expand(apply_tuned(cfg, here, registry), registry, "sm_90")
    got = {(c.variant, c.m, c.tuned_for) for runs in p.runs.values() for c in runs}
    assert got == {
        ("warptile_db", 1024, f"tuned on {GPU}; tuned at 1024x1024x1024"),
        ("warptile_db", 4096, f"tuned on {GPU}; tuned at 4096x4096x4096"),
        ("coarsened", 1024, f"tuned on {GPU}"),
        ("coarsened", 4096, f"tuned on {GPU}"),
        ("cublas", 1024, ""),
        ("cublas", 4096, ""),
    }
    # on the model the table was tuned on, the rows say the shape alone, as before
    p = plan.expand(apply_tuned(cfg, [dict(name=GPU)], registry), registry, "sm_90")
    assert {c.tuned_for for c in p.runs["coarsened"]} == {""}


def test_a_row_whose_params_and_instance_disagree_is_refused(tmp_path):
    """The row's params choose BM=128 but its instance names BM64: the params would run and
    the instance say otherwise (issue "what a new user hit", item 2).  The same row with the
    instance the params choose (written by hand from the registry's declaration order: dtype
    first, then BM BN BK WM WN WNITER TM TN) is taken."""
    params = "BM=128 BN=128 BK=16 WM=64 WN=64 WNITER=1 TM=8 TN=4"
    named = "float32_BM64_BN128_BK16_WM64_WN64_WNITER1_TM8_TN4"
    table = tmp_path / "tuned.csv"
    table.write_text(
        f"gpu_name,variant,dtype,params,instance\nGPU X,warptile_db,float32,{params},{named}\n"
    )
    with pytest.raises(ConfigError) as err:
        apply_tuned(_cfg(table, tuned_gpu="GPU X"), [], load_registry())
    assert str(err.value) == (
        f"config key 'tuned': {table}, line 2: warptile_db's params '{params}' (dtype float32) "
        "choose float32_BM128_BN128_BK16_WM64_WN64_WNITER1_TM8_TN4, but its instance says "
        f"{named}; valid: a row whose params and instance name the same instantiation (re-tune, "
        "or correct one of the two)"
    )
    right = named.replace("BM64", "BM128")
    table.write_text(
        f"gpu_name,variant,dtype,params,instance\nGPU X,warptile_db,float32,{params},{right}\n"
    )
    out = apply_tuned(_cfg(table, tuned_gpu="GPU X"), [], load_registry())
    assert out["params"]["warptile_db"]["BM"] == [128]


def test_a_peer_without_tuned_rows_runs_the_builds_the_config_gives():
    """CUTLASS's builds are lines beside cuBLAS: kernels/tuned.csv holds none of them for the
    H100, and a run of them beside a tuned rung pins the rung alone; the peer keeps the builds
    the config gives (the shapes preset's two: BN 128, cooperative)."""
    cfg = dict(variants=["warptile_db", "cutlass_bf16"], tuned=str(ROOT / "kernels" / "tuned.csv"),
               tuned_gpu="NVIDIA H100 80GB HBM3",
               params={"cutlass_bf16": {"dtype": ["bfloat16"], "BN": [128], "SCHEDULE": [1]}})  # fmt: skip
    out = tuning.apply_tuned(cfg, [], load_registry())
    assert "warptile_db" in out["params"]  # pinned to its tuned rows
    assert out["params"]["cutlass_bf16"] == cfg["params"]["cutlass_bf16"]
    builds = plan.buildable(load_registry()["cutlass_bf16"], out, "sm_90")[0]
    # BN 128 (CLUSTER 1, the constraint), cooperative, either scheduler: two builds
    assert sorted(b["SCHEDULER"] for b in builds) == [1, 2]

"""The notebook's tools: lab/gpu.sh dispatches every stage lab/README.md lists (the dispatch of
an unknown stage is refused before anything runs), and the launch-paths benchmark takes the
rungs it should."""

from __future__ import annotations

import io
import re
import subprocess
import sys

from .conftest import LAB, ROOT

DATA = ROOT / "tests" / "data"


def _table_names(text: str) -> set[str]:
    return {m.split()[0] for m in re.findall(r"^\| `([^`]+)`", text, re.MULTILINE)}


def test_the_notebook_lists_every_gpu_stage():
    listed = _table_names((LAB / "README.md").read_text())
    gpu = (LAB / "gpu.sh").read_text()
    stages = set(re.findall(r"^([a-z-]+)\)$", gpu, re.MULTILINE))  # written in gpu.sh
    assert {"tests", "main", "rebuild-check", "builds", "memcheck"} <= stages
    scripts = {p.stem for p in (LAB / "gpu").glob("*.sh")}  # lab/gpu/<stage>.sh
    for stage in scripts:
        assert re.search(rf"\b{stage}\b[^\n]*\) exec", gpu), f"gpu.sh does not run {stage}"
    missing = (stages | scripts) - listed
    assert not missing, sorted(missing)


def test_an_unknown_stage_is_refused_with_the_valid_ones(tmp_path):
    out = subprocess.run(
        ["bash", str(LAB / "gpu.sh"), "no-such-stage", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=ROOT, env={"PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert out.returncode == 2
    assert "unknown stage no-such-stage; valid: tests, main, rebuild-check, builds" in out.stderr


def test_the_launch_paths_benchmark_takes_the_presets_cupy_launched_rungs():
    """lab/benchmarks/launch_paths.py compares the batches' two launch paths where there are two:
    the ladder's rungs that CuPy launches, the ten from tiled_guarded to wgmma_tf32 in the
    registry's order (counted by hand in kernels/registry.yaml: the rungs after them take
    tensor maps or clusters and launch through the driver everywhere; the cuBLAS and cuBLASLt
    references call their libraries), then the three Triton builds (pointers, integers and
    workspaces: kernels/registry.yaml's triton entries)."""
    import importlib.util

    from mmbench.core.registry import load_registry

    spec = importlib.util.spec_from_file_location(
        "launch_paths", LAB / "benchmarks" / "launch_paths.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.cupy_launched(str(ROOT / "config/presets/ladder.yaml"), load_registry()) == [
        "tiled_guarded", "coarsened", "blocktile_1d", "blocktile_2d", "blocktile_vec", "warptile",
        "warptile_db", "mma_tf32", "mma_f64", "wgmma_tf32", "triton_bf16", "triton_tf32",
        "triton_fp8"]  # fmt: skip


def test_the_index_lists_every_entry():
    """lab/README.md's index is what lab/index.py writes from the entries: one line each."""
    out = subprocess.run([sys.executable, str(LAB / "index.py"), "--check"], capture_output=True,
                         text=True)  # fmt: skip
    assert out.returncode == 0, out.stdout
    entries = sorted((LAB / "entries").glob("*.md"))
    index = (LAB / "README.md").read_text()
    assert all(f"(entries/{e.name})" in index for e in entries) and len(entries) > 50


def test_every_entry_states_its_fields():
    """Each entry opens with its title and the fields CONTRIBUTING.md names, each one line."""
    fields = ("question", "date", "GPU", "commits", "data", "command", "verdict")
    for entry in sorted((LAB / "entries").glob("*.md")):
        head = entry.read_text().split("\n\n", 2)[:2]
        assert head[0].startswith("# "), entry.name
        named = [line.split(":", 1)[0].removeprefix("- ") for line in head[1].splitlines()]
        missing = [f for f in fields if f not in named]
        assert not missing, (entry.name, missing)


def test_the_shapes_preset_in_two_parts_runs_each_variant_once(tmp_path):
    """lab/shapes_parts.py: the FP32, FP64 and bfloat16 classes in one part, TF32 and FP8 in
    the other, hold every variant of config/presets/shapes.yaml once (cuBLAS's FP32, bfloat16
    and FP64 job in the first); a cut that would split cuBLAS's job is refused; merging the two
    halves of a recorded run's runs/ gives its files back and its timings table's rows, and a
    file in both is refused."""
    import shutil

    import pandas as pd
    import pytest
    import yaml

    sys.path.insert(0, str(LAB))
    import shapes_parts

    from mmbench.core.registry import load_registry

    preset = yaml.safe_load((ROOT / "config/presets/shapes.yaml").read_text())
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    one = shapes_parts.cut(preset, registry, {"fp32", "fp64", "bf16"})["variants"]
    two = shapes_parts.cut(preset, registry, {"tf32", "fp8"})["variants"]
    assert sorted(one + two) == sorted(preset["variants"])
    assert "cublas" in one and {"warptile_db", "ws_f64", "skinny_bf16"} <= set(one)
    assert {"cublas_tf32_tn", "cublaslt_fp8", "skinny_fp8"} <= set(two)
    with pytest.raises(SystemExit, match="cublas runs float32, bfloat16, float64 in one job"):
        shapes_parts.cut(preset, registry, {"fp32", "fp64", "tf32"})
    recorded = ROOT / "tests/data/h200-ladder/results/ladder/runs"
    files = sorted(recorded.iterdir())
    halves = [tmp_path / "a", tmp_path / "b"]
    timings = pd.read_csv(recorded.parent / "tables" / "timings.csv.xz", low_memory=False)
    for i, half in enumerate(halves):
        (half / "runs").mkdir(parents=True)
        (half / "tables").mkdir()
        mine = set(sorted({f.name.split(".")[0] for f in files})[i::2])  # whole variants
        for f in files:
            if f.name.split(".")[0] in mine:
                shutil.copy2(f, half / "runs" / f.name)
        timings[timings.variant.isin(mine)].to_csv(half / "tables" / "timings.csv", index=False)
    assert shapes_parts.merge(tmp_path / "whole", halves) == len(files)
    assert sorted(p.name for p in (tmp_path / "whole/runs").iterdir()) == [f.name for f in files]
    # the halves' rows together are the recorded table's (render_only reads them)
    whole = pd.read_csv(tmp_path / "whole/tables/timings.csv", low_memory=False)
    assert len(whole) == len(timings) and set(whole.variant) == set(timings.variant)
    with pytest.raises(SystemExit, match="one part each"):
        shapes_parts.merge(tmp_path / "again", [halves[0], halves[0]])


def test_the_shapes_shares_split_by_alignment():
    """lab/benchmarks/shapes_aligned.py on the recorded sweep of seed 726870 (FP32, FP64, BF16):
    19 of each class's 64 products have three sides that are multiples of 8 (counted with awk
    over the file's last three columns); the least shares are the run's own shapes table's
    minima, each on the side it falls (FP32 24.0% at 30 x 169 x 470, not aligned; BF16 87.4%
    at 1400^3, aligned)."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import pandas as pd
    import shapes_aligned

    sweep = pd.read_csv(LAB / "data/h200-shapes-726870/fp32_fp64_bf16-sweep.csv.xz")
    got = shapes_aligned.split(sweep).set_index(["precision", "sides"])
    for prec in ("FP32", "FP64", "BF16"):
        assert got.loc[(prec, "multiples of 8"), "products"] == 19
        assert got.loc[(prec, "not"), "products"] == 45
    assert got.loc[("FP32", "not"), "least %"] == 24.0
    assert got.loc[("BF16", "multiples of 8"), "least %"] == 87.4


def test_rung_choice_keeps_every_rung_below_the_floor_as_the_plan_does():
    """lab/benchmarks/rung_choice.py's margin with --floor-ms: at a least prediction of 10 us
    under a 20 us floor both rungs run, though 13 us is more than 1.25 x 10; without the floor
    only the least; above the floor 36 us is within 1.25 x 30 = 37.5 and 40 us is not."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import rung_choice

    tiny = {"a": 0.010, "b": 0.013}
    assert sorted(rung_choice.kept(tiny, 0.25, 0.02)) == ["a", "b"]
    assert rung_choice.kept(tiny, 0.25, None) == ["a"]
    assert sorted(rung_choice.kept({"a": 0.030, "b": 0.036}, 0.25, 0.02)) == ["a", "b"]
    assert rung_choice.kept({"a": 0.030, "b": 0.040}, 0.25, 0.02) == ["a"]


def test_keep_calibration_finds_the_kept_rows_the_fit_and_refuses_half_its_arguments():
    """lab/keep_calibration.py without arguments: the kept H200 rows (583) and H100 rows (501)
    are the fit of their recorded runs (exit 0, as tests/test_model.py checks); TIMINGS
    without NAME is refused (exit 2)."""
    tool = [sys.executable, str(LAB / "keep_calibration.py")]
    ok = subprocess.run(tool, capture_output=True, text=True, cwd=ROOT)
    assert ok.returncode == 0
    assert "NVIDIA H200 rows (583) are the fit" in ok.stdout
    assert "NVIDIA H100 80GB HBM3 rows (501) are the fit" in ok.stdout
    half = subprocess.run([*tool, "x.csv"], capture_output=True, text=True, cwd=ROOT)
    assert half.returncode == 2 and "give both TIMINGS and NAME" in half.stderr


def test_keep_calibration_to_writes_the_refit_table_there_and_keeps_nothing(tmp_path):
    """lab/keep_calibration.py TIMINGS --to T (the calibrate stage's merged table): T holds the
    kept table's H200 lines verbatim and the H100's 501 rows fitted again with TIMINGS (here a
    recorded H100 run, written out plain); kernels/calibration.csv and the recorded runs are
    left as they were; NAME beside --to is refused (exit 2)."""
    import lzma

    tool = [sys.executable, str(LAB / "keep_calibration.py")]
    timings = tmp_path / "calibrate_timings.csv"
    timings.write_bytes(lzma.decompress((DATA / "h100-calibrate" / "fp8.csv.xz").read_bytes()))
    table = ROOT / "kernels" / "calibration.csv"
    kept_before = table.read_bytes()
    runs_before = sorted(p.name for p in (DATA / "h100-calibrate").iterdir())
    out = tmp_path / "merged.csv"
    ran = subprocess.run([*tool, str(timings), "--to", str(out)], capture_output=True, text=True,
                         cwd=ROOT)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    assert table.read_bytes() == kept_before
    assert sorted(p.name for p in (DATA / "h100-calibrate").iterdir()) == runs_before
    h200 = [line for line in kept_before.decode().splitlines() if line.startswith("NVIDIA H200,")]
    got = out.read_text().splitlines()
    assert [line for line in got if line.startswith("NVIDIA H200,")] == h200 and len(h200) == 583
    assert sum(line.startswith("NVIDIA H100 80GB HBM3,") for line in got) == 501
    both = subprocess.run([*tool, str(timings), "x", "--to", str(out)], capture_output=True,
                          text=True, cwd=ROOT)  # fmt: skip
    assert both.returncode == 2 and "--to takes TIMINGS and no NAME" in both.stderr


def test_keep_calibration_to_with_an_earlier_run_fits_both(tmp_path):
    """--with EARLIER beside TIMINGS --to T (the calibrate stage's CAL_WITH): a recorded H100
    run cut in two by rung, one half as TIMINGS and the other with --with, gives the table the
    whole run gives as one TIMINGS; --with without --to is refused (exit 2)."""
    import lzma

    import pandas as pd

    tool = [sys.executable, str(LAB / "keep_calibration.py")]
    text = lzma.decompress((DATA / "h100-calibrate" / "fp8.csv.xz").read_bytes()).decode()
    whole = pd.read_csv(io.StringIO(text))
    first = whole.variant == sorted(set(whole.variant))[0]
    assert 0 < first.sum() < len(whole)
    (tmp_path / "whole.csv").write_text(text)
    whole[first].to_csv(tmp_path / "a.csv", index=False)
    whole[~first].to_csv(tmp_path / "b.csv", index=False)
    for args, out in ((["whole.csv"], "one.csv"), (["a.csv", "--with", "b.csv"], "two.csv")):
        ran = subprocess.run([*tool, *args, "--to", out], capture_output=True, text=True,
                             cwd=tmp_path)  # fmt: skip
        assert ran.returncode == 0, ran.stderr
    assert "fitted with a.csv, b.csv" in ran.stdout
    assert (tmp_path / "one.csv").read_text() == (tmp_path / "two.csv").read_text()
    alone = subprocess.run([*tool, "a.csv", "--with", "b.csv"], capture_output=True, text=True,
                           cwd=tmp_path)  # fmt: skip
    assert alone.returncode == 2 and "--with goes with --to" in alone.stderr


def test_keep_calibration_to_with_another_models_run_names_each_file(tmp_path):
    """TIMINGS of one GPU model --with a run of another: refused (exit 1) before anything is
    written, the message naming each file and the models it holds (the H100's recorded FP8 run,
    the H200's recorded streamk_f64 run)."""
    import lzma

    tool = [sys.executable, str(LAB / "keep_calibration.py")]
    for src, name in (("h100-calibrate/fp8.csv.xz", "h100.csv"),
                      ("h200-calibrate/streamk_f64_small_tiles.csv.xz", "h200.csv")):  # fmt: skip
        (tmp_path / name).write_bytes(lzma.decompress((DATA / src).read_bytes()))
    ran = subprocess.run([*tool, "h200.csv", "--with", "h100.csv", "--to", "t.csv"],
                         capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 1 and not (tmp_path / "t.csv").exists()
    assert "h200.csv holds ['NVIDIA H200']" in ran.stderr
    assert "h100.csv holds ['NVIDIA H100 80GB HBM3']" in ran.stderr


def test_short_whole_launches_in_the_fit_mend_streamk_fp8s_choice_at_held_out_products():
    """lab/benchmarks/fit_short_launches.py: the kept H100 calibrate run of streamk_fp8 alone,
    then with one every-build run of GPU-9794ec23 added, choosing at the other run's products
    (measured time of the choice over the fastest there): at 755700's four products 1.039,
    1.024, 1.112 and 1.020 (geometric mean 1.048), then 1.000 at all but 5017 x 78 x 4459
    (1.020; geometric mean 1.005); at 726870's seven 1.039 then 1.032 (308 x 179 x 2620
    1.049 -> 1.000, the others as before)."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import fit_short_launches as f
    from scipy.stats import gmean

    from mmbench.core.registry import load_registry

    got = {}
    for held, (before, after, _) in f.held_out(
        load_registry(ROOT / "kernels" / "registry.yaml")
    ).items():
        got[held] = (round(gmean(list(before.values())), 3), round(gmean(list(after.values())), 3))
        if held == "755700, 64-row":
            assert list(before.values()) == [1.039, 1.024, 1.112, 1.020]
            assert list(after.values()) == [1.0, 1.0, 1.0, 1.020]
        else:
            assert (before[308, 179, 2620], after[308, 179, 2620]) == (1.049, 1.0)
    assert got == {"755700, 64-row": (1.048, 1.005), "726870 misses": (1.039, 1.032)}


def test_choice_model_reads_a_kept_calibrate_run():
    """lab/benchmarks/choice_model.py on a run as lab/keep_calibration.py keeps it (no
    kernel_gflops column: the rates from 2mnk over kernel_ms): skinny_simt's and streamk_f64's
    H100 run gives the entry's figures, the fit's choice 0.949 of the fastest (least 0.788) and
    the nearest product's 0.948 (least 0.745), over 44 products."""
    tool = [sys.executable, str(LAB / "benchmarks" / "choice_model.py"),
            str(DATA / "h100-calibrate" / "skinny_simt_streamk_f64.csv.xz")]  # fmt: skip
    ran = subprocess.run(tool, capture_output=True, text=True, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr
    assert "timed    geometric mean 0.949 of the best, least 0.788" in ran.stdout
    assert "nearest  geometric mean 0.948 of the best, least 0.745, at the best at 17 of 44" in (
        ran.stdout)  # fmt: skip


def test_choice_every_scores_the_kept_calibration_at_an_every_run():
    """lab/benchmarks/choice_every.py on the run of every warptile_ring build at six FP32
    misses (entry "warptile_ring: warp tiles on a cp.async ring"): the fastest build's shares of
    cuBLAS are the entry's table (64.4% at 5624 x 77 x 182, 87.8% at 9911 x 25 x 6683), and
    the kept H100 rows choose within 2.4% of the fastest build at each of the six."""
    data = LAB / "data" / "h100-warptile-ring" / "every-6-fp32-misses.csv.xz"
    tool = [sys.executable, str(LAB / "benchmarks" / "choice_every.py"), str(data),
            "warptile_ring", "float32", "NVIDIA H100 80GB HBM3"]  # fmt: skip
    ran = subprocess.run(tool, capture_output=True, text=True, cwd=ROOT)
    assert ran.returncode == 0, ran.stderr
    assert "5624 x 77 x 182: " in ran.stdout and "(the fastest build 64.4%)" in ran.stdout
    assert "(the fastest build 87.8%)" in ran.stdout
    assert "warptile_ring at the 6 products: 0.988 of the fastest build (least 0.976)" in (
        ran.stdout)  # fmt: skip


def test_keep_calibration_refuses_a_refit_at_other_multiprocessors():
    """The first merged table of skinny_simt's and streamk_f64's H100 run (entry "skinny_simt and
    streamk_f64 calibrated on an H100") had every H100 row at 264 multiprocessors where the kept
    rows have 132; lab/keep_calibration.py now refuses such a refit, naming both, and lets one
    at the kept 132 through (a first calibration of a model, nothing kept, too)."""
    import importlib.util

    import pandas as pd

    spec = importlib.util.spec_from_file_location("keep_calibration", LAB / "keep_calibration.py")
    kc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kc)
    kept = pd.read_csv(ROOT / "kernels" / "calibration.csv")
    h100 = kept[kept.gpu_name == kc.H100]
    assert set(h100.sms) == {132}
    assert kc.same_multiprocessors(kept, kc.H100, {132}) is None
    why = kc.same_multiprocessors(kept, kc.H100, {264})
    assert why is not None and "[264] multiprocessors where the kept rows have [132]" in why
    assert kc.same_multiprocessors(kept[kept.gpu_name != kc.H100], kc.H100, {132}) is None


def test_kloop_blocks_splits_the_math_loop_at_labels_and_branches():
    """lab/benchmarks/kloop_blocks.py on a listing written by hand (entry_code's form: labels
    renamed L0, L1, ...): an outer loop with no math and an inner one with two FFMAs; the
    inner loop's blocks are its label's two instructions, the copy the branch skips, and the
    FFMAs with the branch back."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    from kloop_blocks import loop_blocks

    code = [
        "L0:",
        "MOV R1, RZ ;",
        "L1:",
        "IADD3 R1, R1, 0x1, RZ ;",
        "@P0 BRA `(L2) ;",
        "LDGSTS.E [R2], desc[UR4][R4.64] ;",
        "L2:",
        "FFMA R3, R4, R5, R3 ;",
        "FFMA R6, R4, R5, R6 ;",
        "@P1 BRA `(L1) ;",
        "@P2 BRA `(L0) ;",
        "EXIT ;",
    ]
    blocks = loop_blocks(code)
    assert [(label, len(body)) for label, body in blocks] == [("L1", 2), ("", 1), ("L2", 3)]
    assert blocks[2][1][-1] == "@P1 BRA `(L1) ;"


def test_kloop_blocks_takes_a_build_or_a_cubin_and_its_entry():
    """kloop_blocks.py reads a registry build or a cubin built elsewhere (--cubin with
    --symbol); a cubin without its entry's name is refused before anything is read."""
    tool = LAB / "benchmarks" / "kloop_blocks.py"
    for args in (["--cubin", "k.cubin"], ["--symbol", "k"], []):
        run = subprocess.run([sys.executable, str(tool), *args], capture_output=True, text=True)
        assert run.returncode == 2
        assert "give VARIANT and INSTANCE, or --cubin and --symbol" in run.stderr


def test_choice_across_scores_the_rungs_both_models_hold():
    """choice_across.py scores the rungs whose calibration both GPU models hold and whose
    launch takes no stream-K grid: read off kernels/calibration.csv by hand, persistent_fp8,
    skinny_dot, skinny_simt, tmastore_fp8, warptile_db, warptile_ring and ws_f64 (streamk_f64,
    streamk_fp8 and skinny_fp8 are held by both but take a grid); on the H100's runs only those
    it has calibrate runs of."""
    run = subprocess.run([sys.executable, str(LAB / "benchmarks" / "choice_across.py")],
                         capture_output=True, text=True, check=True)  # fmt: skip
    lines = run.stdout.splitlines()
    assert lines[0].endswith("persistent_fp8, skinny_dot, skinny_simt, tmastore_fp8, warptile_db, "
                             "warptile_ring, ws_f64")  # fmt: skip
    sections: dict[str, list[str]] = {}
    for line in lines[1:]:
        if line.startswith("on "):
            sections[line.split("'s")[0][3:]] = rungs = []
        elif line.startswith("  ") and not line.startswith("    "):
            rungs.append(line.split(",")[0].strip())
    both = ["persistent_fp8 float8_e4m3", "skinny_dot float32", "skinny_dot float64",
            "skinny_simt float32", "skinny_simt float64", "tmastore_fp8 float8_e4m3"]  # fmt: skip
    assert sections == {"NVIDIA H200": [*both, "warptile_db float32", "warptile_ring float32",
                                        "ws_f64 float64"],
                        "NVIDIA H100 80GB HBM3": [*both, "warptile_ring float32"]}  # fmt: skip


def test_a_prior_on_the_fixed_cost_as_its_entry_reads(tmp_path):
    """lab/benchmarks/fixed_prior.py at w = 0 (the kept fit) and 0.1, the entry "A prior on each
    build's fixed cost: tried on the recorded runs, not kept": rows with a fixed cost of 0, 126
    and 8 of 1,084; held-out |error| median 0.069 and 0.067 over 1,257 rows; warptile_db's
    choice among every build at the 14 FP32 products 0.949 (least 0.835, the figures of the
    entry "FP32's misses at seed 755700") and 0.954; skinny_simt's least 0.776 and 0.829."""
    sys.path.insert(0, str(LAB / "benchmarks"))
    import fixed_prior as f

    from mmbench.core.registry import load_registry
    from mmbench.plan.tuning import read_calibration

    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    runs = [f.read(p, m) for p, m in f.HELD_OUT]
    got = {}
    for w, tmp in ((0.0, "w0.csv"), (0.1, "w01.csv")):
        cal = f.fitted(registry, w)
        table = tmp_path / tmp
        cal.to_csv(table, index=False)
        e = f.errors(registry, read_calibration(table), runs)
        every = {label.split(" ")[0]: got_ for label, got_, _ in f.choices(registry, table)}
        got[w] = (int((cal.fixed_us == 0).sum()), len(cal), len(e),
                  round(float(e.error.abs().median()), 3),
                  round(f.gmean(every["warptile_db"]), 3), round(min(every["warptile_db"]), 3),
                  round(min(every["skinny_simt"]), 3))  # fmt: skip
    assert got == {0.0: (126, 1084, 1257, 0.069, 0.949, 0.835, 0.776),
                   0.1: (8, 1084, 1257, 0.067, 0.954, 0.835, 0.829)}  # fmt: skip


def test_the_misses_tool_lists_the_standing_s_misses_with_their_recorded_limiters():
    """lab/misses.py: the products below 85% are those docs/ladder.md's shapes tables count
    (726870: FP32 9, TF32 4, FP8 10, FP64 2; 755700: 27, 1, 3 BF16, 12, 11), and where a
    recorded profile holds the very build, its limiter: at 18 x 152 x 2881 in FP64, ws_f64's
    128 x 64 build (4 stages) "compute-side (SM 7%, memory 5% of peak)" and cuBLAS's "memory-side
    (SM 16%, memory 18% of peak)", read by hand in the H200 profiles of
    lab/data/h200-misses-755700-split/ and lab/data/h200-streamk-f64/ (the last path of those
    that hold the row); FP8's cuBLASLt at 16 x 2254 x 3301 profiled at the product padded."""
    ran = subprocess.run([sys.executable, str(LAB / "misses.py")], capture_output=True,
                         text=True, cwd=ROOT)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    out = ran.stdout
    assert "## Seed 726870: 25 products below 85%" in out
    assert "## Seed 755700: 54 products below 85%" in out
    line = next(x for x in out.splitlines() if x.startswith("| FP64 | 18 x 152 x 2881 |"))
    cells = [c.strip() for c in line.strip("|").split(" | ")]
    share, rung, own, ref = cells[2], cells[3], cells[4], cells[5]
    assert share == "33.0" and rung == "ws_f64 BM=128 BN=64 WM=32 WN=64 STAGES=4 BLOCKS=2"
    assert own.startswith("compute-side (SM 7%, memory 5% of peak)")
    assert own.endswith("(H200, h200-misses-755700-split/ladder_profile.csv.gz)")
    assert ref.startswith("memory-side (SM 16%, memory 18% of peak)")
    assert ref.endswith("(H200, h200-streamk-f64/misses-755700-fp64-ladder_profile.csv.xz)")
    fp8 = next(x for x in out.splitlines() if x.startswith("| FP8 | 16 x 2254 x 3301 |"))
    assert "at 16 x 2256 x 3312, padded: " in fp8
    assert "lab/gpu.sh shapes OUT misses" in out

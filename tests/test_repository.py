"""What the repository holds (CONTRIBUTING.md): a product without dates, GPU serials or a run's
verdicts typed into it, reference docs of bounded length, a tracked tree and tests/data within
the sizes CONTRIBUTING.md states, and nothing in tests/data that no test reads."""

from __future__ import annotations

import re
import shutil
import subprocess
from types import SimpleNamespace

import pandas as pd
import pytest

from mmbench.core.schemas import read_table
from mmbench.report import standing

from .conftest import DATA, ROOT, copy_recorded, recorded_bytes
from .data_reads import DataReads

PRODUCT = ["README.md", "docs", "config", "workflow", "kernels"]
RECORDED_LADDER = DATA / "h200-ladder" / "results" / "ladder"
RECORDED_SWEEP = DATA / "h100-sweep" / "results" / "sweep"


def product_files():
    for name in PRODUCT:
        path = ROOT / name
        for f in [path] if path.is_file() else sorted(path.rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                yield f


def test_the_product_names_no_date_and_no_gpu_serial():
    """A run's date or its GPU's serial belongs in its lab entry, not in what users read."""
    found = []
    for f in product_files():
        try:
            text = f.read_text()
        except UnicodeDecodeError:
            continue
        for i, line in enumerate(text.splitlines(), 1):
            if re.search(r"20\d\d-\d\d-\d\d|GPU-[0-9a-f]{8}", line):
                found.append(f"{f.relative_to(ROOT)}:{i}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


def test_the_reference_docs_stay_reference_sized():
    assert len((ROOT / "docs" / "ladder.md").read_text().splitlines()) <= 600
    assert len((ROOT / "docs" / "method.md").read_text().splitlines()) <= 800


def _limits() -> tuple[int, int]:
    """The two byte limits CONTRIBUTING.md states: the tracked tree, then tests/data."""
    text = (ROOT / "CONTRIBUTING.md").read_text()
    tree = re.search(r"at most \*\*([\d,]+) bytes\*\* \(`git ls-files", text)
    data = re.search(r"tests/data at most \*\*([\d,]+) bytes\*\*", text)
    assert tree and data, "CONTRIBUTING.md states no size limits"
    return int(tree.group(1).replace(",", "")), int(data.group(1).replace(",", ""))


@pytest.mark.skipif(
    shutil.which("git") is None or not (ROOT / ".git").exists(), reason="not a git checkout"
)
def test_the_tracked_tree_and_tests_data_stay_within_the_stated_sizes():
    tree_limit, data_limit = _limits()
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    names = [n for n in files.stdout.decode().split("\0") if n and (ROOT / n).is_file()]
    tree = sum((ROOT / n).stat().st_size for n in names)
    data = sum((ROOT / n).stat().st_size for n in names if n.startswith("tests/data/"))
    assert tree <= tree_limit, f"the tracked tree is {tree} bytes, above {tree_limit}"
    assert data <= data_limit, f"tests/data is {data} bytes, above {data_limit}"


def test_the_recorded_ladder_standing_is_the_recorded_runs():
    """workflow/resources/standing/ladder.csv is what the recorded ladder run gives, and its
    verdicts are those the run's own report said (lab entry of the H200 ladder run, six of ten
    targets met: FP32 at both sizes, BF16 at 8192, FP8 at both, FP64 at 4096)."""
    recorded = standing.read("ladder")
    met = {(p, s) for p, s, m in zip(recorded.precision, recorded["size"], recorded.met, strict=True) if m}  # fmt: skip
    assert met == {("FP32", 4096), ("FP32", 8192), ("BF16", 8192), ("FP8", 4096),
                   ("FP8", 8192), ("FP64", 4096)}  # fmt: skip
    timings = read_table(RECORDED_LADDER / "tables" / "timings.csv", "timings")
    made = standing.ladder_standing(timings)
    pd.testing.assert_frame_equal(made, recorded, check_dtype=False, atol=1e-4)
    assert standing.recorded_ladder()[1] == "H200"


def test_the_recorded_sweep_standing_is_the_recorded_sweeps():
    """workflow/resources/standing/sweep.csv is what the recorded sweep gives: 80 class-shape
    pairs (4 classes, 11 square sizes and 9 with one small side), every target met there."""
    recorded = standing.read("sweep")
    assert len(recorded) == 80 and recorded.met.all()
    timings = read_table(RECORDED_SWEEP / "tables" / "timings.csv", "timings")
    made = standing.sweep_standing(timings)
    pd.testing.assert_frame_equal(made.reset_index(drop=True), recorded, check_dtype=False)
    assert standing.recorded_sweep()[1] == "H100"


def test_the_docs_ladder_table_is_the_recorded_runs():
    """docs/ladder.md's standing section is what `python -m mmbench.report.standing ladder`
    writes from the recorded ladder run: typed by no one."""
    timings = read_table(RECORDED_LADDER / "tables" / "timings.csv", "timings")
    text = (ROOT / "docs" / "ladder.md").read_text()
    assert standing.with_section(text, standing.docs_section(timings)) == text
    assert "| FP32 | warptile_db | 50898 | 99.4 | 52545 | 103.1 |" in text


RECORDED_SHAPES = {seed: DATA / f"h200-shapes-{seed}" for seed in (726870, 755700)}


def test_the_docs_shapes_table_is_the_recorded_shapes_run():
    """docs/ladder.md's shapes section is what `python -m mmbench.report.standing shapes`
    writes from the recorded shapes runs, one table per seed (726870 and 755700: five classes
    each on H200s, their parts merged; the timings rows kept here with the 18 columns the
    shapes table reads, not a timings table): typed by no one."""
    text = (ROOT / "docs" / "ladder.md").read_text()
    sections = [
        standing.shapes_section(pd.read_csv(folder / "shapes-columns.csv.xz"), [seed])
        for seed, folder in RECORDED_SHAPES.items()
    ]
    together = "\n".join(sections)
    assert standing.with_section(text, together, standing.SHAPES_BEGIN, standing.SHAPES_END) == text
    # the lab entries' tables of those runs (seed 726870, BF16: "The shapes preset at seed
    # 726870 with skinny_simt and CUTLASS"; its FP32 and FP64: "skinny_dot, warptile_ring and
    # streamk_f64's small tiles calibrated on an H200, at seed 726870"; FP8 at both seeds: "FP8 at any
    # shape with an H200 calibration of every FP8 build"; seed 755700's FP32: "The shapes
    # preset at a second seed, 755700")
    assert "| BF16 | 64 | 174.4 | 95 | 89.8 | 1400 | tmastore_bf16 |" in sections[0]
    assert "| FP32 | 64 | 99.5 | 95 | 76.0 | 12367 x 98 x 10657 | warptile_db |" in sections[0]
    assert "| FP64 | 64 | 109.6 | 95 | 67.2 | 1327 x 69 x 31 | skinny_dot |" in sections[0]
    assert "| FP8 | 64 | 92.8 | 95 | 66.6 | 172 x 1843 x 7126 | persistent_fp8 |" in sections[0]
    assert "| FP8 | 64 | 90.3 | 95 | 66.3 | 77 x 5891 x 4397 | skinny_fp8 |" in sections[1]
    assert "met by BF16; missed by FP32, TF32, FP8, FP64." in sections[0]
    assert "| FP32 | 64 | 84.6 | 95 | 38.7 | 5624 x 77 x 182 | warptile_db |" in sections[1]
    # cutlass_f64's line in the FP64 row (lab entry "cutlass_f64 in the shapes preset at both
    # seeds": 81.7% and 8.6% at 18 x 152 x 2881)
    assert "| 64 | 81.7 | 8.6 | 18 x 152 x 2881 |" in sections[1]
    # three machines measured its three parts, a fourth cutlass_f64 alone, later, and a fifth
    # its FP8 part again; seed 726870's FP32 and FP64 were measured again on a fifth board,
    # with cuBLAS, whose bfloat16 rows stay those of the part that ran the BF16 rungs; a sixth
    # measured skinny_dot, warptile_ring and streamk_f64 there (22 + 40 + 85 configurations in
    # place of streamk_f64's 83 before: 2263 + 64 = 2327)
    assert "5 boards" in sections[1]
    assert "(6 boards), 2327 configurations" in sections[0]


def test_the_shapes_standing_reads_the_seed_from_the_manifests_and_refuses_other_runs(
    tmp_path, capsys
):
    """The draw seed comes from the run's manifests (config `draw`, as the shapes preset
    writes it); a run drawn from no seed (the main command's) is refused and docs stay."""
    import json

    # kept compressed in tests/data; written out plain in a folder of its own
    recorded = tmp_path / "recorded" / "cublas.manifest.json"
    recorded.parent.mkdir()
    recorded.write_bytes(recorded_bytes(RECORDED_LADDER / "runs" / "cublas.manifest.json"))
    manifest = json.loads(recorded.read_text())
    assert standing.draw_seeds([recorded]) == []
    for name, seed in (("a", 726870), ("b", 726870), ("c", 755700)):
        manifest["config"]["draw"] = {"count": 64, "seed": seed}
        (tmp_path / f"{name}.manifest.json").write_text(json.dumps(manifest))
    assert standing.draw_seeds(sorted(tmp_path.glob("*.manifest.json"))) == [726870, 755700]
    before = (ROOT / "docs" / "ladder.md").read_bytes()
    main = copy_recorded(DATA / "h100-main" / "results", tmp_path / "main")
    assert standing.main(["shapes", str(main)]) == 2
    assert "holds no shapes verdicts" in capsys.readouterr().err
    assert (ROOT / "docs" / "ladder.md").read_bytes() == before


def test_the_reads_of_parallel_workers_add_up_and_the_file_none_read_is_named(tmp_path):
    """A whole run of the README's test command fails on a file of tests/data that no test read
    (conftest.py, at the session's end).  Run in parallel, each worker sees only its own tests'
    reads: here two workers each read one of three files, and the controller, which read none,
    names the third from their dumps, and nothing once it too is read."""
    folder = tmp_path / "data"
    folder.mkdir()
    for name in ("a.csv", "b.csv", "sub/c.csv"):
        (folder / name).parent.mkdir(exist_ok=True)
        (folder / name).write_text("x\n")
    for worker, name in (("gw0", "a.csv"), ("gw1", "b.csv")):
        reads = DataReads(folder)
        reads.install()  # an audit hook stays for the process; idle outside begin()/end()
        reads.begin(SimpleNamespace(nodeid=f"test_{worker}", get_closest_marker=lambda _: None))
        (folder / name).read_text()
        reads.end()
        (folder / "sub" / "c.csv").read_text()  # after end(): no test's read
        reads.dump(tmp_path / f"{worker}.json")
    controller = DataReads(folder)
    assert controller.unread() == ["a.csv", "b.csv", "sub/c.csv"]
    for worker in ("gw0", "gw1"):
        controller.merge(tmp_path / f"{worker}.json")
    assert controller.reads == {"a.csv": {"test_gw0"}, "b.csv": {"test_gw1"}}
    assert controller.unread_message().splitlines()[1:] == ["sub/c.csv"]
    controller.reads["sub/c.csv"] = {"test_gw2"}
    assert controller.unread_message() is None


def test_recording_a_run_that_is_not_a_ladder_run_is_refused_and_writes_nothing(capsys):
    """The default experiment's results (no row at 4096 or 8192) and a folder without tables
    are refused by name; the recorded standing stays as it was."""
    before = standing.path("ladder").read_bytes()
    assert standing.main(["ladder", str(DATA / "h100-main" / "results")]) == 2
    assert "holds no ladder verdicts" in capsys.readouterr().err
    assert standing.main(["ladder", str(DATA / "no-such-run")]) == 2
    assert "no-such-run/tables/timings.csv: missing" in capsys.readouterr().err
    assert standing.main(["ladder"]) == 2
    assert standing.path("ladder").read_bytes() == before


def test_the_shapes_section_counts_the_boards_and_says_when_a_variant_spans_two():
    """Seed 755700's run came from five boards, each variant measured on one (its three parts'
    entry, cutlass_f64's and the FP8 part measured again); a variant whose rows came from two boards takes that claim
    away."""
    t = pd.read_csv(RECORDED_SHAPES[755700] / "shapes-columns.csv.xz")
    assert "(5 boards, each variant measured on one)" in standing.shapes_section(t, [755700])
    split = t.copy()
    cublas = split.index[split.variant == "cublas"]
    split.loc[cublas[: len(cublas) // 2], "gpu_uuid"] = "GPU-another-board"
    section = standing.shapes_section(split, [755700])
    assert "(6 boards)" in section and "each variant measured on one" not in section

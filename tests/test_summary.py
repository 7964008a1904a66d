"""The summary, rendered from real recorded results (no GPU needed)."""

import pandas as pd
import pytest

from mmbench.core.schemas import read_table
from mmbench.report import report_tables
from mmbench.report.summary import render, significant

from .conftest import DATA, MAIN, cell_rows, read_csv


def test_seed_003_shape_from_the_recorded_main_command():
    timings = read_csv(DATA / "h100-e4b" / "timings.csv")
    refused = pd.DataFrame(
        [dict(variant="tiled_unguarded", reason="m % tile == 0 and ... fails")] * 2
    )
    txt, md = render(timings, refused)
    head = txt.splitlines()[0]
    assert head.startswith("Kernel time, ms (GFLOPS)")
    cols = txt.splitlines()[1].split()
    assert cols[:3] == ["8000", "10000", "12000"]
    lines = txt.splitlines()
    line = next(x for x in lines if x.startswith("tiled_unguarded"))
    assert line.split()[1:3] == ["TILE=16", "pageable"]  # one row per host-memory mode
    assert "--" not in line.split()[3:9]  # 16x16 ran at 8000, 10000 and 12000
    pinned = lines[lines.index(line) + 1].split()
    assert pinned[0] == "pinned"
    line32 = lines[lines.index(line) + 2].split()
    assert line32[:2] == ["TILE=32", "pageable"] and line32[4] == "--"  # 10000 refused (seed 003)
    assert "cublas" in txt
    assert "0 unexpected" in txt
    assert "NVIDIA H100" in txt
    assert md.startswith("### Kernel time") and "| variant | params |" in md
    assert "| coarsened | TILE=32 COARSEN=4 |" in md


def test_fail_cells_and_tally_from_the_recorded_default_run():
    timings = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    txt, _ = render(timings)
    nu = next(x for x in txt.splitlines() if x.startswith("naive_unguarded"))
    cells = nu.split("  ")
    assert sum("FAIL" in c for c in cells) == 1  # 641, not a multiple of 16
    assert "FAIL as expected" in txt


def test_unexpected_failure_is_called_out():
    timings = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    broken = timings.copy()
    i = broken.index[(broken.variant == "tiled_guarded")][0]
    broken.loc[i, "verification"] = "FAIL"
    broken.loc[i, "first_mismatches"] = "0:0: 1 - 2 = -1"
    txt, _ = render(broken)
    assert "1 unexpected" in txt and "UNEXPECTED FAIL: tiled_guarded" in txt


def test_every_cell_is_one_configuration_its_time_and_rate_together():
    """A cell's GFLOPS is its own time's rate (2 n^3 / ms): no cell mixes memory modes."""
    import re

    timings = read_csv(DATA / "h100-e4b" / "timings.csv")
    assert timings.memory.nunique() == 2
    txt, _ = render(timings)
    table = txt.split("\n\n")[0].splitlines()
    sizes = [int(x) for x in table[1].split()]
    checked = 0
    for line in table[3:]:
        cells = re.split(r"\s{2,}", line.strip())[-len(sizes) :]
        for n, cell in zip(sizes, cells, strict=True):
            got = re.match(r"([0-9.]+) \(([0-9]+)\)", cell)
            if got:
                ms, rate = float(got[1]), float(got[2])
                assert rate == pytest.approx(2 * n**3 / (ms * 1e-3) / 1e9, rel=2e-3), (line, n)
                checked += 1
    assert checked > 50


TIMINGS = MAIN / "tables" / "timings.csv"


def test_kernel_times_shows_pageable_and_pinned_apart():
    t = read_table(TIMINGS, "timings")
    out = report_tables.kernel_times(t)
    cublas = out[out.variant == "cublas"].set_index("memory")
    # the figures for h100-main: cuBLAS at 640 took 0.0726 ms (7218 GFLOP/s) from
    # pageable memory, 0.0306 ms (17111) from pinned; the table used to show only the faster
    assert cublas.loc["pageable", "640"] == "0.07264 (7218)"
    assert cublas.loc["pinned", "640"] == "0.03064 (17111)"


@pytest.mark.parametrize(
    "folder", [MAIN, DATA / "h100-e3c" / "results" / "e3c", DATA / "h100-e3d" / "results" / "e3d"]
)
def test_every_number_of_the_pivot_tables_is_one_configuration(folder):
    t = read_table(folder / "tables" / "timings.csv", "timings")
    for make in (report_tables.kernel_times,):
        made = make(t)
        cells = 0
        for cell, rows in cell_rows(t, made):
            assert len(rows) == 1, (cell, len(rows))
            r = rows.iloc[0]
            assert cell.startswith(significant(r.kernel_ms)), (cell, r.kernel_ms)
            assert f"({r.kernel_gflops:.0f})" in cell
            cells += 1
        assert cells > 50


def test_each_summary_cell_is_its_own_rows_time_where_a_variant_has_two_instantiations():
    """The FP32 ladder subset recorded on an H200 (tests/data/h200-fp32-serpentine): warptile_db
    in two instantiations (one for 1-1000 x 1100 x 37, one for 4096-8192) above cuBLAS.  Under
    pandas 2.2 and 3.0 (the GPU machine's 3.0.6) the summary gave cuBLAS's 4096 and 8192 cells
    to warptile_db's second row and warptile_db's to cuBLAS (the table's rows built in one order
    and labelled in another): each cell is checked against its own row of the recorded table."""
    import re

    timings = read_csv(DATA / "h200-fp32-serpentine" / "timings.csv")
    txt, _ = render(timings)
    table = txt.split("\n\n")[0].splitlines()
    assert table[0].endswith("float32, int09 inputs, burst load")
    shapes = table[1].split()
    part = timings[(timings.distribution == "int09") & (timings.load == "burst")]
    part = part.assign(params=part.params.fillna("-"))
    variant, checked = None, 0
    for line in table[3:]:
        if not line.startswith(" "):
            variant = line.split()[0]
        params = "-" if variant == "cublas" else re.search(r"(BM=.*TN=\d+)", line)[1]
        cells = re.split(r"\s{2,}", line.strip())[-len(shapes) :]
        for shape, cell in zip(shapes, cells, strict=True):
            m, n, k = (int(x) for x in (shape.split("x") if "x" in shape else [shape] * 3))
            rows = part[(part.variant == variant) & (part.params == params) & (part.m == m)
                        & (part.n == n) & (part.k == k)]  # fmt: skip
            if cell == "--":
                assert rows.empty, (variant, params, shape)
                continue
            assert len(rows) == 1 and cell.startswith(significant(rows.kernel_ms.iloc[0]))
            checked += 1
    assert checked == 14  # 4 + 3 warptile_db cells, 7 cuBLAS ones
    line = next(x for x in table if x.startswith("cublas"))
    assert "2.665 (51571)" in line and "21.34 (51516)" in line  # the recorded cuBLAS rows


GRID = (
    "179 parameter combination(s) of the variants' grids that the registry's constraints "
    "rule out (never built; their reasons are in the table): "
)
# by variant, counted by hand from the tables (csv.DictReader, rows whose m is empty)
PER_VARIANT = ("ws_f64 80", "persistent_bf16 56", "warptile_db 39", "persistent_tf32 4")


@pytest.mark.parametrize(
    "run, refused_rows, asked",
    # the refused tables' rows, counted with `zcat refused.csv.gz | wc -l` less the header; of
    # the ladder's, 10 have a shape (cuBLASLt's FP8 at sizes off multiples of 16), the other
    # 179 (and all of the sweep's, recorded before refusals had shapes) only parameters
    [("h200-ladder/results/ladder", 189, "cublaslt_fp8: n % 16 == 0 and k % 16 == 0 fails"),
     ("h100-sweep/results/sweep", 179, None)],
)  # fmt: skip
def test_the_summary_of_a_recorded_tuned_run_counts_its_refusals(run, refused_rows, asked):
    """The summary a render makes of a recorded ladder and sweep run (the timings and the
    configurations refused before running, as the summary job reads them) says how many were
    refused, names the reason of each refusal of a shape the run asked for, and counts the
    parameter combinations the constraints rule out per variant without their 179 lines of
    constraint text (issue "what a new user hit", item 5); no line past 200 characters."""
    timings = read_table(DATA / run / "tables" / "timings.csv", "timings")
    refused = read_table(DATA / run / "tables" / "refused.csv", "refused")
    txt, _ = render(timings, refused)
    assert f"{refused_rows} configuration(s) refused before running" in txt
    flat = " ".join(txt.split())
    assert flat.count(GRID) == 1, txt[-2000:]
    listed = flat[flat.index(GRID) + len(GRID) :].split(" GPU: ")[0].split(", ")
    assert sorted(listed) == sorted(PER_VARIANT)
    assert "a warp tile is WMITER x WNITER sub-tiles of TM x TN patches" not in txt
    if asked:
        assert f"  {asked}" in txt and "[10x]" in txt
    assert max(map(len, txt.splitlines())) <= 200


def test_a_run_put_together_from_two_gpus_names_each_and_its_variants():
    """Parts of one run measured on two boards (lab/shapes_parts.py merges such parts): the
    summary names both GPUs and which variants each measured, not the first row's alone."""
    timings = read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    txt, md = render(timings)
    assert sum(x.startswith("GPU: ") for x in txt.splitlines()) == 1  # one board: one line
    two = timings.copy()
    two.loc[two.variant == "cublas", "gpu_uuid"] = "GPU-other-board"
    txt, md = render(two)
    lines = txt.splitlines()
    head = next(i for i, x in enumerate(lines) if x.startswith("GPUs: "))
    assert lines[head].startswith("GPUs: 2;")
    boards = lines[head + 1 : head + 3]
    other = next(x for x in boards if "GPU-other-board" in x)
    assert other.endswith(": cublas")
    first = next(x for x in boards if "GPU-other-board" not in x)
    assert "cublas" not in first.split("): ")[-1].split(": ")[-1].split(", ")
    assert "GPU-other-board" in md

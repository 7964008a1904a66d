"""The summary, rendered from real recorded results (no GPU needed)."""

import pandas as pd

from mmbench.report.summary import render

from .conftest import DATA


def test_seed_003_shape_from_the_recorded_main_command():
    timings = pd.read_csv(DATA / "h100-e4b" / "timings.csv")
    refused = pd.DataFrame(
        [dict(variant="tiled_unguarded", reason="m % tile == 0 and ... fails")] * 2
    )
    txt, md = render(timings, refused)
    head = txt.splitlines()[0]
    assert head.startswith("Kernel time, ms (GFLOPS)")
    cols = txt.splitlines()[1].split()
    assert cols[:3] == ["8000", "10000", "12000"]
    line = next(x for x in txt.splitlines() if x.startswith("tiled_unguarded"))
    assert line.split()[1] == "TILE=16"
    assert "--" not in line.split()[2:8]  # 16x16 ran at 8000, 10000 and 12000
    line32 = txt.splitlines()[txt.splitlines().index(line) + 1]
    assert (
        line32.split()[0] == "TILE=32" and line32.split()[3] == "--"
    )  # 10000 refused, as in seed 003
    assert "cublas" in txt
    assert "0 unexpected" in txt
    assert "NVIDIA H100" in txt
    assert md.startswith("### Kernel time") and "| variant | params |" in md
    assert "| coarsened | TILE=32 COARSEN=4 |" in md


def test_fail_cells_and_tally_from_the_recorded_default_run():
    timings = pd.read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    txt, _ = render(timings)
    nu = next(x for x in txt.splitlines() if x.startswith("naive_unguarded"))
    cells = nu.split("  ")
    assert sum("FAIL" in c for c in cells) == 1  # 641, not a multiple of 16
    assert "FAIL as expected" in txt


def test_unexpected_failure_is_called_out():
    timings = pd.read_csv(DATA / "h100-main" / "results" / "tables" / "timings.csv")
    broken = timings.copy()
    i = broken.index[(broken.variant == "tiled_guarded")][0]
    broken.loc[i, "verification"] = "FAIL"
    broken.loc[i, "first_mismatches"] = "0:0: 1 - 2 = -1"
    txt, _ = render(broken)
    assert "1 unexpected" in txt and "UNEXPECTED FAIL: tiled_guarded" in txt

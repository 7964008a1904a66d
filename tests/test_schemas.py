"""core/schemas.py: every tidy table checked where it is read; a damaged table (cut, duplicated
rows, a rate that is not its time, an unknown value, a wrong type) is refused, naming the file,
the lines and the rule."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from mmbench.core.schemas import TableError, check_against_manifests, read_table
from mmbench.core.tables import DamagedFile, read_samples

from .conftest import MAIN, compare_run, copy_recorded, read_csv, recorded_bytes

TIMINGS = MAIN / "tables" / "timings.csv"


@pytest.fixture
def damaged(tmp_path):
    def write(data: bytes | str, name="timings.csv") -> Path:
        p = tmp_path / name
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        return p

    return write


def test_a_table_cut_mid_line_is_refused(damaged):
    data = recorded_bytes(TIMINGS)
    p = damaged(data[: int(len(data) * 0.6)])
    with pytest.raises(TableError, match="cut short"):
        read_table(p, "timings")


def test_a_table_cut_at_a_line_is_refused_by_its_manifests(damaged, tmp_path):
    manifests = sorted((copy_recorded(MAIN / "runs", tmp_path / "runs")).glob("*.manifest.json"))
    assert len(manifests) == 7  # h100-main's seven measurement jobs
    data = recorded_bytes(TIMINGS)
    cut = data[: int(len(data) * 0.6)]
    p = damaged(cut[: cut.rindex(b"\n") + 1])
    df = read_table(p, "timings")  # each row is whole
    with pytest.raises(TableError) as err:
        check_against_manifests(df, manifests, str(p))
    # h100-main: cublas has 8 configurations, coarsened 32 (the manifests' counts)
    assert "cublas: 0 rows, its run manifest says 8 configurations" in str(err.value)
    assert "coarsened: 0 rows, its run manifest says 32 configurations" in str(err.value)


def test_duplicated_rows_are_refused(damaged):
    t = read_csv(TIMINGS)
    cublas = t[(t.variant == "cublas") & (t.m == 640)]
    p = damaged(pd.concat([t, cublas]).to_csv(index=False))
    with pytest.raises(TableError, match="name the same row") as err:
        read_table(p, "timings")
    assert "variant=cublas" in str(err.value) and "m=640" in str(err.value)


def test_a_pass_row_without_a_time_is_refused(damaged):
    t = read_csv(TIMINGS)
    t.loc[7, "kernel_ms_median"] = float("nan")  # h100-main predates kernel_ms: the median
    p = damaged(t.to_csv(index=False))
    with pytest.raises(TableError, match="line 9") as err:
        read_table(p, "timings")
    assert "a PASS or FAIL row has no kernel_ms" in str(err.value)


def test_a_rate_that_is_not_its_time_is_refused(damaged):
    t = read_csv(TIMINGS)
    t["kernel_gflops"] *= 10
    with pytest.raises(TableError, match="not the FLOP count over kernel_ms"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_an_unknown_verification_is_refused(damaged):
    t = read_csv(TIMINGS)
    t.loc[3, "verification"] = "MAYBE"
    with pytest.raises(TableError, match=r"column 'verification'.*line 5 \(e.g. MAYBE\)"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_an_empty_file_and_a_removed_column_are_named(damaged):
    with pytest.raises(TableError, match="empty file"):
        read_table(damaged(b""), "timings")
    t = read_csv(TIMINGS).drop(columns=["verification"])
    with pytest.raises(TableError, match="column 'verification' is missing"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_a_value_of_the_wrong_type_is_named(damaged):
    t = read_csv(TIMINGS).astype({"m": object})
    t.loc[2, "m"] = "abc"
    with pytest.raises(TableError, match=r"column 'm'.*line 4 \(e.g. abc\)"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_a_torn_samples_file_is_named(tmp_path):
    src = compare_run("h100-a") / "runs" / "cublas.samples.json.gz"
    torn = tmp_path / "cublas.samples.json.gz"
    torn.write_bytes(src.read_bytes()[:200])
    with pytest.raises(DamagedFile, match=str(torn)):
        read_samples(torn)


# -- every row consistent with itself (issue "nothing lost, nothing planted", point 4) ----------


def _edited(damaged, change) -> Path:
    """h100-main's timings with `change(df)` applied, written as a table."""
    t = read_csv(TIMINGS)
    change(t)
    return damaged(t.to_csv(index=False))


def test_an_infinite_time_with_a_zero_rate_is_refused(damaged):
    def infinite(t):
        # a time of inf gives a rate of exactly 0: the rate check alone lets it through
        t.loc[3, ["kernel_ms", "kernel_ms_median"]] = float("inf")
        t.loc[3, "kernel_gflops"] = 0.0

    with pytest.raises(TableError) as err:
        read_table(_edited(damaged, infinite), "timings")
    assert "column 'kernel_ms': a time must be finite and > 0 fails at line 5" in str(err.value)
    assert "column 'kernel_ms_median'" in str(err.value)


def test_a_minimum_above_the_median_is_refused(damaged):
    def swapped(t):
        t.loc[7, ["kernel_ms_min", "kernel_ms_max"]] = t.loc[
            7, ["kernel_ms_max", "kernel_ms_min"]
        ].values

    with pytest.raises(TableError) as err:
        read_table(_edited(damaged, swapped), "timings")
    assert "kernel_ms_min <= kernel_ms_median <= kernel_ms_max does not hold: line 9" in str(
        err.value
    )


def test_a_shape_with_a_fraction_is_refused_not_truncated(damaged):
    def fraction(t):
        t["m"] = t["m"].astype(float)
        t.loc[0, "m"] = t.loc[0, "m"] + 0.5

    t = read_csv(TIMINGS)
    with pytest.raises(TableError) as err:
        read_table(_edited(damaged, fraction), "timings")
    assert f"column 'm': not a whole number at line 2 (e.g. {t.m[0] + 0.5})" in str(err.value)


def test_a_params_label_that_contradicts_the_instance_is_refused(damaged):
    def relabelled(t):
        row = t.index[t.variant == "tiled_guarded"][0]
        t.loc[row, "params"] = "TILE=8"  # its instance and TILE column say another tile
        t.loc[row, "label"] = "tiled_guarded TILE=8"

    with pytest.raises(TableError) as err:
        read_table(_edited(damaged, relabelled), "timings")
    assert "label, params, instance and the parameter columns do not name one" in str(err.value)

import os

import pandas as pd
import pytest

from mmbench.core import row, tables

from .conftest import read_csv


def test_atomic_write_replaces_whole_file(tmp_path):
    path = tmp_path / "t.csv"
    tables.atomic_write_csv(pd.DataFrame({"a": [1, 2]}), path)
    assert read_csv(path).a.tolist() == [1, 2]
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_interrupted_write_leaves_old_table_and_no_temp(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    tables.atomic_write_csv(pd.DataFrame({"a": [1]}), path)

    def boom(*_):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        tables.atomic_write_csv(pd.DataFrame({"a": [1, 2, 3]}), path)
    assert read_csv(path).a.tolist() == [1]
    assert [p.name for p in tmp_path.iterdir()] == ["t.csv"]


def test_concat_and_order(tmp_path):
    p1, p2, p3 = tmp_path / "1.csv", tmp_path / "2.csv", tmp_path / "3.csv"
    pd.DataFrame({"variant": ["a"], "m": [1], "extra": [0]}).to_csv(p1, index=False)
    pd.DataFrame({"variant": ["b"], "m": [2]}).to_csv(p2, index=False)
    pd.DataFrame({"variant": ["c"], "m": [3], "TILE": [32]}).to_csv(p3, index=False)
    p4 = tmp_path / "4.csv"
    p4.write_text("")
    df = row.ordered(tables.concat_csv([p1, p2, p3, p4]))
    assert df.variant.tolist() == ["a", "b", "c"]
    assert list(df.columns[:5]) == ["variant", "label", "params", "instance", "TILE"]
    assert df.columns[-1] == "extra"

"""Input within stated bounds (core/bounded.py, core/schemas.read_table): an alias bomb, deep
nesting and an oversized table each cost a clear message, not minutes, gigabytes or a
RecursionError (issue "nothing lost, nothing planted", point 7)."""

from __future__ import annotations

import gzip
import time

import pytest

from mmbench.core import bounded, schemas
from mmbench.core.bounded import TooLarge, load_yaml
from mmbench.core.expressions import RegistryError
from mmbench.core.registry import load_registry
from mmbench.core.schemas import TableError, read_table

from .conftest import MAIN, ROOT, recorded_bytes, snakemake

TIMINGS = MAIN / "tables" / "timings.csv"


def _bomb(levels: int = 9, width: int = 9) -> str:
    """A YAML alias bomb of a few hundred bytes: `width` ** `levels` values once expanded
    (9 ** 9 = 387,420,489)."""
    lines = [f"a0: &a0 [{', '.join(['x'] * width)}]"]
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * width)}]")
    return "\n".join(lines) + f"\nsizes: *a{levels - 1}\n"


def test_an_alias_bomb_is_refused_at_the_bound_not_walked(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(_bomb())
    assert path.stat().st_size < 600
    start = time.perf_counter()
    with pytest.raises(TooLarge, match="more than 200,000 values once its YAML aliases"):
        load_yaml(path)
    assert time.perf_counter() - start < 30  # generous: the walk stops at the bound


def test_a_document_nested_past_the_bound_is_refused_without_a_recursion_error(tmp_path):
    deep = tmp_path / "deep.yaml"
    deep.write_text("sizes: " + "[" * 3000 + "1" + "]" * 3000 + "\n")
    with pytest.raises(TooLarge, match="nested too deeply for the YAML parser"):
        load_yaml(deep)
    shallow_but_past = tmp_path / "forty.yaml"
    shallow_but_past.write_text("sizes: " + "[" * 40 + "1" + "]" * 40 + "\n")
    with pytest.raises(TooLarge, match=r"nested more than 32 levels deep \(at "):
        load_yaml(shallow_but_past)


def test_every_yaml_file_of_the_project_is_within_the_bounds():
    """The bounds leave room: the registry, the config, every preset and profile load."""
    files = [ROOT / "kernels" / "registry.yaml", ROOT / "config" / "config.yaml"]
    files += sorted((ROOT / "config" / "presets").glob("*.yaml"))
    files += sorted((ROOT / "profiles").glob("*/config.yaml"))
    files += sorted((ROOT / "workflow" / "profiles").glob("*/config.yaml"))
    for f in files:
        assert load_yaml(f) is not None, f


def test_a_registry_with_an_alias_bomb_is_refused_naming_it(tmp_path):
    reg = tmp_path / "registry.yaml"
    reg.write_text((ROOT / "kernels" / "registry.yaml").read_text() + "\n" + _bomb())
    with pytest.raises(RegistryError, match=f"{reg} holds more than 200,000 values"):
        load_registry(reg)


def test_a_config_file_bomb_through_plain_snakemake_is_one_message(tmp_path):
    """Snakemake loads the file (aliases as shared references, at once); the workflow refuses
    it before its schema validator walks every copy (it took minutes before)."""
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(_bomb())
    out = snakemake("-n", "--configfile", str(bomb))
    assert out.returncode != 0
    assert "mmbench: the config holds more than 200,000 values" in out.stderr
    assert "Traceback" not in out.stderr and len(out.stderr) < 5000


def test_the_mmbench_command_names_a_config_file_nested_too_deeply(tmp_path):
    import subprocess
    import sys

    deep = tmp_path / "deep.yaml"
    deep.write_text("sizes: " + "[" * 3000 + "1" + "]" * 3000 + "\n")
    out = subprocess.run(
        [sys.executable, "-m", "mmbench.plan.cli", "-n", "--configfile", str(deep)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    assert f"--configfile {deep} is nested too deeply for the YAML parser" in out.stderr
    assert "RecursionError" not in out.stderr


def test_a_table_past_the_stated_size_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    size = len(recorded_bytes(TIMINGS))
    monkeypatch.setenv(schemas.MAX_TABLE_VAR, str(size - 1))
    copy = tmp_path / "timings.csv"
    copy.write_bytes(recorded_bytes(TIMINGS))
    with pytest.raises(TableError) as err:
        read_table(copy, "timings")
    assert f"{copy}: {size:,} bytes, past the {size - 1:,} a table may be" in str(err.value)
    assert schemas.MAX_TABLE_VAR in str(err.value)
    monkeypatch.setenv(schemas.MAX_TABLE_VAR, str(size))
    assert len(read_table(copy, "timings")) == 116  # h100-main: 116 configurations


def test_a_compressed_table_that_inflates_past_the_bound_stops_at_it(tmp_path, monkeypatch):
    """A gzip of 1 MB of one repeated line is a few kB: the bound is on what it inflates to."""
    packed = tmp_path / "timings.csv.gz"
    packed.write_bytes(gzip.compress(recorded_bytes(TIMINGS)[:300] + b"1," * 500_000))
    assert packed.stat().st_size < 20_000
    monkeypatch.setenv(schemas.MAX_TABLE_VAR, "100000")
    with pytest.raises(TableError, match="past the 100,000 a table may be"):
        read_table(tmp_path / "timings.csv", "timings")


def test_an_xz_table_is_read_where_the_plain_one_is_absent_and_bounded_as_a_gzip(
    tmp_path, monkeypatch
):
    """A table kept xz'd reads as the plain one (h100-main: 116 configurations); 1 MB of one
    repeated line packed by xz stops at the bound too; an xz cut short is named as such."""
    import lzma

    plain = recorded_bytes(TIMINGS)
    (tmp_path / "timings.csv.xz").write_bytes(lzma.compress(plain))
    assert len(read_table(tmp_path / "timings.csv", "timings")) == 116
    bomb = tmp_path / "bomb" / "timings.csv.xz"
    bomb.parent.mkdir()
    bomb.write_bytes(lzma.compress(plain[:300] + b"1," * 500_000))
    assert bomb.stat().st_size < 20_000
    monkeypatch.setenv(schemas.MAX_TABLE_VAR, "100000")
    with pytest.raises(TableError, match="past the 100,000 a table may be"):
        read_table(bomb.parent / "timings.csv", "timings")
    monkeypatch.delenv(schemas.MAX_TABLE_VAR)
    cut = tmp_path / "cut" / "timings.csv.xz"
    cut.parent.mkdir()
    cut.write_bytes(lzma.compress(plain)[:-40])
    with pytest.raises(TableError, match=r"timings.csv.xz: not a readable xz file"):
        read_table(cut.parent / "timings.csv", "timings")


def test_a_table_is_read_once_however_many_stages_ask(tmp_path, monkeypatch):
    copy = tmp_path / "timings.csv"
    copy.write_bytes(recorded_bytes(TIMINGS))
    calls = []
    real = schemas._read_table
    monkeypatch.setattr(schemas, "_read_table", lambda *a: calls.append(a) or real(*a))
    first = read_table(copy, "timings")
    first.loc[:, "m"] = 0  # a caller's change stays its own
    again = read_table(copy, "timings")
    assert len(calls) == 1 and (again.m > 0).all()
    data = recorded_bytes(TIMINGS)
    copy.write_bytes(data[: data.rstrip(b"\n").rindex(b"\n") + 1])  # its last row gone
    assert len(read_table(copy, "timings")) == 115  # rewritten: read again
    assert len(calls) == 2


def test_the_bounds_are_stated_in_the_docs():
    text = (ROOT / "docs" / "method.md").read_text()
    assert f"{bounded.MAX_VALUES:,} values" in text and f"{bounded.MAX_DEPTH} levels" in text
    assert f"{schemas.MAX_TABLE_BYTES // 2**20} MiB" in text and schemas.MAX_TABLE_VAR in text

"""Numbers that cannot go silently wrong (issue "every table checked where it is read"): the
damage a results folder meets on its way between machines (truncation, duplication, edited
values, stale identity, ambiguity, injection) ends in a clear error or the right output, never
in a published number.  Every case runs on the real recorded H100 tables of tests/data."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from mmbench.compare import compare
from mmbench.core import schemas
from mmbench.core.axes import Configuration
from mmbench.core.registry import RegistryError, evaluate, load_registry
from mmbench.core.schemas import TableError, check_against_manifests, read_table
from mmbench.core.tables import DamagedFile, read_samples
from mmbench.plan.config import ConfigError
from mmbench.report import report_tables
from mmbench.report.summary import significant

from .conftest import DATA, ROOT
from .test_workflow import snakemake

MAIN = DATA / "h100-main" / "results"
TIMINGS = MAIN / "tables" / "timings.csv"
MANIFESTS = sorted((MAIN / "runs").glob("*.manifest.json"))
RUNS = DATA / "compare"


def _kind(path: Path) -> str | None:
    name = path.stem
    if path.parent.name == "runs" or name == "timings":
        return "timings"
    return name if name in schemas.SCHEMAS else None


# -- every recorded table satisfies its schema -----------------------------------------------------


def test_every_recorded_table_satisfies_its_schema():
    checked = 0
    for path in sorted(DATA.rglob("*.csv")):
        kind = _kind(path)
        if kind is None or "profilers" in path.parts:
            continue
        read_table(path, kind)
        checked += 1
    # 16 timings tables, 40 per-variant tables, and the refused/resources/profiler tables
    assert checked >= 70


def test_recorded_timings_hold_the_rows_their_manifests_describe():
    for manifests in {p.parent for p in DATA.rglob("*.manifest.json")}:
        folder = manifests.parent
        table = folder / "tables" / "timings.csv"
        if table.exists():
            check_against_manifests(
                read_table(table, "timings"), sorted(manifests.glob("*.manifest.json")), str(table)
            )


def test_recorded_summaries_are_gone_or_agree_with_their_table():
    """The recorded summary.txt files were made by older code (some showed a GFLOP/s that was
    not the rate of the time beside it): none is kept; render_only makes it anew."""
    assert not list(DATA.rglob("summary.txt"))


# -- damaged tables -------------------------------------------------------------------------------


@pytest.fixture
def damaged(tmp_path):
    def write(data: bytes | str, name="timings.csv") -> Path:
        p = tmp_path / name
        p.write_bytes(data.encode() if isinstance(data, str) else data)
        return p

    return write


def test_a_table_cut_mid_line_is_refused(damaged):
    data = TIMINGS.read_bytes()
    p = damaged(data[: int(len(data) * 0.6)])
    with pytest.raises(TableError, match="cut short"):
        read_table(p, "timings")


def test_a_table_cut_at_a_line_is_refused_by_its_manifests(damaged):
    data = TIMINGS.read_bytes()
    cut = data[: int(len(data) * 0.6)]
    p = damaged(cut[: cut.rindex(b"\n") + 1])
    df = read_table(p, "timings")  # each row is whole
    with pytest.raises(TableError) as err:
        check_against_manifests(df, MANIFESTS, str(p))
    # h100-main: cublas has 8 configurations, coarsened 32 (the manifests' counts)
    assert "cublas: 0 rows, its run manifest says 8 configurations" in str(err.value)
    assert "coarsened: 0 rows, its run manifest says 32 configurations" in str(err.value)


def test_duplicated_rows_are_refused(damaged):
    t = pd.read_csv(TIMINGS)
    cublas = t[(t.variant == "cublas") & (t.m == 640)]
    p = damaged(pd.concat([t, cublas]).to_csv(index=False))
    with pytest.raises(TableError, match="name the same row") as err:
        read_table(p, "timings")
    assert "variant=cublas" in str(err.value) and "m=640" in str(err.value)


def test_a_pass_row_without_a_time_is_refused(damaged):
    t = pd.read_csv(TIMINGS)
    t.loc[7, "kernel_ms_median"] = float("nan")  # h100-main predates kernel_ms: the median
    p = damaged(t.to_csv(index=False))
    with pytest.raises(TableError, match="line 9") as err:
        read_table(p, "timings")
    assert "a PASS or FAIL row has no kernel_ms" in str(err.value)


def test_a_rate_that_is_not_its_time_is_refused(damaged):
    t = pd.read_csv(TIMINGS)
    t["kernel_gflops"] *= 10
    with pytest.raises(TableError, match="not the FLOP count over kernel_ms"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_an_unknown_verification_is_refused(damaged):
    t = pd.read_csv(TIMINGS)
    t.loc[3, "verification"] = "MAYBE"
    with pytest.raises(TableError, match=r"column 'verification'.*line 5 \(e.g. MAYBE\)"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_an_empty_file_and_a_removed_column_are_named(damaged):
    with pytest.raises(TableError, match="empty file"):
        read_table(damaged(b""), "timings")
    t = pd.read_csv(TIMINGS).drop(columns=["verification"])
    with pytest.raises(TableError, match="column 'verification' is missing"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_a_value_of_the_wrong_type_is_named(damaged):
    t = pd.read_csv(TIMINGS).astype({"m": object})
    t.loc[2, "m"] = "abc"
    with pytest.raises(TableError, match=r"column 'm'.*line 4 \(e.g. abc\)"):
        read_table(damaged(t.to_csv(index=False)), "timings")


def test_a_torn_samples_file_is_named(tmp_path):
    src = RUNS / "h100-a" / "runs" / "cublas.samples.json.gz"
    torn = tmp_path / "cublas.samples.json.gz"
    torn.write_bytes(src.read_bytes()[:200])
    with pytest.raises(DamagedFile, match=str(torn)):
        read_samples(torn)


# -- what each printed number is -------------------------------------------------------------------


def test_kernel_times_shows_pageable_and_pinned_apart():
    t = read_table(TIMINGS, "timings")
    out = report_tables.kernel_times(t)
    cublas = out[out.variant == "cublas"].set_index("memory")
    # the figures for h100-main: cuBLAS at 640 took 0.0726 ms (7218 GFLOP/s) from
    # pageable memory, 0.0306 ms (17111) from pinned; the table used to show only the faster
    assert cublas.loc["pageable", "640"] == "0.07264 (7218)"
    assert cublas.loc["pinned", "640"] == "0.03064 (17111)"


def _cell_rows(timings: pd.DataFrame, made: pd.DataFrame):
    """For every number cell of a pivot table (ms (GFLOPS)), the timings rows it can be."""
    shapes = [c for c in made.columns if c[0].isdigit()]
    keys = [c for c in made.columns if c not in shapes]
    for _, row in made.iterrows():
        for shape in shapes:
            cell = str(row[shape])
            if cell == "--":
                continue
            m, n, k = [int(x) for x in shape.split("x")] if "x" in shape else [int(shape)] * 3
            sel = (timings.m == m) & (timings.n == n) & (timings.k == k)
            for key in keys:
                values = timings[key].fillna("").replace("", "-").astype(str)
                sel &= values == str(row[key])
            yield cell, timings[sel]


@pytest.mark.parametrize(
    "folder", [MAIN, DATA / "h100-e3c" / "results" / "e3c", DATA / "h100-e3d" / "results" / "e3d"]
)
def test_every_number_of_the_pivot_tables_is_one_configuration(folder):
    t = read_table(folder / "tables" / "timings.csv", "timings")
    for make in (report_tables.kernel_times,):
        made = make(t)
        cells = 0
        for cell, rows in _cell_rows(t, made):
            assert len(rows) == 1, (cell, len(rows))
            r = rows.iloc[0]
            assert cell.startswith(significant(r.kernel_ms)), (cell, r.kernel_ms)
            assert f"({r.kernel_gflops:.0f})" in cell
            cells += 1
        assert cells > 50


# -- render_only -----------------------------------------------------------------------------------


@pytest.fixture
def copied(tmp_path):
    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    shutil.copytree(MAIN, tmp_path / "results")
    return tmp_path


def test_render_only_refuses_a_cut_table_before_any_job(copied):
    table = copied / "results" / "tables" / "timings.csv"
    data = table.read_bytes()
    table.write_bytes(data[: int(len(data) * 0.6)])
    out = snakemake("--cores", "1", "--config", "render_only=true", cwd=copied)
    assert out.returncode != 0
    assert "render_only=true: results/tables/timings.csv: its last line is not terminated" in (
        out.stderr
    )
    assert "Traceback" not in out.stderr
    assert not (copied / "results" / "figures").exists()


def test_render_only_summary_is_made_from_the_table_it_read(copied):
    """A run whose table holds only some variants (with their manifests) says so: the copied
    summary.txt (116 configurations) is not printed."""
    res = copied / "results"
    t = pd.read_csv(res / "tables" / "timings.csv")
    t[t.variant.isin(["cublas", "tiled_guarded"])].to_csv(
        res / "tables" / "timings.csv", index=False
    )
    for m in (res / "runs").glob("*.manifest.json"):
        if json.loads(m.read_text())["variant"] not in ("cublas", "tiled_guarded"):
            m.unlink()
    out = snakemake("--cores", "1", "--config", "render_only=true", cwd=copied)
    assert out.returncode == 0, out.stderr[-2000:]
    # 8 cuBLAS + 16 tiled_guarded configurations in h100-main
    assert "24 configurations: 24 PASS" in out.stdout
    assert "116 configurations" not in out.stdout


# -- comparisons and gates -------------------------------------------------------------------------


def _run_with(tmp_path, name: str, change) -> compare.Run:
    """Run `name` of tests/data/compare with its tables changed by `change(variant, df)`."""
    folder = tmp_path / name / "runs"
    folder.mkdir(parents=True)
    for p in (RUNS / name / "runs").iterdir():
        shutil.copy(p, folder / p.name)
    for p in folder.glob("*.csv"):
        df = change(p.stem, pd.read_csv(p))
        if df is None:
            p.unlink()
        else:
            df.to_csv(p, index=False)
    return compare.load_folder(tmp_path / name)


def test_a_configuration_that_now_fails_is_regressed_and_fails_the_gate(tmp_path):
    def fail(variant, df):
        if variant == "tiled_guarded":
            df["verification"] = "FAIL"
            df["first_mismatches"] = "0:0: 1.000000 - 2.000000 = -1.000000"
        return df

    base = compare.load_folder(RUNS / "h100-b")
    new = _run_with(tmp_path, "h100-b", fail)
    table = compare.compare(base, new)
    # h100-b's tiled_guarded has 14 configurations; the times are the same (SAME otherwise)
    assert (table.verdict == "REGRESSED").sum() == 14
    assert set(table[table.verdict == "REGRESSED"].variant) == {"tiled_guarded"}
    why = compare.gate(table)
    assert why == ["14 configuration(s) PASSed in the baseline and FAIL or ERROR now"]
    text = compare.summary(table, compare.header(base, new))
    assert "REGRESSED tiled_guarded" in text


def test_a_variant_missing_from_this_run_fails_the_gate_unless_allowed(tmp_path):
    base = compare.load_folder(RUNS / "h100-b")
    new = _run_with(tmp_path, "h100-b", lambda v, df: None if v == "cublas" else df)
    table = compare.compare(base, new)
    assert (table.verdict == "BASELINE ONLY").sum() == 7  # h100-b's cuBLAS configurations
    assert compare.gate(table) == [
        "7 configuration(s) of the baseline missing from this run (variants cublas; allow with "
        "'compare={fail_on: slower, allow_missing: true}')"
    ]
    assert compare.gate(table, allow_missing=True) == []


def test_a_damaged_archive_entry_is_skipped_with_a_message(tmp_path, capsys):
    res = tmp_path / "results"
    for name in ("h100-a", "h100-b"):
        sha = pd.read_csv(RUNS / name / "runs" / "cublas.csv").source_sha256[0]
        entry = res / "archive" / "cublas" / f"{sha}-{name}"
        entry.mkdir(parents=True)
        for f in (RUNS / name / "runs").glob("cublas.*"):
            shutil.copy(f, entry / f.name)
    torn = res / "archive" / "cublas" / f"{sha}-h100-b" / "cublas.csv"
    torn.write_bytes(torn.read_bytes()[:500])
    found = compare.archived(res)
    assert [p.parent.name.split("-", 1)[1] for p in found["cublas"]] == ["h100-a"]
    assert "archive entry skipped" in capsys.readouterr().err


# -- the measurement job's journal -----------------------------------------------------------------


def _conf(m: int) -> dict:
    return Configuration(
        variant="tiled_guarded",
        dtype="float32",
        m=m,
        n=m,
        k=m,
        memory="pinned",
        accumulate=False,
        distribution="int09",
        seed=1,
        params={"TILE": 16},
    ).as_dict()


STAND_IN_WORKER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    spec = json.loads(Path(sys.argv[-1]).read_text())
    journal = Path(spec["journal"])
    crash = Path(spec["journal"] + ".crash-once")
    for key, conf in spec["todo"]:
        with open(journal, "a") as fh:
            fh.write(json.dumps({"start": key}) + "\\n")
        if conf["m"] == 3 and not crash.exists():
            crash.write_text("")
            sys.exit(1)
        with open(journal, "a") as fh:
            fh.write(json.dumps({"key": key, "row": {"m": conf["m"], "verification": "PASS"}}) + "\\n")
    """
)


def test_a_stale_start_record_is_not_blamed_on_a_later_worker(tmp_path, monkeypatch):
    """A start record left by an earlier, interrupted run (configuration 2) is not written
    ERROR when a later worker crashes in another configuration (3): 2 is measured again."""
    from mmbench.core import paths
    from mmbench.measure import jobs

    worker = tmp_path / "worker.py"
    worker.write_text(STAND_IN_WORKER)
    monkeypatch.setattr(paths, "child_command", lambda _m, spec: [sys.executable, worker, spec])
    journal = tmp_path / "t.csv.journal.jsonl"
    keyed = [(f"key{m}", _conf(m)) for m in (1, 2, 3, 4)]
    journal.write_text(json.dumps({"start": "key2"}) + "\n")  # Ctrl-C during 2, earlier
    base = dict(journal=str(journal), log=str(tmp_path / "log"))
    rows: dict = {}
    jobs._measure(keyed, rows, base, tmp_path / "spec.json", None, dict(os.environ))
    assert rows["key2"] == {"m": 2, "verification": "PASS"}
    assert rows["key3"]["verification"] == "ERROR"  # the worker did crash there
    assert "worker process ended while measuring this configuration" in rows["key3"]["error"]


def test_a_journal_from_another_gpu_is_set_aside(tmp_path, caplog):
    from mmbench.measure import jobs
    from mmbench.measure.journal import journal_key

    journal = tmp_path / "t.csv.journal.jsonl"
    settings = {"sampling": {}}
    other = journal_key(_conf(1), "c", "s", settings, "hostA-GPU-aaaa")
    here = journal_key(_conf(1), "c", "s", settings, "hostB-GPU-bbbb")
    assert other != here
    journal.write_text(json.dumps({"key": other, "row": {"gpu_uuid": "GPU-aaaa"}}) + "\n")
    assert jobs.resumable(journal, {here}, "hostB-GPU-bbbb") == {}
    assert not journal.exists()
    assert len(list(tmp_path.glob("t.csv.journal.jsonl.set-aside-*"))) == 1
    assert "GPU-aaaa" in caplog.text and "not reused" in caplog.text


# -- registry and tuning tables --------------------------------------------------------------------


@pytest.fixture
def registry_copy(tmp_path):
    for p in (ROOT / "kernels").glob("*"):
        if p.is_file():
            shutil.copy(p, tmp_path / p.name)
    return tmp_path / "registry.yaml"


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))


def test_a_variant_named_twice_is_refused(registry_copy):
    text = registry_copy.read_text()
    start = text.index("  naive_guarded:")
    end = text.index("\n\n", start)
    registry_copy.write_text(text + "\n" + text[start:end] + "\n")
    with pytest.raises(RegistryError, match="'naive_guarded' is given twice"):
        load_registry(registry_copy)


def test_unsupported_operators_and_runaway_expressions_are_refused():
    for expr, words in [
        ("2 in 3", "unsupported operator In"),
        ("m is n", "unsupported operator Is"),
        ("min()", "min expected at least 1 argument"),
        ("+".join(["1"] * 3000), "at most 400"),
    ]:
        with pytest.raises(RegistryError, match=words):
            evaluate(expr, m=1, n=1)


def test_a_negative_parameter_value_is_refused(registry_copy):
    _edit(registry_copy, "TILE: [8, 16, 32]", "TILE: [-8, 16, 32]")
    with pytest.raises(RegistryError, match="TILE value -8 is not a positive integer"):
        load_registry(registry_copy)


def test_an_expression_failing_for_a_later_instantiation_is_refused(registry_copy):
    # naive_guarded's TILE values are 8, 16, 32: the grid divides by zero at TILE=16 only
    _edit(
        registry_copy,
        'grid: ["cdiv(n, TILE)", "cdiv(m, TILE)"]',
        'grid: ["cdiv(n, TILE - 16)", "cdiv(m, TILE)"]',
    )
    with pytest.raises(RegistryError, match="instantiation float32_TILE16"):
        load_registry(registry_copy)


def test_a_source_that_a_shell_would_expand_is_refused(registry_copy):
    _edit(registry_copy, "source: 02_naive_guarded.cu", 'source: "$(touch M) x.cu"')
    with pytest.raises(RegistryError, match="source"):
        load_registry(registry_copy)


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


# -- no value reaches a shell ---------------------------------------------------------------------


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_a_checkout_at_a_path_with_shell_syntax_runs_no_command(tmp_path):
    work = tmp_path / "c d$(touch PWNED)d"
    work.mkdir()
    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    cubin = "results/build/sm_90/tiled_guarded/float32_TILE16.cubin"
    peak = "results/build/sm_90/microbench/peak.cubin"
    out = snakemake("--cores", "2", "--config", "arch=sm_90", "--", cubin, peak, cwd=work)
    assert out.returncode == 0, out.stderr[-2000:]
    assert (work / cubin).stat().st_size > 1000 and (work / peak).stat().st_size > 1000
    assert not list(tmp_path.rglob("PWNED"))
    # overwritten with garbage: found, and built again (an updated input of its build, so what
    # ran it is measured again); once rebuilt, nothing is left to do
    (work / cubin).write_bytes(b"garbage")
    dry = snakemake("-n", "--config", "arch=sm_90", "--", cubin, cwd=work)
    assert f"{cubin} is not what its build wrote" in dry.stderr
    assert f"Updated input files: {cubin[: -len('.cubin')]}.rebuild" in dry.stdout
    again = snakemake("--cores", "1", "--config", "arch=sm_90", "--", cubin, cwd=work)
    assert again.returncode == 0, again.stderr[-2000:]
    assert (work / cubin).read_bytes() != b"garbage"
    done = snakemake("-n", "--config", "arch=sm_90", "--", cubin, cwd=work)
    assert "Nothing to be done" in done.stdout + done.stderr


def test_html_titles_are_escaped(tmp_path):
    paths = report_tables.write(
        pd.DataFrame({"a": [1]}), tmp_path / "t", "<img src=x onerror=alert(1)>"
    )
    html = next(p for p in paths if p.suffix == ".html").read_text()
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_gpu_lock_folder_is_private_and_a_wait_names_the_holder(tmp_path, monkeypatch):
    from mmbench.measure import gpus

    monkeypatch.setattr(gpus, "LOCK_DIR", tmp_path / "locks")
    one = [dict(index=0, uuid="GPU-0")]
    with gpus.acquire(env={}, gpus=one):
        assert (tmp_path / "locks").stat().st_mode & 0o777 == 0o700
        with pytest.raises(TimeoutError, match=f"GPU 0: pid {os.getpid()} on"):
            with gpus.acquire(timeout_s=0.2, env={}, gpus=one):
                pass
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)
    monkeypatch.setattr(gpus, "LOCK_DIR", shared)
    with pytest.raises(PermissionError, match="writable by others"):
        with gpus.acquire(env={}, gpus=one):
            pass


def test_a_registry_launch_edit_changes_what_names_the_rows(registry_copy):
    """The measurement job's params carry the launch spec's hash (rule measure_variant), so an
    edited grid re-measures the variant; the other variants' hashes stay."""
    before = {k: v.launch_sha() for k, v in load_registry(registry_copy).items()}
    load_registry.cache_clear()
    _edit(
        registry_copy,
        'grid: ["cdiv(n, TILE)", "cdiv(m, TILE)"]',
        'grid: ["cdiv(n, TILE) + 0", "cdiv(m, TILE)"]',
    )
    after = {k: v.launch_sha() for k, v in load_registry(registry_copy).items()}
    changed = sorted(k for k in before if before[k] != after[k])
    assert changed == ["naive_guarded"]
    rule = (ROOT / "workflow" / "rules" / "run.smk").read_text()
    assert "launch=lambda w: REGISTRY[w.variant].launch_sha()" in rule


def test_a_long_size_range_is_refused_in_one_line():
    from mmbench.plan.config import validate

    with pytest.raises(ConfigError) as err:
        validate({"sizes": [], "size_ranges": [[1, 100000, 1]], "arch": "sm_90"}, load_registry())
    assert "give 100000 problem shapes" in str(err.value)
    assert len(str(err.value).splitlines()) < 5


# the columns of a report table that name a configuration, and the timings column each is
ID_COLUMNS = {
    "variant": "variant",
    "params": "params",
    "kernel": "label",
    "label": "label",
    **{a: a for a in ("memory", "dtype", "pad", "transfer", "load", "distribution", "cache")},
    **{a: a for a in ("accumulate", "seed", "math", "operation", "gpu_name")},
}
PER_CONFIGURATION = ("unguarded_vs_guarded", "time_split", "verification", "leading_dimensions")
AGGREGATES = {"ladder": "fastest", "tuned": "fastest"}  # and the word of the title naming it


def _matching(timings: pd.DataFrame, row: pd.Series, shape: str) -> pd.DataFrame:
    m, n, k = [int(x) for x in shape.split("x")] if "x" in shape else [int(shape)] * 3
    sel = (timings.m == m) & (timings.n == n) & (timings.k == k)
    for col, axis in ID_COLUMNS.items():
        if col in row.index and axis in timings:
            values = timings[axis].fillna("").replace("", "-").astype(str)
            sel &= values == str(row[col])
    return timings[sel]


@pytest.mark.parametrize(
    "folder",
    [MAIN, DATA / "h100-ladder" / "results" / "ladder", DATA / "h100-e3c" / "results" / "e3c"],
)
def test_every_report_table_row_or_cell_is_one_configuration(folder):
    """Each row of a per-configuration table, and each cell of a pivot, names exactly one
    configuration of the rows it was made from (the condition its title names); a table of
    aggregates names the aggregate in its title.  Tables of the profiler's own tables
    (profiler_metrics, gpu_activities, kernel_time_sources, ladder_profile) and of the run's
    facts (device_properties, provenance) have rows per profiled configuration or per fact."""
    from mmbench.report.catalogue import RATE_TABLES, TABLES, headline_rows, title_of

    timings = read_table(folder / "tables" / "timings.csv", "timings")
    checked = 0
    for name, output in TABLES.items():
        if set(output.inputs) != {"timings"}:
            continue
        made = output.make({"timings": timings})
        if made.empty:
            continue
        if name in AGGREGATES:
            assert AGGREGATES[name] in title_of(output, made), name
            continue
        source = headline_rows(timings)[0] if name in RATE_TABLES else timings
        source = source.assign(params=source.params.fillna("").replace("", "-"))
        if name in PER_CONFIGURATION:
            for _, row in made.iterrows():
                rows = _matching(source, row, str(row["shape"]))
                assert len(rows) == 1, (name, dict(row.head(8)), len(rows))
                checked += 1
        else:  # a pivot: shapes as columns
            for cell, rows in _cell_rows(
                source, made.drop(columns=["measured on"], errors="ignore")
            ):
                assert len(rows) == 1, (name, cell, len(rows))
                assert cell.startswith(significant(rows.iloc[0].kernel_ms)), (name, cell)
                checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    "folder",
    [
        MAIN,
        DATA / "h100-ladder" / "results" / "ladder",
        DATA / "h100-e3c" / "results" / "e3c",
        DATA / "h100-e3d" / "results" / "e3d",
    ],
)
def test_every_figure_draws_one_configuration_per_point(folder, tmp_path):
    """Every figure of the catalogue drawable from a recorded run renders, and each line's
    point is one configuration: figures._lines stops with MixedCell otherwise, and names the
    series by the axes that tell configurations apart (shown_apart)."""
    from mmbench.report import figures
    from mmbench.report.catalogue import FIGURES, load_inputs
    from mmbench.report.report_tables import NoData

    paths = {"timings": folder / "tables" / "timings.csv"}
    for key, kind in (("roofline", "roofline"), ("ceilings", "ceilings")):
        if (folder / "tables" / f"{kind}.csv").exists():
            paths[key] = folder / "tables" / f"{kind}.csv"
    drawn = 0
    for name, output in FIGURES.items():
        if not set(output.inputs) <= set(paths):
            continue
        data = load_inputs({k: paths[k] for k in output.inputs})
        try:
            output.make(data, tmp_path / name)
        except NoData:
            continue
        drawn += 1
    assert drawn >= 2
    if folder.name == "ladder":  # cuBLAS in three element types: three lines, not one zigzag
        from mmbench.report.catalogue import headline_rows

        rows = headline_rows(read_table(paths["timings"], "timings"))[0]
        t = figures.measured(rows[rows.memory == "pinned"])
        series = set(figures.shown_apart(t[t.variant == "cublas"], "m").series)
        assert {"cublas float32", "cublas float64", "cublas bfloat16"} <= series


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_ctrl_c_during_compilation_says_interrupted_not_failed(tmp_path):
    """Ctrl-C while nvcc runs: the compile job says it was interrupted, never 'nvcc failed'."""
    import signal
    import subprocess
    import time

    for name in ("Snakefile", "workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    cubins = [
        f"results/build/sm_90/{v}/float32_TILE{t}.cubin"
        for v in ("tiled_guarded", "naive_guarded")
        for t in (8, 16, 32)
    ]
    # nvcc runs in the instantiation's build folder (plan/compile.build_folder): stop it there
    import tempfile

    building = Path(tempfile.gettempdir()) / f"mmbench-nvcc-{os.getuid()}" / "sm_90"
    for v in ("tiled_guarded", "naive_guarded"):  # left by an earlier interrupted build
        shutil.rmtree(building / v, ignore_errors=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            "1",
            "--config",
            "arch=sm_90",
            "--",
            *cubins,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.time() + 60
    while time.time() < deadline and not list(building.glob("*/*/src/*.cu")):
        time.sleep(0.05)
    assert list(building.glob("*/*/src/*.cu")), "no compilation started"
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode != 0
    built = list((tmp_path / "results" / "build").rglob("*.cubin"))
    assert len(built) < len(cubins), "interrupted after every cubin was built"
    assert "nvcc failed" not in err, err
    assert "Terminating processes on user request" in err or "interrupted" in err, err

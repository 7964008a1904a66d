"""A calibration run kept: its timings beside the recorded calibration runs of its GPU model
(an H200's in tests/data/h200-calibrate/, an H100's in tests/data/h100-calibrate/ beside the
H100 tuning runs of tests/data/h100-tune-model/), and kernels/calibration.csv's rows of that
model fitted again from all of them (core/timemodel.calibrate), which is what
tests/test_model.py checks the kept table against.  A rung's fit is joint over its builds, so
new builds move its older rows too.

    python lab/keep_calibration.py                      # are the kept rows that fit now?
    python lab/keep_calibration.py TIMINGS.csv NAME     # keep a run's timings as NAME
    python lab/keep_calibration.py TIMINGS.csv --to T   # the table it would give, to T only
    python lab/keep_calibration.py TIMINGS.csv --with EARLIER.csv --to T
                                                        # with an earlier run's timings too

TIMINGS is the calibrate stage's OUT/calibrate_timings.csv (lab/gpu.sh shapes OUT calibrate) of
one GPU model; it is cut to the columns the fit reads, its times to seven significant digits, and
written as tests/data/<h200|h100>-calibrate/NAME.csv.xz.  Then that model's rows of kernels/calibration.csv
are replaced by the fit of every recorded run of it; the other GPU models' lines stay as they
are.  Prints the model's rows per variant before and after; tests/test_model.py reads every
run of the folders, and its counts of the kept rows are then to be set.  Without arguments
nothing is written: exit 1 where the kept rows of either model are not the fit of its recorded
runs.  With --to, the table TIMINGS would give is written to T and nothing is kept: the
calibrate stage's results/calibration-merged.csv, for the runs after it on that machine (a run
at a few products alone would otherwise fit its rows from those products only); each --with
adds an earlier calibrate pass's timings on that machine, as keeping them all would fit them.
"""

from __future__ import annotations

import argparse
import io
import lzma
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.timemodel import calibrate, compact_fitted, expand_fitted, sms_of  # noqa: E402

H200 = "NVIDIA H200"
H100 = "NVIDIA H100 80GB HBM3"
DATA = ROOT / "tests" / "data"
# per GPU model: the folder its calibrate runs are kept in, and the other recorded runs its
# rows are fitted from (the H100's first rows came from the tune preset's runs)
KEPT = {H200: (DATA / "h200-calibrate", []),
        H100: (DATA / "h100-calibrate", [DATA / "h100-tune-model" / "squares.csv.xz",
                                         DATA / "h100-tune-model" / "small_side.csv.xz"])}  # fmt: skip
TABLE = ROOT / "kernels" / "calibration.csv"
# what calibrate() reads of a timings row (workers: the grid a stream-K launch was given)
COLUMNS = ["variant", "params", "instance", "backend", "dtype", "m", "n", "k", "workers",
           "gpu_name", "grid", "launch_facts", "verification", "kernel_ms"]  # fmt: skip


def recorded_runs(model: str) -> list[Path]:
    """Every recorded run a GPU model's rows are fitted from."""
    folder, others = KEPT[model]
    return [*others, *sorted(folder.glob("*.csv.xz"))]


def all_runs(model: str, added: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every recorded run of a GPU model (and `added`, a run's timings not kept yet)."""
    runs = [pd.read_csv(p) for p in recorded_runs(model)]
    return pd.concat([*runs, *([] if added is None else [added])], ignore_index=True)


def refit(registry, model: str, added: pd.DataFrame | None = None) -> pd.DataFrame:
    """A GPU model's rows: calibrate() of every recorded run of it (and of `added`)."""
    return calibrate(all_runs(model, added), registry)


def one_model(tables: dict[Path, pd.DataFrame]) -> str:
    """The GPU model of runs' timings (file -> table) fitted together: one, and one KEPT holds;
    otherwise an error naming each file's models."""
    models = {f: sorted(set(t.gpu_name)) for f, t in tables.items()}
    every = {m for ms in models.values() for m in ms}
    if len(every) != 1 or not every <= set(KEPT):
        held = "; ".join(f"{f} holds {ms}" for f, ms in models.items())
        raise SystemExit(f"the runs fitted together are one GPU model's, one of "
                         f"{', '.join(KEPT)}: {held}")  # fmt: skip
    return next(iter(every))


def cut(t: pd.DataFrame) -> pd.DataFrame:
    """A timings table cut to the COLUMNS it has."""
    return t[[c for c in COLUMNS if c in t.columns]]


def keep(t: pd.DataFrame, model: str, name: str) -> Path:
    """A run's timings `t` (of GPU model `model`) cut to COLUMNS, xz-compressed into the model's
    recorded runs as NAME."""
    out = KEPT[model][0] / f"{name}.csv.xz"
    if out.exists():
        raise SystemExit(f"{out} exists: choose another NAME")
    # seven significant digits: a CUDA event's resolution is about half a microsecond, and the
    # digits past it made a third of the file
    text = cut(t).to_csv(index=False, float_format="%.7g")
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(lzma.compress(text.encode(), preset=9 | lzma.PRESET_EXTREME))
    return out


def write_table(path: Path, lines: list[str], kept: pd.DataFrame, model: str,
                rows: pd.DataFrame) -> None:  # fmt: skip
    """The kept table's other models' lines verbatim, then `model`'s rows as calibrate() gives
    them, each rung's list of products written once (compact_fitted), to `path`."""
    others = [line for line, m in zip(lines[1:], kept.gpu_name, strict=True) if m != model]
    text = io.StringIO()
    compact_fitted(rows).to_csv(text, index=False, header=False, lineterminator="\n")
    path.write_text(lines[0] + "".join(others) + text.getvalue())


def same_multiprocessors(kept: pd.DataFrame, model: str, after: set[int]) -> str | None:
    """Why a refit may not be kept: it would fit the model at other multiprocessors (`after`)
    than its kept rows name (core/timemodel.sms_of reads them off the widest one-block
    persistent grid of the runs, and every cost of the model is fitted with them); None where
    they agree or nothing of the model is kept yet."""
    before = set(kept.loc[kept.gpu_name == model, "sms"].astype(int))
    if not before or before == after:
        return None
    return (f"the refit gives {model} {sorted(after)} multiprocessors where the kept rows have "
            f"{sorted(before)}: every row of the model would move; nothing is written (check the "
            "grids of the run's persistent launches of one block a multiprocessor)")  # fmt: skip


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("timings", nargs="?", type=Path, help="a calibrate stage's timings (CSV)")
    p.add_argument("name", nargs="?", help="the name it is kept under")
    p.add_argument("--to", type=Path, help="write the table TIMINGS gives here; keep nothing")
    p.add_argument("--with", dest="earlier", type=Path, action="append", default=[],
                   help="with --to: an earlier run's timings (CSV) fitted too")  # fmt: skip
    a = p.parse_args(argv)
    if a.earlier and a.to is None:
        p.error("--with goes with --to")
    if a.to is not None and (a.timings is None or a.name is not None):
        p.error("--to takes TIMINGS and no NAME")
    if a.to is None and (a.timings is None) != (a.name is None):
        p.error("give both TIMINGS and NAME, or neither")
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    lines = TABLE.read_text().splitlines(keepends=True)
    kept = pd.read_csv(TABLE)
    if a.to is not None:
        tables = {r: pd.read_csv(r) for r in [a.timings, *a.earlier]}
        model = one_model(tables)
        t = pd.concat(list(tables.values()), ignore_index=True)
        again = refit(registry, model, cut(t))
        if (why := same_multiprocessors(kept, model, set(again.sms.astype(int)))) is not None:
            print(why, file=sys.stderr)
            return 1
        write_table(a.to, lines, kept, model, again)
        print(f"{a.to}: {len(kept) - (kept.gpu_name == model).sum() + len(again)} rows, "
              f"{len(again)} {model} rows fitted with {', '.join(r.name for r in tables)} (before: "
              f"{(kept.gpu_name == model).sum()})")  # fmt: skip
        return 0
    if a.timings is None:
        bad = 0
        for model in KEPT:
            before = expand_fitted(kept[kept.gpu_name == model]).reset_index(drop=True)
            try:
                pd.testing.assert_frame_equal(before, refit(registry, model), check_dtype=False)
            except AssertionError as err:
                print(f"the kept {model} rows are not the fit of its recorded runs:\n{err}")
                bad = 1
            else:
                print(f"the kept {model} rows ({len(before)}) are the fit of its recorded runs")
        return bad
    t = pd.read_csv(a.timings)
    model = one_model({a.timings: t})
    # the multiprocessors the fit will take, before anything is written (no fit needed for them)
    sms = sms_of(all_runs(model, cut(t)), registry)
    if (why := same_multiprocessors(kept, model, set(sms.values()))) is not None:
        print(why, file=sys.stderr)
        return 1
    out = keep(t, model, a.name)
    print(f"kept {out.relative_to(ROOT)}")
    before = kept[kept.gpu_name == model].reset_index(drop=True)
    again = refit(registry, model)
    write_table(TABLE, lines, kept, model, again)
    counts = pd.DataFrame({"before": before.variant.value_counts(),
                           "after": again.variant.value_counts()}).fillna(0).astype(int)  # fmt: skip
    print(counts.to_string())
    print(f"{TABLE.relative_to(ROOT)}: {len(again)} {model} rows (before: {len(before)}): set "
          "that count in tests/test_model.py")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

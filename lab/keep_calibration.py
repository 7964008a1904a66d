"""A calibration run kept: its timings beside the recorded H200 calibration runs
(tests/data/h200-calibrate/), and kernels/calibration.csv's H200 rows fitted again from all of
them (core/timemodel.calibrate), which is what tests/test_model.py checks the kept table
against.  A rung's fit is joint over its builds, so new builds move its older rows too.

    python lab/keep_calibration.py                      # is the kept table that fit now?
    python lab/keep_calibration.py TIMINGS.csv NAME     # keep a run's timings as NAME

TIMINGS is the calibrate stage's OUT/calibrate_timings.csv (lab/gpu.sh shapes OUT calibrate) of
an H200; it is cut to the columns the fit reads and written as
tests/data/h200-calibrate/NAME.csv.xz.  Then the H200 rows of kernels/calibration.csv are
replaced by the fit of every recorded run there; the other GPU models' lines stay as they are.
Prints the H200 rows per variant before and after; tests/test_model.py reads every run of the
folder, and its count of the kept rows is then to be set.  Without arguments nothing is
written: exit 1 where the kept H200 rows are not the fit of the recorded runs.
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
from mmbench.core.timemodel import calibrate  # noqa: E402

H200 = "NVIDIA H200"
RECORDED = ROOT / "tests" / "data" / "h200-calibrate"
TABLE = ROOT / "kernels" / "calibration.csv"
# what calibrate() reads of a timings row (workers: the grid a stream-K launch was given)
COLUMNS = ["variant", "params", "instance", "backend", "dtype", "m", "n", "k", "workers",
           "gpu_name", "grid", "launch_facts", "verification", "kernel_ms"]  # fmt: skip


def refit(registry) -> pd.DataFrame:
    """The H200 rows: calibrate() of every recorded H200 calibration run."""
    runs = [pd.read_csv(p) for p in sorted(RECORDED.glob("*.csv.xz"))]
    return calibrate(pd.concat(runs, ignore_index=True), registry)


def keep(timings: Path, name: str) -> Path:
    """TIMINGS cut to COLUMNS, xz-compressed into the recorded runs as NAME."""
    t = pd.read_csv(timings)
    models = set(t.gpu_name)
    if models != {H200}:
        raise SystemExit(f"{timings}: the runs kept here are an {H200}'s; it holds {models}")
    out = RECORDED / f"{name}.csv.xz"
    if out.exists():
        raise SystemExit(f"{out} exists: choose another NAME")
    text = t[[c for c in COLUMNS if c in t.columns]].to_csv(index=False)
    out.write_bytes(lzma.compress(text.encode(), preset=9 | lzma.PRESET_EXTREME))
    return out


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("timings", nargs="?", type=Path, help="a calibrate stage's timings (CSV)")
    p.add_argument("name", nargs="?", help="the name it is kept under")
    a = p.parse_args(argv)
    if (a.timings is None) != (a.name is None):
        p.error("give both TIMINGS and NAME, or neither")
    registry = load_registry(ROOT / "kernels" / "registry.yaml")
    lines = TABLE.read_text().splitlines(keepends=True)
    kept = pd.read_csv(TABLE)
    before = kept[kept.gpu_name == H200].reset_index(drop=True)
    if a.timings is None:
        again = refit(registry)
        try:
            pd.testing.assert_frame_equal(before, again, check_dtype=False)
        except AssertionError as err:
            print(f"the kept {H200} rows are not the fit of the recorded runs:\n{err}")
            return 1
        print(f"the kept {H200} rows ({len(before)}) are the fit of the recorded runs")
        return 0
    print(f"kept {keep(a.timings, a.name).relative_to(ROOT)}")
    again = refit(registry)
    # the other models' lines verbatim, then the H200's rows as calibrate() gives them
    others = [line for line, model in zip(lines[1:], kept.gpu_name, strict=True) if model != H200]
    rows = io.StringIO()
    again.to_csv(rows, index=False, header=False, lineterminator="\n")
    TABLE.write_text(lines[0] + "".join(others) + rows.getvalue())
    counts = pd.DataFrame({"before": before.variant.value_counts(),
                           "after": again.variant.value_counts()}).fillna(0).astype(int)  # fmt: skip
    print(counts.to_string())
    print(f"{TABLE.relative_to(ROOT)}: {len(again)} {H200} rows (before: {len(before)}): set "
          "that count in tests/test_model.py")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

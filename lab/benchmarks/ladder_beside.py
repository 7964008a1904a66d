"""Two ladder runs side by side, configuration by configuration: how many they share, and the
ratio of their rates (this run's over the other's) at the sides given, all of them and under the
standing table's condition (sustained, normal inputs).  Two runs on two boards are not a paired
comparison (docs/method.md): the ratios tell how far boards and days move a rate, not whether
code changed.

    python lab/benchmarks/ladder_beside.py NEW OLD [--from-side 4096]

NEW and OLD are a timings table (CSV, optionally .xz) or a run's Snakemake log (.log, optionally
.xz, read by ladder_from_log.py).  A reference's parameters are `-` in a table and empty in a
log's lines: both read as empty.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

KEY = ["variant", "params", "dtype", "m", "n", "k", "memory", "load", "distribution"]


def read_run(path: Path) -> pd.DataFrame:
    if ".log" in path.suffixes:
        from ladder_from_log import read_log

        rows, bad, _ = read_log(path)
        if bad:
            raise SystemExit(f"{path}: {len(bad)} configuration lines not read, first: {bad[0]}")
        return pd.DataFrame(rows)
    t = pd.read_csv(path, keep_default_na=False, low_memory=False)
    return t.assign(params=t.params.replace("-", ""))


def beside(new: pd.DataFrame, old: pd.DataFrame) -> pd.DataFrame:
    """The configurations both runs measured, and their rate ratio (new over old)."""
    both = new[KEY + ["kernel_gflops"]].merge(
        old[KEY + ["kernel_gflops"]], on=KEY, suffixes=("", "_old"), validate="one_to_one"
    )
    return both.assign(ratio=both.kernel_gflops / both.kernel_gflops_old)


def words(part: pd.DataFrame) -> str:
    lo, hi = part.loc[part.ratio.idxmin()], part.loc[part.ratio.idxmax()]

    def name(r):
        return " ".join(
            str(r[c])
            for c in ["variant", "params", "dtype", "m", "load", "distribution"]
            if r[c] != ""
        )

    return (f"{len(part)} configurations: median {part.ratio.median():.3f}, "
            f"from {lo.ratio:.3f} ({name(lo)}) to {hi.ratio:.3f} ({name(hi)})")  # fmt: skip


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("new", type=Path)
    ap.add_argument("old", type=Path)
    ap.add_argument("--from-side", type=int, default=4096)
    args = ap.parse_args(argv)
    new, old = read_run(args.new), read_run(args.old)
    shared = beside(new, old)
    print(f"{len(new)} and {len(old)} configurations; {len(shared)} in both")
    b = shared[shared.m >= args.from_side]
    if b.empty:
        print(f"none shared with a side of {args.from_side} or more")
        return 1
    print(f"side >= {args.from_side}, new over old: {words(b)}")
    head = b[(b.load == "sustained") & (b.distribution == "normal")]
    if not head.empty:
        print(f"  of them sustained, normal inputs: {words(head)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

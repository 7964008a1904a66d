"""The standing targets of a ladder run that left no tables, read from its Snakemake log: each
measure job prints one line per configuration (variant, parameters, element type, product,
host-memory mode, load, inputs, kernel time and rate, verification), and the GPU it ran on.
Those lines become timings rows (the columns the ladder's standing table reads), and
report/standing.ladder_standing works out each class's best rung against its reference, as the
ladder report does from the timings table.

    python lab/benchmarks/ladder_from_log.py RUN.log [--rows OUT.csv]

A run that ends with every job done has its timings table: read that instead.  A line that does
not parse is counted and printed, never dropped silently.
"""

from __future__ import annotations

import argparse
import lzma
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

# a configuration's line begins with the time and the job's progress (measure/runner.py)
PROGRESS = r"^\d\d:\d\d:\d\d \[\s*\d+/\d+, eta\s+\S+\] "
LINE = re.compile(
    PROGRESS + r"(?P<variant>\S+) (?P<params>(?:\S+=\S+ )*)"
    r"(?P<dtype>\S+) (?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+) (?P<memory>\S+)(?P<sustained> sustained)?"
    r"(?: (?P<rows>rows\S+))? (?P<distribution>\S+): kernel (?P<ms>[\d.]+) ms "
    r"\((?P<gflops>\d+) GFLOPS\).*, (?P<verification>PASS|FAIL\S*) \["
)
BOARD = re.compile(
    r"^\S+ (?P<variant>\S+): \d+ configurations on (?P<gpu>.+) \((?P<uuid>GPU-\S+)\)$"
)


def read_log(path: Path) -> tuple[list[dict], list[str], set[str]]:
    """(rows, the configuration lines that did not parse, the boards named)."""
    opener = lzma.open if path.suffix == ".xz" else open
    rows, bad, boards, gpu = [], [], set(), ""
    with opener(path, "rt") as f:
        for line in f:
            line = line.rstrip("\n")
            if b := BOARD.match(line):
                gpu = b["gpu"]
                boards.add(f"{b['gpu']} ({b['uuid']})")
                continue
            if not re.match(PROGRESS, line):
                continue
            m = LINE.match(line)
            if not m:
                bad.append(line)
                continue
            rows.append(dict(
                variant=m["variant"], params=m["params"].strip(), dtype=m["dtype"],
                m=int(m["m"]), n=int(m["n"]), k=int(m["k"]), memory=m["memory"],
                rows=m["rows"] or "", load="sustained" if m["sustained"] else "burst",
                distribution=m["distribution"], kernel_ms=float(m["ms"]),
                kernel_gflops=float(m["gflops"]), verification=m["verification"],
                operation="gemm", gpu_name=gpu))  # fmt: skip
    return rows, bad, boards


def standing_of(d):
    """The ladder's standing table of read rows: its sizes are the square products in the
    preset's own rows, not the padded ones (report/standing.ladder_standing)."""
    from mmbench.report import standing

    return standing.ladder_standing(d[d.rows == ""].drop(columns=["rows"]))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("log", type=Path)
    ap.add_argument("--rows", type=Path, help="write the rows read (CSV)")
    args = ap.parse_args(argv)
    import pandas as pd

    rows, bad, boards = read_log(args.log)
    for line in bad:
        print(f"not read: {line}")
    if not rows:
        print(f"{args.log}: no configuration lines", file=sys.stderr)
        return 1
    d = pd.DataFrame(rows)
    counts = d.verification.value_counts().to_dict()
    print(f"{len(d)} configurations of {d.variant.nunique()} variants read "
          f"({', '.join(f'{n} {v}' for v, n in counts.items())}); {len(bad)} lines not read; "
          f"boards: {', '.join(sorted(boards))}")  # fmt: skip
    if args.rows:
        d.to_csv(args.rows, index=False)
    table = standing_of(d)
    pd.set_option("display.width", 160)
    print(table.drop(columns=["gpu"]).to_string(index=False))
    met = int(table.met.sum())
    print(f"standing targets met: {met} of {len(table)}")
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""The shapes preset's shares split by alignment: per precision class, the best rung's geometric
mean and least share of its cuBLAS over the products whose three sides are multiples of 8 and
over the others, with cuBLAS's median rate in each (lab entry "The shapes preset at seed
726870": cuBLAS's 16-bit GEMM runs unaligned products at a tenth of its rate, which lifts the
BF16 mean far past 100%).

    python lab/benchmarks/shapes_aligned.py SWEEP.csv[.gz|.xz]   a run's report/sweep.csv
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

ALIGN = 8  # elements: 16 bytes of a 16-bit type


def split(sweep: pd.DataFrame) -> pd.DataFrame:
    """One row per class and alignment: products, geometric mean % and least % of the best
    rung's share, cuBLAS's median TFLOP/s."""
    d = sweep.assign(
        aligned=(sweep.m % ALIGN == 0) & (sweep.n % ALIGN == 0) & (sweep.k % ALIGN == 0)
    )
    rows = []
    for (prec, aligned), g in d.groupby(["precision", "aligned"], sort=True):
        share = g["% of ref"] / 100
        rows.append(
            {
                "precision": prec,
                "sides": f"multiples of {ALIGN}" if aligned else "not",
                "products": len(g),
                "geometric mean %": round(100 * float(np.exp(np.log(share).mean())), 1),
                "least %": round(100 * float(share.min()), 1),
                "cuBLAS median TFLOP/s": round(float(g["reference GFLOP/s"].median()) / 1e3, 1),
            }
        )
    return pd.DataFrame(rows)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    print(split(pd.read_csv(argv[0])).to_markdown(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The course kernels' kernel-time medians of two runs of the main command, side by side:
`python3 tools/compare_medians.py BEFORE.csv AFTER.csv` prints one line per configuration
(variant, parameters, size, memory mode), the ratio after / before, and the largest deviation."""

from __future__ import annotations

import sys

import pandas as pd

KEY = ["variant", "params", "m", "memory"]


def main(before: str, after: str) -> int:
    a = pd.read_csv(before, keep_default_na=False)
    b = pd.read_csv(after, keep_default_na=False)
    a = a[a.verification != "ERROR"]
    b = b[b.verification != "ERROR"]
    both = a.merge(b, on=KEY, suffixes=("_before", "_after"))
    both["ratio"] = both.kernel_ms_median_after / both.kernel_ms_median_before
    both = both.sort_values(KEY)
    print(f"{'variant':<16} {'params':<18} {'m':>6} {'memory':<9} {'before ms':>10} "
          f"{'after ms':>10} {'after/before':>12}")  # fmt: skip
    for _, r in both.iterrows():
        print(f"{r.variant:<16} {r.params:<18} {r.m:>6} {r.memory:<9} "
              f"{r.kernel_ms_median_before:>10.3f} {r.kernel_ms_median_after:>10.3f} "
              f"{r.ratio:>12.4f}")  # fmt: skip
    dev = (both.ratio - 1).abs()
    worst = both.loc[dev.idxmax()]
    print(f"{len(both)} configurations in both ({len(a)} before, {len(b)} after); largest "
          f"deviation {100 * dev.max():.2f}% ({worst.variant} {worst.params} {worst.m} "
          f"{worst.memory}); {int((dev > 0.02).sum())} beyond 2%")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

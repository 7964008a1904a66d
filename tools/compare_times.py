"""The kernel times of two runs (each row's kernel_ms: the samples' median under burst load,
their mean under sustained load, core/sampling.Load.statistic), configuration by configuration:
`python3 tools/compare_times.py BEFORE.csv AFTER.csv [--within PCT] [--where COL=VALUE ...]`
prints one line per configuration in both (variant, parameters, element type, shape, memory
mode, inputs, load), the ratio after / before, the largest deviation and how many configurations
deviate by more than PCT percent (default 2); exits 1 if any does.  --where keeps the rows whose
column has that value (e.g. --where load=sustained distribution=normal); --column compares
another time column (batch_ms_median: the batched samples' median).  The last line also gives
the median ratio, over all configurations and for cuBLAS's (the library's launch path) and the
pipeline's own kernels apart."""

from __future__ import annotations

import argparse
import sys

import pandas as pd

from mmbench.core.row import upgraded

KEY = ["variant", "params", "dtype", "m", "n", "k", "memory", "distribution", "load"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--within", type=float, default=2.0, help="percent")
    ap.add_argument("--where", nargs="*", default=[], help="COL=VALUE")
    ap.add_argument("--column", default="kernel_ms", help="the time column (default kernel_ms)")
    a = ap.parse_args()
    tables = []
    for path in (a.before, a.after):
        t = upgraded(pd.read_csv(path, keep_default_na=False))
        t = t[t.verification != "ERROR"]
        t[a.column] = pd.to_numeric(t[a.column], errors="coerce")
        t = t[t[a.column] > 0]  # rows that have the column
        for cond in a.where:
            col, _, value = cond.partition("=")
            t = t[t[col].astype(str) == value]
        tables.append(t)
    before, after = tables
    key = [c for c in KEY if c in before and c in after]
    both = before.merge(after, on=key, suffixes=("_before", "_after"))
    if both.empty:
        print("no configuration in both runs")
        return 1
    col = a.column
    both["ratio"] = both[f"{col}_after"] / both[f"{col}_before"]
    both = both.sort_values(key)
    shown = [c for c in key if c not in ("n", "k")]
    # the SM clock of each: NVML's median while the timed kernels ran, the probe's after them
    clocks = [c for c in ("sm_clock_mhz", "sm_clock_probe_mhz") if f"{c}_before" in both]

    def mhz(r, c):
        before, after = (pd.to_numeric(r[f"{c}_{x}"], errors="coerce") for x in ("before", "after"))
        return f"  {c} {before:.0f} -> {after:.0f}" if before == before else ""

    print("  ".join(shown) + "  before_ms  after_ms  after/before  clocks (MHz)")
    for _, r in both.iterrows():
        cells = [str(r[c]) for c in shown]
        print("  ".join(cells) + f"  {r[f'{col}_before']:.4f}  "
              f"{r[f'{col}_after']:.4f}  {r.ratio:.4f}"
              + "".join(mhz(r, c) for c in clocks))  # fmt: skip
    dev = (both.ratio - 1).abs()
    worst = both.loc[dev.idxmax()]
    beyond = int((dev > a.within / 100).sum())
    print(f"{len(both)} configurations in both ({len(before)} before, {len(after)} after); "
          f"largest deviation {100 * dev.max():.2f}% ({' '.join(str(worst[c]) for c in shown)}); "
          f"{beyond} beyond {a.within:g}%")  # fmt: skip
    library = both.variant.astype(str).str.startswith("cublas")
    parts = [f"all x{both.ratio.median():.4f}"] + [
        f"{name} x{both.ratio[which].median():.4f} ({int(which.sum())})"
        for name, which in (("cuBLAS", library), ("own kernels", ~library))
        if which.any()
    ]
    print(f"{col} median ratio after / before: " + ", ".join(parts))
    return 1 if beyond else 0


if __name__ == "__main__":
    sys.exit(main())

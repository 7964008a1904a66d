"""The knob's calibration (lab/gpu/paired.sh calibrate): tiled_knob's slowdown at each WORK
over WORK = 1000, per size, from the kernel's own timings in one plain run (no comparison):
the median of its single-launch samples and, where the kernel is short enough to be batched, of
its batched samples.

    python3 tools/knob_calibration.py results/knob/tables/timings.csv
"""

import sys

import pandas as pd


def main(path: str) -> None:
    t = pd.read_csv(path)
    t = t[(t.variant == "tiled_knob") & (t.verification == "PASS")]
    for column in ("kernel_ms_median", "batch_ms_median"):
        if column not in t or t[column].isna().all():
            continue
        p = t.pivot_table(index="m", columns="WORK", values=column)
        print(f"{column} (ms) by size and WORK:")
        print(p.to_string(float_format=lambda v: f"{v:.5g}"))
        print(f"slowdown over WORK=1000 ({column}), percent:")
        print(((p.div(p[1000], axis=0) - 1) * 100).to_string(float_format=lambda v: f"{v:+.2f}"))
        print()


if __name__ == "__main__":
    main(sys.argv[1])

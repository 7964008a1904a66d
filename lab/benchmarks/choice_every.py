"""How well the kept calibration (kernels/calibration.csv) chooses a rung's build at products no
fit saw, on a recorded run of every build there (lab/gpu.sh shapes OUT every: its timings
table, with cuBLAS's rows): per product, the chosen build, its speed over the fastest build's,
its share of cuBLAS and the fastest build's; then their geometric means and least.

    python lab/benchmarks/choice_every.py EVERY.csv[.xz] VARIANT DTYPE "GPU MODEL"

e.g. warptile_ring at six FP32 products on an H100:
    python lab/benchmarks/choice_every.py \\
        lab/data/h100-warptile-ring/every-6-fp32-misses.csv.xz warptile_ring float32 \\
        "NVIDIA H100 80GB HBM3"
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from choice_h200 import choice_at_every, load_registry  # noqa: E402


def main() -> int:
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    path, name, dtype, gpu = sys.argv[1:]
    choice_at_every(load_registry(), pd.read_csv(path), name, dtype, gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())

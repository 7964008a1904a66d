"""Benchmark: another placement's result checked in place against the copy to the host and back
(runner.check_again; issue "the main command at the speed of the GPU").  One configuration
(cuBLAS float32, pinned, 4 placements), measured `--rounds` times each way, alternated in one
process; prints, per round, the verdict, the placements the samples reached, the wall time of
the other placements' checks (the runner's `host_phases_ms`) and verify_ms.

    python lab/benchmarks/other_placements_check.py [--size 12000] [--rounds 2]

The old way is the runner's path for host-memory placements (managed, mapped): C copied to the
host and checked from there; it is taken here by making the copy placement say its C is not in
device memory.  Needs a GPU.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "workflow" / "scripts"))

from mmbench.core.axes import Configuration  # noqa: E402
from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.core.row import SAMPLES  # noqa: E402
from mmbench.measure import placement  # noqa: E402
from mmbench.measure.runner import Runner  # noqa: E402
from mmbench.measure.timing import Sampling  # noqa: E402

IN_PLACE = placement.CopyPlacement.device_result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=12000)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    n = args.size
    conf = Configuration.of("cublas", {"dtype": "float32"}, m=n, n=n, k=n, accumulate=False,
                            memory="pinned", distribution="normal", seed=7, math="ieee")  # fmt: skip
    # eight samples: every one of the four placements is reached and checked afterwards
    sampling = Sampling(warmup=1, min_samples=8, max_samples=8, min_time_s=0.0, max_time_s=5.0)
    runner = Runner(load_registry()["cublas"], {}, sampling)
    rows = []
    for way in ["in place", "via the host"] * args.rounds:
        placement.CopyPlacement.device_result = IN_PLACE if way == "in place" else lambda self: None
        runner.run([conf], lambda c, row, way=way: rows.append((way, row)))
    placement.CopyPlacement.device_result = IN_PLACE
    for way, row in rows:
        checks = row[SAMPLES]["host_phases_ms"].get("other placements' checks", [0.0])[0]
        print(f"{way:13s} {row['verification']} placements {row['placements']:.0f}: other "
              f"placements' checks {checks:7.1f} ms, verify_ms {row['verify_ms']:7.1f}")  # fmt: skip
    return 0 if all(row["verification"] == "PASS" for _, row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

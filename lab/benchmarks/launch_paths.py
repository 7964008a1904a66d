"""Do batches launched through cuLaunchKernelEx time a kernel as CuPy's launches do, and what does
each path cost the host?  (docs/method.md, "the held pass's cost": a short kernel's batches grew
when its single launches stopped holding the host's launch, and Python queues each launch.)

The measurement runner (measure/runner.py, `Runner.batch_launch`) launches a batch's kernels
through cuLaunchKernelEx with the arguments packed once (launch.py, DriverLaunch), where the
timed passes keep CuPy's call.  For each configuration of a preset's variants in bursts at the
sizes asked (the short kernels, where the batches are long), this places the operands as the
runner does, then measures the same kernel on the same operands both ways side by side: rounds
of one batch each way in alternating order behind the blocking kernel (the paired comparison's
rounds, measure/paired.py, CuPy as "base" and the driver as "this"), and the host time to queue
one batch each way.  It prints, per configuration, each path's time per launch, their ratio with
its 95% interval (Student's t on the rounds' log ratios), and each path's host microseconds per
launch; then the median ratio and how many intervals lie outside +-0.5%.  On the GPU machine:

    python3 lab/benchmarks/launch_paths.py [--preset config/presets/ladder.yaml]
        [--variants tiled_guarded,warptile_db,...] [--sizes 1 31 33] [--tuned-gpu MODEL]

Without --variants, every variant of the preset that CuPy launches (its cuBLAS and cuBLASLt
references have one path only).  Needs a GPU (CuPy), nvcc and cuda-bindings.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "workflow" / "scripts"))

from mmbench.core.axes import describe as describe_axes  # noqa: E402
from mmbench.core.registry import load_registry  # noqa: E402
from mmbench.measure.paired import Pairing, rounds, t_half_width  # noqa: E402
from mmbench.measure.runner import Runner  # noqa: E402
from mmbench.measure.timing import Sampling  # noqa: E402
from mmbench.plan import plan as mmplan  # noqa: E402
from mmbench.plan import preset as planning  # noqa: E402

PATHS = {"base": "cupy", "this": "driver"}
SAME_WITHIN = 0.005  # the paired comparison's threshold (compare.threshold)


class LaunchPaths(Runner):
    """Each configuration placed once, then its kernel batched through both launch paths."""

    pairing = Pairing(min_rounds=20, min_time_s=0.3, max_time_s=3.0, target=0.001)

    def measure(self, conf, state) -> dict:
        ref = self.reference(conf, state)
        pl = self.placement(conf, state, ref)
        sites = {}
        for build, how in PATHS.items():
            self.batch_launch = how
            sites[build] = self.site(conf, pl, self.lanes[0])
        self.batch_launch = type(self).batch_launch
        pairs = rounds([sites], self.sampling, self.pairing, True, self.nvml.sm_clock)
        host = {b: host_us_per_launch(s, pairs.batch_size) for b, s in sites.items()}
        logs = [math.log(t / b) for b, t in zip(pairs.base_ms, pairs.this_ms, strict=True)]
        # no verdict: nothing is checked here (tests/test_gpu.py checks that both launches
        # write the same C)
        return self.axes(conf) | dict(
            base_ms=statistics.median(pairs.base_ms),
            this_ms=statistics.median(pairs.this_ms),
            ratio=math.exp(statistics.fmean(logs)),
            half_width=t_half_width(pairs.base_ms, pairs.this_ms),
            rounds=len(pairs.this_ms),
            batch_size=pairs.batch_size,
            host_us_cupy=host["base"],
            host_us_driver=host["this"],
        )

    def describe(self, row: dict) -> str:
        if "ratio" not in row:
            return f"{describe_axes(row)}: ERROR {row.get('error', '')}"
        return (
            f"{describe_axes(row)}: CuPy {row['base_ms'] * 1e3:.3f} us, driver "
            f"{row['this_ms'] * 1e3:.3f} us a launch, x{row['ratio']:.4f} "
            f"+-{row['half_width']:.2%} ({row['rounds']} rounds of {row['batch_size']}); host "
            f"{row['host_us_cupy']:.1f} against {row['host_us_driver']:.1f} us a launch"
        )


def host_us_per_launch(site, count: int, repeats: int = 5) -> float:
    """The host's time to queue one batch of `count` launches behind the blocking kernel (its
    median over `repeats` batches), per launch."""
    batcher, times = site.lane.batcher(), []
    for _ in range(repeats):
        t0 = time.perf_counter()
        start, end = batcher.queue(site.launch, count)
        times.append(time.perf_counter() - t0)
        end.synchronize()
        batcher.check()
    return statistics.median(times) / count * 1e6


def cupy_launched(preset: str, registry) -> list[str]:
    """The preset's variants whose timed passes CuPy launches: compiled cubins (a shared build,
    CUTLASS's, launches its own kernels), and no tensor maps or clusters (those launch through
    the driver everywhere: launch.py)."""
    out = []
    for name in planning.preset_config(preset, registry)["variants"]:
        v = registry[name]
        if v.compiled and not v.library_launched:
            spec = v.launch_spec(v.instantiations()[0], 64, 64, 64, (64, 64, 64), False)
            if not spec.needs_driver:
                out.append(name)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default=str(ROOT / "config" / "presets" / "ladder.yaml"))
    ap.add_argument("--variants", default="", help="comma-separated; default: the preset's")
    ap.add_argument("--sizes", type=int, nargs="+", default=[1, 31, 33])
    ap.add_argument("--tuned-gpu", default="", help="another GPU model's tuning (config tuned_gpu)")
    ap.add_argument("--arch", default="")
    args = ap.parse_args()
    registry, pr = load_registry(), planning
    gpus = mmplan.detect_gpus()
    if not gpus:
        sys.exit("launch_paths: no GPU (nvidia-smi sees none); run it on the GPU machine")
    arch = args.arch or "sm_" + gpus[0]["compute_cap"].replace(".", "")
    names = [x for x in args.variants.split(",") if x] or cupy_launched(args.preset, registry)
    rows = []
    for name in names:
        if name not in registry:
            sys.exit(f"launch_paths: unknown variant {name!r}; valid: {', '.join(registry)}")
        plan, cfg = pr.plan_for(args.preset, name, arch, gpus, registry, args.tuned_gpu)
        confs = [c for c in plan.runs.get(name, [])
                 if c.load == "burst" and c.m in args.sizes and c.n in args.sizes]  # fmt: skip
        if not confs:
            print(f"{name}: no burst configuration at {args.sizes} in the preset")
            continue
        v = registry[name]
        runner = LaunchPaths(v, pr.compile_plan(plan, v, arch), Sampling(**cfg["sampling"]), {},
                             cfg["freivalds_vectors"])  # fmt: skip
        try:
            runner.run(confs, lambda c, row: rows.append(row))
        finally:
            runner.close()
        for r in rows[-len(confs) :]:
            print(runner.describe(r), flush=True)
    done = [r for r in rows if "ratio" in r]
    if not done:
        print("launch_paths: nothing measured")
        return 1
    ratios = [r["ratio"] for r in done]
    # beyond +-0.5% with its whole interval (the paired comparison's SLOWER or FASTER)
    outside = [r for r in done if r["ratio"] * (1 - r["half_width"]) > 1 + SAME_WITHIN
               or r["ratio"] * (1 + r["half_width"]) < 1 - SAME_WITHIN]  # fmt: skip
    print(
        f"{len(done)} configurations of {len(names)} variants: driver / CuPy time a launch, "
        f"median x{statistics.median(ratios):.4f} (x{min(ratios):.4f} to x{max(ratios):.4f}); "
        f"{len(outside)} beyond +-{SAME_WITHIN:.1%} with their interval; host "
        f"{statistics.median(r['host_us_cupy'] for r in done):.1f} against "
        f"{statistics.median(r['host_us_driver'] for r in done):.1f} us a launch (medians)"
    )
    return 0 if len(done) == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())

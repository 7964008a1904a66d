"""The program the profilers run: one configuration, launched warm-up + 1 times.

    python -m mmbench.profile_target SPEC.json [--event-json OUT.json] [--cupti-json OUT.json]

It copies A and B to the device, launches the kernel `warmup` times and once more (the launch
ncu profiles: --launch-skip warmup --launch-count 1) through launch.py, exactly as the runner
launches it (cuBLAS included), copies C back and checks it against a float64 product.  With
--event-json (run without a profiler) it also times 20 more launches with CUDA events (enqueued
back to back, each between its own pair of events), so the metrics table can set Nsight
Compute's duration beside the event-timed kernel time.  With
--cupti-json it records the whole run with CUPTI (cupti.py: every kernel and copy), times the 20
launches with CUDA events as well, and writes the records and both times of those launches.
"""

from __future__ import annotations

import json
import statistics
import sys

import numpy as np


def main(argv: list[str]) -> int:
    if "--cupti-json" not in argv:
        return run(argv)
    from . import cupti

    records: list[dict] = []
    timed: dict = {}
    with cupti.recording(records):
        code = run(argv, timed)
    spec = json.loads(open(argv[0]).read())
    out = dict(
        kernel=spec["kernel_name"],
        records=records,
        event_kernel_ms=timed.get("times", []),
        cupti_kernel_ms=cupti.kernel_times(
            records, spec["kernel_name"], len(timed.get("times", []))
        ),
        verified=timed.get("verified"),
    )
    json.dump(out, open(argv[argv.index("--cupti-json") + 1], "w"))
    return code


def run(argv: list[str], timed: dict | None = None) -> int:
    import cupy as cp

    from .launch import Modules, launcher
    from .oracle import make_inputs
    from .plan import Configuration
    from .registry import load_registry

    spec = json.loads(open(argv[0]).read())
    conf = Configuration.from_dict(spec["configuration"])
    v = load_registry(spec["registry"])[conf.variant]
    a, b, _ = make_inputs(conf)
    dA, dB = cp.asarray(a), cp.asarray(b)  # H2D copies (in the nsys time split)
    dC = cp.empty((conf.m, conf.n), dtype=a.dtype)
    stream = cp.cuda.Stream(non_blocking=True)
    launch, _, _ = launcher(
        cp,
        v,
        conf.instance_params,
        Modules(cp),
        spec.get("cubin"),
        (dA.data.ptr, dB.data.ptr, dC.data.ptr),
        (conf.k, conf.n, conf.n),
        conf.m,
        conf.n,
        conf.k,
        False,
        stream,
    )
    for _ in range(int(spec.get("warmup", 3)) + 1):
        with stream:  # cuBLAS launches on the current stream (the runner's PassTimer does this)
            launch()
    stream.synchronize()
    c = dC.get()  # D2H copy
    ref = a.astype(np.float64) @ b.astype(np.float64) if conf.m * conf.n * conf.k <= 2**33 else None
    ok = ref is None or bool(np.allclose(c, ref, rtol=1e-4, atol=1e-3))
    if "--event-json" in argv or timed is not None:
        # 20 launches enqueued back to back, each between its own pair of events: the GPU
        # never waits for the host between a start event and its kernel (a launch enqueued
        # after an idle GPU recorded its start event would count the launch latency)
        events = [(cp.cuda.Event(), cp.cuda.Event()) for _ in range(20)]
        with stream:
            launch()  # keeps the GPU busy while the timed launches are enqueued
        for start, stop in events:
            start.record(stream)
            with stream:
                launch()
            stop.record(stream)
        stream.synchronize()
        times = [cp.cuda.get_elapsed_time(start, stop) for start, stop in events]
        if timed is not None:
            timed.update(times=times, verified=ok)
        else:
            json.dump(
                dict(event_kernel_ms=statistics.median(times), samples=len(times), verified=ok),
                open(argv[argv.index("--event-json") + 1], "w"),
            )
    return 0 if ok else 4


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

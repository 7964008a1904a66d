"""The program the profilers run: one configuration, launched warm-up + 1 times.

    python -m mmbench.profile_target SPEC.json [--event-json OUT.json]

It copies A and B to the device, launches the kernel `warmup` times and once more (the launch
ncu profiles: --launch-skip warmup --launch-count 1), copies C back, and checks the result.
With --event-json (run without a profiler) it also times 20 more launches with CUDA events, so
the metrics table can set Nsight Compute's duration beside the event-timed kernel time.
"""

from __future__ import annotations

import json
import statistics
import sys

import numpy as np


def main(argv: list[str]) -> int:
    import cupy as cp

    from .plan import Configuration
    from .registry import load_registry
    from .runner import make_inputs

    spec = json.loads(open(argv[0]).read())
    conf = Configuration(**spec["configuration"])
    v = load_registry(spec["registry"])[conf.variant]
    a, b, _ = make_inputs(conf)
    dA, dB = cp.asarray(a), cp.asarray(b)  # H2D copies (in the nsys/nvprof time split)
    dC = cp.empty((conf.m, conf.n), dtype=a.dtype)
    if v.backend == "cublas":

        def launch():
            cp.matmul(dA, dB, out=dC)
    else:
        fn = cp.RawModule(path=spec["cubin"]).get_function(v.symbol)
        grid, block = v.launch(conf.m, conf.n, conf.k, conf.tile, conf.coarsen)
        i32 = np.int32
        args = (
            dA,
            dB,
            dC,
            i32(conf.m),
            i32(conf.n),
            i32(conf.k),
            i32(conf.k),
            i32(conf.n),
            i32(conf.n),
            i32(0),
        )

        def launch():
            fn(grid, block, args)

    for _ in range(int(spec.get("warmup", 3)) + 1):
        launch()
    c = dC.get()  # D2H copy
    ref = a.astype(np.float64) @ b.astype(np.float64) if conf.m * conf.n * conf.k <= 2**33 else None
    ok = ref is None or bool(np.allclose(c, ref, rtol=1e-4, atol=1e-3))
    if "--event-json" in argv:
        out = argv[argv.index("--event-json") + 1]
        start, stop = cp.cuda.Event(), cp.cuda.Event()
        times = []
        for _ in range(20):
            start.record()
            launch()
            stop.record()
            stop.synchronize()
            times.append(cp.cuda.get_elapsed_time(start, stop))
        json.dump(
            dict(event_kernel_ms=statistics.median(times), samples=len(times), verified=ok),
            open(out, "w"),
        )
    return 0 if ok else 4


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

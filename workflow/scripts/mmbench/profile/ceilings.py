"""The device's measured ceilings for the roofline: peak FP32 and FP64 FMA rates (the
kernels/microbench/peak.cu chains) and DRAM bandwidth (a large device-to-device copy,
counting bytes read plus bytes written).  Best of several runs, after a warm-up."""

from __future__ import annotations

import numpy as np

from mmbench.measure.device import DEVICE_ATTRIBUTES, device_facts


def measure(cubin: str, repeats: int = 5) -> dict:
    import cupy as cp

    dev = cp.cuda.Device()
    sms = cp.cuda.runtime.deviceGetAttribute(DEVICE_ATTRIBUTES["multiprocessors"], dev.id)
    mod = cp.RawModule(path=cubin)
    threads, blocks, iters = 256, sms * 16, 4096
    out = {}
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    for name, dt in (("fp32", np.float32), ("fp64", np.float64)):
        fn = mod.get_function(f"peak_{name}")
        buf = cp.empty(threads * blocks, dtype=dt)
        args = (buf, np.int32(iters), dt(0.999), dt(0.001))
        fn((blocks,), (threads,), args)

        def run(fn=fn, args=args):
            fn((blocks,), (threads,), args)

        best = min(_time(run, start, stop) for _ in range(repeats))
        out[f"peak_{name}_gflops"] = 2 * 8 * iters * threads * blocks / (best * 1e-3) / 1e9
    nbytes = 4 << 30
    src = cp.ones(nbytes // 4, dtype=cp.float32)
    dst = cp.empty_like(src)

    def copy():
        cp.cuda.runtime.memcpyAsync(
            dst.data.ptr, src.data.ptr, nbytes, cp.cuda.runtime.memcpyDeviceToDevice, 0
        )

    copy()
    best = min(_time(copy, start, stop) for _ in range(10))
    out["dram_bandwidth_gbs"] = 2 * nbytes / (best * 1e-3) / 1e9
    facts = device_facts(cp)
    return (
        dict(
            gpu_name=facts["gpu_name"],
            gpu_uuid=facts["gpu_uuid"],
            driver_version=facts["driver_version"],
        )
        | out
    )


def _time(fn, start, stop) -> float:
    import cupy as cp

    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return cp.cuda.get_elapsed_time(start, stop)

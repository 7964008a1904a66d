"""Profiled kernels placed on the roofline: each kernel's FLOPs and DRAM bytes (Nsight Compute,
tables/metrics.csv) against the device's measured ceilings (ceilings.py, tables/ceilings.csv)."""

from __future__ import annotations

import pandas as pd

from mmbench.core import arith


def table(metrics: pd.DataFrame, ceilings: pd.DataFrame) -> pd.DataFrame:
    """Per profiled kernel: FLOPs and DRAM bytes -> arithmetic intensity and achieved rate,
    with the ceilings and which one bounds it."""
    rows = []
    ok = metrics[metrics.status == "ok"]
    keys = ["variant", "label", "instance", "dtype", "m", "n", "k"]
    c = ceilings.iloc[0]
    for key, g in ok.groupby(keys):
        val = dict(zip(g.metric, g.value, strict=True))
        conf = dict(zip(keys, key, strict=True))
        flops = val.get("flop_count_dp" if conf["dtype"] == "float64" else "flop_count_sp")
        # tensor-core kernels (mma, cuBLAS in TF32 or DGEMM on the DMMA units) execute no FFMA
        # or DFMA, so the counters miss their work: place them by the product's 2mnk
        algorithmic = arith.flops(int(conf["m"]), int(conf["n"]), int(conf["k"]))
        source = "counted (FMA instructions)"
        if not flops or flops < 0.5 * algorithmic:
            flops, source = algorithmic, "2mnk (tensor cores: not in the FMA counters)"
        dram = (val.get("dram_read_bytes") or 0) + (val.get("dram_write_bytes") or 0)
        dur = val.get("duration")
        if not flops or not dram or not dur:
            continue
        peak = c["peak_fp64_gflops"] if conf["dtype"] == "float64" else c["peak_fp32_gflops"]
        ai = flops / dram
        achieved = flops / (dur * 1e-3) / 1e9
        # bytes the kernel loaded from global memory through L1 (GB/s x s)
        l1 = (val.get("gld_throughput") or 0) * 1e9 * dur * 1e-3
        l1_ai = flops / l1 if l1 else float("nan")
        attainable = min(peak, ai * c["dram_bandwidth_gbs"])
        rows.append(
            conf
            | dict(
                flops=flops,
                flop_source=source,
                dram_bytes=dram,
                duration_ms=dur,
                arithmetic_intensity=ai,
                l1_global_load_bytes=l1,
                l1_arithmetic_intensity=l1_ai,
                achieved_gflops=achieved,
                peak_gflops=peak,
                dram_bandwidth_gbs=c["dram_bandwidth_gbs"],
                ridge_point=peak / c["dram_bandwidth_gbs"],
                attainable_gflops=attainable,
                fraction_of_attainable=achieved / attainable,
                bound="memory" if ai < peak / c["dram_bandwidth_gbs"] else "compute",
                gpu_name=c["gpu_name"],
            )
        )
    return pd.DataFrame(rows)

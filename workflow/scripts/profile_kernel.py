"""Snakemake job: profile one configuration (rule profile_kernel) into tidy metric rows."""

import logging
import os
import sys
from pathlib import Path

import pandas as pd

from mmbench import gpus
from mmbench.plan import detect_gpus
from mmbench.profilers import METRIC_COLUMNS
from mmbench.profiling import profile
from mmbench.tables import atomic_write_csv


def main(sm) -> None:
    logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(asctime)s %(message)s")
    sys.stderr = open(sm.log[0], "a", buffering=1)
    conf = dict(sm.params.configuration)
    out = Path(sm.output[0])
    cubins = [str(x) for x in sm.input]
    spec = dict(
        configuration=conf,
        registry=sm.params.registry,
        cubin=cubins[0] if cubins else None,
        kernel_name=sm.params.kernel_name,
        warmup=sm.params.warmup,
        metric_set=sm.params.metric_set,
    )
    visible = detect_gpus()
    cc = float(visible[0]["compute_cap"]) if visible else 9.0
    pkg_parent = str(Path(__file__).resolve().parent)
    with gpus.acquire(log=logging.getLogger("mmbench.profiling")) as env:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [pkg_parent, env.get("PYTHONPATH")]))
        rows = profile(spec, out.with_suffix(""), sm.params.tools, cc, env)
    axes = {k: conf[k] for k in ("variant", "dtype", "tile", "coarsen", "m", "n", "k", "memory")}
    df = pd.DataFrame([axes | r for r in rows])
    df = df.reindex(columns=list(axes) + METRIC_COLUMNS)
    df["gpu_name"] = visible[0]["name"] if visible else ""
    atomic_write_csv(df, out)


main(snakemake)  # noqa: F821

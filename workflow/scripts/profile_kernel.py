"""Snakemake job: profile one configuration (rule profile_kernel) into tidy metric rows."""

import json
import logging
import sys
from pathlib import Path

import pandas as pd

from mmbench.core.axes import Configuration
from mmbench.core.nvidia_smi import detect_gpus
from mmbench.core.tables import atomic_write_csv
from mmbench.profile.profilers import METRIC_COLUMNS
from mmbench.profile.profiling import ProfileFailed, profile
from mmbench.service import gpus, programs, served


def main(sm) -> None:
    logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(asctime)s %(message)s")
    sys.stderr = open(sm.log[0], "a", buffering=1)
    served.end_on_sigterm()  # stopped, the job ends the worker running its target
    spec = dict(sm.params.spec)  # the target's (common.smk target_spec)
    conf = Configuration.from_dict(spec["configuration"])
    out = Path(sm.output.table)
    # this configuration's rows from the batch (rule profile_ncu), where it has them
    batch = json.loads(Path(sm.input.ncu_batch[0]).read_text()) if sm.input.ncu_batch else {}
    stem = str(sm.output.table).removesuffix(".csv")
    ncu_rows = batch.get("ncu", {}).get(stem)
    target = batch.get("targets", {}).get(stem)  # its event-timed run, made by the batch
    visible = detect_gpus()
    try:
        # the GPU is held while the target and the profilers run on it, not while their
        # reports are read (profiling.profile); the target's runs without a profiler happen in
        # the run's worker, where a local run has one (common.smk SERVE_WORKER)
        rows = profile(spec, Path(sm.output.reports), sm.params.tools,
                       lambda: gpus.acquire(log=logging.getLogger("mmbench.profile.profiling")),
                       programs.Launch(serve=served.for_this_job(sm.params.serve)), ncu_rows,
                       target)  # fmt: skip
    except served.Terminated as err:
        print(f"profile_kernel {conf.label} {conf.m}x{conf.n}x{conf.k}: {err}", file=sys.__stderr__)
        raise SystemExit(served.TERMINATED_EXIT) from None
    except (ProfileFailed, gpus.NoGpuVisible) as err:
        # say why on the console; no table is written, so the next run profiles it again
        print(f"profile_kernel {conf.label} {conf.m}x{conf.n}x{conf.k}: {err}", file=sys.__stderr__)
        raise SystemExit(1) from None
    axes = conf.axes()
    df = pd.DataFrame([axes | r for r in rows])
    df = df.reindex(columns=list(axes) + METRIC_COLUMNS)
    df["gpu_name"] = visible[0]["name"] if visible else ""
    atomic_write_csv(df, out)


main(snakemake)  # noqa: F821

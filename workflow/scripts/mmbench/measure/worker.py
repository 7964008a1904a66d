"""Worker process of a measurement job (see jobs.py): `python -m mmbench.measure.worker SPEC.json`.

With `--wait` it starts (the interpreter, this package and its libraries: no CUDA call) and then
waits for one line on its standard input, the GPU it may use as JSON (CUDA_VISIBLE_DEVICES, ...)
that its job sends once it holds that GPU's lock (measure/gpus.py); only then does it read the
spec, import CuPy and reach the GPU.  A job started while another holds the GPU thus has its
worker ready when the GPU comes free.  An empty line (the job ended first) ends it quietly.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time

from mmbench.core.axes import Configuration
from mmbench.core.registry import load_registry
from mmbench.measure.device import device_properties
from mmbench.measure.jobs import CONTEXT_LOST_EXIT, NEVER_TOLD_EXIT, NO_GPU_EXIT, file_sha
from mmbench.measure.journal import (
    append_jsonl,
    device_record,
    fatal_record,
    process_started_at,
    row_record,
    start_record,
    times_record,
)
from mmbench.measure.runner import ContextLost, Runner
from mmbench.measure.timing import Sampling


def main(spec_path: str, wait: bool = False) -> int:
    imported = time.time()  # the interpreter and this package's imports: from the process's start
    if wait:  # the GPU this worker may use, once its job holds it: before any CUDA call
        line = sys.stdin.readline()
        if not line.strip():
            return NEVER_TOLD_EXIT
        os.environ.update(json.loads(line))
    told = time.time()
    spec = json.loads(open(spec_path).read())
    fmt = logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S")
    root = logging.getLogger()
    root.setLevel(logging.INFO)
    for handler in (logging.FileHandler(spec["log"]), logging.StreamHandler(sys.stdout)):
        handler.setFormatter(fmt)
        root.addHandler(handler)
    variant = load_registry(spec["registry"])[spec["variant"]]
    cubins = spec["instantiations"]  # instantiation slug -> cubin
    settings = spec["settings"]
    journal = spec["journal"]
    keys = {}
    confs = []
    for key, c in spec["todo"]:
        conf = Configuration.from_dict(c)
        keys[conf] = key
        confs.append(conf)
    try:  # reaching the GPU: CuPy, the driver, a device
        import cupy

        cupy_at = time.time()
        provenance = {"source_sha256": spec["source_sha"]}
        sampling = Sampling(**settings["sampling"])
        if spec.get("baseline"):  # two builds side by side (measure/paired.py)
            from mmbench.measure.paired import PairedRunner, Pairing

            other = settings.get("baseline_registry")
            runner = PairedRunner(
                variant, cubins, spec["baseline"], sampling, Pairing(**settings["pairing"]),
                provenance, settings["freivalds_vectors"],
                load_registry(other)[spec["variant"]] if other else None,
            )  # fmt: skip
        else:
            runner = Runner(variant, cubins, sampling, provenance, settings["freivalds_vectors"])
    except Exception as err:  # noqa: BLE001 - whatever it is, no configuration can run
        cause = f"{type(err).__name__}: {err}".strip()
        logging.error("no usable GPU: %s", cause)
        append_jsonl(journal, fatal_record(f"no usable GPU: {cause}"))
        return NO_GPU_EXIT

    properties = device_properties(cupy) | {"uuid": runner.facts["gpu_uuid"]}
    append_jsonl(journal, device_record(properties))
    # where a job's start-up goes (benchmarks/harness_phases.py): CuPy's import, then the CUDA
    # context, the cubins, cuBLAS and the runner's checks
    append_jsonl(journal, times_record(process=process_started_at(), imported=imported,
                                       told=told, cupy=cupy_at, ready=time.time()))  # fmt: skip
    logging.info(
        "%s: %d configurations on %s (%s)",
        variant.name,
        len(confs),
        runner.facts["gpu_name"],
        runner.facts["gpu_uuid"],
    )
    # every row names the cubin and the launch spec that made it
    launch = variant.launch_sha()
    cubin_shas = {name: file_sha(path) for name, path in cubins.items()}
    # a pair's row names its baseline build's too (a library call's: "library")
    base_shas = {n: file_sha(p) if p else "library" for n, p in spec.get("baseline", {}).items()}

    def identity(conf, row: dict) -> dict:
        row = row | dict(cubin_sha256=cubin_shas.get(conf.instance, ""), launch_sha256=launch)
        if base_shas:
            row["base_cubin_sha256"] = base_shas.get(conf.instance, "")
        return row

    try:
        runner.run(
            confs,
            on_row=lambda conf, row: append_jsonl(
                journal, row_record(keys[conf], identity(conf, row))
            ),
            on_start=lambda conf: append_jsonl(journal, start_record(keys[conf])),
        )
    except ContextLost as err:
        logging.error("CUDA context lost: %s; a new worker takes the rest", err)
        return CONTEXT_LOST_EXIT
    finally:
        append_jsonl(journal, times_record(done=time.time()))
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    sys.exit(main(args[-1], wait="--wait" in args[:-1]))

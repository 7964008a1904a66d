"""Snakemake job (rule profile_ncu): Nsight Compute on every configuration of the profile section
in one run of the profiler, their metric rows by configuration for the profile jobs.

Each profile job used to run Nsight Compute alone on its configuration: the profiler's start, a
process, its imports and a CUDA context under the profiler's interception, 5-8 s on an H100
machine for one kernel's metrics (docs/method.md).  Here one process runs them all, each timed
pass in a profiler range of its own (profile/target.py --batch, profiling.record_ncu_batch).  A
configuration whose rows this job could not get (its result did not verify, the batch failed, the
report's ranges did not match) is left out of the table: its profile job profiles it alone, as
before.  The journal beside the table keeps each configuration's rows under the key of what made
them (its spec, its cubin, its launch, the profiler's version, the GPU), so that after one
kernel's edit only its configurations are profiled again; deleting it profiles them all.

While it holds the GPU, the job also runs every configuration's event-timed target (and CUPTI's
recording, where the run wants it) in the run's worker (profiling.record_targets): the profile
jobs then take their rows from here and hold the GPU only for what is left (a configuration the
batch could not profile, Nsight Systems).
"""

import json
import logging
import sys
from pathlib import Path

from mmbench.core.registry import load_registry
from mmbench.core.tables import atomic_write_text
from mmbench.profile import profilers
from mmbench.profile.profiling import (
    batch_key,
    read_ncu_batch,
    record_ncu_batch,
    record_targets,
)
from mmbench.service import gpus, programs, served

log = logging.getLogger("mmbench.profile.batch")


def main(sm) -> None:
    logging.basicConfig(filename=sm.log[0], level=logging.INFO, format="%(asctime)s %(message)s")
    sys.stderr = open(sm.log[0], "a", buffering=1)
    served.end_on_sigterm()  # stopped, the job ends the worker running its targets
    out = Path(sm.output[0])
    workdir = out.with_suffix("")  # the batch's specs, report and logs
    journal_path = out.with_name(out.stem + ".journal.json")
    workdir.mkdir(parents=True, exist_ok=True)
    ncu = profilers.find_tool("ncu", sm.params.ncu)
    version = profilers.tool_version(ncu) if ncu else None
    try:
        journal = json.loads(journal_path.read_text())
    except (OSError, json.JSONDecodeError):
        journal = {}
    specs = {e["stem"]: e["spec"] for e in sm.params.entries}  # common.smk target_spec
    paths = {}
    for i, (stem, spec) in enumerate(specs.items()):
        paths[stem] = workdir / f"spec-{i}.json"
        paths[stem].write_text(json.dumps(spec))
    mapping = profilers.load_mapping()
    rows: dict[str, list[dict]] = {}
    targets: dict[str, dict] = {}
    keys, todo = {}, []
    if ncu is None:  # each profile job says so in its rows
        log.info("no Nsight Compute (profile.ncu: %s): nothing profiled here", sm.params.ncu)
    try:
        with gpus.acquire(log=log) as gpu_env:
            env = dict(gpu_env)
            # rows are kept for the GPU that made them (its host and UUID), as measurements are
            gpu = env.get(gpus.GPU_KEY_VAR, "")
            for stem, spec in specs.items() if ncu else ():
                variant = load_registry(spec["registry"])[spec["configuration"]["variant"]]
                launch = variant.launch_sha()
                keys[stem] = batch_key(spec, launch, f"{version} {gpu}")
                if journal.get(stem, {}).get("key") == keys[stem]:
                    rows[stem] = journal[stem]["rows"]
                    continue
                todo.append((stem, paths[stem]))
            recorded, done = [], []
            if todo:
                recorded, done = record_ncu_batch(
                    ncu, todo, workdir, mapping, sm.params.metric_set, env, programs.Launch()
                )
            # every configuration's event-timed run (CUPTI's too, where wanted) in the run's
            # worker, while the GPU is held: its profile job then needs no GPU of its own.  (Not
            # under SLURM, where each profile job is an allocation of its own and would run its
            # target there at once, while here each would be a process started in turn.)
            if served.for_this_job(sm.params.serve):
                targets = record_targets(list(paths.items()), workdir, env, sm.params.cupti,
                                         programs.Launch(serve=True))  # fmt: skip
        got = read_ncu_batch(ncu, recorded, done, specs, workdir, mapping,
                             sm.params.metric_set, env, version) if todo else {}  # fmt: skip
        for d in done:
            if d["stem"] not in got:
                log.warning("%s: not profiled in the batch (exit code %s%s); its profile job "
                            "profiles it alone", d["stem"], d.get("code"),
                            f", {d['error']}" if d.get("error") else "")  # fmt: skip
        for stem, made in got.items():
            rows[stem] = made
            journal[stem] = dict(key=keys[stem], rows=made)
        atomic_write_text(journal_path, json.dumps(journal))
    except gpus.NoGpuVisible as err:  # the profile jobs fail with the same cause
        log.warning("no GPU for the batch: %s", err)
    except served.Terminated:
        raise
    except Exception:  # noqa: BLE001 - the profile jobs profile their configurations alone
        log.exception("the batch failed; each profile job profiles its configuration alone")
    kept = len(keys) - len(todo)
    log.info("%d of %d configurations profiled here (%d in this run of Nsight Compute, %d kept "
             "from an earlier one); %d targets run here", len(rows), len(specs),
             len(rows) - kept, kept, len(targets))  # fmt: skip
    atomic_write_text(out, json.dumps(dict(ncu=rows, targets=targets)))


main(snakemake)  # noqa: F821

"""The program the profilers run: one configuration, measured by the runner itself.

    python -m mmbench.service.programs profile.target SPEC.json [--event-json OUT.json]
        [--cupti-json OUT.json]

(service/programs.py gives it its session, with the run's inputs cache, and runs it in a process
of its own or in the run's served worker.)

It runs the measurement runner (measure/runner.py) on the one configuration: the same placement,
launch (measure/launch.py), verification (against the float64 reference, at every size) and
timing (measure/timing.py) as a measurement job.  Nsight Compute profiles the first timed launch
(`--launch-skip` = timing.launches_before_timed, `--launch-count 1`).  With --event-json (run
without a profiler) it writes the kernel time the runner measured (CUDA events around each
timed kernel), so the metrics table sets Nsight Compute's duration beside it.  With
--cupti-json it records the whole run with CUPTI (cupti.py: every kernel and copy) and writes
the records with both times of the timed launches.  Given both, the event-timed run comes first,
before CUPTI is subscribed, and the recorded run after it in the same process (one process start
and CUDA context fewer for the profile job, which holds the GPU).  The exit code is 4 where the
result did not verify.

    python -m mmbench.service.programs profile.target --batch LIST.json OUT.json

runs several configurations one after another in one process, for one Nsight Compute run
(`--profile-from-start off`: profiling.record_ncu_batch): each one's timed pass runs between
cudaProfilerStart and cudaProfilerStop, after a launch of an empty kernel named MARKER where the
list says so (`marker`: where the configuration's kernel names cannot be told from the one's
before it), so that the report's launches split into one group per configuration
(profiling.split_by_config).  LIST.json names the spec files in order; OUT.json says, for each,
whether its range was opened (and with a MARKER), its exit code and its error.
"""

from __future__ import annotations

import json
import statistics
import sys
import time

NOT_VERIFIED_EXIT = 4
# the samples the event-timed run takes (the runner's stopping rule, with this as its minimum)
EVENT_SAMPLES = 20


# the empty kernel launched first in each configuration's profiled range (--batch)
MARKER = "mmbench_profile_marker"


def main(argv: list[str], session=None) -> int:
    """The program's runs; `session` (measure/session.py): its process's, or a served worker's,
    whose context, references and host buffers they use (service/programs.py)."""
    if argv[:1] == ["--batch"]:
        return batch(argv[1], argv[2], session)
    if "--cupti-json" not in argv:
        return run(argv, session=session)
    event = None
    if "--event-json" in argv:  # first, with no CUPTI subscribed yet; then the recorded run
        event = run(without(argv, "--cupti-json"), session=session)
    from mmbench.profile import cupti

    records: list[dict] = []
    timed: dict = {}
    with cupti.recording(records):
        code = run(without(argv, "--event-json"), timed, session)
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
    return code if event is None else max(event, code)


def without(argv: list[str], flag: str) -> list[str]:
    """argv less `flag` and its value."""
    if flag not in argv:
        return argv
    i = argv.index(flag)
    return argv[:i] + argv[i + 2 :]


def sampling_of(spec: dict, timed_run: bool):
    """The run's sampling settings, its warm-up as the profile section says; a timed run (event
    or CUPTI) takes at least EVENT_SAMPLES samples, a profiled one as few as the rule allows.
    No batched samples and one placement: the profilers and the activity tables see the timed
    passes on the verified operands only."""
    from mmbench.measure.timing import Sampling

    s = Sampling(**spec.get("sampling", {}))
    s.warmup = int(spec.get("warmup", s.warmup))
    s.batch_min_ms = 0.0  # batch_size() is then 1: no batches
    s.placements = 1  # the profiled launches on the verified placement
    if timed_run:
        s.min_samples = max(s.min_samples, EVENT_SAMPLES)
    else:  # under a profiler each timed launch may be replayed: one is enough
        s.min_samples, s.min_time_s, s.stop = 1, 0.0, "count"
    return s


def batch(list_path: str, out_path: str, session=None) -> int:
    """Each spec of LIST.json profiled in turn, in one process and one session (the inputs'
    references shared where their shapes are): its timed pass in a profiler range of its own,
    opened by a MARKER launch where the list asks for one.  OUT.json is written after each, so what ran is said even where
    a later one ends the process; a lost context ends the batch (the rest is left to the
    profile jobs' own runs)."""
    import contextlib
    import traceback

    import cupy as cp

    from mmbench.measure.runner import ContextLost

    marker = cp.RawKernel(f'extern "C" __global__ void {MARKER}() {{}}', MARKER)
    marker((1,), (1,), ())  # compiled and loaded now, outside every range (never profiled)
    cp.cuda.runtime.deviceSynchronize()
    if session is None:
        from mmbench.measure.session import Session

        session = Session(keeps=True)
    done: list[dict] = []

    for item in json.loads(open(list_path).read()):
        ranged: list[bool] = []
        in_range: list[float] = []  # seconds inside the range: the profiler's replays

        marked = bool(item.get("marker", True))

        @contextlib.contextmanager
        def profiled(ranged=ranged, in_range=in_range, marked=marked):
            cp.cuda.runtime.deviceSynchronize()
            opened = time.time()
            cp.cuda.runtime.profilerStart()
            try:
                if marked:
                    marker((1,), (1,), ())
                ranged.append(True)
                yield
            finally:
                cp.cuda.runtime.deviceSynchronize()
                cp.cuda.runtime.profilerStop()
                in_range.append(time.time() - opened)

        # when each configuration began and ended, and its time in its range (lab/gpu.sh
        # speed OUT profiles: where a batch's time goes, the profiler's replays or the rest)
        entry = dict(stem=item["stem"], marker=marked, code=None, error="", started=time.time())
        lost = False
        launched: dict = {}  # the grid it launched: the report's launch must have it
        try:
            entry["code"] = run([item["spec"]], session=session, timed_range=profiled,
                                launched=launched)  # fmt: skip
        except Exception as err:  # noqa: BLE001 - said in OUT.json; its job profiles it alone
            entry["error"] = f"{type(err).__name__}: {err}"
            traceback.print_exc()
            lost = isinstance(err, ContextLost)
        done.append(entry | dict(ranged=bool(ranged), ended=time.time(), range_s=sum(in_range),
                                 grid=launched.get("grid", "")))  # fmt: skip
        with open(out_path, "w") as fh:
            json.dump(done, fh)
        if lost:
            break
    return 0


def run(argv: list[str], timed: dict | None = None, session=None, timed_range=None,
        launched: dict | None = None) -> int:  # fmt: skip
    """The target's run of one configuration (the module's docstring); `timed` receives its
    kernel times and verdict, `launched` the grid it launched (measure/runner.py's row)."""
    from mmbench.core.axes import Configuration
    from mmbench.core.registry import load_registry
    from mmbench.core.row import SAMPLES
    from mmbench.measure.runner import Runner

    spec = json.loads(open(argv[0]).read())
    conf = Configuration.from_dict(spec["configuration"])
    v = load_registry(spec["registry"])[conf.variant]
    timed_run = timed is not None or "--event-json" in argv
    cubins = {conf.instance: spec["cubin"]} if spec.get("cubin") else {}
    # the run's Freivalds vectors (its measurements' group key: measure/runner.py), so that a
    # served target's reference is the one the measurements of its shape take
    vectors = int(spec.get("freivalds_vectors", 2))
    # under Nsight Compute (--batch, timed_range) the run's times are not kept: no NVML beside;
    # and no pass held behind the blocking kernel where a profiler serialises the launches (a
    # run that is not timed: Nsight Compute runs each launch to its end before the host queues
    # the next, so the held launch would wait for itself; the held passes timed the blocking
    # kernel out after 10 s there, on an H200)
    runner = Runner(v, cubins, sampling_of(spec, timed_run), None, vectors, session,
                    observe=timed_range is None, hold=timed_run)  # fmt: skip
    if timed_range is not None:  # --batch: the timed pass in its profiler range
        runner.timed_range = timed_range
    rows: list[dict] = []
    try:
        runner.run([conf], on_row=lambda c, row: rows.append(row))
    finally:
        runner.close()
    row = rows[0]
    if launched is not None:
        launched.update(grid=row.get("grid", ""))
    verified = row["verification"] == "PASS"
    if row["verification"] == "ERROR":
        print(f"{conf.label}: {row['error']}", file=sys.stderr)
    elif not verified:
        print(
            f"{conf.label}: result does not verify ({row['mismatches']} mismatches; first: "
            f"{row['first_mismatches'].split(' | ')[0]})",
            file=sys.stderr,
        )
    times = (row.get(SAMPLES) or {}).get("kernel_ms", [])
    if timed is not None:
        timed.update(times=times, verified=verified)
    elif "--event-json" in argv:
        json.dump(
            dict(
                event_kernel_ms=statistics.median(times) if times else None,
                samples=len(times),
                verified=verified,
            ),
            open(argv[argv.index("--event-json") + 1], "w"),
        )
    return 0 if verified else NOT_VERIFIED_EXIT

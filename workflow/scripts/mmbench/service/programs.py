"""The programs of this package that a job runs on the GPU beside a measurement: a process of
their own (`python -m mmbench.service.programs NAME ARGS...`, what a profiler attaches to) or,
in a local run, the run's served worker (served.py, worker.run_program).  Either way the
program is given a session (measure/session.py) with the run's inputs cache (input_cache.py) as
its inputs' store, so that it maps the inputs the measurements drew rather than drawing them
again.

    PROGRAMS    name -> main(argv, session): the one list of what the worker may run
    Launch      how a profile job runs the target (profile/profiling.py is handed one by its
                job script): the command a profiler wraps, and a run without a profiler, in the
                run's worker where the job has one, else in a process of its own
"""

from __future__ import annotations

import logging
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mmbench.core import paths
from mmbench.measure.session import Session
from mmbench.profile import target
from mmbench.service import input_cache, served

log = logging.getLogger("mmbench.service.programs")

PROGRAMS = {"profile.target": target.main}


def run(name: str, argv: list[str], session: Session | None = None) -> int:
    """The program `name` (PROGRAMS) on `argv`, in this process, with `session` (a fresh one
    over the run's inputs cache where None)."""
    return _known(name)(argv, session or Session(keeps=True, store=input_cache))


def command(name: str, *args: str) -> list[str]:
    """The command line that runs the program `name` in a process of its own."""
    _known(name)
    return paths.child_command("service.programs", name, *args)


def _known(name: str):
    """The program `name`'s main; ValueError naming the valid ones where there is none."""
    if name not in PROGRAMS:
        raise ValueError(f"not a program of this package: {name!r}; valid: {sorted(PROGRAMS)}")
    return PROGRAMS[name]


@dataclass
class Launch:
    """How a profile job runs the profilers' target (profile/profiling.py): `serve`, in the
    run's worker where one can be had (served.for_this_job)."""

    serve: bool = False
    name: str = "profile.target"

    def command(self, *args: str) -> list[str]:
        return command(self.name, *args)

    def run(self, args: list[str], env: dict, workdir: Path,
            fine: tuple[int, ...] = (0,)) -> tuple[int, str]:  # fmt: skip
        """The target's runs without a profiler, this job holding the GPU (`env` its
        environment): in the run's worker with `serve` (a worker that cannot be had or that
        ends unanswering: a process of its own, as without), with what it said (its log,
        workdir/target.log, in the worker).  `fine`: the exit codes after which the worker
        stays (a result that did not verify leaves it standing)."""
        code, said = self._served(args, env, workdir, fine) if self.serve else (served.GONE, "")
        if code == served.GONE:
            cmd = self.command(*args)
            log.info("$ %s", " ".join(cmd))
            proc = subprocess.run(cmd, capture_output=True, text=True, env=paths.child_env(env),
                                  timeout=1800)  # fmt: skip
            code, said = proc.returncode, proc.stdout + proc.stderr
        return code, said

    def _served(self, args, env, workdir: Path, fine) -> tuple[int, str]:
        log_path = workdir / "target.log"
        try:
            worker = served.worker_for(env, None)
        except RuntimeError as err:  # it did not start: a process of the job's own instead
            log.warning("%s; the target runs in a process of its own", err)
            return served.GONE, ""
        log.info("the target runs in the run's worker (pid %d): %s", worker.pid, " ".join(args))
        code = worker.program(self.name, args, env, log_path, fine)
        if code == served.GONE:  # its entry is gone (Served.run), and a process runs it
            log.warning("the run's worker ended before it answered; the target runs on its own")
        return code, log_path.read_text() if log_path.exists() else ""


if __name__ == "__main__":
    from mmbench.measure.freivalds import one_blas_pool

    one_blas_pool()  # its checks beside other jobs' processes, as the worker's (freivalds.py)
    sys.exit(run(sys.argv[1], sys.argv[2:]))

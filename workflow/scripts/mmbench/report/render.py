"""One figure or table of the output catalogue, written from its input files: what the figure and
table jobs do (workflow/rules/report.smk).

Where Snakemake deploys a conda environment per rule (`--sdm conda`), each job runs
render_figure.py or render_table.py in a process of its own, in its environment.  Otherwise the
job runs in Snakemake's own process (`in_process`): a new Python process per figure or table,
importing pandas, pandera, matplotlib and seaborn again each time, cost 1.5 to 3 s per job, more
than most of them take to draw (issue "the main command at the speed of the GPU").  So do the
jobs that make the timings table, the summary and the edit loop's comparison
(`script_in_process`).
"""

from __future__ import annotations

import contextlib
import threading
import traceback
import warnings
from pathlib import Path

# pyplot's figures (and the warnings filters) are the process's: the jobs of one process take
# turns (Snakemake runs a rule's `run:` jobs on threads)
_TURN = threading.Lock()


# processes that draw the figures and tables side by side (warm_up), where the run has cores
# for it; None: each is drawn in Snakemake's own process, one at a time (_TURN)
_POOL = None


def _imports() -> None:
    with contextlib.suppress(Exception):
        import mmbench.report.catalogue  # noqa: F401
        import mmbench.report.figures  # noqa: F401
        import mmbench.report.report_tables  # noqa: F401


def warm_up(processes: int = 1) -> threading.Thread:
    """Imports the figures' and tables' modules (Matplotlib, seaborn and SciPy, pandera) on a
    thread of Snakemake's process, started while the GPU jobs run: the first figure and the
    input functions that split the outputs by their data, after the timings checkpoint, then
    find them imported (lab: code-choices, "render imports").  A module that fails to import
    fails its job later, with its traceback there.

    With `processes` > 1 (a run given that many cores), that many processes are started too,
    each importing the same modules now, and the figure and table jobs are drawn in them side
    by side (in_process): in Snakemake's process they take turns."""
    global _POOL
    if processes > 1 and _POOL is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _POOL = ProcessPoolExecutor(processes, multiprocessing.get_context("spawn"),
                                    initializer=_imports)  # fmt: skip
        for _ in range(processes):  # started (and importing) now, not at the first figure
            _POOL.submit(int)
    thread = threading.Thread(target=_imports, name="mmbench-render-imports", daemon=True)
    thread.start()
    return thread


def figure(name: str, inputs: dict, png: str | Path, gpu_model: str | None) -> None:
    """The figure `name` (PNG and PDF beside it) from the files of its inputs."""
    from mmbench.report.catalogue import FIGURES, load_inputs

    out = FIGURES[name]
    data = load_inputs({n: inputs[n] for n in out.inputs}, gpu_model)
    out.make(data, Path(png).with_suffix(""))


def table(name: str, inputs: dict, html: str | Path, gpu_model: str | None) -> None:
    """The table `name` as CSV, Markdown, HTML and LaTeX from the files of its inputs."""
    from mmbench.report.catalogue import TABLES, load_inputs, title_of
    from mmbench.report.report_tables import write

    out = TABLES[name]
    data = load_inputs({n: inputs[n] for n in out.inputs}, gpu_model)
    made = out.make(data)
    write(made, Path(html).with_suffix(""), title_of(out, made))


def script_in_process(script: str | Path, snakemake, log: str) -> None:
    """A job's script (its `main(snakemake)`), run in Snakemake's own process with the job's
    input, output, params and log: the tables and the summary after the last measurement, one
    process start and the imports of pandas and pandera fewer each.  What the script sends to
    stderr goes to its log, and whatever it changes of stderr and the warnings filters is put
    back after it."""
    import runpy
    import sys

    def restore():
        if sys.stderr is not saved:  # the script's own log file, flushed before more is added
            sys.stderr.close()
            sys.stderr = saved

    with _TURN, warnings.catch_warnings():
        saved = sys.stderr
        try:
            runpy.run_path(str(script), init_globals={"snakemake": snakemake})
        except BaseException:
            restore()
            with open(log, "a") as f:
                f.write(traceback.format_exc())
            raise
        finally:
            restore()


def in_process(kind: str, name: str, inputs: dict, first: str, gpu_model, log: str) -> None:
    """A figure or table job run in Snakemake's own process, or in one of the processes
    warm_up started: its warnings and, where it fails, its traceback in its log (the error
    itself goes on to Snakemake, which reports the job)."""
    if _POOL is not None:
        plain = {k: (str(v) if isinstance(v, str | Path) else [str(x) for x in v])
                 for k, v in dict(inputs).items()}  # fmt: skip
        _POOL.submit(_drawn, kind, name, plain, str(first), gpu_model, log, True).result()
        return
    with _TURN:
        _drawn(kind, name, inputs, first, gpu_model, log)


def _drawn(kind: str, name: str, inputs: dict, first: str, gpu_model, log: str,
           elsewhere: bool = False) -> None:  # fmt: skip
    """The job's figure or table; `elsewhere`: in a drawing process, whose error must pickle."""
    make = figure if kind == "figure" else table
    with open(log, "w") as f, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            make(name, inputs, first, gpu_model)
        except BaseException as err:
            f.write(traceback.format_exc())
            if not elsewhere:  # in Snakemake's process: the error as it is
                raise
            # from a drawing process: an error that pickles, whatever the original was
            why = f"{kind} {name}: {type(err).__name__}: {err} (traceback: {log})"
            raise RuntimeError(why) from None
        finally:
            for w in caught:
                f.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))

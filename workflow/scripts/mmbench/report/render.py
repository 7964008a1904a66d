"""One figure or table of the output catalogue, written from its input files: what the figure and
table jobs do (workflow/rules/report.smk).

Where Snakemake deploys a conda environment per rule (`--sdm conda`), each job runs
render_figure.py or render_table.py in a process of its own, in its environment.  Otherwise the
job runs in Snakemake's own process (`in_process`): a new Python process per figure or table,
importing pandas, pandera, matplotlib and seaborn again each time, cost 1.5 to 3 s per job, more
than most of them take to draw (issue "the main command at the speed of the GPU").
"""

from __future__ import annotations

import threading
import traceback
import warnings
from pathlib import Path

# pyplot's figures (and the warnings filters) are the process's: the jobs of one process take
# turns (Snakemake runs a rule's `run:` jobs on threads)
_TURN = threading.Lock()


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


def in_process(kind: str, name: str, inputs: dict, first: str, gpu_model, log: str) -> None:
    """A figure or table job run in Snakemake's own process: its warnings and, where it fails,
    its traceback in its log (the error itself goes on to Snakemake, which reports the job)."""
    make = figure if kind == "figure" else table
    with _TURN, open(log, "w") as f, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            make(name, inputs, first, gpu_model)
        except BaseException:
            f.write(traceback.format_exc())
            raise
        finally:
            for w in caught:
                f.write(warnings.formatwarning(w.message, w.category, w.filename, w.lineno))

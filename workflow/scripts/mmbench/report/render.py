"""Every figure and report table of a run, drawn in one process: what the render job does
(workflow/rules/report.smk, workflow/scripts/render.py).

The inputs (the timings, the run manifests, the profiler tables) are read and checked once; each
figure and table the experiment asks for is then made from them where the run holds its data,
and named with the reason where it does not (`figures_left_out`).  One that fails to draw is
named with its error, its traceback in the job's log, and the others are still drawn
(`Rendered.failed`: the run's end reports them and exits non-zero, workflow/rules/common.smk).
With `processes` > 1 the outputs are drawn side by side in processes forked after the inputs
were read.
"""

from __future__ import annotations

import html
import json
import time
import traceback
import warnings
from dataclasses import asdict, astuple, dataclass, field
from pathlib import Path

# the file of the render job's report folder that lists what it made (the run's end and the
# run's RO-Crate read it)
RENDERED = "rendered.json"
LEFT_OUT = "figures_left_out"


@dataclass
class Rendered:
    """What a render made: figure and table names, those left out and those that failed, each
    as [kind, name, why]."""

    figures: list[str] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    left_out: list[list[str]] = field(default_factory=list)
    failed: list[list[str]] = field(default_factory=list)

    def lines(self) -> list[str]:
        """One line per output not made: left out (no data) or failed."""
        return [f"{k} {n} not made: {why}" for k, n, why in self.left_out] + self.failed_lines()

    def failed_lines(self) -> list[str]:
        return [f"{k} {n} failed: {why}" for k, n, why in self.failed]


_DATA: dict = {}  # the inputs, read once; forked drawing processes inherit them


def _draw(kind: str, name: str, figures_dir: str, report_dir: str) -> tuple[str, str | None, str]:
    """(outcome, why, warnings and traceback text): "made", "left" (no data: why) or "failed"."""
    from mmbench.report.catalogue import FIGURES, TABLES, title_of
    from mmbench.report.report_tables import NoData, write

    out = (FIGURES if kind == "figure" else TABLES)[name]
    data = {n: _DATA.get(n) for n in out.inputs}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        try:
            if kind == "figure":
                out.make(data, Path(figures_dir) / name)
            else:
                made = out.make(data)
                if not len(made):
                    return "left", "this run has no rows for it", ""
                write(made, Path(report_dir) / name, title_of(out, made))
            outcome, why, text = "made", None, ""
        except NoData as err:
            outcome, why, text = "left", str(err), ""
        except Exception as err:  # one output's bug: the others are still drawn
            outcome, why, text = "failed", f"{type(err).__name__}: {err}", traceback.format_exc()
        finally:
            import matplotlib.pyplot as plt

            plt.close("all")
    notes = "".join(warnings.formatwarning(w.message, w.category, w.filename, w.lineno)
                    for w in caught)  # fmt: skip
    return outcome, why, notes + text


def render_all(
    figures: list[str],
    tables: list[str],
    paths: dict,
    figures_dir: str | Path,
    report_dir: str | Path,
    gpu_model: str | None = None,
    processes: int = 1,
    log=None,
    drawn: str | Path | None = None,
) -> Rendered:
    """The figures and tables named (catalogue names, in this order) from the named input
    `paths` (timings, manifests, roofline, ceilings, nvprof, metrics: those the outputs read),
    PNG and PDF into `figures_dir`, CSV, Markdown, HTML and LaTeX into `report_dir`, with
    `rendered.json` and, where any is not made, figures_left_out.txt and .html there.  `log`: a
    text file that gets a line per output and each warning and traceback.  `drawn`: the folder
    of an earlier render (its figures/ and report/), whose outputs are linked in beside these
    and counted with them."""
    from mmbench.report.catalogue import FIGURES, TABLES, load_inputs

    figures_dir, report_dir = Path(figures_dir), Path(report_dir)
    figures_dir.mkdir(parents=True, exist_ok=True)
    report_dir.mkdir(parents=True, exist_ok=True)
    wanted = [("figure", f) for f in figures] + [("table", t) for t in tables]
    needed = {
        n for kind, name in wanted for n in (FIGURES if kind == "figure" else TABLES)[name].inputs
    }
    _DATA.clear()
    _DATA.update(load_inputs({n: p for n, p in paths.items() if n in needed}, gpu_model))
    jobs = [(kind, name, str(figures_dir), str(report_dir)) for kind, name in wanted]
    start = time.perf_counter()
    if processes > 1 and len(jobs) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(min(processes, len(jobs)),
                                 mp_context=multiprocessing.get_context("fork")) as pool:  # fmt: skip
            results = list(pool.map(_draw, *zip(*jobs, strict=True)))
    else:
        results = [_draw(*job) for job in jobs]
    done = Rendered()
    for (kind, name), (outcome, why, text) in zip(wanted, results, strict=True):
        if outcome == "made":
            (done.figures if kind == "figure" else done.tables).append(name)
        else:
            (done.left_out if outcome == "left" else done.failed).append([kind, name, why])
        if log is not None:
            log.write(f"{kind} {name}: {outcome}{f' ({why})' if why else ''}\n{text}")
    if log is not None:
        log.write(f"{len(done.figures)} figures, {len(done.tables)} tables in "
                  f"{time.perf_counter() - start:.1f} s\n")  # fmt: skip
    if drawn is not None:
        done = _gather(Path(drawn), figures_dir, report_dir, done)
    _write_notes(done, report_dir)
    return done


def _gather(drawn: Path, figures_dir: Path, report_dir: Path, done: Rendered) -> Rendered:
    """The outputs an earlier render drew into `drawn` (figures/, report/), hard-linked (copied
    across file systems) into the run's folders, and its record joined to `done`'s."""
    import os
    import shutil

    for sub, into in (("figures", figures_dir), ("report", report_dir)):
        for path in sorted((drawn / sub).iterdir()):
            if not path.is_file() or path.name in (RENDERED, f"{LEFT_OUT}.txt", f"{LEFT_OUT}.html"):
                continue
            (into / path.name).unlink(missing_ok=True)
            try:
                os.link(path, into / path.name)
            except OSError:
                shutil.copy2(path, into / path.name)
    early = Rendered(**json.loads((drawn / "report" / RENDERED).read_text()))
    return Rendered(*(a + b for a, b in zip(astuple(early), astuple(done), strict=True)))


def _write_notes(done: Rendered, report_dir: Path) -> None:
    from mmbench.core.tables import atomic_write_text

    atomic_write_text(report_dir / RENDERED, json.dumps(asdict(done), indent=1) + "\n")
    lines = done.lines()
    if not lines:
        return
    atomic_write_text(report_dir / f"{LEFT_OUT}.txt", "\n".join(lines) + "\n")
    items = "".join(f"<li>{html.escape(line)}</li>" for line in lines)
    atomic_write_text(
        report_dir / f"{LEFT_OUT}.html",
        "<html><head><meta charset='utf-8'><title>Outputs left out</title></head>"
        f"<body><h3>Figures and tables left out</h3><ul>{items}</ul></body></html>",
    )


def failures(report_dir: str | Path) -> list[str]:
    """The outputs a finished render could not draw, one line each (none where it drew all, or
    where no render ran)."""
    path = Path(report_dir) / RENDERED
    if not path.is_file():
        return []
    return Rendered(**json.loads(path.read_text())).failed_lines()


def summary(timings: str, manifests: list, refused: str | None, txt: str, md: str) -> None:
    """The end-of-run summary (report/summary.py) of the timings table, as read and checked
    against the run manifests here, with the configurations the plan refused."""
    import pandas as pd

    from mmbench.core.schemas import check_against_manifests, read_table
    from mmbench.core.tables import atomic_write_text
    from mmbench.report.summary import render

    table = read_table(timings, "timings")
    check_against_manifests(table, list(manifests), timings)
    refusals = read_table(refused, "refused") if refused else pd.DataFrame()
    text, markdown = render(table, refusals)
    atomic_write_text(txt, text)
    atomic_write_text(md, markdown)


# the profile tables (results/<experiment>/tables/<file>.csv) a figure or table may read
PROFILE_TABLES = dict(roofline="roofline", ceilings="ceilings", nvprof="nvprof_metrics",
                      metrics="metrics")  # fmt: skip


def inputs(results: str, render_only: bool, figures: list[str], tables: list[str],
           manifests: list[str], drawn: str | None = None) -> dict:  # fmt: skip
    """The render job's inputs: the timings and manifests, the refusals, the profile tables its
    figures and tables read, and the folder the early render drew into (`drawn`, where there is
    one); rendering only, what the copied results folder holds (its timings table at least:
    ValueError otherwise)."""
    timings, refused = f"{results}/tables/timings.csv", f"{results}/tables/refused.csv"
    if render_only and not Path(timings).exists():
        raise ValueError(f"render_only=true renders from an existing results folder, but "
                         f"{timings} is missing; copy the results folder of a run here (or "
                         "drop render_only)")  # fmt: skip
    out = dict(timings=timings, manifests=manifests) | profile_inputs(results, figures, tables)
    if not render_only or Path(refused).exists():
        out["refused"] = refused
    return out | ({"drawn": drawn} if drawn else {})


def profile_inputs(results: str, figures: list[str], tables: list[str]) -> dict:
    """The profile tables (results/<experiment>/tables/<file>.csv) these figures and tables
    read, by input name."""
    from mmbench.report.catalogue import input_names

    needed = input_names(figures, tables)
    return {n: f"{results}/tables/{f}.csv" for n, f in PROFILE_TABLES.items() if n in needed}

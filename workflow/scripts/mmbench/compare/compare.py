"""Two runs compared, configuration by configuration: the table of verdicts (nvbench's robust
criterion, compare/criterion.py, on the runs of compare/runs.py), the gate that a CI job exits
on, and the edit loop's before -> after (compare/text.py says them)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from mmbench.compare.criterion import (  # noqa: F401  (the criterion, re-exported)
    TOLERANCE,
    combined,
    judge,
    quieter,
    spread,
    tolerated,
)
from mmbench.compare.runs import (  # noqa: F401  (the runs, re-exported)
    NoRun,
    Run,
    archived,
    elsewhere,
    load_folder,
    load_tables,
    previous,
)
from mmbench.compare.text import (  # noqa: F401  (how the table is said, re-exported)
    JUDGED,
    ORDER,
    counts,
    html,
    in_cycles_only,
    summary,
    within_tolerance,
)
from mmbench.core.axes import COMPARE_KEY

# the identifying columns each compared row keeps: the label and the join's axes
KEEP = ["label", *COMPARE_KEY]


def compare(
    base: Run,
    new: Run,
    preset: str = "default",
    tolerance: float = TOLERANCE,
    margins: dict[str, float] | None = None,
) -> pd.DataFrame:
    """One row per configuration in either run: both medians, their ratio (this / baseline),
    the verdict and the numbers the criterion used; a configuration in one run only says so.
    `margins` (config_id -> margin, compare/margins.py) replace the tolerance where measured."""
    margins = margins or {}
    rows = []
    for cid in list(dict.fromkeys([*base.rows.index, *new.rows.index])):
        b = base.rows.loc[cid] if cid in base.rows.index else None
        n = new.rows.loc[cid] if cid in new.rows.index else None
        ref = n if n is not None else b
        row = {k: ref[k] for k in KEEP if k in ref.index} | dict(config_id=cid)
        row |= dict(
            base_ms=b["kernel_ms_median"] if b is not None else math.nan,
            this_ms=n["kernel_ms_median"] if n is not None else math.nan,
            base_verification=b["verification"] if b is not None else "",
            this_verification=n["verification"] if n is not None else "",
            base_samples=len(base.samples.get(cid, {}).get("kernel_ms", [])),
            this_samples=len(new.samples.get(cid, {}).get("kernel_ms", [])),
        )
        row["judged"] = False
        if b is None or n is None:
            row |= dict(verdict="BASELINE ONLY" if n is None else "THIS RUN ONLY", reason="")
        elif regressed(b["verification"], n["verification"]):
            row |= dict(
                verdict="REGRESSED",
                reason=f"PASS in the baseline, {n['verification']} in this run: "
                + str(n.get("first_mismatches") or n.get("error") or "")[:200],
                judged=True,
            )
        elif cid not in base.samples or cid not in new.samples:
            missing = (
                "either run"
                if cid not in base.samples and cid not in new.samples
                else "the baseline"
                if cid not in base.samples
                else "this run"
            )
            row |= dict(verdict="UNSURE", reason=f"no timed samples in {missing}")
        else:
            margin = margins.get(cid)
            row |= judge(
                base.samples[cid], new.samples[cid], preset, tolerance if margin is None else margin
            )
            row["judged"] = True
            row["margin_source"] = "global tolerance" if margin is None else "measured margin"
            # the same samples on both sides: a copy of one measurement, not two
            row["same_samples"] = base.samples[cid] == new.samples[cid]
        row["ratio"] = (
            row["this_ms"] / row["base_ms"] if b is not None and n is not None else math.nan
        )
        rows.append(row)
    table = pd.DataFrame(rows)
    table["same_in_cycles_only"] = in_cycles_only(table)
    table["within_tolerance_only"] = within_tolerance(table)
    return table


def finish(table: pd.DataFrame) -> pd.DataFrame:
    """The columns said of the whole table, once its rows (paired or apart) are in."""
    table = table.copy()
    if "comparison" not in table:
        table["comparison"] = "runs apart"
    table["same_in_cycles_only"] = in_cycles_only(table)
    table["within_tolerance_only"] = within_tolerance(table)
    return table


def kind(table: pd.DataFrame) -> str:
    """Which kind of comparison made the verdicts: paired, runs apart (with measured margins or
    the one tolerance), or both (how many)."""
    c = table.comparison.value_counts() if "comparison" in table else pd.Series(dtype=int)
    p, a = int(c.get("paired", 0)), int(c.get("runs apart", 0))
    apart = "runs apart"
    if a and "margin_source" in table:
        m = int((table.margin_source == "measured margin").sum())
        g = int((table.margin_source == "global tolerance").sum())
        tol = table.loc[table.margin_source == "global tolerance", "tolerance"].dropna()
        one = "the one tolerance" + (f" +-{tol.iloc[0]:.1%}" if len(tol) else "")
        apart = (
            f"runs apart (nvbench's criterion; {m} configurations with their measured margin, "
            f"{g} with {one})"
            if m
            else f"runs apart (nvbench's criterion with {one}; no measured margins)"
        )
    if p and a:
        return f"mixed: {p} configurations paired, {a} compared as {apart}"
    return "paired" if p else apart


def build_run(baseline: dict, new: Run) -> Run:
    """The baseline of a paired comparison with another build of a variant: its facts are this
    run's (the same process measured both), named after the build."""
    if baseline == "itself":
        return Run("this run's own builds (an A/A test)", new.rows)
    what = (
        f"from {baseline['source']}" if "source" in baseline
        else f"with {baseline['params']}" if "params" in baseline else ""
    )  # fmt: skip
    rows = new.rows[new.rows.variant == baseline["variant"]]
    return Run(f"{baseline['variant']} {what}".strip(), rows if len(rows) else new.rows)


def regressed(base_verification: str, this_verification: str) -> bool:
    """A configuration that verified in the baseline and does not now."""
    return base_verification == "PASS" and this_verification in ("FAIL", "ERROR")


def not_judged(table: pd.DataFrame) -> pd.Series:
    """The configurations the criterion did not judge: in one run only, or without timed
    samples on a side (a table written before the `judged` column: read from the verdict)."""
    if "judged" in table:
        return ~table.judged.astype(str).isin(["True", "true", "1"])
    return table.verdict.isin(["BASELINE ONLY", "THIS RUN ONLY"]) | (
        (table.verdict == "UNSURE") & table.reason.astype(str).str.startswith("no ")
    )


def gate(table: pd.DataFrame, allow_missing: bool = False) -> list[str]:
    """What makes `compare.fail_on: slower` fail, one line each (none: the gate passes):
    configurations SLOWER or REGRESSED; a comparison that judged nothing; and (unless
    allow_missing) any configuration not judged: in the baseline but not in this run (a variant
    that stopped running), in this run but not the baseline, or without timed samples on a
    side.  Each would otherwise pass unseen."""
    why = []
    for verdict, words in (
        ("REGRESSED", "PASSed in the baseline and FAIL or ERROR now"),
        ("SLOWER", "SLOWER than the baseline"),
    ):
        n = int((table.verdict == verdict).sum())
        if n:
            why.append(f"{n} configuration(s) {words}")
    allow = "allow with 'compare={fail_on: slower, allow_missing: true}'"
    unjudged = not_judged(table) if len(table) else pd.Series(dtype=bool)
    if allow_missing:
        return why
    if len(table) == 0 or unjudged.all():
        return why + [
            f"the comparison judged none of its {len(table)} configuration(s) (none has timed "
            f"samples in both runs): it shows nothing about speed ({allow})"
        ]
    for verdict, words in (
        ("BASELINE ONLY", "of the baseline missing from this run"),
        ("THIS RUN ONLY", "of this run missing from the baseline"),
    ):
        gone = table[table.verdict == verdict]
        if len(gone):
            variants = ", ".join(sorted(set(gone.variant.astype(str))))
            why.append(f"{len(gone)} configuration(s) {words} (variants {variants}; {allow})")
    bare = table[unjudged & ~table.verdict.isin(["BASELINE ONLY", "THIS RUN ONLY"])]
    if len(bare):
        variants = ", ".join(sorted(set(bare.variant.astype(str))))
        why.append(
            f"{len(bare)} configuration(s) not judged for want of timed samples (variants "
            f"{variants}; {allow})"
        )
    return why


def header(base: Run, new: Run) -> dict:
    """Both runs' facts, whether they ran on the same GPU model, and what else of what they
    ran on differs (differs: the GPU, the driver, the harness)."""
    bf, nf = base.facts(), new.facts()
    return dict(baseline=bf, this_run=nf, same_gpu=bf["gpu"] == nf["gpu"], differs=differs(bf, nf))


# what a run ran on, besides the kernel: the facts two runs' verdicts depend on
RAN_ON = {"gpu": "GPU model", "driver": "driver", "harness": "harness"}


def differs(a: dict, b: dict) -> list[str]:
    """What two runs' facts (Run.facts) say they ran on differently, in words: 'driver 575.57
    -> 580.95'.  A fact one side does not record (an older run's harness) is not compared."""
    return [
        f"{words} {a[key]} -> {b[key]}"
        for key, words in RAN_ON.items()
        if a.get(key) and b.get(key) and a[key] != b[key]
    ]


def several_sources(results: str | Path) -> bool:
    """Whether some variant's archive holds the measurements of more than one kernel source
    (archive/<variant>/<source hash>/<variant>.csv): the only way one has an earlier source, as
    each measurement job archives its own.  Read from the folders' names alone: in a run of a
    fresh clone there is none, and the edit loop's comparison then reads no table or samples
    file (lab: code-choices, "several_sources")."""
    root = Path(results) / "archive"
    if not root.is_dir():
        return False
    return any(
        sum((d / f"{v.name}.csv").is_file() for d in v.iterdir()) > 1
        for v in root.iterdir()
        if v.is_dir()
    )


def edits(
    results: str | Path, tables: list[Path], preset: str = "default", tolerance: float = TOLERANCE
) -> str:
    """For the end-of-run summary: each variant whose kernel source changed since an archived
    measurement, before -> after per configuration with the verdicts ('' if none)."""
    if not tables or not several_sources(results):
        return ""
    new = load_tables(tables, "this run")
    entries = archived(results)  # read once: the previous sources and those on other GPUs
    try:
        base, hashes = previous(results, new, entries)
    except NoRun:
        away = elsewhere(entries, new)
        if not away:
            return ""
        base, hashes = Run("previous", new.rows.iloc[:0]), {}
    table = compare(base, new, preset, tolerance)
    now = new.facts()["sources"]
    lines = []
    for variant, old in hashes.items():
        t = table[(table.variant == variant) & table.ratio.notna()].sort_values(["m", "n", "k"])
        c = counts(t)
        tally = ", ".join(f"{c[v]} {v}" for v in JUDGED if c[v])
        b = Run("", base.rows[base.rows.variant == variant]).facts()
        n = Run("", new.rows[new.rows.variant == variant]).facts()
        also = differs(b, n)
        lines.append(
            f"{variant}: kernel source {old} -> {now[variant]} (baseline=previous): {tally}"
            + (f"; also changed: {', '.join(also)} (a verdict may be theirs)" if also else "")
        )
        for r in t.itertuples():
            lines.append(
                f"  {r.label} {r.dtype} {r.m}x{r.n}x{r.k} {r.memory}: {r.base_ms:.4g} -> "
                f"{r.this_ms:.4g} ms (x{r.ratio:.3f}) {r.verdict}"
            )
    for variant, gpus in elsewhere(entries, new).items():
        lines.append(
            f"{variant}: its earlier kernel sources were measured on {gpus} only, not on this "
            "run's GPU model: not compared"
        )
    return "Since the previous kernel source:\n" + "\n".join(lines)

"""The ladder's standing as recorded: in the recorded ladder run, each precision class's best
rung per size against its target (report/ladder.TARGETS), and in the recorded sweep each class's
best rung per shape against its.  Kept as two small tables with the package
(workflow/resources/standing/ladder.csv and sweep.csv), which the ladder figures' notes read at
render time ("met or missed as in the recorded run"), and shown in docs/ladder.md as the table
between its standing markers.  The recorded shapes run (the any-shape targets per class) is
shown in docs/ladder.md alone, between its shapes markers.  Recording a new run is a command,
never an edit of source:

    python -m mmbench.report.standing ladder RESULTS   # RESULTS: a ladder preset's results folder
    python -m mmbench.report.standing sweep RESULTS    # a sweep preset's
    python -m mmbench.report.standing shapes RESULTS [RESULTS...]
                                                       # shapes preset runs (each with its
                                                       # parts merged), one table per seed

tests/test_repository.py checks that the tables and docs/ladder.md's are the recorded runs'.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

from mmbench.core.paths import data_dir
from mmbench.report import ladder as lad

DOCS = Path(__file__).resolve().parents[4] / "docs" / "ladder.md"
BEGIN, END = "<!-- standing:begin -->", "<!-- standing:end -->"
SHAPES_BEGIN, SHAPES_END = "<!-- shapes:begin -->", "<!-- shapes:end -->"
KINDS = ("ladder", "sweep", "shapes")
LADDER_COLUMNS = ["precision", "size", "rung", "reference", "gflops", "reference_gflops",
                  "fraction", "target", "met", "gpu", "measured_on"]  # fmt: skip
SWEEP_COLUMNS = ["precision", "shape", "rung", "percent", "target_percent", "met", "gpu",
                 "measured_on"]  # fmt: skip
# the sizes the ladder's targets are set at (report/ladder.TARGETS)
VERDICT_SIZES = {4096, 8192}
# the columns of the run's ladder table that docs/ladder.md shows
DOCS_COLUMNS = ["precision", "rung", "4096: GFLOP/s", "4096: % of ref", "8192: GFLOP/s",
                "8192: % of ref", "reference", "parameters", "idea"]  # fmt: skip


def path(kind: str) -> Path:
    return data_dir("resources") / "standing" / f"{kind}.csv"


def short_gpu(name: str) -> str:
    """A GPU model as a note names it: without the vendor and the memory that follows the chip
    ("NVIDIA H100 80GB HBM3" -> "H100"); the whole name where nothing is left."""
    words = name.removeprefix("NVIDIA ").split()
    cut = next((i for i, w in enumerate(words) if re.fullmatch(r"\d+GB", w)), len(words))
    return " ".join(words[:cut]) or name


def class_reference_rows(part: pd.DataFrame, sizes: list[int]) -> dict[int, tuple[str, float]]:
    """A precision class's reference per size, as (its name, its GFLOP/s): the class's first
    reference, or where that one was not measured at a size the first other reference of a
    rung that was (one reference, never a mix of two)."""
    reference = part.reference.iloc[0]
    refs = {}
    for n in sizes:
        at = part[part.m == n]
        name = reference if (at.reference == reference).any() else at.reference.iloc[0]
        refs[n] = (name, at[at.reference == name].reference_gflops.median())
    return refs


def best_of(part: pd.DataFrame) -> pd.DataFrame:
    """A class's fastest rung per size (a peer's reference line is none), its `fraction` that
    of its own reference."""
    return fastest_per_size(lad.rungs_of(part))


def fastest_per_size(rows: pd.DataFrame) -> pd.DataFrame:
    """Of rows at square sizes, the fastest per size, in order of size."""
    return rows.sort_values("kernel_gflops").groupby("m").tail(1).sort_values("m")


def of_class(best: pd.DataFrame, refs: dict[int, tuple[str, float]]) -> pd.DataFrame:
    """The same rows with `fraction` of the class's reference and `reference` its name (the
    targets are a fraction of it, whatever reference the rung itself is drawn against);
    `refs`: class_reference_rows."""
    gflops = best.m.map({n: g for n, (_, g) in refs.items()})
    names = best.m.map({n: r for n, (r, _) in refs.items()})
    of_class = best.kernel_gflops / gflops
    return best.assign(
        fraction=of_class.fillna(best.fraction), reference=names.fillna(best.reference)
    )


def ladder_standing(timings: pd.DataFrame) -> pd.DataFrame:
    """One row per precision class and ladder size: the best rung under the run's headline
    condition against the class's reference and target."""
    k = lad.ladder_sizes(lad.best_per_rung(timings)).dropna(subset=["reference_gflops"])
    head = lad.conditions(k)[0]
    k = lad.under(k, head)
    rows = []
    for cls in [c for c in lad.CLASS_ORDER if c in set(k.precision) and c in lad.TARGETS]:
        part = k[k.precision == cls]
        refs = class_reference_rows(part, sorted(part.m.unique()))
        for r in of_class(best_of(part), refs).itertuples():
            rows.append(dict(
                precision=cls, size=int(r.m), rung=r.variant, reference=r.reference,
                gflops=round(r.kernel_gflops, 1), reference_gflops=round(refs[r.m][1], 1),
                fraction=round(r.fraction, 5), target=lad.TARGETS[cls],
                met=bool(r.fraction >= lad.TARGETS[cls]), gpu=r.gpu_name,
                measured_on=lad.condition_words(head)))  # fmt: skip
    return pd.DataFrame(rows, columns=LADDER_COLUMNS)


def sweep_standing(timings: pd.DataFrame) -> pd.DataFrame:
    """One row per precision class and shape of the sweep table (report/ladder.sweep)."""
    s = lad.sweep(timings)
    gpu = timings.gpu_name.iloc[0]
    return pd.DataFrame(dict(
        precision=s.precision, shape=s["shape"], rung=s["best rung"], percent=s["% of ref"],
        target_percent=s["target %"], met=s.met == "yes", gpu=gpu,
        measured_on=s["measured on"]))[SWEEP_COLUMNS]  # fmt: skip


def read(kind: str) -> pd.DataFrame:
    columns = LADDER_COLUMNS if kind == "ladder" else SWEEP_COLUMNS
    t = pd.read_csv(path(kind))
    if list(t.columns) != columns or t.empty or t.met.dtype != bool:
        raise ValueError(f"{path(kind)}: not a recorded standing table (columns {columns}, "
                         "met true or false); write it with python -m mmbench.report.standing")  # fmt: skip
    return t


def recorded_ladder() -> tuple[dict[tuple[str, int], bool], str]:
    """(class, size) -> met in the recorded ladder run, and its GPU as a note names it."""
    t = read("ladder")
    verdicts = {(p, int(s)): bool(m) for p, s, m in zip(t.precision, t["size"], t.met, strict=True)}
    return verdicts, short_gpu(t.gpu.iloc[0])


def recorded_sweep() -> tuple[dict[tuple[str, str], bool], str]:
    """(class, shape words) -> met in the recorded sweep, and its GPU as a note names it."""
    t = read("sweep")
    verdicts = {
        (p, str(s)): bool(m) for p, s, m in zip(t.precision, t["shape"], t.met, strict=True)
    }
    return verdicts, short_gpu(t.gpu.iloc[0])


def docs_section(timings: pd.DataFrame) -> str:
    """The Markdown docs/ladder.md shows between its standing markers: the run's ladder table
    (each rung's fastest instantiation) and a line per class of its verdict."""
    from mmbench.report.report_tables import for_people

    table = lad.table(timings)
    table = for_people(table[[c for c in DOCS_COLUMNS if c in table]]).fillna("")
    s = ladder_standing(timings)
    gpu = s.gpu.iloc[0]
    verdicts = "; ".join(
        f"{cls} (target {g.target.iloc[0]:.0%}): " + ", ".join(
            f"{r.fraction:.1%} at {r.size} ({'met' if r.met else 'missed'})"
            for r in g.itertuples())
        for cls, g in s.groupby("precision", sort=False))  # fmt: skip
    return (
        f"Recorded on an {gpu}, {s.measured_on.iloc[0]}, {len(timings)} configurations "
        f"(`python -m mmbench.report.standing ladder RESULTS` writes this section from a ladder "
        f"run). Each class's best rung against its reference: {verdicts}.\n\n" + markdown(table)
    )


def shapes_section(timings: pd.DataFrame, seeds: list[int]) -> str | None:
    """The Markdown docs/ladder.md shows between its shapes markers: the shapes run's table
    (report/ladder.shapes_summary: per class the best rung's geometric mean and least share of
    its cuBLAS, the peers' beside it) and which classes meet the any-shape targets; `seeds`: the
    draw seeds of the run's parts (its manifests').  None where the run has no such table."""
    from mmbench.report.report_tables import for_people

    table = lad.shapes_summary(timings)
    if table.empty:
        return None
    met = [p for p, m in zip(table.precision, table.met, strict=True) if m == "yes"]
    missed = [p for p in table.precision if p not in met]
    targets = lad.SHAPES_TARGETS
    words = "; ".join(
        f"{label} by {', '.join(classes)}" for label, classes in (("met", met), ("missed", missed))
        if classes
    )  # fmt: skip
    drawn = ", ".join(str(s) for s in seeds) or "none recorded"
    gpu = " and ".join(sorted(timings.gpu_name.dropna().unique()))
    boards = timings.gpu_uuid.nunique() if "gpu_uuid" in timings else 1
    if boards > 1:
        one = timings.groupby("variant").gpu_uuid.nunique().max() == 1
        gpu += f" ({boards} boards{', each variant measured on one' if one else ''})"
    return (
        f"Recorded on an {gpu}, {len(timings)} configurations at the products "
        f"drawn from seed {drawn} (`python -m mmbench.report.standing shapes RESULTS` writes "
        f"this section from a shapes run). The targets, a geometric mean of "
        f"{targets['geometric mean']:.0%} and a least share of {targets['minimum']:.0%} of the "
        f"cuBLAS of the class: {words}.\n\n" + markdown(for_people(table).fillna(""))
    )


def draw_seeds(manifests: list[Path]) -> list[int]:
    """The draw seeds the run's manifests name (config `draw.seed`), in order, each once."""
    import json

    seeds = []
    for m in manifests:
        config = json.loads(Path(m).read_text()).get("config") or {}
        seed = (config.get("draw") or {}).get("seed")
        if seed is not None and int(seed) not in seeds:
            seeds.append(int(seed))
    return seeds


def markdown(table: pd.DataFrame) -> str:
    """A Markdown table without padding (a docs page's source stays readable)."""
    rows = [list(table.columns), ["---"] * len(table.columns), *table.astype(str).values.tolist()]
    return "".join("| " + " | ".join(map(str, r)) + " |\n" for r in rows)


def with_section(text: str, section: str, begin: str = BEGIN, end: str = END) -> str:
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{section}{end}{tail}"


def _timings(results: Path) -> pd.DataFrame:
    from mmbench.core.schemas import check_against_manifests, read_table

    table = results / "tables" / "timings.csv"
    t = read_table(table, "timings")
    manifests = sorted((results / "runs").glob("*.manifest.json"))
    if manifests:
        check_against_manifests(t, manifests, str(table))
    return t


def main(argv: list[str]) -> int:
    from mmbench.core.columns import TableError

    if len(argv) < 2 or argv[0] not in KINDS or (len(argv) > 2 and argv[0] != "shapes"):
        print(__doc__, file=sys.stderr)
        return 2
    kind, results = argv[0], Path(argv[1])
    try:
        runs = [(_timings(Path(r)), Path(r)) for r in argv[1:]]
    except TableError as err:
        print(f"standing: {err}", file=sys.stderr)
        return 2
    if kind == "shapes":
        return _record_shapes(runs)
    t = runs[0][0]
    table = ladder_standing(t) if kind == "ladder" else sweep_standing(t)
    sizes = set(table["size"]) if kind == "ladder" else set()
    if table.empty or (kind == "ladder" and not VERDICT_SIZES <= sizes):
        print(f"standing: {results} holds no {kind} verdicts (each class's best rung against "
              f"its reference{', at 4096 and 8192' if kind == 'ladder' else ''}); give the "
              f"results folder of a {kind} preset run", file=sys.stderr)  # fmt: skip
        return 2
    path(kind).parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(path(kind), index=False)
    print(f"{path(kind)}: {len(table)} rows, {int(table.met.sum())} met")
    if kind == "ladder" and DOCS.exists():  # a checkout (an installed wheel has no docs)
        DOCS.write_text(with_section(DOCS.read_text(), docs_section(t)))
        print(f"{DOCS}: standing table written")
    return 0


def _record_shapes(runs: list[tuple[pd.DataFrame, Path]]) -> int:
    """docs/ladder.md's shapes section from shapes runs' timings (each `(timings, results)`):
    one table per run, in the order given."""
    sections, seeds = [], []
    for t, results in runs:
        drawn = draw_seeds(sorted((results / "runs").glob("*.manifest.json")))
        section = shapes_section(t, drawn) if drawn else None
        if section is None:
            print(f"standing: {results} holds no shapes verdicts (a drawn product's best rung "
                  "against the cuBLAS of its class); give the results folder of a shapes "
                  "preset run", file=sys.stderr)  # fmt: skip
            return 2
        sections.append(section)
        seeds += drawn
    if not DOCS.exists():  # an installed wheel has no docs
        print(f"standing: no {DOCS} to write the shapes section into", file=sys.stderr)
        return 2
    DOCS.write_text(with_section(DOCS.read_text(), "\n".join(sections), SHAPES_BEGIN, SHAPES_END))
    print(f"{DOCS}: shapes section written (seed {', '.join(map(str, seeds))})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

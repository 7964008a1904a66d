"""A run's provenance as a Workflow Run RO-Crate (https://w3id.org/ro/wfrun/workflow/0.5): the
results folder is the crate, described by `ro-crate-metadata.json` at its top, written through
the `rocrate` library (ResearchObject's Python package) and read by any RO-Crate tool
(WorkflowHub, `rocrate-validator`).

What the crate says, each from the run's own files:

- the workflow that ran: its definition (the Snakefile and rule files) copied into
  `crate/workflow/` as the crate's main entity, a Snakemake ComputationalWorkflow whose version
  is the commit of the run manifests (`git.commit`, with `-dirty` where the tree was edited);
- the run: one CreateAction with that workflow as its instrument, the config as run
  (`crate/config.yaml`) and the GPU each row was measured on (its name, UUID, driver and CUDA
  runtime, from the timings table) as its objects, every file the run wrote as its result, its
  start and end the first and last row's timestamps;
- every cubin that ran, by variant and instantiation, with the digest its rows recorded
  (`cubin_sha256`: the first 16 hex digits of the file's SHA-256), as an instrument beside the
  workflow;
- each tidy table with its schema (`crate/schemas/<kind>.schema.json`: pandera's JSON form of
  core/schemas.py, linked by `conformsTo`), each figure and report table with the tables it was
  drawn from (`isBasedOn`).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

# the Workflow Run Crate's profiles the crate conforms to (the root's conformsTo), and their names
PROFILES = {
    "https://w3id.org/ro/wfrun/process/0.5": "Process Run Crate",
    "https://w3id.org/ro/wfrun/workflow/0.5": "Workflow Run Crate",
    "https://w3id.org/workflowhub/workflow-ro-crate/1.0": "Workflow RO-Crate",
}
METADATA = "ro-crate-metadata.json"
# the Bioschemas profile a FormalParameter conforms to (Workflow RO-Crate)
FORMAL_PARAMETER = "https://bioschemas.org/profiles/FormalParameter/1.0-RELEASE"
# what the crate adds to the results folder (beside the metadata file)
OWN = "crate"
# the folders a run writes its outputs into (render/: the early render's drawing, linked into
# figures/ and report/); build/ (the cubins) is one of them where the experiment's results folder
# is results/ itself, whose other experiments' folders are not
RUN_FOLDERS = ("runs", "archive", "tables", "figures", "report", "render", "profile", "pairs",
               "compare", "logs", "benchmarks", "build")  # fmt: skip
# the tidy tables of tables/ with a schema, each named as its kind (core/schemas.SCHEMAS)
TIDY_TABLES = ("timings", "refused", "resources", "metrics", "ceilings", "roofline",
               "nvprof_metrics")  # fmt: skip
MEDIA = {".csv": "text/csv", ".gz": "application/gzip", ".json": "application/json",
         ".png": "image/png", ".pdf": "application/pdf", ".html": "text/html",
         ".md": "text/markdown", ".tex": "application/x-tex", ".txt": "text/plain",
         ".yaml": "application/yaml", ".log": "text/plain", ".tsv": "text/tab-separated-values",
         ".jsonl": "application/jsonl", ".smk": "text/x-python", ".cubin": "application/octet-stream"}  # fmt: skip


def write(results: str | Path, config: dict, workflow_dir: str | Path, manifests: list,
          timings: str | Path, name: str, snakemake_version: str) -> Path:  # fmt: skip
    """The crate of the run in `results`: its definition copied from `workflow_dir`, `config`
    written beside it, the manifests and the timings table read for the commit, GPUs and
    cubins; `name` the run's title; the Snakemake that ran it.  Returns the metadata file's
    path."""
    import pandas as pd
    import yaml
    from rocrate.model.computerlanguage import get_lang
    from rocrate.model.contextentity import ContextEntity
    from rocrate.rocrate import ROCrate

    from mmbench.core.schemas import SCHEMAS, read_table

    results = Path(results)
    own = results / OWN
    if own.exists():
        shutil.rmtree(own)
    (own / "schemas").mkdir(parents=True)
    table = read_table(timings, "timings")
    git = _commit(manifests)

    crate = ROCrate()  # RO-Crate 1.1, which the Workflow Run Crate 0.5 profiles extend
    crate.name = name
    crate.description = (f"A run of mmbench (CUDA matrix multiplication benchmarks) on "
                         f"{_gpu_words(table)}: its tables, figures, report and logs")  # fmt: skip
    crate.license = "MIT"
    crate.root_dataset["conformsTo"] = [{"@id": p} for p in PROFILES]
    for p, words in PROFILES.items():
        crate.add(ContextEntity(crate, p, properties={"@type": "CreativeWork", "name": words,
                                                      "version": p.rsplit("/", 1)[1]}))  # fmt: skip

    # the workflow: its definition, copied (the crate holds what it describes)
    wf_dir = own / "workflow"
    shutil.copytree(Path(workflow_dir), wf_dir, ignore=_definition_only)
    config_path = own / "config.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    lang = crate.add(get_lang(crate, "snakemake", version=snakemake_version))
    workflow = crate.add_workflow(
        source=wf_dir / "Snakefile", dest_path=f"{OWN}/workflow/Snakefile", main=True,
        lang=lang,
        properties=dict(name="mmbench", version=git,
                        description="The mmbench Snakemake workflow as it ran (its rule "
                                    "files beside it, in crate/workflow/rules)"),
    )  # fmt: skip
    config_param = crate.add(ContextEntity(crate, "#param-config", properties={
        "@type": "FormalParameter", "name": "config", "additionalType": "File",
        "conformsTo": {"@id": FORMAL_PARAMETER},
        "description": "The workflow's config as run: the defaults under what was given, "
                       "validated",
    }))  # fmt: skip
    workflow["input"] = [config_param]
    config_file = crate.add_file(source=config_path, dest_path=f"{OWN}/config.yaml",
                                 properties=dict(name="The config as run",
                                                 encodingFormat="application/yaml",
                                                 exampleOfWork=config_param))  # fmt: skip
    config_param["workExample"] = config_file
    rules = [crate.add_file(source=p, dest_path=str(p.relative_to(results)),
                            properties=dict(encodingFormat=_media(p)))
             for p in sorted((wf_dir / "rules").glob("*.smk"))]  # fmt: skip
    workflow["hasPart"] = rules

    # the GPUs and the cubins that ran, from the rows
    gpus = [
        crate.add(
            ContextEntity(
                crate,
                f"#gpu-{uuid}",
                properties={
                    "@type": "PropertyValue",
                    "name": "GPU",
                    "propertyID": "gpu_uuid",
                    "value": str(rows["gpu_name"].iloc[0]),
                    "identifier": uuid,
                    "description": f"driver {_one(rows, 'driver_version')}, CUDA runtime "
                    f"{_one(rows, 'cuda_runtime')}, compute capability "
                    f"{_one(rows, 'compute_capability')}, host {_one(rows, 'hostname')}",
                },
            )
        )  # fmt: skip
        for uuid, rows in table.groupby(table["gpu_uuid"].fillna(""), sort=True)
        if uuid
    ]
    cubins = []
    # cuBLAS's rows name no cubin; a table of an older pipeline has no such column
    shas = table["cubin_sha256"] if "cubin_sha256" in table else pd.Series("", table.index)
    ran = table.assign(cubin_sha256=shas.fillna("").astype(str))
    ran = ran[ran["cubin_sha256"] != ""]
    for (variant, instance, sha), _ in ran.groupby(["variant", "instance", "cubin_sha256"],
                                                    sort=True):  # fmt: skip
        cubins.append(crate.add(ContextEntity(crate, f"#cubin-{variant}-{instance}-{sha}", properties={
            "@type": "SoftwareApplication", "name": f"{variant} {instance}",
            "softwareVersion": f"sha256:{sha}",
            "description": f"The cubin of {variant}'s instantiation {instance} that ran "
                           "(the first 16 hex digits of its SHA-256, as its rows record it)",
        })))  # fmt: skip

    # every file the run wrote, by folder
    outputs = _outputs(crate, results, SCHEMAS)
    start, end = _times(table)
    action = crate.add_action(
        workflow, identifier="#run", object=[config_file, *gpus], result=outputs,
        properties=dict(name=name, description=f"mmbench's workflow run at commit {git}",
                        actionStatus={"@id": "http://schema.org/CompletedActionStatus"},
                        **({"startTime": start} if start else {}),
                        **({"endTime": end} if end else {})),
    )  # fmt: skip
    action["instrument"] = [workflow, *cubins]
    crate.root_dataset["mentions"] = [action]
    path = results / METADATA
    crate.metadata.write(results)
    return path


def _definition_only(folder: str, names: list[str]) -> list[str]:
    """shutil.copytree's ignore: of the workflow folder, the Snakefile and the rule files."""
    here = Path(folder)
    if here.name == "rules":
        return [n for n in names if not n.endswith(".smk")]
    return [n for n in names if n not in ("Snakefile", "rules")]


def _outputs(crate, results: Path, schemas: dict) -> list:
    """Each folder of the run's outputs a Dataset with its files, each file with its media
    type; a tidy table conformsTo its schema, written into crate/schemas/."""
    from mmbench.report.catalogue import FIGURES, TABLES
    from mmbench.report.render import PROFILE_TABLES

    sources = {n: f"tables/{f}.csv" for n, f in PROFILE_TABLES.items()} | {
        "timings": "tables/timings.csv"}  # fmt: skip
    datasets = []
    for folder in sorted(results / f for f in RUN_FOLDERS if (results / f).is_dir()):
        files = []
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            rel = str(path.relative_to(results))
            props = dict(encodingFormat=_media(path), contentSize=path.stat().st_size)
            stem = path.name.split(".")[0]
            if folder.name == "tables" and stem in TIDY_TABLES and ".csv" in path.name:
                schema = results / OWN / "schemas" / f"{stem}.schema.json"
                if not schema.exists():
                    schema.write_text(schemas[stem].column_schema().to_json() + "\n")
                    crate.add_file(source=schema, dest_path=str(schema.relative_to(results)),
                                   properties=dict(name=f"The {stem} table's schema (pandera)",
                                                   encodingFormat="application/json"))  # fmt: skip
                props["conformsTo"] = {"@id": str(schema.relative_to(results))}
            drawn = (FIGURES if folder.name == "figures" else TABLES).get(stem)
            if folder.name in ("figures", "report") and drawn is not None:
                props["name"] = drawn.title
                props["isBasedOn"] = [{"@id": sources[n]} for n in drawn.inputs
                                      if n in sources and (results / sources[n]).exists()]  # fmt: skip
            files.append(crate.add_file(source=path, dest_path=rel, properties=props))
        datasets.append(crate.add_dataset(source=folder, dest_path=folder.name + "/",
                                          properties=dict(hasPart=files)))  # fmt: skip
    return datasets


def _commit(manifests: list) -> str:
    """The commit the run's manifests name (`-dirty` where the tree was edited; `unknown`
    where none names one)."""
    for path in manifests:
        git = json.loads(Path(path).read_text()).get("git") or {}
        if git.get("commit"):
            return git["commit"] + ("-dirty" if git.get("dirty") else "")
    return "unknown"


def _one(rows, column: str) -> str:
    values = sorted({str(v) for v in rows[column].dropna()}) if column in rows else []
    return ", ".join(values) or "unrecorded"


def _gpu_words(table) -> str:
    names = sorted({str(v) for v in table.get("gpu_name", []) if str(v) not in ("", "nan")})
    return ", ".join(names) or "a GPU"


def _times(table) -> tuple[str | None, str | None]:
    import pandas as pd

    if "timestamp" not in table:
        return None, None
    stamps = pd.to_datetime(table["timestamp"], errors="coerce", utc=True).dropna()
    if stamps.empty:
        return None, None
    return stamps.min().isoformat(), stamps.max().isoformat()


def _media(path: Path) -> str:
    return MEDIA.get(path.suffix, "application/octet-stream")

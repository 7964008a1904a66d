"""A run's Workflow Run RO-Crate (report/crate.py, rule crate), made by the workflow from a
recorded H200 ladder run rendered again, and checked by the RO-Crate community's validator
(rocrate-validator, the Workflow Run Crate 0.5 profile), not by reading our own JSON back; what
it must name (the GPU, the commit, every cubin and every output) is read from the recorded
files themselves."""

from __future__ import annotations

import json
import lzma
import shutil
import sys

import numpy as np
import pytest

from .conftest import DATA, ROOT, copy_recorded, recorded_bytes, snakemake

sys.path.insert(0, str(ROOT / "tools"))
from validate_crate import seeded_cache, validate  # noqa: E402


@pytest.fixture(scope="module")
def crated(tmp_path_factory):
    """The recorded H200 ladder run copied into a checkout and rendered again (render_only):
    its results folder, with the crate the workflow wrote."""
    work = tmp_path_factory.mktemp("crate")
    for name in ("workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, work / name)
    copy_recorded(DATA / "h200-ladder" / "results", work / "results")
    out = snakemake("--cores", "2", "--configfile", "config/presets/ladder.yaml", "--config",
                    "render_only=true", cwd=work)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    return work / "results" / "ladder", seeded_cache(work)


def test_a_runs_crate_is_a_valid_workflow_run_crate(crated):
    results, cache = crated
    out = validate(results, cache)
    text = out.stdout + out.stderr
    assert out.returncode == 0, text[-4000:]
    assert "[OK] RO-Crate is a valid workflow-run-crate-0.5" in text, text[-4000:]


def test_the_validator_refuses_a_crate_without_its_workflow(crated, tmp_path):
    """The check can fail: the same crate with its main entity taken out is refused."""
    results, cache = crated
    broken = tmp_path / "broken"
    shutil.copytree(results, broken)
    meta = json.loads((broken / "ro-crate-metadata.json").read_text())
    for entity in meta["@graph"]:
        entity.pop("mainEntity", None)
    (broken / "ro-crate-metadata.json").write_text(json.dumps(meta))
    out = validate(broken, cache)
    assert out.returncode != 0
    assert "mainEntity" in out.stdout + out.stderr


def test_the_crate_names_the_gpu_the_commit_every_cubin_and_every_output(crated):
    results, _ = crated
    graph = {
        e["@id"]: e for e in json.loads((results / "ro-crate-metadata.json").read_text())["@graph"]
    }
    run = graph["#run"]
    # the GPU and driver, as the recorded rows have them (read here with the csv module)
    import csv

    with lzma.open(
        DATA / "h200-ladder" / "results" / "ladder" / "tables" / "timings.csv.xz", "rt"
    ) as fh:
        rows = list(csv.DictReader(fh))
    gpus = {r["gpu_uuid"]: r for r in rows if r["gpu_uuid"]}
    named = {graph[o["@id"]]["identifier"]: graph[o["@id"]] for o in run["object"]
             if o["@id"].startswith("#gpu-")}  # fmt: skip
    assert set(named) == set(gpus) and len(gpus) == 1
    ((uuid, row),) = gpus.items()
    assert named[uuid]["value"] == row["gpu_name"] == "NVIDIA H200"
    assert f"driver {row['driver_version']}" in named[uuid]["description"]
    # the commit, as the recorded manifests have it
    manifest = json.loads(
        recorded_bytes(
            DATA / "h200-ladder" / "results" / "ladder" / "runs" / "warptile.manifest.json"
        )
    )
    git = manifest["git"]
    workflow = graph[graph["./"]["mainEntity"]["@id"]]
    assert workflow["version"] == git["commit"] + ("-dirty" if git["dirty"] else "")
    assert {i["@id"] for i in run["instrument"]} >= {workflow["@id"]}
    # every cubin that ran: each (variant, instance, digest) of the rows that name one
    ran = {(r["variant"], r["instance"], r["cubin_sha256"]) for r in rows if r["cubin_sha256"]}
    cubins = {(e["name"], e["softwareVersion"]) for i in run["instrument"]
              if (e := graph[i["@id"]])["@type"] == "SoftwareApplication"}  # fmt: skip
    assert cubins == {(f"{v} {i}", f"sha256:{s}") for v, i, s in ran} and len(ran) > 20
    # every file the run wrote in its folders, and each tidy table with its schema
    # every file in the results folder but the metadata file and Snakemake's folder marker
    written = {str(p.relative_to(results)) for p in results.rglob("*") if p.is_file()} - {
        "ro-crate-metadata.json", "crate/.snakemake_timestamp"}  # fmt: skip
    files = {i for i, e in graph.items() if "File" in np.atleast_1d(e["@type"])}
    assert written - files == set(), sorted(written - files)
    assert {"figures/ladder.png", "logs/crate.log", "crate/config.yaml"} <= written
    assert graph["tables/timings.csv"]["conformsTo"]["@id"] == "crate/schemas/timings.schema.json"
    assert (results / "crate" / "schemas" / "timings.schema.json").is_file()
    assert {"@id": "tables/timings.csv"} in graph["figures/ladder.png"]["isBasedOn"]

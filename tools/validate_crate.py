"""A run's Workflow Run RO-Crate checked by the RO-Crate community's validator, on a machine with
no network: `rocrate-validator validate --offline -p workflow-run-crate-0.5 RESULTS`, its HTTP
cache first given the RO-Crate 1.1 JSON-LD context the crate names, as published and shipped in
the installed `rocrate` package (the validator fetches it; offline, it reads it from the cache).

    python tools/validate_crate.py RESULTS [--severity required|recommended|optional]

Prints the validator's report and exits with its exit code (0: valid)."""

from __future__ import annotations

import argparse
import datetime
import io
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CONTEXT = "https://w3id.org/ro/crate/1.1/context"
PROFILE = "workflow-run-crate-0.5"


def seeded_cache(where: Path) -> Path:
    """An HTTP cache for the validator (requests-cache's SQLite store, which it reads with
    --cache-path) holding the RO-Crate 1.1 context from the installed rocrate package."""
    import requests
    import requests_cache
    import rocrate
    import urllib3

    body = (Path(rocrate.__file__).parent / "data" / "ro-crate.jsonld").read_bytes()
    if json.loads(body)["@id"] != CONTEXT:
        raise SystemExit(f"the installed rocrate ships another context than {CONTEXT}")
    headers = {"Content-Type": "application/ld+json"}
    resp = requests.models.Response()
    resp.status_code, resp.reason, resp._content, resp.url = 200, "OK", body, CONTEXT
    resp.headers = requests.structures.CaseInsensitiveDict(headers)
    resp.raw = urllib3.HTTPResponse(body=io.BytesIO(body), headers=headers, status=200,
                                    preload_content=False, request_url=CONTEXT)  # fmt: skip
    resp.request = requests.Request("GET", CONTEXT).prepare()
    resp.elapsed = datetime.timedelta(0)
    cache = where / "http_cache"
    session = requests_cache.CachedSession(str(cache), backend="sqlite", expire_after=-1)
    session.cache.save_response(resp)
    return cache


def validate(results: Path, cache: Path, severity: str = "required") -> subprocess.CompletedProcess:
    # the validator's command-line entry point (rocrate-validator), run by this Python
    entry = "from rocrate_validator.cli import cli; cli(prog_name='rocrate-validator')"
    cmd = [sys.executable, "-c", entry, "-y", "--disable-color", "validate", "--offline", "--cache-path",
           str(cache), "--no-paging", "-v", "-p", PROFILE, "-l", severity, "-w", "160",
           str(results)]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, COLUMNS="160"))  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", type=Path, help="a run's results folder (ro-crate-metadata.json)")
    ap.add_argument("--severity", default="required",
                    choices=["required", "recommended", "optional"])  # fmt: skip
    args = ap.parse_args()
    if not (args.results / "ro-crate-metadata.json").is_file():
        raise SystemExit(f"{args.results}: no ro-crate-metadata.json (the run's crate job "
                         "writes it)")  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        out = validate(args.results, seeded_cache(Path(tmp)), args.severity)
    print("\n".join(line.rstrip() for line in (out.stdout + out.stderr).splitlines()
                    if line.strip()))  # fmt: skip
    return out.returncode


if __name__ == "__main__":
    sys.exit(main())

"""A measurement job's inputs drawn ahead into the inputs cache (input_cache.py) while the job
waits for the GPU: `draw_ahead` starts `python -m mmbench.service.predraw LIST.json PROCESSES`,
which draws each group of the listed configurations once, in a pool of processes, under the
group's lock (input_cache.drawing), as oracle.shared_inputs would, and computes its Freivalds
probes' products (input_cache.probe_products), which the worker's Freivalds check would
otherwise wait for (lab: code-choices, "predraw")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from mmbench.service import input_cache


def draw_ahead(confs: list[dict], processes: int = 4, vectors: int = 0,
               promoted: int | None = None) -> subprocess.Popen | None:  # fmt: skip
    """Draws the groups of `confs` (configuration dicts, in the order the runner needs them)
    into the cache, and computes their Freivalds probes' products for `vectors` vectors
    (oracle.Inputs.probes; `promoted`: the variant's sums_promoted_every, which decides whether
    the check is exact), in `processes` processes of a program of its own, and returns it (None
    where nothing is kept: enabled()).  Nothing waits for it: a group it has not drawn yet is
    drawn by whoever needs it first."""
    if not input_cache.enabled() or not confs:
        return None
    from mmbench.core import paths

    where = input_cache.usable()
    if where is None:  # not this user's private cache: nothing drawn ahead (said once)
        return None
    fd, listed = tempfile.mkstemp(prefix="draw-", suffix=".json", dir=where)
    with os.fdopen(fd, "w") as fh:
        json.dump([dict(conf=c, vectors=vectors, promoted=promoted) for c in confs], fh)
    cmd = paths.child_command("service.predraw", listed, str(processes))
    env = paths.child_env(dict(os.environ))
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip


def _draw_one(item: dict) -> None:
    from mmbench.core.axes import Configuration
    from mmbench.measure.oracle import Inputs

    conf = Configuration.from_dict(item["conf"])
    Inputs.draw(conf, item["vectors"], item["promoted"], input_cache).probes()


def main(argv: list[str]) -> int:
    """`python -m mmbench.service.predraw LIST.json [PROCESSES]`: each group of the
    configurations listed drawn into the cache once (draw_ahead), the list file removed."""
    from concurrent.futures import ProcessPoolExecutor

    from mmbench.core.axes import Configuration

    listed = Path(argv[0])
    try:
        confs = json.loads(listed.read_text())
    finally:
        listed.unlink(missing_ok=True)
    firsts: dict[str, dict] = {}  # one configuration per group, in the list's order
    for item in confs:
        firsts.setdefault(input_cache.key(Configuration.from_dict(item["conf"])), item)
    from mmbench.measure.freivalds import one_blas_pool

    # one BLAS thread each: pools as large as the cores, four at once beside the worker's
    # check, made each other's products many times slower (freivalds.BLAS_THREADS)
    processes = max(1, int(argv[1]) if len(argv) > 1 else 4)
    with ProcessPoolExecutor(processes, initializer=one_blas_pool) as pool:
        list(pool.map(_draw_one, firsts.values()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

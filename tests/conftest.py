import atexit
import functools
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .data_reads import DataReads

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_PATH = ROOT / "kernels" / "registry.yaml"
DATA = Path(__file__).resolve().parent / "data"
# the default experiment recorded on an H100 (tests/data/README.md)
MAIN = DATA / "h100-main" / "results"
SNAKEMAKE = [sys.executable, "-m", "snakemake"]

# which test reads which file of tests/data (tests/data_reads.py): a file no test reads fails a
# whole run of the README's test command, once every test (in every worker) has run
DATA_READS = DataReads(DATA)
# pytest-xdist's key for the folder where each worker leaves its reads for the controller
READS_KEY = "mmbench_data_reads"
# the controller's: that folder, and the message of a run that left files unread
_READS_FOLDER = pytest.StashKey[Path]()
_UNREAD = pytest.StashKey[str]()


def pytest_configure(config):
    DATA_READS.install()
    if not hasattr(config, "workerinput"):  # this process is the session's controller
        config.stash[_READS_FOLDER] = Path(tempfile.mkdtemp(prefix="mmbench-data-reads-"))


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist, in the controller: tell each worker where to leave its reads."""
    node.workerinput[READS_KEY] = str(node.config.stash[_READS_FOLDER])


def pytest_runtest_setup(item):
    DATA_READS.begin(item)


def pytest_runtest_teardown(item):
    DATA_READS.end()


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    worker = getattr(config, "workerinput", None)
    if worker is not None:  # a pytest-xdist worker: its reads go to the controller
        DATA_READS.dump(Path(worker[READS_KEY]) / f"{worker['workerid']}.json")
        return
    folder = config.stash[_READS_FOLDER]
    for dumped in sorted(folder.glob("*.json")):
        DATA_READS.merge(dumped)
    shutil.rmtree(folder, ignore_errors=True)
    if os.environ.get("MMBENCH_DATA_READS"):
        DATA_READS.dump(os.environ["MMBENCH_DATA_READS"])
    # only a whole run of the README's command reads all of it (not -k, one file, -m slow)
    verdict = None if DATA_READS.incomplete(session) else DATA_READS.unread_message()
    if verdict:
        config.stash[_UNREAD] = verdict
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _UNREAD in config.stash:
        terminalreporter.section("tests/data", sep="=", red=True, bold=True)
        terminalreporter.line(config.stash[_UNREAD], red=True)


@pytest.fixture(autouse=True, scope="session")
def _inputs_cache_of_the_tests(tmp_path_factory):
    """The measurement's shared inputs (service/input_cache.py) of every test, and of every
    Snakemake the tests start, in a folder of the test session, never the user's /dev/shm."""
    folder = tmp_path_factory.mktemp("inputs-cache")
    old = os.environ.get("MMBENCH_INPUTS_CACHE")
    os.environ["MMBENCH_INPUTS_CACHE"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("MMBENCH_INPUTS_CACHE", None)
    else:
        os.environ["MMBENCH_INPUTS_CACHE"] = old


# what a copy of the workflow holds (never the user's results/ or .snakemake/)
WORKFLOW_FILES = ("workflow", "kernels", "config", "profiles", "environment.yml")


def recorded(path) -> Path:
    """A recorded file by its plain name, or its `.gz` or `.xz` where tests/data keeps it
    compressed."""
    path = Path(path)
    if path.exists():
        return path
    for suffix in (".gz", ".xz"):
        if (packed := path.with_name(path.name + suffix)).exists():
            return packed
    return path


def _unpacked(path: Path, data: bytes) -> bytes:
    """A recorded file's bytes, decompressed by its suffix (`.gz`, `.xz`)."""
    import gzip
    import lzma

    if path.suffix == ".gz":
        return gzip.decompress(data)
    return lzma.decompress(data) if path.suffix == ".xz" else data


def read_csv(path, **kw):
    """pandas' read_csv of a recorded table, plain or compressed (recorded)."""
    import pandas as pd

    return pd.read_csv(recorded(path) if isinstance(path, (str, Path)) else path, **kw)


def recorded_bytes(path) -> bytes:
    """A recorded file's bytes as the pipeline wrote it, from its `.gz` or `.xz` where
    tests/data keeps it compressed."""
    path = recorded(path)
    return _unpacked(path, path.read_bytes())


def copy_recorded(src: Path, to: Path, **kw) -> Path:
    """A recorded results folder copied to `to` as the pipeline wrote it: its tables and run
    manifests kept compressed in tests/data (`timings.csv.gz`, `.xz`, `cublas.manifest.json.xz`)
    are written out plain (`timings.csv`, `cublas.manifest.json`)."""
    shutil.copytree(src, to, **kw)
    for packed in [*to.rglob("*.csv.gz"), *to.rglob("*.csv.xz"), *to.rglob("*.manifest.json.xz")]:
        packed.with_suffix("").write_bytes(_unpacked(packed, packed.read_bytes()))
        packed.unlink()
    return to


# tests/data/compare/h100-slowed keeps only what its re-measurement changed (tiled_guarded and
# the timings table); every other file of it is h100-b's, byte for byte
SLOWED, SLOWED_FROM = "h100-slowed", "h100-b"


@functools.cache
def compare_run(name: str) -> Path:
    """Recorded compare run `name` (tests/data/compare) as the pipeline wrote it (copy_recorded:
    its compressed manifests and tables plain), h100-slowed completed from h100-b, once a
    session, in a folder of its own (read it, do not write it)."""
    to = Path(tempfile.mkdtemp(prefix="mmbench-compare-")) / name
    atexit.register(shutil.rmtree, to.parent, True)  # gone when the session's process ends
    if name == SLOWED:  # h100-b's files, then h100-slowed's over them
        copy_recorded(DATA / "compare" / SLOWED_FROM, to)
    return copy_recorded(DATA / "compare" / name, to, dirs_exist_ok=True)


def copy_workflow(to: Path) -> Path:
    """A copy of the workflow in `to`, without the checkout's results/ or .snakemake/."""
    for name in WORKFLOW_FILES:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, to / name)
    return to


@functools.cache
def pristine_workflow() -> Path:
    """One copy of the workflow for the whole session, for the tests that only read it (dry
    runs, lint): a test never reads or writes the user's own results/ or .snakemake/, whatever
    the checkout has run before (issue: the test command failed in a used checkout)."""
    return copy_workflow(Path(tempfile.mkdtemp(prefix="mmbench-workflow-")))


def snakemake(*args, cwd=None, check=False):
    """The real Snakemake of this environment, run on a copy of the workflow (the session's
    pristine copy unless the test gives its own)."""
    cwd = cwd or pristine_workflow()
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    return subprocess.run(
        [*SNAKEMAKE, *args], cwd=cwd, capture_output=True, text=True, env=env, check=check
    )


@pytest.fixture
def workdir(tmp_path):
    """A copy of the workflow, so tests never touch the checkout's results/."""
    return copy_workflow(tmp_path)


@pytest.fixture(scope="session")
def sm90_build(tmp_path_factory):
    """`compile_all` for sm_90 in a copy of the workflow, run once a session: the count of its
    builds (test_workflow) and every Hopper rung's ptxas report (test_ptxas) read the same
    builds, so CI compiles each instantiation once.  (workdir, the finished Snakemake run)."""
    workdir = copy_workflow(tmp_path_factory.mktemp("sm90-build"))
    out = snakemake(*COMPILE_ALL, "--config", "arch=sm_90", cwd=workdir)
    return workdir, out


# `compile_all` on every core, its scheduler looking for builds to start every 10 s rather than
# every second (Snakemake's default tick, 100/1s): each look stats every input of every waiting
# build, which for hundreds of independent builds takes a good part of a core from nvcc.  A
# workflow whose jobs wait on each other runs slower with the longer tick, so neither the
# workflow profile nor the other tests set it (figures: the lab notebook).
COMPILE_ALL = ("--cores", str(os.cpu_count() or 2), "--max-jobs-per-timespan", "1000/10s",
               "compile_all")  # fmt: skip


def _gpu_reason() -> str | None:
    """Why GPU tests cannot run here, or None when a CUDA GPU is usable."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "no CUDA GPU visible"
    except Exception as err:  # noqa: BLE001 - any import or driver failure means no GPU here
        # the first line of the error, whole (cudaErrorInsufficientDriver's message is longer
        # than a line cut at 80 characters)
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return f"no usable CUDA GPU ({type(err).__name__}: {first})"
    if not shutil.which("nvcc"):
        return "nvcc not on PATH"
    return None


def pytest_collection_modifyitems(config, items):
    reason = _gpu_reason()
    if reason is None:
        return
    skip = pytest.mark.skip(reason=f"needs a GPU: {reason}; run `pytest -m gpu` on the GPU machine")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def registry():
    from mmbench.core.registry import load_registry

    return load_registry(REGISTRY_PATH)


def cell_rows(timings, made):
    """For every number cell of a pivot table (ms (GFLOPS)), the timings rows it can be."""
    shapes = [c for c in made.columns if c[0].isdigit()]
    keys = [c for c in made.columns if c not in shapes]
    for _, row in made.iterrows():
        for shape in shapes:
            cell = str(row[shape])
            if cell == "--":
                continue
            m, n, k = [int(x) for x in shape.split("x")] if "x" in shape else [int(shape)] * 3
            sel = (timings.m == m) & (timings.n == n) & (timings.k == k)
            for key in keys:
                values = timings[key].fillna("").replace("", "-").astype(str)
                sel &= values == str(row[key])
            yield cell, timings[sel]


def covering(instances: list[dict]) -> list[dict]:
    """The first and the last instantiation, then, for each parameter value neither has, the
    first instantiation that has it: every value of every parameter is run at least once (a
    value added to the registry, as persistent_bf16's STAGES 6 and 8, is tested with it)."""
    chosen = list({id(p): p for p in (instances[0], instances[-1])}.values())
    for name in instances[0]:
        for p in instances:
            if all(q[name] != p[name] for q in chosen):
                chosen.append(p)
    return chosen

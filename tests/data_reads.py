"""Which test reads which file of tests/data: an audit hook (PEP 578) sees every `open` of a path
under the folder while a test runs, and every path under it handed to a child process.  At the
end of a whole run of the README's test command, conftest.py fails the session on any file there
that no test read: tests/data holds only what tests run pipeline code on (CONTRIBUTING.md).  Run
in parallel (pytest-xdist, the README's `-n auto`), each worker writes its reads to a folder the
controller gave it, and the controller checks their union.
Reads made by a test marked `sweeps_data` (one that opens every recorded table to check it,
whatever it is) do not count as a use of the file.  MMBENCH_DATA_READS=FILE writes the reads
as JSON when the session ends."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

# the README's test command's marker expression: the runs whose selection is every test that
# is meant to read tests/data (CI's second run, -m "slow or slurm", is not one)
WHOLE_RUN_MARKERS = {"", "not slow and not slurm"}


class DataReads:
    def __init__(self, folder: Path):
        self.folder = str(folder)
        self.prefix = self.folder + os.sep
        self.test: str | None = None
        self.counts = True
        self.reads: dict[str, set[str]] = {}

    def install(self) -> None:
        sys.addaudithook(self._audit)

    def begin(self, item) -> None:
        self.test = item.nodeid
        self.counts = item.get_closest_marker("sweeps_data") is None

    def end(self) -> None:
        self.test = None

    def _audit(self, event: str, args: tuple) -> None:
        if self.test is None or not self.counts:
            return
        if event == "subprocess.Popen":
            self._handed_over(args)
            return
        if event != "open":
            return
        path, mode = args[0], args[1]
        if isinstance(path, int) or path is None:
            return
        path = os.fsdecode(path)
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            return
        path = os.path.abspath(path)
        if path.startswith(self.prefix) and os.path.isfile(path):
            self.reads.setdefault(os.path.relpath(path, self.folder), set()).add(self.test)

    def _handed_over(self, args: tuple) -> None:
        """A path under tests/data given to a child process (an argument, or its working
        folder): the child reads it, so every file under it counts as read by this test."""
        _, argv, cwd, _ = args
        words = [os.fsdecode(a) for a in (argv or []) if isinstance(a, (str, bytes, os.PathLike))]
        if cwd is not None:
            words.append(os.fsdecode(cwd))
        for word in words:
            for part in word.split("="):  # --config baseline=PATH
                path = os.path.abspath(part)
                if path != self.folder and not path.startswith(self.prefix):
                    continue
                found = [Path(path)] if os.path.isfile(path) else Path(path).rglob("*")
                for f in found:
                    if f.is_file():
                        rel = os.path.relpath(f, self.folder)
                        self.reads.setdefault(rel, set()).add(self.test)

    def files(self) -> list[str]:
        root = Path(self.folder)
        return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())

    def incomplete(self, session) -> str | None:
        """Why this session's reads do not cover every test meant to read tests/data (None:
        they do): a marker expression other than the README's, -k, a selection of files, or a
        test that failed before it finished reading."""
        config = session.config
        if config.option.keyword:
            return f"-k {config.option.keyword!r}"
        if config.option.markexpr.strip() not in WHOLE_RUN_MARKERS:
            return f"-m {config.option.markexpr!r}"
        if getattr(config.option, "lf", False) or getattr(config.option, "deselect", None):
            return "a selection of tests"
        testpaths = {str((Path(config.rootpath) / p).resolve()) for p in config.getini("testpaths")}
        given = {str(Path(a).resolve()) for a in config.args}
        if config.args and given != testpaths:
            return "a selection of files"
        if session.testsfailed:
            return f"{session.testsfailed} tests failed"
        return None

    def unread(self) -> list[str]:
        """The files of the folder no test has read in this session, sorted."""
        return [f for f in self.files() if f not in self.reads]

    def dump(self, path: str | Path) -> None:
        """The reads as JSON (file -> the tests that read it): what a move of test data uses,
        and what a parallel worker hands to the controller."""
        with open(path, "w") as fh:
            json.dump({k: sorted(v) for k, v in self.reads.items()}, fh, indent=1)

    def merge(self, path: str | Path) -> None:
        """Add the reads another process dumped to `path` (a parallel worker's)."""
        with open(path) as fh:
            for name, tests in json.load(fh).items():
                self.reads.setdefault(name, set()).update(tests)

    def unread_message(self) -> str | None:
        """What fails a whole run of the README's test command: the files no test read (None
        where every one was read)."""
        unread = self.unread()
        if not unread:
            return None
        return (
            "files in tests/data that no test read (read each in a test that runs pipeline "
            "code, or move it to the lab notebook, CONTRIBUTING.md):\n" + "\n".join(unread)
        )

"""Where the pipeline's data files are: the one place that knows.

The kernels (``kernels/``: sources and ``registry.yaml``), the schemas (``workflow/schemas/``) and
the profiler metric mapping (``workflow/resources/``) live in the repository.  A wheel built from
it (``pip install .``) carries them as package data under ``mmbench/kernels``, ``mmbench/schemas``
and ``mmbench/resources`` (pyproject.toml maps the same folders); a checkout or an editable
install reads them where they are.  Nothing here touches ``sys.path``; child processes get
the package's folder on their PYTHONPATH (child_env).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]  # mmbench/
# data folder -> its place in the repository (pyproject.toml's [tool.setuptools.package-dir])
FOLDERS = {"kernels": "kernels", "schemas": "workflow/schemas", "resources": "workflow/resources"}


def not_private(folder: Path) -> str | None:
    """Why `folder` is not this user's alone (None: it is): a symbolic link, not a folder,
    another user's, or writable by others.  The words follow the folder's name in a message."""
    st = folder.lstat()
    if stat.S_ISLNK(st.st_mode):  # whoever can swap the link redirects what is written there
        return f"is a symbolic link (to {os.readlink(folder)})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    if st.st_uid != os.getuid():
        return f"is owned by uid {st.st_uid}, not this user ({os.getuid()})"
    if st.st_mode & 0o022:
        return f"is writable by others (mode {oct(st.st_mode & 0o777)})"
    return None


def private_folder(folder: Path, what: str, remedy: str) -> Path:
    """`folder`, created readable and writable by this user alone; one that another user owns,
    others may write, or that is a symbolic link is refused (PermissionError naming `what`, why
    (not_private) and the `remedy`): a file planted there, or a link swapped while a job waits,
    could stall, redirect or inject into this user's jobs."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    why = not_private(folder)
    if why:
        fix = "name the folder itself" if folder.is_symlink() else "remove it"
        raise PermissionError(f"{what} {folder} {why}; {fix}, or {remedy}")
    return folder


# how far ahead of the clock a file's time may be before it counts as dated in the future
FUTURE_SLACK_S = 2.0


def settle_future_times(root: Path, now: float | None = None) -> str | None:
    """Sets the time of every file of this user's under `root` dated in the future (a results
    folder copied from a machine whose clock ran ahead, or a clock set back) to now, and says
    so (None where none was).  Snakemake decides partly by file times: an input dated after
    every later output makes each job that reads it fail its clock-skew check, and an output
    dated ahead hides an edit from the time check.  What changed is found by content hashes
    (kernel sources and headers, registry entries, cubins' sha256), which times do not move."""
    import time

    now = time.time() if now is None else now
    moved, latest = 0, now
    if not root.is_dir():
        return None
    for folder, dirs, files in os.walk(root):
        for name in files + dirs:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
                if st.st_mtime > now + FUTURE_SLACK_S and st.st_uid == os.getuid():
                    os.utime(path, (now, now), follow_symlinks=False)
                    moved += name in files
                    latest = max(latest, st.st_mtime)
            except OSError:
                continue
    if not moved:
        return None
    stamp = time.strftime("%Y-%m-%d %H:%M", time.localtime(latest))
    return (
        f"{moved} file(s) under {root}/ were dated in the future (up to {stamp}; the clock says "
        f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(now))}): their times are set to now, "
        "so that Snakemake's time checks hold; what changed is found by content hashes"
    )


def data_dir(name: str) -> Path:
    """The folder ``name`` (kernels, schemas or resources): inside an installed package if it was
    built as a wheel, otherwise in the repository this package sits in."""
    installed = PACKAGE / name
    if installed.is_dir():
        return installed
    checkout = PACKAGE.parents[2] / FOLDERS[name]
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(
        f"mmbench data folder {name!r} not found: neither {installed} (an installed wheel) nor "
        f"{checkout} (a checkout); reinstall with `pip install .` or run from the repository"
    )


def registry_path() -> Path:
    return data_dir("kernels") / "registry.yaml"


def schema_path(name: str) -> Path:
    return data_dir("schemas") / f"{name}.schema.yaml"


def resource_path(name: str) -> Path:
    return data_dir("resources") / name


def child_command(module: str, *args: str) -> list[str]:
    """`python -m mmbench.<module> ARGS` with this interpreter."""
    return [sys.executable, "-m", f"mmbench.{module}", *args]


def child_env(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a child `python -m mmbench.…` process, so that it imports this very package.

    A rule's conda environment (workflow/envs/) does not install mmbench: Snakemake puts the
    script's folder on the script's ``sys.path``, which a child process does not inherit.  The
    folder holding this package goes first on the child's PYTHONPATH (in a checkout that is
    workflow/scripts, for an installed wheel its site-packages)."""
    here = str(PACKAGE.parent)
    rest = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    return dict(env, PYTHONPATH=os.pathsep.join([here, *rest]))

"""What a cubin was built as, in its own bytes.

Every cubin the project builds (plan/compile.py) carries the name of what it was built as: a
header included before the kernel defines a device string "mmbench-cubin:<folder>/<instance>"
(results/build/<arch>/<variant>/<instance>.cubin: the variant and the instantiation).  A cubin
swapped for another instantiation's (with its .sha256 beside it) still names that other one:
the workflow builds it again (common.smk build_ticket) and a measurement job refuses it
(service/jobs.py) before anything measures it.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

IDENTITY_HEADER = "mmbench_identity.cuh"
IDENTITY_PREFIX = "mmbench-cubin:"


def file_sha(path: str | Path) -> str:
    """A cubin's (or any file's) short digest: the first 16 hex digits of its SHA-256, the
    key the journal, the profile batch and the run's rows know a build by."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def cubin_identity(cubin: str | Path) -> str:
    """The name a cubin at .../<folder>/<instance>.cubin is built with (characters other than
    letters, digits and _ . + - as _)."""
    cubin = Path(cubin)
    return IDENTITY_PREFIX + "/".join(
        re.sub(r"[^A-Za-z0-9_.+-]", "_", part) for part in (cubin.parent.name, cubin.stem)
    )


def identity_header(identity: str, host: bool = False) -> str:
    """The header's text: one device string, kept in the cubin (used); no kernel reads it.
    `host`: a shared library's build (registry `backend: shared`), whose device code nvcc may
    keep compressed: the same string in its host data too."""
    text = (
        'extern "C" __device__ __attribute__((used)) const char mmbench_cubin_identity[] = '
        f'"{identity}";\n'
    )
    if host:
        text += (
            'extern "C" __attribute__((used)) const char mmbench_build_identity[] = '
            f'"{identity}";\n'
        )
    return text


def names_itself(data: bytes, identity: str) -> bool:
    """Whether a cubin's bytes hold `identity`, whole (followed by its terminating zero)."""
    return identity.encode() + b"\0" in data


def misnamed(cubins: dict[str, str | Path]) -> list[str]:
    """Of `cubins` (instantiation -> cubin), each that does not name itself as built for its
    place (a cubin swapped for another's), one line each: the path and what it names."""
    out = []
    for path in cubins.values():
        data = Path(path).read_bytes()
        want = cubin_identity(path)
        if not names_itself(data, want):
            found = re.search(rb"mmbench-cubin:([A-Za-z0-9_.+/-]+)\0", data)
            said = f"names {found.group(1).decode()}" if found else "names no instantiation"
            out.append(f"{path} {said}, not {want.removeprefix(IDENTITY_PREFIX)}")
    return out

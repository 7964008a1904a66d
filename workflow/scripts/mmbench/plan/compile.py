"""The nvcc command that builds one cubin per kernel instantiation (used by the compile rule
and by the GPU tests, so both build exactly the same thing)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from mmbench.core.axes import DTYPE_PARAM
from mmbench.core.cubins import IDENTITY_HEADER, cubin_identity, identity_header, names_itself
from mmbench.core.elements import element_type
from mmbench.core.paths import private_folder

NVCC_FLAGS = ("-cubin", "-O3", "-lineinfo", "-std=c++17", "-Xptxas", "-v")
# a shared library (registry `backend: shared`): position-independent host code beside the
# kernels, the library's host assertions off as its own builds have them
SHARED_FLAGS = ("-shared", "-Xcompiler", "-fPIC", "-DNDEBUG", "-O3", "-lineinfo", "-std=c++17",
                "-Xptxas", "-v")  # fmt: skip
# registry `libraries`: the Python package that installs each one's headers, and its include
# folders inside the package
LIBRARIES = {
    "cutlass": ("cutlass_library", ("source/include", "source/tools/util/include")),
}


def arch_flags(arch: str) -> list[str]:
    """-arch=sm_90 for a plain architecture; an architecture-specific one (sm_90a: wgmma, setmaxnreg)
    needs the matching virtual architecture too."""
    if arch[-1] in "af":
        num = arch.removeprefix("sm_")
        return [f"-gencode=arch=compute_{num},code={arch}"]
    return [f"-arch={arch}"]


def type_flags(dtype: str) -> list[str]:
    """-DELEM_T=<C type of the inputs>, and -DOUT_T / -DACC_T where the output or the sums
    have another type (bfloat16 and float16 inputs: float); common.cuh defaults both to
    ELEM_T."""
    defines = element_type(dtype).compile_defines()
    elem = defines.pop("ELEM_T")
    return [f"-DELEM_T={elem}"] + [f"-D{k}={v}" for k, v in defines.items() if v != elem]


def define_flags(params: dict) -> list[str]:
    """The element type's macros, then -D<NAME>=<value> for every other parameter."""
    out = []
    for k, v in params.items():
        out += type_flags(v) if k == DTYPE_PARAM else [f"-D{k}={int(v)}"]
    return out


def library_includes(names) -> list[str]:
    """-I<folder> for each header library of `names` (registry `libraries`), where its Python
    package is installed; CompileError where it is not, saying what to install."""
    import importlib.util

    out = []
    for name in names:
        package, folders = LIBRARIES[name]
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise CompileError(
                f"the {name} headers: Python package {package} is not installed here; install "
                "the project's dependencies (pip install -e ., which brings nvidia-cutlass)"
            )
        root = Path(next(iter(spec.submodule_search_locations)))
        for sub in folders:
            folder = root / sub
            if not folder.is_dir():
                raise CompileError(f"the {name} headers: {folder} is missing from {package}")
            if not SAFE_PATH.match(str(folder)):
                raise CompileError(
                    f"the {name} headers: {folder} has characters a shell would expand; "
                    "install the package under a plain path (letters, digits, _ . + - /)"
                )
            out.append(f"-I{folder}")
    return out


def nvcc_command(
    source: str | Path, output: str | Path, arch: str, params: dict, nvcc: str = "nvcc",
    lineinfo: bool = True, identity: str | None = None, shared: bool = False,
    libraries: tuple[str, ...] = (),
) -> list[str]:  # fmt: skip
    """nvcc -cubin for one instantiation (`shared`: a shared library, registry `backend:
    shared`); ptxas -v prints the resource report on stderr.  `lineinfo` False leaves out the
    source lines (two sources that differ in comments then build the same bytes:
    tools/same_cubins.py).  `identity`: a header, beside the source, included before it
    (IDENTITY_HEADER: the build then names its instantiation).  `libraries`: header libraries
    the source includes (library_includes)."""
    source = Path(source)
    return [
        nvcc,
        *(f for f in (SHARED_FLAGS if shared else NVCC_FLAGS) if lineinfo or f != "-lineinfo"),
        *arch_flags(arch),
        f"-I{source.parent}",
        *library_includes(libraries),
        *(["-include", identity] if identity else []),
        *define_flags(params),
        "-o",
        str(output),
        str(source),
    ]


class CompileError(RuntimeError):
    """nvcc could not build an instantiation; the message names it and quotes nvcc's errors."""


class CompileInterrupted(CompileError):
    """nvcc was stopped by a signal (Ctrl-C, a cancelled job): not a compiler error."""


# nvcc's words when a stage it runs was stopped by SIGINT, SIGTERM or SIGKILL
_KILLED = re.compile(r"died due to signal (2|9|15)\b")


# nvcc hands its file names to a shell of its own: only names no shell can expand reach it
SAFE_PATH = re.compile(r"^[A-Za-z0-9_./+-]+$")


def _private_base() -> Path:
    """This user's build folder (0700; paths.private_folder), CompileError where refused."""
    base = Path(tempfile.gettempdir()) / f"mmbench-nvcc-{os.getuid()}"
    try:
        return private_folder(base, "build folder", "set TMPDIR to a folder of your own")
    except PermissionError as err:
        raise CompileError(str(err)) from None


def build_folder(name: str) -> Path:
    """A folder of this user's alone where nvcc builds `name`: its path is the same every
    time, so the line information nvcc embeds (-lineinfo) and thus the cubin are the same for
    the same source, and no path of the checkout reaches nvcc's shell."""
    folder = _private_base() / name
    if not SAFE_PATH.match(str(folder)):
        raise CompileError(
            f"build folder {folder} has characters a shell would expand; set TMPDIR to a plain "
            "path (letters, digits, _ . + - /)"
        )
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


def compile_cubin(
    source: str | Path, cubin: str | Path, arch: str, params: dict, log: str | Path, what: str,
    headers: str | Path | None = None, name: str | None = None, lineinfo: bool = True,
    shared: bool = False, libraries: tuple[str, ...] = (),
) -> str:  # fmt: skip
    """Builds one cubin without any path of this machine reaching a shell (nvcc hands the
    source's absolute path to a shell of its own, in double quotes: a checkout at `d$(cmd)d`
    would run cmd): the kernel and the headers it includes are copied into a build folder of
    this user's whose path depends only on the instantiation (build_folder), nvcc runs there on
    bare names, and the cubin is moved into place whole.  Writes nvcc's output (ptxas's
    resource report) to `log`; returns the cubin's sha256.  CompileError naming the
    instantiation, with nvcc's first errors, otherwise.  `shared`, `libraries`: a shared
    library's build instead (nvcc_command)."""
    from mmbench.core.registry import kernel_dependencies

    if headers is not None:  # a kernel file from elsewhere, built with the kernels' headers
        with tempfile.TemporaryDirectory() as staged:
            for h in Path(headers).glob("*.cuh"):
                shutil.copyfile(h, Path(staged) / h.name)
            for h in Path(source).resolve().parent.glob("*.cuh"):  # its own, where it has any
                shutil.copyfile(h, Path(staged) / h.name)
            copy = Path(staged) / (name or Path(source).name)
            shutil.copyfile(source, copy)
            return compile_cubin(copy, cubin, arch, params, log, what, lineinfo=lineinfo,
                                 shared=shared, libraries=libraries)  # fmt: skip
    source, cubin, log = Path(source).resolve(), Path(cubin), Path(log)
    files = [Path(p).resolve() for p in kernel_dependencies(source)]
    root = Path(os.path.commonpath([p.parent for p in files]))
    name = f"{arch}/{cubin.parent.name}/{cubin.stem}"
    with _held(name):  # two checkouts building the same instantiation take turns
        return _build(source, files, root, cubin, arch, params, log, what, name, lineinfo,
                      shared, libraries)  # fmt: skip


def build_job(
    source: str | Path, cubin: str | Path, sha: str | Path, arch: str, params: dict,
    log: str | Path, what: str, ptxas: str | Path | None = None,
    headers: str | Path | None = None, name: str | None = None, entries: tuple[str, ...] = (),
    shared: bool = False, libraries: tuple[str, ...] = (),
) -> None:  # fmt: skip
    """A compile job's work (rules compile_kernel, compile_microbench and
    compile_baseline_source): the cubin (compile_cubin), ptxas's report copied to `ptxas`
    where the rule keeps one, and the cubin's sha256 as built (a cubin that is later not what
    its build wrote is found and built again: workflow/rules/common.smk).  `entries`: the
    entry points the registry loads from it (Variant.entry_points), each checked against
    ptxas's list of the entry functions it compiled.  CompileError otherwise (Snakemake
    removes a failed job's outputs: no partial file is taken as built).  `shared`: a shared
    library, whose entries are the C functions it exports (exported_functions)."""
    digest = compile_cubin(source, cubin, arch, params, log, what, headers=headers, name=name,
                           shared=shared, libraries=libraries)  # fmt: skip
    check_entries(cubin, log, entries, what, source, shared)
    if ptxas is not None:
        Path(ptxas).write_text(Path(log).read_text())
    Path(sha).write_text(f"{digest}  {cubin}\n")


def check_entries(
    built: str | Path, log: str | Path, entries: tuple[str, ...], what: str,
    source: str | Path, shared: bool = False,
) -> None:  # fmt: skip
    """CompileError naming the first of `entries` (the registry's entry points) that the build
    lacks: a cubin's entries are the kernels ptxas compiled (its report, `log`), a shared
    library's the C functions it exports (exported_functions)."""
    found = exported_functions(built) if shared else entry_functions(Path(log).read_text())
    missing = [e for e in entries if e not in found]
    if missing:
        valid = (
            'an extern "C" function the file defines (registry `symbol`, and `symbol`_workspace)'
            if shared
            else 'the name of a __global__ function the file defines as extern "C" (registry '
            "`symbol` and `symbols`)"
        )
        raise CompileError(
            f"{what}: the registry's entry point {missing[0]!r} is not in the "
            f"{'library' if shared else 'cubin'} nvcc built from {source} (its entry "
            f"functions: {', '.join(found) or 'none'}); valid: {valid}"
        )


def exported_functions(library: str | Path) -> list[str]:
    """The functions a shared library defines for others to call (binutils' nm -D: its dynamic
    symbols of type T)."""
    exe = shutil.which("nm")
    if exe is None:
        raise CompileError("nm (binutils) is not on PATH: it lists a shared library's functions")
    out = subprocess.run([exe, "-D", "--defined-only", str(library)], capture_output=True,
                         text=True, check=False).stdout  # fmt: skip
    return [
        f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] == "T"
    ]


def entry_functions(report: str) -> list[str]:
    """The entry functions ptxas compiled, from its verbose report (-Xptxas -v, which
    nvcc_command passes): its "Compiling entry function 'NAME'" lines, in order."""
    return re.findall(r"Compiling entry function '([^']+)'", report)


@contextlib.contextmanager
def _held(name: str):
    """The build of `name` held by this process alone (a file lock in the user's folder)."""
    with open(_private_base() / (name.replace("/", "__") + ".lock"), "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(source, files, root, cubin, arch, params, log, what, name, lineinfo=True,
           shared=False, libraries=()) -> str:  # fmt: skip
    work = build_folder(name)
    try:
        for f in files:
            rel = f.relative_to(root)
            if not SAFE_PATH.match(str(rel)):
                raise CompileError(
                    f"{what}: kernel file {rel} has characters a shell would expand; valid "
                    "names hold letters, digits and _ . + - only"
                )
            (work / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, work / "src" / rel)
        out = work / ("kernel.so" if shared else "kernel.cubin")
        here = work / "src" / source.relative_to(root).parent
        identity = cubin_identity(cubin)
        (here / IDENTITY_HEADER).write_text(identity_header(identity, host=shared))
        cmd = nvcc_command(source.name, out, arch, params, lineinfo=lineinfo,
                           identity=IDENTITY_HEADER, shared=shared, libraries=libraries)  # fmt: skip
        proc = subprocess.run(cmd, cwd=here, capture_output=True, text=True)
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
        if proc.returncode < 0 or _KILLED.search(proc.stdout + proc.stderr):
            raise CompileInterrupted(
                f"compilation of {what} interrupted (nvcc stopped by a signal)"
            )
        if proc.returncode != 0:
            text = (proc.stdout + proc.stderr).splitlines()
            errors = [ln for ln in text if re.search(r"error|fatal", ln)][:5]
            raise CompileError(
                f"nvcc failed for {what}: exit {proc.returncode}, whole output in {log}\n  "
                + "\n  ".join(errors or ["(no error line; see the log)"])
            )
        data = out.read_bytes()
        if not names_itself(data, identity):
            raise CompileError(f"nvcc built {what} without its identity {identity!r} (see {log})")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    cubin.parent.mkdir(parents=True, exist_ok=True)
    tmp_cubin = cubin.with_name(f".{cubin.name}.{os.getpid()}.tmp")
    tmp_cubin.write_bytes(data)
    os.replace(tmp_cubin, cubin)
    return hashlib.sha256(data).hexdigest()


def cubin_intact(cubin: str | Path, sha_file: str | Path, named: bool = True) -> bool | None:
    """Whether a cubin is what its build wrote (the sha256 recorded beside it) and (`named`)
    what its instantiation's build writes (it names itself: cubin_identity); None where either
    file is missing (nothing to judge: Snakemake builds what is missing)."""
    cubin, sha_file = Path(cubin), Path(sha_file)
    if not cubin.exists() or not sha_file.exists():
        return None
    recorded = sha_file.read_text().split()[:1]
    data = cubin.read_bytes()
    if named and not names_itself(data, cubin_identity(cubin)):
        return False
    return bool(recorded) and hashlib.sha256(data).hexdigest() == recorded[0]


@cache
def supported_archs(nvcc: str = "nvcc") -> tuple[str, ...] | None:
    """The real architectures the installed nvcc builds for (`nvcc --list-gpu-code`: sm_75,
    sm_80, ..., sm_90, ...); None where there is no nvcc to ask."""
    exe = shutil.which(nvcc)
    if not exe:
        return None
    try:
        out = subprocess.run(
            [exe, "--list-gpu-code"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (subprocess.SubprocessError, OSError):
        return None
    return tuple(line.strip() for line in out.splitlines() if line.strip().startswith("sm_"))


def arch_problem(arch: str, supported: tuple[str, ...] | None) -> str | None:
    """Why nvcc cannot build for `arch` (None: it can, or there is no nvcc to ask)."""
    if supported is None or arch == "auto":
        return None
    base = arch.rstrip("af") if arch[-1] in "af" else arch
    if base in supported:
        return None
    return f"{arch!r} is not an architecture this nvcc builds for; valid values: " + ", ".join(
        supported
    )


def cubin_path(arch: str, variant: str, instance: str, ext: str = "cubin") -> str:
    """Where the build of one instantiation goes, named by its parameter slug (results/build/ is
    shared by every experiment of the checkout)."""
    return f"results/build/{arch}/{variant}/{instance}.{ext}"


def build_path(arch: str, variant: str, instance: str, registry: dict | None = None) -> str:
    """Where an instantiation's build goes: its cubin, or its shared library where the
    registry builds the variant so (`backend: shared`)."""
    v = (registry or {}).get(variant)
    return cubin_path(arch, variant, instance, v.build_ext if v is not None else "cubin")


def rebuild_ticket(cubin: str | Path, rebuilt: set) -> list[str]:
    """The input of a cubin's build that changes when the cubin must be built again:
    `<instance>.rebuild`, a count, written only when needed (no job makes it, so a run's
    progress counts compiles, not bookkeeping).  A cubin that is not what its build wrote
    (overwritten, truncated, copied from another build: its sha256 differs from the `.sha256`
    that compile_kernel recorded; or swapped with its `.sha256` for another instantiation's: the
    name built into it differs, cubin_identity) has its count raised, so Snakemake builds it
    again (an updated input) and measures again what ran it, said once per run (`rebuilt`: the
    cubins found so far).  (Deleting it would not do: Snakemake does not rebuild a missing
    intermediate file whose downstream outputs are present.)  No input where the ticket was
    never needed."""
    import sys

    cubin = Path(cubin)
    ticket = cubin.with_suffix(".rebuild")
    if str(cubin) not in rebuilt and cubin_intact(cubin, cubin.with_suffix(".sha256")) is False:
        rebuilt.add(str(cubin))
        words = (ticket.read_text() if ticket.exists() else "").split() or ["0"]
        ticket.write_text(f"{int(words[0]) + 1}\n")
        print(f"mmbench: {cubin} is not what its build wrote (its sha256 differs from "
              f"{cubin.with_suffix('.sha256')}, or it names another instantiation): building "
              "it again, and measuring again what ran it", file=sys.stderr)  # fmt: skip
    return [str(ticket)] if ticket.exists() else []

"""The build of a Triton kernel (registry `backend: triton`): Triton lowers the kernel file's
function to PTX for the GPU's architecture, with the instantiation's parameters as its
compile-time constants; the pipeline then assembles that PTX with the same ptxas as every other
cubin, its identity string added (core/cubins.py) and ptxas's resource report kept, so a Triton
build is a cubin like the others: checked, named, launched and timed by our harness.  Beside it,
`<instance>.triton.json` keeps what only Triton's compiler knows and the launch needs: the
dynamic shared memory, the warps, the global scratch per program.

The kernel's arguments, in order: A, B and C (pointers; C float32), then the integers m, n, k,
lda, ldb, ldc and accumulate (i32), then its constexprs, each named as a parameter or derived
fact of the registry entry.  Triton appends two pointers of its own (global and profile
scratch), which the registry's `args` give as workspaces (measure/launch.py checks the first
holds the global scratch the build needs)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from mmbench.core.arith import compute_capability, shared_optin_limit
from mmbench.core.axes import DTYPE_PARAM
from mmbench.core.cubins import cubin_identity
from mmbench.core.elements import element_type
from mmbench.plan.compile import CompileError, entry_functions

# the element types' names in a Triton signature
TRITON_TYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16",
                "float8_e4m3": "fp8e4nv", "float8_e5m2": "fp8e5"}  # fmt: skip
POINTERS = ("a_ptr", "b_ptr", "c_ptr")
INTEGERS = ("m", "n", "k", "lda", "ldb", "ldc", "accumulate")
# Triton's launch facts the harness reads (measure/launch.py); the rest of its metadata is kept
# for provenance
LAUNCH_KEYS = ("name", "num_warps", "shared", "global_scratch_size", "global_scratch_align",
               "profile_scratch_size")  # fmt: skip


def triton_missing() -> str | None:
    """Why Triton cannot build here (None: it can)."""
    if importlib.util.find_spec("triton") is None:
        return (
            "Triton is not installed here, and it builds the backend: triton variants; install "
            "the project's triton extra: pip install -e '.[triton]'"
        )
    return None


def load_kernel(source: str | Path, symbol: str):
    """The @triton.jit function `symbol` of the kernel file `source` (imported as a module of
    its own; its folder first on the import path, for helpers beside it)."""
    source = Path(source).resolve()
    name = "mmbench_triton_" + re.sub(r"\W", "_", source.stem)
    spec = importlib.util.spec_from_file_location(name, source)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(source.parent))
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(source.parent))
    fn = getattr(module, symbol, None)
    if fn is None:
        raise CompileError(f"{source} defines no function {symbol!r} (registry `symbol`)")
    return fn


def signature(fn, defines: dict) -> tuple[dict, dict]:
    """(signature, constants) of a build: the pointers' and integers' types, and each
    constexpr's value from `defines` (the instantiation's parameters and derived facts)."""
    dtype = defines[DTYPE_PARAM]
    elem = TRITON_TYPES.get(dtype)
    if elem is None:
        raise CompileError(
            f"Triton builds no {dtype} kernel here; valid: {', '.join(TRITON_TYPES)}"
        )
    out = TRITON_TYPES[str(element_type(dtype).output.name)]
    sig, const = {}, {}
    for name in fn.arg_names:
        if name in POINTERS:
            sig[name] = f"*{out if name == 'c_ptr' else elem}"
        elif name in INTEGERS:
            sig[name] = "i32"
        elif name in defines:
            sig[name], const[name] = "constexpr", int(defines[name])
        else:
            raise CompileError(
                f"the Triton kernel's argument {name!r} is none of {', '.join(POINTERS + INTEGERS)}"
                f" and no parameter or derived fact of its registry entry ({', '.join(defines)})"
            )
    return sig, const


def lower(source: str | Path, symbol: str, arch: str, defines: dict) -> tuple[str, dict]:
    """(PTX, metadata) of one instantiation: Triton's compiler for the GPU's architecture
    (sm_90a -> cuda 90), `num_warps` from WARPS and `num_stages` from STAGES."""
    missing = triton_missing()
    if missing:
        raise CompileError(missing)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn = load_kernel(source, symbol)
    sig, const = signature(fn, defines)
    capability = int(compute_capability(arch).replace(".", ""))
    options = {
        "num_warps": int(defines.get("WARPS", 4)),
        "num_stages": int(defines.get("STAGES", 3)),
    }
    try:
        built = triton.compile(ASTSource(fn, sig, const), target=GPUTarget("cuda", capability, 32),
                               options=options)  # fmt: skip
    except Exception as err:  # noqa: BLE001 - Triton's compiler error, named
        raise CompileError(
            f"Triton could not compile {symbol}: {type(err).__name__}: {err}"
        ) from None
    md = built.metadata
    meta = {key: getattr(md, key) for key in LAUNCH_KEYS}
    meta |= {
        "triton": triton.__version__,
        "num_stages": md.num_stages,
        "target": f"cuda:{capability}",
    }
    return built.asm["ptx"], meta


def with_identity(ptx: str, identity: str) -> str:
    """The PTX with a visible global byte string holding `identity` (zero-terminated): the
    assembled cubin names itself as every build of ours does (core/cubins.py)."""
    data = identity.encode() + b"\0"
    line = (
        f".visible .global .align 1 .b8 mmbench_cubin_identity[{len(data)}] = "
        "{" + ", ".join(str(b) for b in data) + "};\n"
    )
    # after the header's .address_size line: a declaration must follow the module directives
    at = re.search(r"^\.address_size.*$", ptx, re.M)
    if at is None:
        raise CompileError("Triton's PTX has no .address_size line to put the identity after")
    return ptx[: at.end()] + "\n" + line + ptx[at.end() :]


def assemble(ptx: str, cubin: Path, arch: str, log: Path, ptxas: str = "ptxas") -> bytes:
    """ptxas -v of the PTX into the cubin's bytes; its report written to `log`."""
    exe = shutil.which(ptxas)
    if exe is None:
        raise CompileError("ptxas is not on PATH (it comes with nvcc, the CUDA toolkit)")
    work = cubin.with_name(f".{cubin.name}.{os.getpid()}")
    work.mkdir(parents=True, exist_ok=True)
    try:
        (work / "kernel.ptx").write_text(ptx)
        cmd = [exe, "-v", "-lineinfo", f"--gpu-name={arch}", "-o", "kernel.cubin", "kernel.ptx"]
        proc = subprocess.run(cmd, cwd=work, capture_output=True, text=True)
        log.write_text(" ".join(cmd) + "\n" + proc.stdout + proc.stderr)
        if proc.returncode != 0:
            errors = [ln for ln in (proc.stdout + proc.stderr).splitlines() if "error" in ln][:5]
            raise CompileError(
                f"ptxas failed on Triton's PTX: exit {proc.returncode}, whole output in {log}\n  "
                + "\n  ".join(errors or ["(no error line; see the log)"])
            )
        return (work / "kernel.cubin").read_bytes()
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build(source: str | Path, symbol: str, cubin: str | Path, arch: str, defines: dict,
          log: str | Path, what: str, shared_limit: int | None = None) -> tuple[str, dict]:  # fmt: skip
    """One Triton instantiation built: the cubin (named, assembled by ptxas, its report in
    `log`) and its launch metadata beside it (`<instance>.triton.json`, which the launcher
    reads); returns (sha256, launch metadata).  A build needing more dynamic shared memory than
    `shared_limit` (default: the opt-in limit of `arch`'s compute capability) is refused."""
    cubin, log = Path(cubin), Path(log)
    log.parent.mkdir(parents=True, exist_ok=True)
    ptx, meta = lower(source, symbol, arch, defines)
    if shared_limit is None:
        shared_limit = shared_optin_limit(compute_capability(arch))
    if shared_limit is not None and meta["shared"] > shared_limit:
        raise CompileError(
            f"{what}: Triton's build needs {meta['shared']} B of shared memory per block, over "
            f"the {shared_limit} B a block may have; valid: smaller tiles or fewer STAGES"
        )
    data = assemble(with_identity(ptx, cubin_identity(cubin)), cubin, arch, log)
    found = entry_functions(log.read_text())
    if symbol not in found:
        raise CompileError(f"{what}: ptxas compiled {', '.join(found) or 'no entry'}, not {symbol}")
    cubin.parent.mkdir(parents=True, exist_ok=True)
    tmp = cubin.with_name(f".{cubin.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, cubin)
    cubin.with_suffix(".triton.json").write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n")
    return hashlib.sha256(data).hexdigest(), meta

"""plan/compile.py: nvcc run with no path reaching a shell, interrupted builds said so."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest

from .conftest import DATA, ROOT


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_ctrl_c_during_compilation_says_interrupted_not_failed(tmp_path):
    """Ctrl-C while nvcc runs: the compile job says it was interrupted, never 'nvcc failed'."""
    import signal
    import subprocess
    import time

    for name in ("workflow", "kernels", "config", "profiles", "environment.yml"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    cubins = [
        f"results/build/sm_90/{v}/float32_TILE{t}.cubin"
        for v in ("tiled_guarded", "naive_guarded")
        for t in (8, 16, 32)
    ]
    # nvcc runs in the instantiation's build folder (plan/compile.build_folder): stop it there
    import tempfile

    building = Path(tempfile.gettempdir()) / f"mmbench-nvcc-{os.getuid()}" / "sm_90"
    for v in ("tiled_guarded", "naive_guarded"):  # left by an earlier interrupted build
        shutil.rmtree(building / v, ignore_errors=True)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "snakemake",
            "--cores",
            "1",
            "--config",
            "arch=sm_90",
            "--",
            *cubins,
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        # SIGINT as a terminal delivers it: a test run started in the background (`cmd &` in a
        # script) hands its children SIGINT ignored, and then nothing would be interrupted
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.time() + 60

    def compiling():  # a build's nvcc of this run's own (its process group) under way: not the
        # `nvcc --list-gpu-code` that planning asks
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
                command = (stat.parent / "cmdline").read_bytes().split(b"\0")
            except OSError:  # ended meanwhile
                continue
            name, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") :]
            if int(rest.split()[3]) == proc.pid and (name in ("cicc", "ptxas", "cudafe++") or (
                    name == "nvcc" and b"-cubin" in command)):  # fmt: skip
                return True
        return False

    # the signal while nvcc runs (a build of these small kernels takes under a second, and a
    # signal between two builds would test nothing of the compile job)
    while time.time() < deadline and proc.poll() is None and not compiling():
        time.sleep(0.01)
    assert compiling(), "no compilation seen under way"
    assert [f for v in ("tiled_guarded", "naive_guarded") for f in building.glob(f"{v}/*/src/*.cu")]
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0, f"exit 0 after Ctrl-C:\n{out[-2000:]}\n{err[-3000:]}"
    built = list((tmp_path / "results" / "build").rglob("*.cubin"))
    assert len(built) < len(cubins), "interrupted after every cubin was built"
    assert "nvcc failed" not in err, err
    assert "Terminating processes on user request" in err or "interrupted" in err, err
    # said once, with the way to go on (issue "what a new user hit", item 5)
    assert err.count("mmbench: stopped by Ctrl-C") == 1, err[-3000:]
    assert "run the same command again to go on" in err


@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_the_gpu_tests_fault_kernels_build_here(tmp_path):
    """tests/data/fault_kernels (the kernels test_gpu.py makes fault and overreach on purpose)
    load as a registry and build through the workflow's own build; each cubin holds the entry
    point its registry entry names (the two symbols written in the .cu files)."""
    from mmbench.core.registry import load_registry
    from mmbench.plan.compile import compile_cubin

    reg_path = DATA / "fault_kernels" / "registry.yaml"
    registry = load_registry(reg_path)
    assert sorted(registry) == ["faulty", "overreach"]
    for name, v in registry.items():
        cubin = tmp_path / f"{name}.cubin"
        compile_cubin(reg_path.parent / v.source, cubin, "sm_90", {"dtype": "float32", "TILE": 16},
                      tmp_path / f"{name}.log", name)  # fmt: skip
        assert v.symbol.encode() in cubin.read_bytes()


def test_a_build_folder_that_is_a_link_is_refused(tmp_path, monkeypatch):
    """The build folder (and the GPU lock folder, through the same check) as a symbolic link
    to a folder the user owns: whoever can swap the link while a job waits would redirect
    what is written there, so it is refused by name."""
    from mmbench.core.paths import private_folder

    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    link = tmp_path / "link"
    link.symlink_to(real)
    with pytest.raises(PermissionError, match=r"link is a symbolic link \(to .*real\)"):
        private_folder(link, "build folder", "set TMPDIR to a folder of your own")
    assert private_folder(real, "build folder", "") == real


def test_every_nvcc_the_project_runs_goes_through_the_shell_free_build():
    """nvcc hands its source path to a shell: only plan/compile.compile_cubin runs it, from a
    build folder with bare names.  No other module, tool or benchmark calls nvcc_command or
    names nvcc in a command (a checkout at `d$(touch X)d` ran `touch` through tools/ncu_one.py
    and tools/memcheck.py)."""
    import re

    found = []
    for folder in ("workflow", "tools", "lab"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.name == "compile.py" and path.parent.name == "plan":
                continue
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if "nvcc_command(" in line or re.search(r"""\[\s*["']nvcc["']""", line):
                    found.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, "\n".join(found)


# -- shared builds (registry `backend: shared`): CUTLASS's GEMM from the installed wheel ------


def test_the_cutlass_headers_are_found_where_the_wheel_installed_them():
    """registry `libraries: [cutlass]`: the include folders of the installed nvidia-cutlass
    wheel, which hold CUTLASS's and CuTe's headers that kernels/cutlass_gemm.cu includes."""
    from mmbench.plan.compile import library_includes

    flags = library_includes(["cutlass"])
    folders = [Path(f.removeprefix("-I")) for f in flags]
    assert (folders[0] / "cutlass" / "gemm" / "collective" / "collective_builder.hpp").is_file()
    assert (folders[0] / "cute" / "tensor.hpp").is_file()
    assert (folders[1] / "cutlass" / "util" / "packed_stride.hpp").is_file()


def test_a_header_library_not_installed_says_what_to_install(monkeypatch):
    from mmbench.plan import compile as mmcompile

    monkeypatch.setitem(mmcompile.LIBRARIES, "cutlass", ("no_such_package_here", ("include",)))
    with pytest.raises(mmcompile.CompileError, match="no_such_package_here is not installed"):
        mmcompile.library_includes(["cutlass"])


def test_a_shared_build_is_a_position_independent_library_not_a_cubin():
    from mmbench.plan.compile import nvcc_command

    cmd = nvcc_command("cutlass_gemm.cu", "kernel.so", "sm_90a", {"BM": 128}, shared=True,
                       libraries=("cutlass",))  # fmt: skip
    assert "-cubin" not in cmd
    assert cmd[1:4] == ["-shared", "-Xcompiler", "-fPIC"]
    assert "-gencode=arch=compute_90a,code=sm_90a" in cmd and "-DBM=128" in cmd
    assert sum(c.startswith("-I") for c in cmd) == 3  # the source's folder, CUTLASS's two


@pytest.mark.slow  # the session's sm_90 compile_all (conftest), which test_ptxas reads too
@pytest.mark.skipif(not shutil.which("nvcc"), reason="needs nvcc")
def test_a_cutlass_build_exports_its_entry_points_and_names_itself(sm90_build):
    """A build of cutlass_bf16 as the compile_library rule made it in the session's compile_all:
    a shared library that exports cutlass_gemm and cutlass_gemm_workspace, carries its
    instantiation's name, and whose ptxas report holds CUTLASS's one kernel (the resources
    table's row).  A registry entry point it does not export is a CompileError naming it."""
    from mmbench.plan.compile import CompileError, check_entries, cubin_intact, exported_functions
    from mmbench.plan.ptxas import parse_ptxas

    workdir, out = sm90_build
    assert out.returncode == 0, out.stderr[-3000:]
    inst = "bfloat16_BM128_BN128_CLUSTER1_SCHEDULE1_SCHEDULER2"
    lib = workdir / "results" / "build" / "sm_90" / "cutlass_bf16" / f"{inst}.so"
    sha, ptxas = lib.with_suffix(".sha256"), lib.with_suffix(".ptxas.txt")
    assert {"cutlass_gemm", "cutlass_gemm_workspace"} <= set(exported_functions(lib))
    assert cubin_intact(lib, sha) is True
    kernels = parse_ptxas(ptxas.read_text())
    assert len(kernels) == 1 and "device_kernel" in kernels[0]["function"]
    assert kernels[0]["registers"] > 0
    check_entries(lib, ptxas, ("cutlass_gemm", "cutlass_gemm_workspace"), "cutlass_bf16", "x.cu",
                  shared=True)  # fmt: skip
    with pytest.raises(CompileError, match="'cutlass_gemm_run' is not in the library"):
        check_entries(lib, ptxas, ("cutlass_gemm_run",), "cutlass_bf16 again", "x.cu",
                      shared=True)  # fmt: skip


# -- Triton builds (registry `backend: triton`): Triton's PTX assembled by ptxas --------------

needs_triton = pytest.mark.skipif(
    importlib.util.find_spec("triton") is None or not shutil.which("ptxas"),
    reason="needs Triton (the project's triton extra, optional) and ptxas",
)


@needs_triton
@pytest.mark.parametrize(
    "variant, inst, ring",
    [
        # hand counts: STAGES x (BM x BK + BK x BN) inputs
        ("triton_bf16", "bfloat16_BM128_BN128_BK64_STAGES4_WARPS8_GROUP8", 4 * (128 * 64 + 64 * 128) * 2),
        ("triton_tf32", "float32_BM128_BN128_BK32_STAGES3_WARPS8_GROUP8", 3 * (128 * 32 + 32 * 128) * 4),
        ("triton_fp8", "float8_e4m3_BM128_BN128_BK128_STAGES4_WARPS8_GROUP8", 4 * (128 * 128 + 128 * 128) * 1),
    ],
)  # fmt: skip
def test_a_triton_build_is_a_cubin_that_names_itself_with_its_launch_facts(
    tmp_path, variant, inst, ring
):
    """One instantiation as the compile_triton rule builds it: Triton's PTX (wgmma, TMA loads)
    assembled by ptxas into a cubin carrying its instantiation's name, the entry `matmul` in
    ptxas's report without spills, and Triton's launch facts: the block of the registry's WARPS,
    two 128-byte descriptors of global scratch a program (A's and B's) and the dynamic shared
    memory of the ring (within 1 KiB of barriers)."""
    from mmbench.core.cubins import cubin_identity, names_itself
    from mmbench.core.registry import load_registry
    from mmbench.plan.ptxas import parse_ptxas
    from mmbench.plan.triton_build import build, lower

    v = load_registry(ROOT / "kernels" / "registry.yaml")[variant]
    defines = v.defines(v.instance(inst))
    cubin = tmp_path / "build" / "sm_90a" / variant / f"{inst}.cubin"
    log = cubin.with_suffix(".log")
    digest, meta = build(ROOT / "kernels" / v.source, v.symbol, cubin, v.arch, defines, log,
                         f"{variant} {inst}")  # fmt: skip
    assert names_itself(cubin.read_bytes(), cubin_identity(cubin))
    assert hashlib.sha256(cubin.read_bytes()).hexdigest() == digest
    (kernel,) = parse_ptxas(log.read_text())
    assert kernel["function"] == "matmul" and kernel["arch"] == "sm_90a"
    assert kernel["spill_store_bytes"] == 0 and kernel["registers"] > 0
    assert meta["num_warps"] == defines["WARPS"] == 8
    assert meta["global_scratch_size"] == 2 * 128
    assert ring <= meta["shared"] <= ring + 1024
    ptx, _ = lower(ROOT / "kernels" / v.source, v.symbol, v.arch, defines)
    assert "wgmma.mma_async" in ptx and "cp.async.bulk.tensor" in ptx


@needs_triton
def test_a_triton_build_needing_too_much_shared_memory_is_refused(tmp_path):
    from mmbench.core.registry import load_registry
    from mmbench.plan.compile import CompileError
    from mmbench.plan.triton_build import build

    v = load_registry(ROOT / "kernels" / "registry.yaml")["triton_bf16"]
    inst = "bfloat16_BM128_BN128_BK64_STAGES4_WARPS8_GROUP8"
    cubin = tmp_path / f"{inst}.cubin"
    with pytest.raises(
        CompileError, match=r"needs \d+ B of shared memory per block, over the 100000"
    ):
        build(ROOT / "kernels" / v.source, v.symbol, cubin, v.arch, v.defines(v.instance(inst)),
              tmp_path / "log", "triton_bf16", shared_limit=100000)  # fmt: skip
    assert not cubin.exists()


def test_a_triton_launch_takes_its_builds_shared_memory_and_checks_its_scratch(tmp_path):
    """measure/launch.triton_spec: the registry's launch of triton_bf16 at 1000 x 1100 x 37 on
    132 multiprocessors (8 x 9 = 72 tiles of 128 x 128: 72 programs of 256 threads, 256 bytes
    of global scratch each in the first workspace), given the dynamic shared memory its build's
    .triton.json records; a build needing more scratch than the workspace holds, or built for
    other warps, is refused."""
    import json

    from mmbench.core.registry import load_registry
    from mmbench.measure.launch import triton_spec

    v = load_registry(ROOT / "kernels" / "registry.yaml")["triton_bf16"]
    params = v.instance("bfloat16_BM128_BN128_BK64_STAGES4_WARPS8_GROUP8")
    spec = v.launch_spec(params, 1000, 1100, 37, (40, 1104, 1104), False, 132)
    assert spec.grid == (72, 1, 1) and spec.block == (256, 1, 1)
    cubin = tmp_path / "x.cubin"
    meta = {"num_warps": 8, "shared": 131104, "global_scratch_size": 256}
    cubin.with_suffix(".triton.json").write_text(json.dumps(meta))
    assert triton_spec(spec, str(cubin)).dynamic_shared_bytes == 131104
    cubin.with_suffix(".triton.json").write_text(json.dumps(meta | {"global_scratch_size": 384}))
    with pytest.raises(RuntimeError, match="needs 384 B of global scratch .* gives 18432 B"):
        triton_spec(spec, str(cubin))
    cubin.with_suffix(".triton.json").write_text(json.dumps(meta | {"num_warps": 4}))
    with pytest.raises(RuntimeError, match="built it for 4 warps, the registry's block has 256"):
        triton_spec(spec, str(cubin))


def test_triton_missing_says_what_to_install(monkeypatch):
    from mmbench.plan import triton_build

    monkeypatch.setattr(triton_build.importlib.util, "find_spec", lambda name: None)
    assert "pip install -e '.[triton]'" in triton_build.triton_missing()

"""Launching one configuration: its LaunchSpec (core/launch_spec.py, built from the registry
entry) turned into a call that enqueues the kernel on a stream, or cuBLAS through CuPy.  The
measurement runner, the profiler's target program and the memcheck tool all launch through
here, so the profiled call is exactly the measured one.

CuPy launches what it can pass: pointers and integers, no cluster.  A launch with a tensor map
(a 128-byte CUtensorMap by value), a workspace or a cluster shape goes through NVIDIA's
cuda-bindings: cuTensorMapEncodeTiled makes each map from the operand's address, shape and
leading dimension, and cuLaunchKernelEx launches with the cluster dimension as an attribute.
"""

from __future__ import annotations

import ctypes
import json
import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from mmbench.core.elements import SCALARS
from mmbench.core.launch_spec import Float, Int, LaunchSpec, Pointer, TensorMap, Workspace

CUPY_DYNAMIC_SHARED_DEFAULT = 48 * 1024


class Modules:
    """Loaded cubins of one process (cupy.RawModule), by path."""

    def __init__(self, cp):
        self.cp, self.loaded = cp, {}

    def function(self, path: str, symbol: str):
        if path not in self.loaded:
            try:
                module = self.cp.RawModule(path=path)
                module.get_function(symbol)  # CuPy loads lazily: a bad file fails here
            except Exception as err:  # noqa: BLE001 - the driver's error, with the file named
                raise RuntimeError(
                    f"cannot load {symbol} from {path} ({type(err).__name__}: {err}); the file "
                    "is damaged or from another build: delete it and run again"
                ) from None
            self.loaded[path] = module
        return self.loaded[path].get_function(symbol)


@dataclass(frozen=True)
class Operand:
    """Where a kernel finds one matrix: its device address and leading dimension."""

    ptr: int
    ld: int


def launcher(
    cp,
    v,
    conf,
    modules: Modules | None,
    cubin: str | None,
    operands: dict[str, Operand],
    stream,
    cublas_handle: int | None = None,
) -> tuple[Callable[[], None], LaunchSpec]:
    """(launch, spec) of one configuration; launch() enqueues the kernel on `stream`.  `v` is
    the variant's registry entry, `operands` A, B and C as the kernel sees them; a library call
    goes through `cublas_handle` (None: CuPy's)."""
    lds = tuple(operands[x].ld for x in "ABC")
    if v.library_launched:  # the library chooses its launch: no grid or block of ours
        spec = LaunchSpec(grid=(0, 0, 0), block=(0, 0, 0))
        if v.shared:
            return shared_launcher(cp, v, conf, cubin, operands, lds, stream), spec
        pointers = tuple(operands[x].ptr for x in "ABC")
        go = cublas_launcher(cp, conf, pointers, lds, stream, v.math, cublas_handle, v.b_transposed)
        return go, spec
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]  # a persistent kernel's grid
    shape = (conf.instance_params, conf.m, conf.n, conf.k, lds, conf.accumulate, sms)
    # the launch's names past the shape: the stream-K workers the model chose (0: the entry's
    # own rule), then what only the loaded kernel can tell
    asked: dict[str, int] = {"workers": conf.workers}
    spec = v.launch_spec(*shape, **asked)
    if v.backend == "triton":  # its dynamic shared memory is what Triton's compiler said
        spec = triton_spec(spec, cubin)
    if v.uses_occupancy:  # its waves: how many of its blocks a multiprocessor holds at once
        asked["blocks_per_sm"] = blocks_per_sm(
            modules.function(cubin, spec.symbol or v.symbol), spec
        )
        spec = v.launch_spec(*shape, **asked)
    # its workers: how many of its clusters the GPU holds at once (unclustered, the blocks the
    # multiprocessors hold: the registry's default, which the calculator is not asked for)
    if v.uses_cluster_slots and spec.cluster != (1, 1, 1):
        asked["cluster_slots"] = active_clusters(
            modules.function(cubin, spec.symbol or v.symbol), spec
        )
        spec = v.launch_spec(*shape, **asked)
    fn = allow_shared(modules.function(cubin, spec.symbol or v.symbol), spec)
    if spec.empty:  # e.g. floor(size / block) = 0: nothing is launched, nothing written
        return (lambda: None), spec
    if spec.needs_driver:
        return DriverLaunch(cp, spec, fn, operands, stream), spec
    keep: list = []
    args = cupy_arguments(cp, spec, operands, keep)

    def launch():
        with stream:  # RawKernel launches on the current stream
            fn(spec.grid, spec.block, args, shared_mem=spec.dynamic_shared_bytes)

    launch.workspaces = keep  # alive as long as the launch
    # the same launch, its arguments packed once, for the batches (measure/batcher.py): their
    # launches are queued behind the blocking kernel, so the host's cost of queueing them is
    # not in their time, only in the run's wall time (17 us a launch through CuPy, 25 808 of
    # them in 8 configurations at 1-1100 on an H100, tools/profile_runner.py); the timed
    # passes keep CuPy's call, whose cost lies inside a short kernel's pass as it always has
    launch.batched = DriverLaunch(cp, spec, fn, operands, stream,
                                  workspaces=[w.data.ptr for w in keep])  # fmt: skip
    return launch, spec


# what a shared library's entry point returns (kernels/cutlass_gemm.cu)
SHARED_STATUS = {1: "the library cannot implement this product (its shape or alignment)",
                 2: "the library's initialisation failed", 3: "the launch failed"}  # fmt: skip
_LIBRARIES: dict[str, ctypes.CDLL] = {}


def shared_library(path: str) -> ctypes.CDLL:
    """A shared library of the registry's (`backend: shared`), loaded once per process."""
    if path not in _LIBRARIES:
        try:
            _LIBRARIES[path] = ctypes.CDLL(path)
        except OSError as err:
            raise RuntimeError(
                f"cannot load {path} ({err}); the file is damaged or from another build: "
                "delete it and run again"
            ) from None
    return _LIBRARIES[path]


def shared_launcher(cp, v, conf, path: str, operands: dict[str, Operand], lds, stream):
    """launch() of a shared library's product (registry `backend: shared`): its entry point
    `symbol`(A, B, C, m, n, k, lda, ldb, ldc, accumulate, workspace, stream), the workspace of
    `symbol`_workspace(m, n, k, lda, ldb, ldc) bytes allocated here once; the call is the
    library's own for each product (its kernels' parameters set up, then the launch on
    `stream`).  A status other than 0 is a RuntimeError naming it."""
    lib = shared_library(path)
    size, run = getattr(lib, f"{v.symbol}_workspace"), getattr(lib, v.symbol)
    c_int, c_long, ptr = ctypes.c_int, ctypes.c_long, ctypes.c_void_p
    size.restype, size.argtypes = ctypes.c_size_t, [c_int] * 3 + [c_long] * 3
    run.restype = c_int
    run.argtypes = [ptr] * 3 + [c_int] * 3 + [c_long] * 3 + [c_int, ptr, ptr]
    m, n, k = conf.m, conf.n, conf.k
    nbytes = int(size(m, n, k, *lds))
    workspace = cp.empty(max(nbytes, 1), dtype=cp.uint8)
    args = (*(operands[x].ptr for x in "ABC"), m, n, k, *lds, int(conf.accumulate),
            workspace.data.ptr, stream.ptr)  # fmt: skip

    def launch():
        status = run(*args)
        if status:
            raise RuntimeError(
                f"{v.name} {conf.instance} at {m} x {n} x {k}: {v.symbol} returned {status} "
                f"({SHARED_STATUS.get(status, 'unknown')})"
            )

    launch.workspaces = [workspace]  # alive as long as the launch
    return launch


def allow_shared(fn, spec: LaunchSpec):
    """`fn` (a loaded RawKernel), allowed `spec`'s dynamic shared memory where it is more than
    CUDA grants without asking."""
    if spec.dynamic_shared_bytes > CUPY_DYNAMIC_SHARED_DEFAULT:
        fn.max_dynamic_shared_size_bytes = spec.dynamic_shared_bytes
    return fn


def blocks_per_sm(fn, spec: LaunchSpec) -> int:
    """How many blocks of the kernel `fn` (a loaded RawKernel) one multiprocessor holds at once
    at `spec`'s block and dynamic shared memory: the CUDA occupancy calculator, from the cubin's
    registers and shared memory.  A launch whose block fits nowhere is refused here, not left to
    fail in its first timed pass."""
    from cuda.bindings import driver as cu

    threads = math.prod(spec.block)
    count = _check(
        cu.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            cu.CUfunction(allow_shared(fn, spec).kernel.ptr), threads, spec.dynamic_shared_bytes
        ),
        "the occupancy calculator",
    )
    if count < 1:
        raise RuntimeError(
            f"a block of {threads} threads and {spec.dynamic_shared_bytes} bytes of dynamic "
            "shared memory does not fit on a multiprocessor of this GPU"
        )
    return int(count)


def active_clusters(fn, spec: LaunchSpec) -> int:
    """How many clusters of `spec`'s shape, of blocks of the kernel `fn` (a loaded RawKernel) at
    `spec`'s block and dynamic shared memory, the GPU holds at once: the CUDA occupancy
    calculator.  A cluster's blocks share one GPC, so where a GPC's multiprocessors are not a
    multiple of the cluster's blocks some stay idle, and the count can be less than the
    multiprocessors divided by the cluster's blocks; a persistent launch of more clusters than
    this would run its last ones after the others.  A cluster that fits nowhere is refused
    here."""
    from cuda.bindings import driver as cu

    config = launch_config(spec, spec.cluster)  # one cluster's worth of blocks
    count = _check(
        cu.cuOccupancyMaxActiveClusters(cu.CUfunction(allow_shared(fn, spec).kernel.ptr), config),
        f"the occupancy calculator (clusters of {'x'.join(map(str, spec.cluster))})",
    )
    if count < 1:
        raise RuntimeError(
            f"a cluster of {'x'.join(map(str, spec.cluster))} blocks of {math.prod(spec.block)} "
            f"threads and {spec.dynamic_shared_bytes} bytes of dynamic shared memory does not fit "
            "on this GPU"
        )
    return int(count)


def triton_spec(spec: LaunchSpec, cubin: str) -> LaunchSpec:
    """A Triton build's launch (registry `backend: triton`) with the dynamic shared memory its
    compiler gave it (plan/triton_build.py: `<instance>.triton.json`); refused where the
    registry's block is not the build's warps, or its first workspace is smaller than the
    global scratch the build's programs need."""
    path = Path(cubin).with_suffix(".triton.json")
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        raise RuntimeError(f"{path} is missing: build {cubin} again (snakemake compile)") from None
    threads = math.prod(spec.block)
    if threads != 32 * meta["num_warps"]:
        raise RuntimeError(
            f"{cubin}: Triton built it for {meta['num_warps']} warps, the registry's block has "
            f"{threads} threads: build it again (snakemake compile)"
        )
    # Triton's global scratch: its bytes a program, for every program of the grid, in the
    # registry's first workspace argument
    need = int(meta["global_scratch_size"]) * math.prod(spec.grid)
    given = next((a.nbytes for a in spec.args if isinstance(a, Workspace)), 0)
    if need > given:
        raise RuntimeError(
            f"{cubin}: Triton's build needs {meta['global_scratch_size']} B of global scratch a "
            f"program ({need} B for the grid's {math.prod(spec.grid)}); the registry's first "
            f"workspace argument gives {given} B: make it give that much"
        )
    return replace(spec, dynamic_shared_bytes=int(meta["shared"]))


def cupy_arguments(cp, spec: LaunchSpec, operands: dict[str, Operand], keep: list) -> tuple:
    """The argument tuple for CuPy: 64-bit addresses (a workspace's allocated and zeroed here,
    and kept in `keep`), 32-bit integers and floats."""
    out = []
    for a in spec.args:
        if isinstance(a, Pointer):
            out.append(np.uint64(operands[a.operand].ptr))
        elif isinstance(a, Int):
            out.append(np.int32(a.value))
        elif isinstance(a, Float):
            out.append(np.float32(a.value))
        elif isinstance(a, Workspace):
            keep.append(cp.zeros(max(a.nbytes, 1), dtype=cp.uint8))
            out.append(np.uint64(keep[-1].data.ptr))
        else:
            raise TypeError(f"CuPy cannot pass a {a.kind} argument")
    return tuple(out)


# -- the driver path: tensor maps, workspaces, clusters -------------------------------------------

TENSOR_MAP_BYTES, TENSOR_MAP_ALIGN = 128, 64


def _aligned_copy(raw: bytes, align: int, keep: list) -> int:
    """The address of a copy of `raw` aligned to `align` bytes (kept alive in `keep`)."""
    buf = ctypes.create_string_buffer(len(raw) + align)
    offset = (-ctypes.addressof(buf)) % align
    ctypes.memmove(ctypes.addressof(buf) + offset, raw, len(raw))
    keep.append(buf)
    return ctypes.addressof(buf) + offset


def _check(result, what: str):
    from cuda.bindings import driver as cu

    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != cu.CUresult.CUDA_SUCCESS:
        _, name = cu.cuGetErrorName(err)
        raise RuntimeError(f"{what}: {name.decode() if isinstance(name, bytes) else name}")
    return rest[0] if rest else None


def encode_tensor_map(t: TensorMap, address: int) -> bytes:
    """The 128 bytes of a CUtensorMap describing a row-major operand (cols innermost), loaded in
    boxes of box_rows x box_cols, the part past the matrix read as zeros."""
    from cuda.bindings import driver as cu

    scalar = SCALARS[t.scalar]
    swizzles = {
        0: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_NONE,
        32: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_32B,
        64: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_64B,
        128: cu.CUtensorMapSwizzle.CU_TENSOR_MAP_SWIZZLE_128B,
    }
    u64, u32 = cu.cuuint64_t, cu.cuuint32_t
    tmap = _check(
        cu.cuTensorMapEncodeTiled(
            getattr(cu.CUtensorMapDataType, scalar.tensor_map_type),
            2,
            address,
            [u64(t.cols), u64(t.rows)],
            [u64(t.ld * scalar.nbytes)],
            [u32(t.box_cols), u32(t.box_rows)],
            [u32(1), u32(1)],
            cu.CUtensorMapInterleave.CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzles[t.swizzle],
            cu.CUtensorMapL2promotion.CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            cu.CUtensorMapFloatOOBfill.CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        ),
        f"cuTensorMapEncodeTiled of {t.operand} ({t.rows} x {t.cols}, ld {t.ld}, box "
        f"{t.box_rows} x {t.box_cols})",
    )
    return ctypes.string_at(tmap.getPtr(), TENSOR_MAP_BYTES)


def launch_config(spec: LaunchSpec, grid: tuple[int, int, int]):
    """cuLaunchKernelEx's CUlaunchConfig of `spec` on `grid` blocks: its block, dynamic shared
    memory and, where it has one, its cluster shape as a launch attribute (no stream)."""
    from cuda.bindings import driver as cu

    config = cu.CUlaunchConfig()
    config.gridDimX, config.gridDimY, config.gridDimZ = grid
    config.blockDimX, config.blockDimY, config.blockDimZ = spec.block
    config.sharedMemBytes = spec.dynamic_shared_bytes
    if spec.cluster != (1, 1, 1):
        attr = cu.CUlaunchAttribute()
        attr.id = cu.CUlaunchAttributeID.CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
        dim = attr.value.clusterDim
        dim.x, dim.y, dim.z = spec.cluster
        config.attrs, config.numAttrs = [attr], 1
    return config


class DriverLaunch:
    """A launch through cuLaunchKernelEx: the argument values packed once (tensor maps encoded,
    workspaces allocated and zeroed), the cluster shape as a launch attribute."""

    def __init__(self, cp, spec: LaunchSpec, fn, operands: dict[str, Operand], stream,
                 workspaces: list[int] | None = None):  # fmt: skip
        """`workspaces`: the addresses of the workspaces another launch of the same spec
        allocated (in its order), to share them; else each is allocated here."""
        from cuda.bindings import driver as cu

        self.cu, self.keep, addresses = cu, [], []
        shared = iter(workspaces) if workspaces is not None else None
        for a in spec.args:
            if isinstance(a, Pointer):
                value = ctypes.c_uint64(operands[a.operand].ptr)
            elif isinstance(a, Int):
                value = ctypes.c_int32(a.value)
            elif isinstance(a, Float):
                value = ctypes.c_float(a.value)
            elif isinstance(a, Workspace) and shared is not None:
                value = ctypes.c_uint64(next(shared))
            elif isinstance(a, Workspace):
                scratch = cp.zeros(max(a.nbytes, 1), dtype=cp.uint8)
                self.keep.append(scratch)
                value = ctypes.c_uint64(scratch.data.ptr)
            else:
                raw = encode_tensor_map(a, operands[a.operand].ptr)
                addresses.append(_aligned_copy(raw, TENSOR_MAP_ALIGN, self.keep))
                continue
            self.keep.append(value)
            addresses.append(ctypes.addressof(value))
        self.params = (ctypes.c_void_p * len(addresses))(*addresses)
        self.config = launch_config(spec, spec.grid)
        self.config.hStream = cu.CUstream(stream.ptr)
        self.function = cu.CUfunction(fn.kernel.ptr)
        self.spec = spec

    def __call__(self) -> None:
        _check(
            self.cu.cuLaunchKernelEx(self.config, self.function, ctypes.addressof(self.params), 0),
            f"cuLaunchKernelEx (grid {self.spec.grid}, cluster {self.spec.cluster})",
        )


# -- cuBLAS -------------------------------------------------------------------------------------

# cuBLAS math modes (cublas_api.h); CuPy's bindings name the first, not always the second
_MATH_MODES = {"ieee": 0, "tf32": 3}  # CUBLAS_DEFAULT_MATH, CUBLAS_TF32_TENSOR_OP_MATH
CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT = 68, -1


def cublas_launcher(cp, conf, pointers, lds, stream, math: str = "ieee", handle=None,
                    b_transposed: bool = False):  # fmt: skip
    """cuBLAS GEMM with explicit leading dimensions.  Row-major C = A.B is column-major
    C^T = B^T.A^T, so B and A swap places.  `b_transposed`: B is handed over as its transpose,
    n x k row-major (registry `b_layout: n_by_k`), which column-major reads as k x n: op T
    gives back B^T (cublas_tf32_tn, the reference of persistent_tf32_tn).  The element type's
    declaration says how (core/elements.py): cublas<t>gemm for one type (math "ieee" is
    cuBLAS's default mode, no TF32; "tf32" lets SGEMM run on the tensor cores in TF32, the TF32
    rungs' reference), or cublasGemmEx for 16-bit inputs with float output and FP32 compute
    (CuPy exposes GemmEx; no other library is needed for these types)."""
    from cupy_backends.cuda.libs import cublas as cb

    e = conf.element
    if e.cublas is None:
        raise ValueError(f"cuBLAS has no GEMM for {conf.dtype}")
    if e.cublas == "lt":
        return cublaslt_launcher(cp, conf, pointers, lds, stream)
    handle = handle or cp.cuda.device.get_cublas_handle()
    scale = e.accumulator.np_dtype
    alpha = np.array(1, scale)
    beta = np.array(1 if conf.accumulate else 0, scale)
    op = cb.CUBLAS_OP_N
    op_b = cb.CUBLAS_OP_T if b_transposed else op
    pa, pb, pc = pointers
    lda, ldb, ldc = lds
    m, n, k = conf.m, conf.n, conf.k

    if e.cublas == "gemm":
        gemm = {"float32": cb.sgemm, "float64": cb.dgemm}[e.name]

        def call():
            gemm(
                handle, op_b, op, n, m, k, alpha.ctypes.data, pb, ldb, pa, lda,
                beta.ctypes.data, pc, ldc,
            )  # fmt: skip
    else:
        tin, tout = e.input.cuda_data_type, e.output.cuda_data_type

        def call():
            cb.gemmEx(
                handle, op_b, op, n, m, k, alpha.ctypes.data, pb, tin, ldb, pa, tin, lda,
                beta.ctypes.data, pc, tout, ldc, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT,
            )  # fmt: skip

    def launch():
        cb.setStream(handle, stream.ptr)
        cb.setPointerMode(handle, cb.CUBLAS_POINTER_MODE_HOST)
        cb.setMathMode(handle, _MATH_MODES[math])
        call()
        if math != "ieee":  # the handle is CuPy's: leave it in its default mode
            cb.setMathMode(handle, _MATH_MODES["ieee"])

    return launch


LT_WORKSPACE_BYTES = 32 << 20
_lt_handles: dict = {}  # one cuBLASLt handle per process
lt_descriptors_alive = 0  # matmul descriptors made and not yet destroyed (a GPU test reads it)


def lt_shapes(m: int, n: int, k: int, lds) -> dict[str, tuple[int, int, int]]:
    """The column-major (rows, cols, ld) cuBLASLt sees in each buffer of a row-major C = A.B
    whose B is handed over transposed: x, the first operand, Bt's bytes (B, k x n, op T);
    y, the second, A's bytes (A^T, k x m, op N); c, C's bytes (C^T, n x m)."""
    lda, ldb, ldc = lds
    return {"x": (k, n, ldb), "y": (k, m, lda), "c": (n, m, ldc)}


def cublaslt_launcher(cp, conf, pointers, lds, stream):
    """cuBLASLt's matmul for FP8 inputs (element types whose route is "lt"), through
    nvmath-python's bindings, which take raw device pointers: CuPy holds no FP8 type, and its
    buffers of FP8 bytes serve.  FP8 takes both operands K-major ("TN" in cuBLAS's column-major
    words): the variant takes B transposed (registry `b_layout: n_by_k`), so row-major
    C = A.B is column-major C^T (n x m, ldc) = op_T(Bt as k x n, ldb) . op_N(A as k x m, lda).
    FP32 compute and scale, C and D of the output type; no scale pointers (per-tensor scales of
    1: the inputs are drawn as FP8 values), fast accumulation off (cuBLASLt's default: its
    sums promoted as it chooses).  The algorithm is cuBLASLt's first heuristic choice, chosen
    once here; a shape it has none for is an error of the configuration."""
    from cupy_backends.cuda.libs import cublas as cb
    from nvmath.bindings import cublasLt as lt

    e = conf.element
    pa, pb, pc = pointers
    lda, ldb, ldc = lds
    m, n, k = conf.m, conf.n, conf.k
    device = cp.cuda.Device().id
    if device not in _lt_handles:
        _lt_handles[device] = lt.create()
    handle = _lt_handles[device]
    keep: list = []

    def value(x, dtype) -> int:
        buf = np.array([x], dtype=dtype)
        keep.append(buf)
        return buf.ctypes.data

    global lt_descriptors_alive
    desc = lt.matmul_desc_create(CUBLAS_COMPUTE_32F, e.accumulator.cuda_data_type)
    lt_descriptors_alive += 1
    attr = lt.MatmulDescAttribute
    lt.matmul_desc_set_attribute(desc, attr.TRANSA, value(cb.CUBLAS_OP_T, np.int32), 4)
    lt.matmul_desc_set_attribute(desc, attr.TRANSB, value(cb.CUBLAS_OP_N, np.int32), 4)
    tin, tout = e.input.cuda_data_type, e.output.cuda_data_type
    shapes = lt_shapes(m, n, k, lds)
    x_layout = lt.matrix_layout_create(tin, *shapes["x"])
    y_layout = lt.matrix_layout_create(tin, *shapes["y"])
    c_layout = lt.matrix_layout_create(tout, *shapes["c"])
    pref = lt.matmul_preference_create()
    lt.matmul_preference_set_attribute(
        pref,
        lt.MatmulPreferenceAttribute.MAX_WORKSPACE_BYTES,
        value(LT_WORKSPACE_BYTES, np.uint64),
        8,
    )
    found = lt.MatmulHeuristicResult(1)
    count = np.zeros(1, dtype=np.int32)
    layouts = (x_layout, y_layout, c_layout)
    try:
        lt.matmul_algo_get_heuristic(
            handle, desc, x_layout, y_layout, c_layout, c_layout, pref, 1, found.ptr,
            count.ctypes.data,
        )  # fmt: skip
    except Exception:
        _lt_free(lt, desc, layouts)
        raise
    finally:
        lt.matmul_preference_destroy(pref)  # only the heuristic reads it
    if count[0] < 1:
        _lt_free(lt, desc, layouts)
        raise RuntimeError(
            f"cuBLASLt offers no {e.name} matmul for {m} x {n} x {k} (lda {lda}, ldb {ldb}, "
            f"ldc {ldc})"
        )
    workspace = cp.empty(LT_WORKSPACE_BYTES, dtype=cp.uint8)
    alpha = value(1.0, e.accumulator.np_dtype)
    beta = value(1.0 if conf.accumulate else 0.0, e.accumulator.np_dtype)

    def launch():
        # the algorithm is the first member of the heuristic's result: its address is the algo's
        lt.matmul(
            handle, desc, alpha, pb, x_layout, pa, y_layout, beta, pc, c_layout, pc, c_layout,
            found.ptr, workspace.data.ptr, LT_WORKSPACE_BYTES, stream.ptr,
        )  # fmt: skip

    launch.keep = (keep, found, count, workspace)
    # the descriptor and the layouts (host structures of cuBLASLt) go with the launcher
    weakref.finalize(launch, _lt_free, lt, desc, layouts)
    return launch


def _lt_free(lt, desc, layouts) -> None:
    global lt_descriptors_alive
    for layout in layouts:
        lt.matrix_layout_destroy(layout)
    lt.matmul_desc_destroy(desc)
    lt_descriptors_alive -= 1

"""Where A, B and C live for each host-memory mode, and what a timed pass does with them.

Every pass is timed in three segments on one stream (see runner.py):

    h2d     | kernel |  d2h          global = h2d + kernel + d2h

and "global" always means: from inputs in host memory to the result readable in host memory.

| memory           | h2d                                   | kernel                   | d2h                         |
|------------------|---------------------------------------|--------------------------|-----------------------------|
| pageable, pinned | copy A, B (C0) to device memory       | on device memory         | copy C back                 |
| managed          | nothing (pages start on the host)     | migrates pages on demand | prefetch C to the host      |
| managed_prefetch | prefetch A, B (C0) to the device      | on resident pages        | prefetch C to the host      |
| mapped           | nothing                               | reads/writes host memory over the bus (zero-copy) | nothing |

Padded matrices (leading dimension = row length + pad, seed 004) in pageable or pinned memory
reach a packed device matrix by `pack` (host packing buffer, then one copy: the packing is CPU
time inside the h2d/d2h segment) or `copy2d` (one strided cudaMemcpy2D), or keep their padding
on the device (`strided`, the kernel uses lda/ldb/ldc).  Managed and mapped matrices are used in
place, strided.  Every buffer has guard zones, and the padding of C is checked to stay
untouched: both count as writes outside the matrix.
"""

from __future__ import annotations

import copy
import ctypes
import os

import numpy as np

from mmbench.core.arith import round_up
from mmbench.core.elements import SCALARS

# the scalar type of a NumPy or CuPy dtype, by name (the guard zones' sentinel comes from it)
SCALAR_OF = {s.numpy: s for s in SCALARS.values()}
CPU_DEVICE_ID = -1  # cudaCpuDeviceId


class Matrix:
    """One rows x ld matrix inside a buffer with `guard` sentinel elements on each side.

    `flat` is the whole buffer (device, managed, or host) as an array of the element type;
    `xp` is the module that can read it (cupy for device memory, numpy for host memory)."""

    def __init__(self, xp, flat, rows: int, cols: int, ld: int, guard: int, scalar=None):
        self.xp, self.flat, self.rows, self.cols, self.ld, self.guard = (
            xp,
            flat,
            rows,
            cols,
            ld,
            guard,
        )
        # the element's type: the array's own, or (a type held as its bits) the one given
        scalar = scalar or SCALAR_OF[flat.dtype.name]
        self.sentinel = scalar.sentinel
        self.uint = scalar.bits if xp is np else xp.dtype(scalar.bits.name)
        self.inner = flat[guard : guard + rows * ld]
        self.grid = self.inner.reshape(rows, ld)
        # the guard zones and padding hold the sentinel; the matrix itself is written before
        # any kernel reads it (inputs copied in, C poisoned or C0 copied in)
        self.reset_outside()

    @property
    def nbytes(self) -> int:
        return self.inner.nbytes

    def ptr(self) -> int:
        return self.inner.data.ptr if self.xp is not np else self.inner.ctypes.data

    def poison(self) -> None:
        bits = self.grid[:, : self.cols].view(self.uint)
        if self.xp is np:  # 576 MB at 12000: in bands of rows on several threads
            fill_rows(bits, self.sentinel)
        else:
            bits.fill(self.sentinel)

    def outside_writes(self) -> int:
        """Guard-zone and padding elements that no longer hold the sentinel.  Counted on the
        host: the zones are small, and copying them back is a plain memcpy, where a CuPy
        comparison and count would compile reduction kernels with NVRTC (about a second each
        on a machine whose kernel cache is empty, tools/profile_runner.py)."""
        bits = self.flat.view(self.uint)
        g, end = self.guard, self.guard + self.rows * self.ld
        zones = [self._host(bits[:g]), self._host(bits[end:])]
        if self.ld > self.cols:
            zones.append(self._pad_on_host())
        return sum(int(np.count_nonzero(z != self.sentinel)) for z in zones)

    def _host(self, contiguous):
        return contiguous if self.xp is np else contiguous.get()

    def _pad_on_host(self) -> np.ndarray:
        """The padding columns of every row (ld - cols elements each), as a host array."""
        pad = self.grid[:, self.cols :].view(self.uint)
        if self.xp is np:
            return pad
        size = self.flat.itemsize
        out = np.empty((self.rows, self.ld - self.cols), dtype=np.dtype(pad.dtype))
        self.xp.cuda.runtime.memcpy2D(
            out.ctypes.data,
            (self.ld - self.cols) * size,
            pad.data.ptr,
            self.ld * size,
            (self.ld - self.cols) * size,
            self.rows,
            self.xp.cuda.runtime.memcpyDeviceToHost,
        )
        return out

    def reset_outside(self) -> None:
        bits = self.flat.view(self.uint)
        bits[: self.guard].fill(self.sentinel)
        bits[self.guard + self.rows * self.ld :].fill(self.sentinel)
        if self.ld > self.cols:
            self.grid[:, self.cols :].view(self.uint).fill(self.sentinel)


_copiers: list = []  # one pool of threads per process, made on first use


def copy_rows(dst: np.ndarray, src: np.ndarray) -> None:
    """dst[...] = src for host matrices (NumPy's casting of an assignment), in bands of rows on
    several threads (NumPy lets go of the GIL while it copies): a 576 MB result at 12000 is
    copied in a fraction of the 100-150 ms one thread takes.  Only for copies outside the timed
    passes (the placement's fills, the verified result's copy); a `pack` transfer's copy is
    timed and stays the seeds' one loop.  As many threads as this process may run on, at most 8
    (one under a SLURM job given one CPU)."""
    in_bands(dst, lambda rows: np.copyto(dst[rows], src[rows], casting="unsafe"))


def fill_rows(dst: np.ndarray, value) -> None:
    """dst[...] = value for a host matrix, in bands of rows on several threads (as copy_rows):
    the verified pass's host C is poisoned before every configuration."""
    in_bands(dst, lambda rows: dst[rows].fill(value))


def in_bands(dst: np.ndarray, work) -> None:
    """work(rows) over dst's rows: all at once (`...`) below 16 MB, else band by band (a slice
    each) on the copy threads."""
    bands = min(8, len(os.sched_getaffinity(0)), max(1, dst.shape[0] // 256)) if dst.ndim else 1
    if bands < 2 or dst.nbytes < (16 << 20):
        work(...)
        return
    if not _copiers:
        from concurrent.futures import ThreadPoolExecutor

        _copiers.append(ThreadPoolExecutor(8, thread_name_prefix="mmbench-copy"))
    edges = [dst.shape[0] * i // bands for i in range(bands + 1)]
    jobs = [
        _copiers[0].submit(work, slice(lo, hi)) for lo, hi in zip(edges, edges[1:], strict=False)
    ]
    for job in jobs:
        job.result()


def host_view(ptr: int, count: int, dtype) -> np.ndarray:
    """A NumPy array over `count` elements at host address `ptr` (managed or pinned memory)."""
    dt = np.dtype(dtype)
    buf = (ctypes.c_char * (count * dt.itemsize)).from_address(ptr)
    return np.frombuffer(buf, dtype=dt, count=count)


class HostBuffers:
    """Host memory kept from one placement to the next, one buffer per memory kind and role (A,
    B, C, C0, packing buffers).  A pinned allocation costs about 0.2 s per GB and a fresh
    pageable one a page fault per 4 KiB on first touch; the runner measures its groups from
    the largest down, so the first group's buffers serve all the others."""

    def __init__(self):
        self.held: dict[tuple[str, str], np.ndarray] = {}
        # what a buffer's matrix holds: (source array, ld, guard), where nothing but its fill
        # has written it since (holds(), filled())
        self.contents: dict[tuple[str, str], tuple] = {}

    def get(self, kind: str, role: str, count: int, dtype) -> np.ndarray:
        """`count` elements of `dtype` in host memory of `kind` (pageable or pinned)."""
        nbytes = count * np.dtype(dtype).itemsize
        buf = self.held.get((kind, role))
        if buf is None or buf.nbytes < nbytes:
            self.held.pop((kind, role), None)  # the smaller one goes before the larger comes
            self.contents.pop((kind, role), None)
            if kind == "pageable":
                buf = np.empty(nbytes, np.uint8)
            else:  # pinned (page-locked, and mapped into the device's address space under UVA)
                import cupyx

                buf = cupyx.empty_pinned(nbytes, np.uint8)
            self.held[(kind, role)] = buf
        return buf[:nbytes].view(dtype)

    def holds(self, kind: str, role: str, src: np.ndarray, ld: int, guard: int) -> bool:
        """Whether the buffer's matrix of leading dimension `ld` after `guard` elements holds
        `src` still: filled from that very array (same memory, shape, strides, type), and
        written by nothing since (a kernel that uses host memory in place: forget())."""
        kept = self.contents.get((kind, role))
        if kept is None:
            return False
        was, was_ld, was_guard = kept
        same = (was.ctypes.data, was.shape, was.strides, was.dtype)
        return (was_ld, was_guard) == (ld, guard) and same == (
            src.ctypes.data, src.shape, src.strides, src.dtype
        )  # fmt: skip

    def filled(self, kind: str, role: str, src: np.ndarray, ld: int, guard: int) -> None:
        """The buffer now holds src (the array is kept, so its memory is not reused)."""
        self.contents[(kind, role)] = (src, ld, guard)

    def forget(self, kind: str, role: str) -> None:
        self.contents.pop((kind, role), None)

    def clear(self) -> None:
        self.held.clear()
        self.contents.clear()


class Placement:
    """Base: A, B, C as seen by the kernel (`kernel_mats`), and the pass segments."""

    memory = ""
    # the kernel uses the host's matrices in place (managed, mapped): their rows are aligned as
    # the kernel declares; otherwise only the device copies are (device_matrix)
    in_place = False

    def __init__(
        self, cp, conf, a, b, c0, guard: int, buffers: HostBuffers | None = None, align: int = 1
    ):
        self.cp, self.conf, self.a, self.b, self.c0 = cp, conf, a, b, c0
        self.guard = guard
        self.buffers = buffers or HostBuffers()
        e = conf.element
        self.input_dtype, self.output_dtype = e.input.np_dtype, e.output.np_dtype
        # leading dimensions the kernel sees are multiples of `align` bytes (registry `align`)
        self.align = align
        n, k, pad = conf.n, conf.k, conf.pad
        # B as the kernel takes it: k x n, or its transpose n x k (a variant whose B is given
        # K-major, registry `b_layout: n_by_k`; the runner hands the placement b.T then)
        self.b_rows, self.b_cols = b.shape
        self.host_ld = (k + pad, self.b_cols + pad, n + pad)
        if self.in_place:
            lds = zip(self.host_ld, "ABC", strict=True)
            self.host_ld = tuple(self.aligned_ld(ld, role) for ld, role in lds)
        self.keep = []  # allocations that must outlive the views

    # views the kernel uses: (A, B, C) as Matrix objects in memory the GPU can address
    kernel_mats: tuple

    def reset(self) -> None:
        """Untimed, before each pass: inputs back in their starting place, C poisoned or C0."""

    def h2d(self, stream) -> None:
        pass

    def d2h(self, stream) -> None:
        pass

    def result(self) -> np.ndarray:
        """C (m x n) as the host sees it after the pass."""
        raise NotImplementedError

    def device_result(self):
        """C (m x n) where the kernel wrote it in device memory (a CuPy view), or None where it
        wrote host memory in place (managed, mapped)."""
        return None

    def moved(self) -> Placement | None:
        """The same operands in a fresh allocation of the memory the kernel reads, the host
        side shared (timing.py's placements); None where there is nothing to move."""
        return None

    def outside_writes(self) -> int:
        return sum(x.outside_writes() for x in self.all_mats())

    def prepare_verified_pass(self) -> None:
        """Before the verified pass: guard zones and padding back to the sentinel, and the
        host's copy of C poisoned, so a result that never arrives fails."""
        for x in self.all_mats():
            x.reset_outside()
        self.result_matrix().poison()

    def result_matrix(self) -> Matrix:
        return self.kernel_mats[2]

    def all_mats(self):
        return self.kernel_mats

    def dtype_of(self, role: str):
        """A and B (and their packing buffers) hold the inputs' type; C and C0 the output's."""
        return self.input_dtype if role[-1] in "AaBb" else self.output_dtype

    def aligned_ld(self, ld: int, role: str) -> int:
        return round_up(ld, self.align // np.dtype(self.dtype_of(role)).itemsize)

    def host_matrix(self, kind: str, role: str, rows: int, cols: int, ld: int) -> Matrix:
        flat = self.buffers.get(kind, role, rows * ld + 2 * self.guard, self.dtype_of(role))
        return Matrix(np, flat, rows, cols, ld, self.guard)

    def host_operands(self, kind: str, in_place: bool = False) -> tuple[Matrix, Matrix, Matrix]:
        """A, B and C as padded host matrices of one memory kind, A and B filled.  A buffer
        that holds its input already (filled from the same array, at the same leading
        dimension and guard, by an earlier placement of copies, which only read it) is not
        filled again; one a kernel uses `in_place` (mapped) is filled, and forgotten after."""
        m, n, k = self.conf.m, self.conf.n, self.conf.k
        lda, ldb, ldc = self.host_ld
        hA = self.host_matrix(kind, "A", m, k, lda)
        hB = self.host_matrix(kind, "B", self.b_rows, self.b_cols, ldb)
        for role, mat, src in (("A", hA, self.a), ("B", hB, self.b)):
            if in_place or not self.buffers.holds(kind, role, src, mat.ld, self.guard):
                copy_rows(mat.grid[:, : mat.cols], src)
            if in_place:
                self.buffers.forget(kind, role)
            else:
                self.buffers.filled(kind, role, src, mat.ld, self.guard)
        return hA, hB, self.host_matrix(kind, "C", m, n, ldc)

    def device_matrix(self, role: str, rows: int, cols: int, ld: int) -> Matrix:
        ld = self.aligned_ld(ld, role)
        scalar = SCALAR_OF[np.dtype(self.dtype_of(role)).name]
        dtype = scalar.bits.name if scalar.device_as_bits else self.dtype_of(role)
        flat = self.cp.empty(rows * ld + 2 * self.guard, dtype=dtype)
        return Matrix(self.cp, flat, rows, cols, ld, self.guard, scalar)


class CopyPlacement(Placement):
    """pageable or pinned host matrices, copied to and from device memory."""

    def __init__(self, cp, conf, a, b, c0, guard, buffers=None, align=1):
        super().__init__(cp, conf, a, b, c0, guard, buffers, align)
        m, n, k = conf.m, conf.n, conf.k
        lda, ldb, ldc = self.host_ld
        self.memory = conf.memory
        self.hA, self.hB, self.hC = self.host_operands(conf.memory)  # hC: the result on the host
        self.hC0 = None
        if c0 is not None:
            self.hC0 = self.host_matrix(conf.memory, "C0", m, n, ldc)
            copy_rows(self.hC0.grid[:, :n], c0)
        strided = conf.transfer == "strided"
        self.dld = (lda, ldb, ldc) if strided else (k, self.b_cols, n)
        self._allocate()
        self.pack = {}
        if conf.transfer == "pack":  # seed 004's buffer, of the same memory kind
            for name, (rows, cols) in dict(a=(m, k), b=self.b.shape, c=(m, n)).items():
                self.pack[name] = self.host_matrix(conf.memory, f"pack {name}", rows, cols, cols)

    def _allocate(self) -> None:
        m, n, k = self.conf.m, self.conf.n, self.conf.k
        self.dA = self.device_matrix("A", m, k, self.dld[0])
        self.dB = self.device_matrix("B", self.b_rows, self.b_cols, self.dld[1])
        self.dC = self.device_matrix("C", m, n, self.dld[2])
        self.kernel_mats = (self.dA, self.dB, self.dC)

    def moved(self) -> CopyPlacement:
        """Fresh device matrices holding this placement's A and B (copied on the device: a
        batch may run on them before any pass has); the host operands (and packing buffers)
        are shared."""
        other = copy.copy(self)
        other.keep = []
        other._allocate()
        for dst, src in ((other.dA, self.dA), (other.dB, self.dB)):
            dst.inner[...] = src.inner
        self.cp.cuda.Device().synchronize()
        return other

    def all_mats(self):
        return (self.dA, self.dB, self.dC, self.hC)

    def result_matrix(self):
        return self.hC

    def reset(self):
        if self.c0 is None:
            self.dC.poison()

    def _copy(self, dst: Matrix, src: Matrix, kind: int, stream, pack, transfer=None):
        rt = self.cp.cuda.runtime
        size = src.flat.itemsize
        t = transfer or self.conf.transfer
        if t in ("contiguous", "strided") and dst.ld == src.ld:
            rt.memcpyAsync(dst.ptr(), src.ptr(), src.nbytes, kind, stream.ptr)
        elif t != "pack":  # copy2d, or a kernel whose rows are aligned wider than the host's
            rt.memcpy2DAsync(
                dst.ptr(),
                dst.ld * size,
                src.ptr(),
                src.ld * size,
                src.cols * size,
                src.rows,
                kind,
                stream.ptr,
            )
        elif kind == rt.memcpyHostToDevice:  # pack: host packing loop, then one copy
            np.copyto(pack.grid, src.grid[:, : src.cols])
            self._copy(dst, pack, kind, stream, None, "contiguous")
        else:  # pack, device -> host: one copy, then unpack on the host
            self._copy(pack, src, kind, stream, None, "contiguous")
            stream.synchronize()
            np.copyto(dst.grid[:, : dst.cols], pack.grid)

    def h2d(self, stream):
        h2d = self.cp.cuda.runtime.memcpyHostToDevice
        self._copy(self.dA, self.hA, h2d, stream, self.pack.get("a"))
        self._copy(self.dB, self.hB, h2d, stream, self.pack.get("b"))
        if self.hC0 is not None:
            self._copy(self.dC, self.hC0, h2d, stream, self.pack.get("c"))

    def d2h(self, stream):
        d2h = self.cp.cuda.runtime.memcpyDeviceToHost
        self._copy(self.hC, self.dC, d2h, stream, self.pack.get("c"))

    def result(self):
        return self.hC.grid[:, : self.conf.n]

    def device_result(self):
        return self.dC.grid[:, : self.conf.n]


class ManagedPlacement(Placement):
    """Managed (unified) memory, used in place; pages start on the host before every pass."""

    in_place = True

    def __init__(self, cp, conf, a, b, c0, guard, buffers=None, align=1):
        super().__init__(cp, conf, a, b, c0, guard, buffers, align)
        m, n, k = conf.m, conf.n, conf.k
        lda, ldb, ldc = self.host_ld
        self.memory = conf.memory
        self.prefetch = conf.memory == "managed_prefetch"
        self.mats = []
        shapes = (("A", m, k, lda), ("B", self.b_rows, self.b_cols, ldb), ("C", m, n, ldc))
        for role, rows, cols, ld in shapes:
            count = rows * ld + 2 * guard
            dtype = np.dtype(self.dtype_of(role))
            mem = cp.cuda.malloc_managed(count * dtype.itemsize)
            self.keep.append(mem)
            flat = host_view(mem.ptr, count, dtype)
            self.mats.append(Matrix(np, flat, rows, cols, ld, guard))
        self.kernel_mats = tuple(self.mats)
        self.device_id = cp.cuda.Device().id

    def moved(self) -> ManagedPlacement:
        """Fresh managed allocations, filled from the host's inputs (as every pass refills
        them)."""
        other = ManagedPlacement(
            self.cp, self.conf, self.a, self.b, self.c0, self.guard, self.buffers, self.align
        )
        other.reset()
        return other

    def reset(self):
        A, B, C = self.mats
        # CPU writes bring every page back to the host, so each pass migrates afresh
        A.grid[:, : self.conf.k] = self.a
        B.grid[:, : self.b_cols] = self.b
        if self.c0 is None:
            C.poison()
        else:
            C.grid[:, : self.conf.n] = self.c0

    def _prefetch(self, mat: Matrix, device: int, stream):
        prefetch(mat.ptr(), mat.nbytes, device, stream.ptr)

    def h2d(self, stream):
        if self.prefetch:
            A, B, C = self.mats
            self._prefetch(A, self.device_id, stream)
            self._prefetch(B, self.device_id, stream)
            if self.c0 is not None:
                self._prefetch(C, self.device_id, stream)

    def d2h(self, stream):
        self._prefetch(self.mats[2], CPU_DEVICE_ID, stream)

    def result(self):
        return self.mats[2].grid[:, : self.conf.n]


class MappedPlacement(Placement):
    """Zero-copy: pinned host memory the kernel reads and writes directly over the bus."""

    memory = "mapped"
    in_place = True

    def __init__(self, cp, conf, a, b, c0, guard, buffers=None, align=1):
        super().__init__(cp, conf, a, b, c0, guard, buffers, align)
        self.hA, self.hB, self.hC = self.host_operands("pinned", in_place=True)
        self.kernel_mats = (self.hA, self.hB, self.hC)

    def reset(self):
        if self.c0 is None:
            self.hC.poison()
        else:
            self.hC.grid[:, : self.conf.n] = self.c0

    def result(self):
        return self.hC.grid[:, : self.conf.n]


def prefetch(ptr: int, nbytes: int, device: int, stream_ptr: int) -> None:
    """cudaMemPrefetchAsync to a device (id >= 0) or to the host (CPU_DEVICE_ID).

    CUDA 13 takes a cudaMemLocation; CuPy 14's wrapper still passes a device ordinal and fails
    with "invalid device ordinal" there, so this goes through NVIDIA's cuda-bindings."""
    from cuda.bindings import runtime as rt

    loc = rt.cudaMemLocation()
    if device == CPU_DEVICE_ID:
        loc.type, loc.id = rt.cudaMemLocationType.cudaMemLocationTypeHost, 0
    else:
        loc.type, loc.id = rt.cudaMemLocationType.cudaMemLocationTypeDevice, device
    (err,) = rt.cudaMemPrefetchAsync(ptr, nbytes, loc, 0, stream_ptr)
    if err != rt.cudaError_t.cudaSuccess:
        raise RuntimeError(f"cudaMemPrefetchAsync to {'host' if device < 0 else device}: {err}")


def make_placement(
    cp, conf, a, b, c0, guard, buffers: HostBuffers | None = None, align: int = 1
) -> Placement:
    if conf.memory in ("pageable", "pinned"):
        return CopyPlacement(cp, conf, a, b, c0, guard, buffers, align)
    if conf.memory in ("managed", "managed_prefetch"):
        return ManagedPlacement(cp, conf, a, b, c0, guard, buffers, align)
    if conf.memory == "mapped":
        return MappedPlacement(cp, conf, a, b, c0, guard, buffers, align)
    raise ValueError(f"unknown memory mode {conf.memory!r}")


def device_pointer(cp, mat: Matrix) -> int:
    """The address the kernel uses: the same as the host's for managed and (under UVA) pinned
    memory; cudaHostGetDevicePointer where the runtime says otherwise."""
    if mat.xp is not np:
        return mat.ptr()
    try:
        return int(cp.cuda.runtime.hostGetDevicePointer(mat.ptr(), 0))
    except Exception:  # noqa: BLE001 - managed memory is not host-registered: same address
        return mat.ptr()

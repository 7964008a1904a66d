"""Our Triton matmul (kernels/triton_matmul.py, the triton_* entries) timed by Triton's own tools,
for the harness-against-theirs table (issue "CUTLASS and Triton as reference lines", item 4):
the same kernel and build parameters as the pipeline's Triton entries, launched through Triton's
JIT launcher on PyTorch tensors, at 4096 and 8192 (normal inputs), timed three ways, beside
torch.matmul (cuBLAS; torch._scaled_mm for FP8: cuBLASLt):

  do_bench     triton.testing.do_bench: 25 ms of warm-up, then 100 ms of timed runs with the L2
               cleared by a 256 MB memset before each, the mean of the runs' CUDA-event times
  warm         do_bench's protocol without its L2 clearing (do_bench_warm here): the same
               estimate from 5 runs, 25 ms of warm-up, 100 ms of runs each between its own two
               CUDA events, their mean; set beside do_bench it measures what the cold L2 costs
  cudagraph    triton.testing.do_bench_cudagraph: the runs captured in a CUDA graph and replayed,
               no L2 clearing
  events       back-to-back launches between two CUDA events after two warm-up calls
  sustained    the harness's sustained load rebuilt in torch: 1 s back to back to settle at
               the board's power limit, then about 3 s of back-to-back launches between two
               CUDA events (the window clock over those alone), to set beside the harness's
               sustained rows of the same kernel: the same load timed by another harness

Each timing's line also gives do_bench's median beside its mean, and what NVML read on a thread
every 5 ms while it ran: the median SM clock (MHz) and board power (W), so that a difference of
clocks is a measured one; and, where CuPy is installed (the GPU machine has it), the clock the
harness's burst rows give, measured right after the timer's last run by its clock probe
(mmbench.measure.telemetry.ClockProbe, docs/method.md: clock64() cycles over %globaltimer on the
same stream): a median of reads over a whole timer includes its warm-up and the gaps between
runs, the probe reads the state the runs left.  And, with CuPy, the window clock: each
multiprocessor's clock64() counter and %globaltimer stamped by a one-thread-a-block kernel
right before the timer's first launch and right after its last, on the same stream; a
multiprocessor's cycles over the nanoseconds between its two stamps are its mean clock over
the timer's whole window, and the median over the multiprocessors stamped both times is
printed (a mean over the window, where the probe is one read after it).  For do_bench and
its median, which clear the L2 with a memset before each run, the runs clock as well: the
same stamps right after each memset and right before the next, summed, so that the clock is
the one the runs themselves ran at, the memsets left out.  Before the timings
the window clock is checked against NVML's reads over the same window: once with the GPU idle
for 200 ms, once with every multiprocessor spinning for 200 ms.

Set beside the pipeline's burst and sustained rows of the same builds (the ladder preset cut to
the Triton entries and cuBLAS), each difference is one of warm-up, L2, launch cost or clocks.

    python3 lab/benchmarks/triton_matmul_check.py [--sizes 4096 8192] [--stages 4]

Needs PyTorch and Triton (the GPU machine has both); one line per timing, and a relative-L2
check of each product against float64 (a sanity check: the harness verifies every element).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import threading
import time
from functools import partial
from pathlib import Path

import torch
import triton
import triton.testing

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location(
    "triton_matmul", ROOT / "kernels" / "triton_matmul.py"
)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)
matmul = _module.matmul

# the registry's entries: (BK, B handed over as n x k, TF32, FP8 promotion) per input type
ENTRIES = {
    torch.bfloat16: ("triton_bf16", 64, 0, 0, 0),
    torch.float32: ("triton_tf32", 32, 1, 1, 0),
    torch.float8_e4m3fn: ("triton_fp8", 128, 1, 0, 128),
}


def alloc(size: int, align: int, stream):
    """Triton's global scratch (the tensor descriptors the kernel makes on the device)."""
    return torch.empty(size, dtype=torch.int8, device="cuda")


def operands(dtype, m, n, k, seed=7):
    """A (m x k) and B drawn normal, then cast; B k x n, or n x k where the entry takes it so."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(m, k, device="cuda", generator=g).to(dtype)
    nk = ENTRIES[dtype][2]
    b = (
        torch.randn(n, k, device="cuda", generator=g)
        if nk
        else torch.randn(k, n, device="cuda", generator=g)
    )
    return a, b.to(dtype)


def launch(a, b, c, stages: int):
    _, bk, nk, tf32, promote = ENTRIES[a.dtype]
    m, k = a.shape
    n = c.shape[1]
    programs = min(torch.cuda.get_device_properties(a.device).multi_processor_count,
                   triton.cdiv(m, 128) * triton.cdiv(n, 128))  # fmt: skip
    matmul[(programs,)](
        a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), 0, BM=128, BN=128, BK=bk,
        GROUP=8, STAGES=stages, B_NK=nk, TF32=tf32, FP8_PROMOTE=promote, num_warps=8,
        num_stages=stages,
    )  # fmt: skip


class Sampler:
    """NVML's SM clock and board power read every `interval` s on a thread while a timing runs."""

    def __init__(self, interval: float = 0.005):
        import pynvml

        pynvml.nvmlInit()
        self.nvml = pynvml
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())
        self.interval = interval

    def __enter__(self):
        self.reads, self.running = [], True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.running = False
        self.thread.join()

    def _run(self):
        n = self.nvml
        while self.running:
            mhz = n.nvmlDeviceGetClockInfo(self.handle, n.NVML_CLOCK_SM)
            watts = n.nvmlDeviceGetPowerUsage(self.handle) / 1e3
            self.reads.append((mhz, watts))
            time.sleep(self.interval)

    def medians(self) -> str:
        if not self.reads:
            return "no NVML reads"
        mhz, watts = (statistics.median(c) for c in zip(*self.reads, strict=True))
        return f"{mhz:.0f} MHz, {watts:.0f} W"


def clock_probe():
    """The harness's clock probe on torch's current stream, or None without CuPy or mmbench
    (PYTHONPATH=workflow/scripts): a callable giving the SM clock in MHz."""
    try:
        import cupy as cp

        from mmbench.measure.telemetry import ClockProbe
    except ImportError:
        return None
    stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
    probe = ClockProbe(cp, stream, lambda: None)
    return lambda: probe()[0]


# Each multiprocessor's clock64() and %globaltimer, stamped by the first thread of each block
# into its multiprocessor's slot (blocks that share one write within nanoseconds of each other)
STAMP_SOURCE = r"""
extern "C" __global__ void mmbench_clock_stamp(unsigned long long* out, unsigned int slots) {
    if (threadIdx.x != 0) return;
    unsigned int sm;
    unsigned long long t;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    const long long c = clock64();
    if (sm < slots) { out[2 * sm] = (unsigned long long)c; out[2 * sm + 1] = t; }
}
"""
STAMP_SLOTS = 1024  # more than any GPU's %smid

# Every thread of a block spins on %globaltimer for `ns` nanoseconds: the window clock's check
# under load, each multiprocessor busy for a known time while NVML reads its clock
SPIN_SOURCE = r"""
extern "C" __global__ void mmbench_clock_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < ns);
}
"""


class WindowClock:
    """The SM clock over a whole window of launches on torch's current stream: every
    multiprocessor stamped (STAMP_SOURCE) before and after, its cycles over its nanoseconds,
    the median over the multiprocessors stamped both times, in MHz."""

    def __init__(self, cp):
        self.cp = cp
        self.kernel = cp.RawKernel(STAMP_SOURCE, "mmbench_clock_stamp")
        self.kernel.compile()
        sms = torch.cuda.get_device_properties(torch.cuda.current_device()).multi_processor_count
        self.blocks = 4 * sms  # enough that every multiprocessor runs one
        self.stream = cp.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)
        self.before = cp.zeros(2 * STAMP_SLOTS, dtype=cp.uint64)
        self.after = cp.zeros(2 * STAMP_SLOTS, dtype=cp.uint64)

    def _stamp(self, out):
        with self.stream:
            out.fill(0)
            self.kernel((self.blocks,), (32,), (out, self.cp.uint32(STAMP_SLOTS)))

    def start(self):
        self._stamp(self.before)

    def stop(self) -> float:
        self._stamp(self.after)
        self.stream.synchronize()
        b = self.before.get().reshape(-1, 2).astype("int64")
        a = self.after.get().reshape(-1, 2).astype("int64")
        both = (b[:, 1] > 0) & (a[:, 1] > b[:, 1])
        mhz = 1e3 * (a[both, 0] - b[both, 0]) / (a[both, 1] - b[both, 1])
        return float(statistics.median(mhz)) if len(mhz) else float("nan")


def window_checks(window, seconds: float = 0.2) -> None:
    """The window clock set beside NVML's median clock over the same window, the GPU idle
    (nothing launched between the stamps: whether clock64() counts while a multiprocessor
    waits) and every multiprocessor spinning (whether it reads the clock NVML reads)."""
    spin = window.cp.RawKernel(SPIN_SOURCE, "mmbench_clock_spin")
    for what in ("idle", "busy"):
        with Sampler() as s:
            window.start()
            if what == "busy":
                with window.stream:
                    spin((window.blocks,), (128,), (window.cp.uint64(int(seconds * 1e9)),))
            else:
                time.sleep(seconds)
            mhz = window.stop()
        print(f"window clock check, GPU {what} {seconds * 1e3:.0f} ms: window {mhz:.0f} MHz, "
              f"NVML {s.medians()}")  # fmt: skip


# The clock over do_bench's runs alone: each multiprocessor's clock64() and %globaltimer stamped
# right after each L2-clearing memset (open) and right before the next (close); the first block
# on a multiprocessor to close a bracket adds its cycles and nanoseconds to that
# multiprocessor's sums, so the memsets are left out and every run of `fn` is counted
RUNS_SOURCE = r"""
__device__ __forceinline__ unsigned int mmbench_sm() {
    unsigned int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    return sm;
}
__device__ __forceinline__ unsigned long long mmbench_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
extern "C" __global__ void mmbench_runs_open(unsigned long long* open, unsigned int slots) {
    const unsigned int sm = mmbench_sm();
    if (threadIdx.x != 0 || sm >= slots) return;
    const unsigned long long t = mmbench_ns();
    open[3 * sm] = (unsigned long long)clock64();
    open[3 * sm + 1] = t;
    open[3 * sm + 2] = 1;
}
extern "C" __global__ void mmbench_runs_close(unsigned long long* open, unsigned long long* sums,
                                              unsigned int slots) {
    const unsigned int sm = mmbench_sm();
    if (threadIdx.x != 0 || sm >= slots) return;
    const unsigned long long t = mmbench_ns();
    const unsigned long long c = (unsigned long long)clock64();
    if (atomicExch(&open[3 * sm + 2], 0ULL) == 1ULL) {
        sums[2 * sm] += c - open[3 * sm];
        sums[2 * sm + 1] += t - open[3 * sm + 1];
    }
}
"""


class RunsClock:
    """The SM clock over the runs of a Triton timer that clears the L2 before each (do_bench):
    Triton's active driver is wrapped so that its clear_cache closes the open bracket, clears,
    and opens the next (RUNS_SOURCE), on torch's current stream; the median over the
    multiprocessors of their summed cycles over their summed nanoseconds, in MHz."""

    def __init__(self, window: WindowClock):
        cp = window.cp
        self.cp, self.blocks, self.stream = cp, window.blocks, window.stream
        module = cp.RawModule(code=RUNS_SOURCE)
        self.open_k = module.get_function("mmbench_runs_open")
        self.close_k = module.get_function("mmbench_runs_close")
        self.open = cp.zeros(3 * STAMP_SLOTS, dtype=cp.uint64)
        self.sums = cp.zeros(2 * STAMP_SLOTS, dtype=cp.uint64)

    def _launch(self, kernel, *args):
        with self.stream:
            kernel((self.blocks,), (32,), (*args, self.cp.uint32(STAMP_SLOTS)))

    def __call__(self, how, fn):
        """`how(fn)` with Triton's clear_cache bracketed: its result and the clock (MHz)."""
        runs = self
        real = triton.runtime.driver.active

        class Bracketed:
            def __getattr__(self, name):
                return getattr(real, name)

            def clear_cache(self, cache):
                runs._launch(runs.close_k, runs.open, runs.sums)
                real.clear_cache(cache)
                runs._launch(runs.open_k, runs.open)

        self.open.fill(0)
        self.sums.fill(0)
        triton.runtime.driver.set_active(Bracketed())
        try:
            ms = how(fn)
        finally:
            triton.runtime.driver.set_active(real)
        self._launch(self.close_k, self.open, self.sums)
        self.stream.synchronize()
        s = self.sums.get().reshape(-1, 2).astype("int64")
        both = s[:, 1] > 0
        mhz = 1e3 * s[both, 0] / s[both, 1]
        return ms, float(statistics.median(mhz)) if len(mhz) else float("nan")


def window_clock():
    """A WindowClock, or None without CuPy."""
    try:
        import cupy as cp
    except ImportError:
        return None
    return WindowClock(cp)


def timed(tf: float, how, fn, probe=None, window=None, runs=None) -> str:
    """`tf` GFLOP over the ms `how(fn)` returns, as TFLOP/s, with the clock and power meanwhile,
    given the window clock the mean clock over the timer's whole window, given the clock
    probe its clock right after, and given a RunsClock the clock over the runs alone (the
    memsets between them left out)."""
    with Sampler() as s:
        if window:
            window.start()
        ms, alone = runs(how, fn) if runs else (how(fn), None)
        torch.cuda.synchronize()
        over = f", window {window.stop():.0f} MHz" if window else ""
        after = f", probe {probe():.0f} MHz" if probe else ""
        after += f", runs {alone:.0f} MHz" if alone else ""
    return f"{tf / ms:.1f} ({s.medians()}{over}{after})"


def do_bench_warm(fn, warmup: float = 25, rep: float = 100) -> float:
    """triton.testing.do_bench's loop (its defaults: 25 ms of warm-up, 100 ms of runs, the
    count of each from the mean of 5 runs) with nothing between the runs: no memset clears the
    L2, so each run finds the operands the one before left there.  The mean of the runs' own
    CUDA-event times, in ms."""
    fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        fn()
    end.record()
    end.synchronize()
    estimate = start.elapsed_time(end) / 5
    for _ in range(max(1, int(warmup / estimate))):
        fn()
    runs = max(1, int(rep / estimate))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(runs)]
    for s, e in zip(starts, ends, strict=True):
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return statistics.mean(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))


def events_ms(fn, count=50) -> float:
    """Back-to-back launches between two CUDA events after two warm-up calls: ms per launch."""
    fn()
    fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(count):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / count


def sustained(tf: float, fn, window=None, settle_s: float = 1.0, seconds: float = 3.0) -> str:
    """The harness's sustained load in torch: `fn` back to back for `settle_s` (the clock and
    power settle at the board's limit), then timed back to back between two CUDA events for
    about `seconds`, NVML read meanwhile and, given it, the window clock over the timed
    launches alone: TFLOP/s (NVML's median clock and power, the window's clock)."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    end.record()
    end.synchronize()
    one = max(start.elapsed_time(end), 1e-3)
    t0 = time.monotonic()
    while time.monotonic() - t0 < settle_s:
        for _ in range(max(1, int(50 / one))):  # about 50 ms queued at a time
            fn()
        torch.cuda.synchronize()
    count = max(1, int(seconds * 1e3 / one))
    with Sampler() as s:
        if window:
            window.start()
        start.record()
        for _ in range(count):
            fn()
        end.record()
        end.synchronize()
        over = f", window {window.stop():.0f} MHz" if window else ""
    return f"{tf / (start.elapsed_time(end) / count):.1f} ({s.medians()}{over})"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192])
    p.add_argument("--stages", type=int, default=4, help="the entries' STAGES (2, 3 or 4)")
    a = p.parse_args(argv)
    triton.set_allocator(alloc)
    window = window_clock()
    timer = partial(timed, probe=clock_probe(), window=window)
    flushed = partial(timer, runs=RunsClock(window) if window else None)
    print(f"GPU: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}")  # fmt: skip
    if window:
        window_checks(window)
    bad = 0
    for dtype, entry in ENTRIES.items():
        for size in a.sizes:
            x, y = operands(dtype, size, size, size)
            c = torch.empty(size, size, device="cuda", dtype=torch.float32)
            launch(x, y, c, a.stages)
            ref = x.double() @ (y.double().t() if entry[2] else y.double())
            err = float((c.double() - ref).norm() / ref.norm())
            bad += err > 2.0**-9
            print(f"check {entry[0]} {size}: rel L2 {err:.2e}")
            calls = {f"{entry[0]} STAGES={a.stages}": partial(launch, x, y, c, a.stages)}
            if dtype == torch.float8_e4m3fn:
                one = torch.ones((), device="cuda")
                calls["torch (cuBLASLt)"] = partial(torch._scaled_mm, x, y.t(), one, one,
                                                    out_dtype=torch.float32)  # fmt: skip
            else:
                torch.backends.cuda.matmul.allow_tf32 = dtype == torch.float32
                calls["torch (cuBLAS)"] = partial(torch.matmul, x, y.t() if entry[2] else y)
            tf = 2.0 * size**3 / 1e9  # GFLOP of the product: over ms, TFLOP/s
            median = partial(triton.testing.do_bench, return_mode="median")
            for name, fn in calls.items():
                print(f"time {dtype} {size} {name} TFLOP/s: do_bench "
                      f"{flushed(tf, triton.testing.do_bench, fn)}, do_bench median "
                      f"{flushed(tf, median, fn)}, warm {timer(tf, do_bench_warm, fn)}, cudagraph "
                      f"{timer(tf, triton.testing.do_bench_cudagraph, fn)}, events "
                      f"{timer(tf, events_ms, fn)}, sustained {sustained(tf, fn, window)}")  # fmt: skip
    print(f"{bad} check(s) over 2^-9")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

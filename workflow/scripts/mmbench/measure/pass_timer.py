"""One timed pass of a configuration: the host-to-device copies, the kernel and the copies back,
each timed by CUDA events on the pass's stream (placement.py says what each covers for every
host-memory mode)."""

from __future__ import annotations


class PassTimer:
    """Times one pass with CUDA events on one stream, in segments (placement.py says what each
    covers for every host-memory mode):

        e0 | h2d | e1 | [cold: L2 flush] | e1b | kernel | e2 | d2h | e3

    kernel = e1b..e2; global = h2d + kernel + d2h (seed 002's Tiempo Global), the flush excluded.
    A copy from pageable memory returns to the host near its end, so the GPU waits for the
    host's launch inside kernel (docs/method.md, "Known limit ..."): a few to tens of us, which
    a sub-millisecond kernel's row shows; its batched median (batcher.py) does not.
    """

    def __init__(self, cp, stream, l2_bytes: int):
        self.cp, self.stream = cp, stream
        self.events = {k: cp.cuda.Event() for k in ("e0", "e1", "e1b", "e2", "e3")}
        self.flush_bytes = 2 * int(l2_bytes)  # a memset of twice the L2, as nvbench
        self.scratch = None

    def in_kernel(self) -> bool:
        """The pass's kernel is running now (asked from the telemetry thread)."""
        ev = self.events
        return ev["e1b"].done and not ev["e2"].done

    def one_pass(self, placement, launch, cold: bool) -> tuple[float, float, float]:
        """(h2d, kernel, d2h) milliseconds of one pass."""
        cp, s, ev = self.cp, self.stream, self.events
        if cold and self.scratch is None:
            self.scratch = cp.empty(self.flush_bytes, dtype=cp.uint8)
        placement.reset()
        cp.cuda.Device().synchronize()
        ev["e0"].record(s)
        placement.h2d(s)
        ev["e1"].record(s)
        after_flush = ev["e1"]
        if cold:
            cp.cuda.runtime.memsetAsync(self.scratch.data.ptr, 0, self.flush_bytes, s.ptr)
        ev["e1b"].record(s)
        if cold:
            after_flush = ev["e1b"]
        with s:
            launch()
        ev["e2"].record(s)
        placement.d2h(s)
        ev["e3"].record(s)
        ev["e3"].synchronize()
        el = cp.cuda.get_elapsed_time
        return el(ev["e0"], ev["e1"]), el(after_flush, ev["e2"]), el(ev["e2"], ev["e3"])

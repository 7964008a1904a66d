"""One timed pass of a configuration: the host-to-device copies, the kernel and the copies back,
each timed by CUDA events on the pass's stream (placement.py says what each covers for every
host-memory mode)."""

from __future__ import annotations

import weakref


class PassTimer:
    """Times one pass with CUDA events on one stream, in segments (placement.py says what each
    covers for every host-memory mode):

        e0 | h2d | e1 | [cold: L2 flush] | [held] e1b | kernel | e2 [released] | d2h | e3

    kernel = e1b..e2; global = h2d + kernel + d2h (seed 002's Tiempo Global), the flush and the
    hold excluded.  The kernel's start event and its launch are queued behind the blocking
    kernel (batcher.py), released once the launch is queued, so that the segment is the
    kernel's whatever the host does before it: a copy from pageable memory returns to the host
    near its end, and without the hold the GPU waited inside the segment for the host's launch
    (cuBLAS at 641: 0.068 ms after a pageable copy against 0.032 after a pinned one on an H200;
    docs/method.md).  Without a blocking kernel (`hold` None: it failed to build) the segment
    starts when the stream reaches it, as before.
    """

    def __init__(self, cp, stream, l2_bytes: int, hold=None):
        self.cp, self.stream = cp, stream
        self.events = {k: cp.cuda.Event() for k in ("e0", "e1", "e1b", "e2", "e3")}
        self.flush_bytes = 2 * int(l2_bytes)  # a memset of twice the L2, as nvbench
        self.scratch = None
        self.hold = hold  # () -> the stream's Batcher or None (made on first use)
        self.launched = weakref.WeakSet()  # the launches that have run a pass

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
        if cold:
            cp.cuda.runtime.memsetAsync(self.scratch.data.ptr, 0, self.flush_bytes, s.ptr)
        # a launch's first pass is not held: a library's first call on a handle may wait for
        # the device (cuBLAS's workspace), which the blocking kernel holds (the verified pass
        # or a warm-up pass comes first)
        first = launch not in self.launched
        self.launched.add(launch)
        holder = self.hold() if self.hold is not None and not first else None
        ticket = holder.hold() if holder is not None else None
        ev["e1b"].record(s)
        try:
            with s:
                launch()
            ev["e2"].record(s)
        finally:  # a launch that raised: the stream goes on now, not after the timeout
            if holder is not None:
                holder.release(ticket)
        placement.d2h(s)
        ev["e3"].record(s)
        ev["e3"].synchronize()
        if holder is not None:
            holder.check()
        el = cp.cuda.get_elapsed_time
        # e1b: after the flush, and after the hold; e1 where neither stands between
        start = ev["e1b"] if cold or holder is not None else ev["e1"]
        return el(ev["e0"], ev["e1"]), el(start, ev["e2"]), el(ev["e2"], ev["e3"])

"""Batched samples (nvbench's batch measurement): launches queued behind a blocking kernel, so
that they run back to back however long the host takes to queue them; the launch's time is the
batch's over its count (core/sampling.batch_size says how many)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

# The blocking kernel of batched samples (nvbench's blocking_kernel): it waits until the host has
# queued the whole batch behind it and raised `released` to this batch's ticket, so the batch's
# launches run back to back however long the host takes to queue them.  It gives up after
# `timeout_ns` (a batch longer than the launch queue would otherwise never be released).
BLOCKER_SOURCE = r"""
extern "C" __global__ void mmbench_block(const volatile unsigned long long* released,
                                         unsigned long long ticket, unsigned long long timeout_ns,
                                         unsigned int* timed_out) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    while (*released < ticket) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
        if (now - start > timeout_ns) { atomicAdd(timed_out, 1u); return; }
        __nanosleep(1000);
    }
}
"""
BLOCK_TIMEOUT_S = 10.0


class Batcher:
    """Queues batches of launches behind the blocking kernel, on one stream."""

    def __init__(self, cp, stream):
        import cupyx

        self.cp, self.stream = cp, stream
        # [released ticket, timed-out count] in pinned host memory, which the device reads and
        # writes at the same address (unified addressing)
        self.words = cupyx.empty_pinned(2, dtype=np.uint64)
        self.words[:] = 0
        address = self.words.ctypes.data
        self.released, self.timed_out = np.uint64(address), np.uint64(address + 8)
        self.kernel = cp.RawKernel(BLOCKER_SOURCE, "mmbench_block")
        self.kernel.compile()  # now, not at the first batch: Lane.batcher() catches a failure
        self.ticket = 0

    def queue(
        self, launch: Callable[[], None], count: int, warm: bool = False, after=None
    ) -> tuple:
        """Queues one batch of `count` launches (after one untimed launch if `warm`, and after
        the event `after` of another stream's batch, so that batches on several streams run
        one after another); returns its (start, end) events.  The launches run once the batch
        is released; the timed-out count is checked by `check()`."""
        cp, s = self.cp, self.stream
        start, end = cp.cuda.Event(), cp.cuda.Event()
        if after is not None:
            s.wait_event(after)
        ticket = self.hold()
        try:
            with s:
                if warm:
                    launch()
                start.record(s)
                for _ in range(count):
                    launch()
                end.record(s)
        finally:  # a launch that raised: what was queued runs now, not after the timeout
            self.release(ticket)
        return start, end

    def hold(self) -> int:
        """Queues the blocking kernel alone: what the host queues on the stream after it waits
        until release(ticket) (a timed pass's kernel: pass_timer.py).  Returns the ticket."""
        self.ticket += 1
        with self.stream:
            self.kernel(
                (1,), (1,),
                (self.released, np.uint64(self.ticket), np.uint64(int(BLOCK_TIMEOUT_S * 1e9)),
                 self.timed_out),
            )  # fmt: skip
        return self.ticket

    def release(self, ticket: int) -> None:
        self.words[0] = ticket

    def run(self, launch: Callable[[], None], count: int, warm: bool = False) -> float:
        """One batch queued (queue()), waited for and checked: its milliseconds."""
        start, end = self.queue(launch, count, warm=warm)
        end.synchronize()
        self.check()
        return self.cp.cuda.get_elapsed_time(start, end)

    def check(self) -> None:
        """Raises if a blocking kernel gave up waiting since the last check (the count is then
        reset: the configuration that timed out is the one whose row says so)."""
        if self.words[1]:
            self.words[1] = 0
            raise RuntimeError(
                f"launches held behind the blocking kernel were not queued within "
                f"{BLOCK_TIMEOUT_S:.0f} s (a batch longer than the launch queue: lower "
                f"sampling.batch_max; or a launch that waits for its stream)"
            )

"""The flushed load (core/sampling.FLUSHED): the sustained load with L2 flushed before every
launch, as mamf-finder measures its MSMF (maximum sustained matmul FLOPS).

The strategy is Sustained's (batches back to back behind the blocking kernel, the settle rule,
the timed window, its telemetry); what differs is each batch: before every launch a memset of
twice the L2 (as a cold cache's passes flush it, pass_timer.py) on the batch's stream, and
every launch between two events of its own, so a batch's time is its launches' alone, the
memsets outside.  `duty` (the launches' time over the window's wall time) then says how much
of the window the GPU spent multiplying: the rest it spent writing the flush buffer, which
draws less power than the tensor cores, so the clock holds higher than back to back."""

from __future__ import annotations

from mmbench.core.sampling import FLUSHED
from mmbench.measure.sustained import Sustained

_SCRATCH: dict[int, object] = {}  # the flush buffer of each device, allocated once


def flush_buffer(cp):
    """(buffer, bytes): twice the L2 of the current device, allocated once per process."""
    device = cp.cuda.Device()
    if device.id not in _SCRATCH:
        l2 = int(device.attributes["L2CacheSize"])
        _SCRATCH[device.id] = cp.empty(2 * l2, dtype=cp.uint8)
    buf = _SCRATCH[device.id]
    return buf, buf.nbytes


class FlushedLaunches:
    """A batch's launch: the flush, then the launch between two events; `ms()` after the batch
    is the launches' time, the first `skip` (an untimed warm launch) left out."""

    def __init__(self, cp, launch, stream, skip: int):
        self.cp, self.launch, self.stream, self.skip = cp, launch, stream, skip
        self.buffer, self.nbytes = flush_buffer(cp)
        self.events: list[tuple] = []

    def __call__(self) -> None:
        cp, s = self.cp, self.stream
        cp.cuda.runtime.memsetAsync(self.buffer.data.ptr, 0, self.nbytes, s.ptr)
        start, end = cp.cuda.Event(), cp.cuda.Event()
        start.record(s)
        self.launch()
        end.record(s)
        self.events.append((start, end))

    def ms(self) -> float:
        el = self.cp.cuda.get_elapsed_time
        return sum(el(a, b) for a, b in self.events[self.skip :])


# what one launch of a batch queues on its stream: the memset, two event records, the launch
QUEUED_PER_LAUNCH = 4


class Flushed(Sustained):
    load = FLUSHED

    def batch_count(self, s, first_ms: float) -> int:
        """As the sustained load's, but each launch queues QUEUED_PER_LAUNCH commands behind the
        blocking kernel, so batch_max of those at most."""
        return max(1, min(super().batch_count(s, first_ms), s.batch_max // QUEUED_PER_LAUNCH))

    def queue(self, batcher, launch, count: int, warm: bool, after) -> tuple:
        flushed = FlushedLaunches(batcher.cp, launch, batcher.stream, skip=int(warm))
        start, end = batcher.queue(flushed, count, warm=warm, after=after)
        self._launches[id(end)] = flushed
        return start, end

    def batch_ms(self, cp, start, end) -> float:
        return self._launches.pop(id(end)).ms()

    def measure(self, k, s):
        self._launches: dict[int, FlushedLaunches] = {}
        try:
            return super().measure(k, s)
        finally:
            self._launches.clear()

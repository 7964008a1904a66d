"""The sustained load (core/sampling.SUSTAINED): what a steady workload sees.

Batches of sampling.sustained_batch_ms back to back, the next queued while one runs, until the
settle rule holds (measure/telemetry.settled, asked of the telemetry observer), then timed
batches back to back for at least sampling.sustained_window_s, the first of them the batch
already queued when the rule held (it starts as the batch the rule last saw ends); none is
queued after the batch expected to complete the window (as long as the one before it).  The
samples are the launch's time in those batches, the row's kernel_ms their mean (the window's
GPU time over its launches: core/sampling.Load.statistic); copies are not timed (their host
work would let the GPU cool), so the copy and global columns are empty.  Batches take the
placements in turn, from the first settling batch on.  No clock probe: the moment the load
stops, the clock leaves the power limit's (H100: NVML read cuBLAS TF32 at 1425 MHz through the
window, the probe right after measured 1650); the telemetry read during the window is its clock
record.
"""

from __future__ import annotations

import math
import time
from collections import deque

from mmbench.core.sampling import SUSTAINED, Sampling
from mmbench.measure.samples import Samples
from mmbench.measure.sites import Kernel


class Sustained:
    load = SUSTAINED

    def queue(self, batcher, launch, count: int, warm: bool, after) -> tuple:
        """One batch of `count` launches queued behind the blocking kernel: (start, end)."""
        return batcher.queue(launch, count, warm=warm, after=after)

    def batch_ms(self, cp, start, end) -> float:
        """The launches' milliseconds in a finished batch: here the whole batch's."""
        return cp.cuda.get_elapsed_time(start, end)

    def batch_count(self, s: Sampling, first_ms: float) -> int:
        """Launches a batch: sustained_batch_ms of them (one took `first_ms`), batch_max at
        most (what the launch queue holds behind the blocking kernel)."""
        return max(1, min(s.batch_max, math.ceil(s.sustained_batch_ms / max(first_ms, 1e-4))))

    def measure(self, k: Kernel, s: Sampling) -> Samples:
        if k.launch is None or k.batcher is None:
            raise ValueError(
                f"load={self.load.name} runs the kernel back to back, which this configuration "
                "cannot do (a cold cache flushes L2 before each launch; an empty grid launches "
                "nothing; or the blocking kernel failed to build: see the log): use load=burst "
                "for it"
            )
        cp = k.batcher.cp
        obs, telemetry = k.observers, k.observers.telemetry
        sites = [x for x in k.sites() if x.launch is not None]
        # one launch's time, then batches of sustained_batch_ms (batch_max at most); timed
        # alone, as a batch of one, on operands already in place (the verified and warm-up
        # passes put them there): the pass this was took its copies too, which no column of
        # this load counts
        first = k.batcher.run(k.launch, 1)
        window_ms = max(s.sustained_window_s, s.min_time_s) * 1e3
        count = self.batch_count(s, first)
        most = max(s.max_samples, math.ceil(2 * window_ms / s.sustained_batch_ms))
        out = Samples(load=self.load, batch_size=count)
        flight: deque = deque()  # (start, end, timed, batcher) of the queued batches
        queued = 0

        def busy() -> bool:
            return any(a.done and not b.done for a, b, _, _ in list(flight))

        t0 = time.monotonic()
        obs.before_start(busy, self.load)
        timed, window_start, window_end = False, math.nan, math.nan
        gpu_ms = 0.0
        last_queued = False  # the batch in flight will complete the window: none after it
        try:
            while True:
                if not last_queued:
                    site = sites[queued % len(sites)]
                    queued += 1
                    batcher = site.batcher or k.batcher
                    # after the batch before, which may be on another placement's stream
                    after = flight[-1][1] if flight and len(sites) > 1 else None
                    events = self.queue(batcher, site.launch, count, len(sites) > 1, after)
                    flight.append((*events, timed, batcher))
                    if len(flight) < 2:
                        continue
                start, end, was_timed, batcher = flight[0]
                end.synchronize()  # still in flight while it runs: busy() sees it
                flight.popleft()
                batcher.check()
                now = time.monotonic()
                ms = self.batch_ms(cp, start, end)
                if was_timed:
                    if math.isnan(window_start):  # the batch's whole span (a flushed one's too)
                        window_start = now - cp.cuda.get_elapsed_time(start, end) / 1e3
                    out.kernel.append(ms / count)
                    gpu_ms += ms
                    window_end = now
                    n = len(out.kernel)
                    if (gpu_ms >= window_ms and n >= s.min_samples) or n >= most:
                        break
                    # a timed batch in flight as long as this one completes the window: nothing
                    # is queued after it (a batch that would run out untimed, about
                    # sustained_batch_ms of GPU a configuration, 9 s in the ladder preset); if
                    # it falls short, the next is queued after it as before
                    last_queued = (
                        len(flight) == 1
                        and flight[0][2]
                        and ((gpu_ms + ms >= window_ms and n + 1 >= s.min_samples) or n + 1 >= most)
                    )
                elif not timed:
                    waited = now - t0
                    done = telemetry is not None and telemetry.settled(t0)
                    if done or waited >= s.settle_max_s or telemetry is None:
                        timed, out.settle_s, out.settled = True, waited, bool(done)
                        # the batch already queued behind this one starts where the rule
                        # judged the load settled: it opens the window (left untimed, it ran
                        # out as about sustained_batch_ms of GPU time a configuration that
                        # neither the settling nor the window counted, 10 s in the ladder)
                        for i, (a, b, _, bt) in enumerate(flight):
                            flight[i] = (a, b, True, bt)
            for _start, end, _, _ in flight:  # a batch queued past the window runs out
                end.synchronize()
            out.placements = min(len(sites), queued)
        finally:
            obs.after_finish()
        obs.after_all(self.load)
        out.window_s = window_end - window_start
        out.duty = gpu_ms / 1e3 / out.window_s if out.window_s > 0 else math.nan
        out.observed(obs.results((window_start, window_end), since=t0))
        return out
